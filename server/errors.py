"""Errors: one body for every failure, and the one place where a domain error (a refused
write, an unknown claim subject) becomes an HTTP status.

Body: Dory's `detail` and commonplace's envelope side by side,
`{"detail": ..., "error": {"code", "message", "type"}}`, so clients of either read it.
`detail` is the message, or the structured object Dory's write routes give, or for a
request that fails validation (422) the FastAPI-style list of failing fields. Statuses as
Dory gives them: 400 invalid or refused, 401 auth, 404 missing (including any path outside
the corpus or under a hidden folder), 409 stale hash, 413 too large, 422 validation, 503
not ready. Messages never carry a filesystem path outside the corpus, a token, or a
traceback.
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
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "unavailable_error",
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, *, type: str | None = None,
                 headers: dict[str, str] | None = None, detail: Any = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.type = type or TYPES.get(status, "invalid_request_error")
        self.headers = headers or {}
        self.detail = detail  # None: the message
        self.extra = extra

    def body(self, request_id: str | None = None) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message, "type": self.type}
        err.update(self.extra)
        detail = self.message if self.detail is None else self.detail
        if isinstance(detail, dict) and request_id and "request_id" not in detail:
            detail = {**detail, "request_id": request_id}
        return {"detail": detail, "error": err}


def envelope(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return ApiError(status, code, message, **extra).body()


def not_ready(message: str | None = None) -> ApiError:
    """The 503 while the corpus opens (`message`: why it could not be opened, redacted)."""
    msg = "the server is still starting (building or loading the index and model); retry shortly"
    if message:
        msg = f"the corpus could not be opened: {message}"
    return ApiError(503, "not_ready", msg, headers={"Retry-After": "2"})


# --------------------------------------------------------------------------- domain errors


# A write error's kind -> (status, type), most specific first. Statuses as Dory gives them:
# a stale hash and an existing target are 400 there, other conflicts 409.
def _write_statuses() -> list[tuple[type, int, str]]:
    from commonplace.compiler import writes as w
    from commonplace.compiler.writes.budget import TooComplex

    return [
        (TooComplex, 422, "invalid_request_error"),  # markup that would hold the corpus lock too long
        (w.WriteFailed, 503, "server_error"),
        (w.TooLarge, 413, "invalid_request_error"),
        (w.ContentRefused, 400, "content_refused_error"),
        (w.HashMismatch, 400, "invalid_request_error"),
        (w.Exists, 400, "invalid_request_error"),
        (w.Conflict, 409, "conflict_error"),
        (w.NotFound, 404, "not_found_error"),
        (w.WriteError, 400, "invalid_request_error"),
    ]


# What a refused write's message adds over HTTP and MCP (the command line says its flag).
SOFT_HINT = " (send soft=true to quarantine it for review instead)"


def write_status(exc: Any) -> tuple[int, str]:
    """(HTTP status, error type) of a `compiler.writes.WriteError`."""
    for kind, status, type_ in _write_statuses():
        if isinstance(exc, kind):
            return status, type_
    return 400, "invalid_request_error"  # pragma: no cover - every WriteError matches the last row


def write_message(exc: Any, soft_hint: str = SOFT_HINT) -> str:
    """A write error's message as a client reads it: refused content says how to keep it."""
    from commonplace.compiler import writes as w

    return exc.message + (soft_hint if isinstance(exc, w.ContentRefused) else "")


def from_write_error(exc: Any) -> ApiError:
    """A `compiler.writes.WriteError` (path policy, checks, hash, disk) as an API error.
    `detail` is Dory's structured validation object for a refused write (400)."""
    status, type_ = write_status(exc)
    message = write_message(exc)
    extra = {k: v for k, v in exc.details.items() if k in ("findings", "current_hash")}
    detail = None
    if status == 400:
        detail = {"code": "dory_validation_error", "message": message, "type": "validation"}
    return ApiError(status, exc.code, message, type=type_, detail=detail, **extra)


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
