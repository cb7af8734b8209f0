"""The errors of the write path: what went wrong, in words any caller can show, and a
stable `code`. They carry no transport: the server maps each kind to an HTTP status in
one place (`server/errors.py`), the command line to an exit status."""

from __future__ import annotations

import errno
from typing import Any

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def disk_refusal(exc: BaseException) -> str | None:
    """Why the disk refused a write, in words, when it is full or read-only (a refusal
    that is no fault of the request); None for any other error."""
    code = getattr(exc, "errno", None)
    if code in DISK_FULL:
        return "no space left on the device"
    if code in READ_ONLY:
        return "the corpus is read-only here"
    return None


class WriteError(Exception):
    """A refused write or read."""

    code = "invalid_request"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidTarget(WriteError):
    code = "invalid_path"


class InvalidInput(WriteError):
    code = "invalid_request"


class NotFound(WriteError):
    code = "not_found"


class Conflict(WriteError):
    code = "conflict"


class HashMismatch(Conflict):
    """A stale or missing expected_hash (Dory refuses it like invalid input)."""

    code = "hash_mismatch"


class Exists(Conflict):
    """create on an existing file (Dory: "target already exists")."""

    code = "already_exists"


class TargetMissing(InvalidInput):
    """replace or forget of a file that is not there (Dory: "target does not exist")."""

    code = "not_found"


class TooLarge(WriteError):
    code = "too_large"


class ContentRefused(WriteError):
    """Content the checks refuse (unless the request asks to quarantine it: `soft`)."""

    code = "content_refused"


class WriteFailed(WriteError):
    """The filesystem refused (disk full, read-only): nothing changed."""

    code = "write_failed"
