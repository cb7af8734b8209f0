"""Errors: one envelope for every failure, and the one place where a domain error (a
refused write, an unknown claim subject) becomes an HTTP status.

Body: `{"error": {"code", "message", "type"}}`. Statuses (design, "Server"): 400 invalid
input, 401/403 auth, 404 missing (including any path outside the corpus or under a hidden
folder), 409 hash precondition failed, 413 too large, 422 content refused, 503 not ready.
Messages are written for the caller and never carry a filesystem path outside the corpus,
a token, or a traceback.
"""

from __future__ import annotations

from typing import Any

TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "content_refused_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "unavailable_error",
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, *, type: str | None = None,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.type = type or TYPES.get(status, "invalid_request_error")
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message, "type": self.type}
        err.update(self.extra)
        return {"error": err}


def envelope(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return ApiError(status, code, message, **extra).body()


# --------------------------------------------------------------------------- domain errors


def from_write_error(exc: Any) -> ApiError:
    """A `compiler.writes.WriteError` (it carries its own status: path policy, checks, hash)."""
    extra = {k: v for k, v in exc.details.items() if k in ("findings", "current_hash")}
    return ApiError(exc.status, exc.code, exc.message, type=exc.type, **extra)


def from_claim_error(exc: Any) -> ApiError:
    """A `compiler.claims.ClaimError`: unknown -> 404, ambiguous or conflicting -> 409."""
    from commonplace.compiler import claims as c

    if isinstance(exc, (c.UnknownSubject, c.ClaimNotFound)):
        status = 404
    elif isinstance(exc, (c.AmbiguousSubject, c.AmbiguousClaim, c.PageConflict)):
        status = 409
    else:
        status = 400
    return ApiError(status, exc.code, exc.message, candidates=list(exc.candidates))
