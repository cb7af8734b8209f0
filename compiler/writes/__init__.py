"""Writes to the corpus: the one implementation behind `POST /v1/write` and `commonplace write`.

    paths.py    path policy: the shape of a target (`normalize_target`), symlinks on the
                way (`locate`)
    checks.py   content checks: prompt-injection markers, invisible, bidi and control
                characters (`scan_content`, `reveal`)
    compose.py  the text a write produces: frontmatter merge, `compose`
    schema.py   the corpus schema API writes follow (Dory's): required title and type,
                defaults, vocabularies, auto-routing of new files
    plan.py     the new bytes of each file a write changes (forget: `<stem>.tombstone.md`)
    quarantine.py  where and how refused content is kept for review
    apply.py    the write transaction under `write_lock`: temp file, fsync, rename or
                link (`apply_write`, `quarantine`)
    read.py     reads for API clients (`read_document`)
    errors.py   `WriteError` and its kinds (no HTTP: the server maps them)

The safety rules are the design's ("Safety of writes"; docs/concepts/write-safety.md).
Nothing here rebuilds or indexes; callers (the server, the CLI) refresh afterwards.
"""

from __future__ import annotations

import os  # noqa: F401 - tests patch `writes.os.replace` (the os module itself) to inject faults

from ..model import content_hash
from . import schema
from .apply import (
    DRY_ACTIONS, KINDS, MAX_CONTENT_BYTES, MAX_REASON_CHARS, QUARANTINE_DIR, WriteRequest, WriteResult, apply_write,
    quarantine, write_lock,
)
from .checks import INJECTION_PATTERNS, Finding, reveal, scan_content
from .compose import compose, merge_frontmatter, today, yaml_errors
from .errors import (
    Conflict, ContentRefused, Exists, HashMismatch, InvalidInput, InvalidTarget, NotFound, TargetMissing, TooLarge,
    WriteError, WriteFailed, disk_refusal,
)
from .plan import tombstone_path
from .quarantine import quarantine_path
from .paths import MAX_PART_BYTES, MAX_PATH_CHARS, check_target, excluded_folders, locate, normalize_target
from .read import ReadResult, read_document, resolve_readable

__all__ = [
    "Conflict", "ContentRefused", "DRY_ACTIONS", "Exists", "Finding", "HashMismatch", "INJECTION_PATTERNS", "InvalidInput", "InvalidTarget",
    "KINDS", "MAX_CONTENT_BYTES", "MAX_PART_BYTES", "MAX_PATH_CHARS", "MAX_REASON_CHARS", "NotFound", "QUARANTINE_DIR",
    "ReadResult", "TooLarge", "WriteError", "WriteFailed", "WriteRequest", "WriteResult", "apply_write", "check_target",
    "compose", "content_hash", "disk_refusal", "excluded_folders", "locate", "merge_frontmatter", "normalize_target", "quarantine", "read_document",
    "quarantine_path", "resolve_readable", "reveal", "scan_content", "schema", "TargetMissing", "today",
    "tombstone_path", "write_lock", "yaml_errors",
]
