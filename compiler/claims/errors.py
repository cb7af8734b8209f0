"""Errors of the claim store. Every message is meant for the person (or agent) who asked.

The server maps them to HTTP statuses: `InvalidClaim` -> 400 (or 422 for refused
content), `UnknownSubject`/`ClaimNotFound` -> 404, `AmbiguousSubject`/`AmbiguousClaim`
-> 409, `PageConflict` -> 409.
"""

from __future__ import annotations


class ClaimError(Exception):
    """Base class: the request was refused and nothing was written."""

    code = "claim_error"

    def __init__(self, message: str, candidates: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.candidates = list(candidates or [])

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "candidates": self.candidates}


class InvalidClaim(ClaimError):
    """Bad input: empty or oversized statement, unknown kind, bad date, unsafe path..."""

    code = "invalid"


class RefusedContent(InvalidClaim):
    """The text failed the write safety checks (invisible characters, prompt injection);
    `findings` lists why. The server answers 422."""

    code = "content_refused"

    def __init__(self, message: str, findings: list[dict] | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])

    def as_dict(self) -> dict:
        return {**super().as_dict(), "findings": self.findings}


class UnknownSubject(ClaimError):
    """No entity matches the subject. `candidates` holds near matches, if any;
    `create_path` is where the page of a person or core entity would go (these are only
    created when the caller asks: each caller says how, in its own terms)."""

    code = "unknown_subject"
    create_path: str | None = None
    best: str | None = None  # the one candidate clearly meant, if any (`entities.resolve`)


class AmbiguousSubject(ClaimError):
    """Several entities match the subject; `candidates` names them all."""

    code = "ambiguous_subject"


class ClaimNotFound(ClaimError):
    code = "claim_not_found"


class AmbiguousClaim(ClaimError):
    code = "ambiguous_claim"


class PageConflict(ClaimError):
    """The canonical page cannot be compiled safely (malformed markers, symlink, not UTF-8)."""

    code = "page_conflict"
