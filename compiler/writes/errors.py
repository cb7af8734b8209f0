"""The errors of the write path. Each carries the HTTP status the server answers with,
so the CLI and the server refuse the same request the same way."""

from __future__ import annotations

from typing import Any


class WriteError(Exception):
    """A refused write or read. `status` is the HTTP status the server answers with."""

    status = 400
    code = "invalid_request"
    type = "invalid_request_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidTarget(WriteError):
    status, code, type = 400, "invalid_path", "invalid_request_error"


class InvalidInput(WriteError):
    status, code, type = 400, "invalid_request", "invalid_request_error"


class NotFound(WriteError):
    status, code, type = 404, "not_found", "not_found_error"


class Conflict(WriteError):
    status, code, type = 409, "conflict", "conflict_error"


class HashMismatch(Conflict):
    """A stale or missing expected_hash: Dory's 400 ("... requires a matching expected_hash")."""

    status, code, type = 400, "hash_mismatch", "invalid_request_error"


class Exists(Conflict):
    """create on an existing file: Dory's 400 ("target already exists")."""

    status, code, type = 400, "already_exists", "invalid_request_error"


class TargetMissing(InvalidInput):
    """replace or forget of a file that is not there: Dory's 400 ("target does not exist")."""

    code = "not_found"


class TooLarge(WriteError):
    status, code, type = 413, "too_large", "invalid_request_error"


class ContentRefused(WriteError):
    """Content the checks refuse: Dory's 400 (unless `soft` quarantines it)."""

    status, code, type = 400, "content_refused", "content_refused_error"


class WriteFailed(WriteError):
    """The filesystem refused (disk full, read-only): nothing changed."""

    status, code, type = 503, "write_failed", "server_error"
