"""Derived state that cannot be read is discarded and rebuilt, never a reason not to start.

The search index (`.commonplace/index/`) and the embedding cache are rebuildable from the
corpus ([[derived-state]]). When a generation's `meta.json`, `table.sqlite`,
`delta.sqlite`, Whoosh segments or `vectors.hnsw` fail to open, the index is built afresh
into a new generation (the unreadable one is collected later like any old one); an
unreadable cache is moved aside and started empty. Each recovery is said on stderr and
kept here for `/v1/status` (`recovered`).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

_RECOVERED: list[dict[str, Any]] = []
_LOCK = threading.Lock()
MAX_KEPT = 20


def unreadable(exc: BaseException) -> bool:
    """An error that says the file's bytes are bad (truncated, garbage, wrong format), not
    that the disk refused: the disk's own errors (full, read-only, no permission) are left
    to propagate, as a rebuild would meet them too."""
    if isinstance(exc, FileNotFoundError):
        return True  # a segment or table file gone from a generation that names it
    if isinstance(exc, (OSError, MemoryError, KeyboardInterrupt, SystemExit)):
        return False
    return isinstance(exc, Exception)


def record(what: str, exc: BaseException, action: str = "discarded and rebuilt") -> str:
    """Say (stderr) and remember (status) that `what` could not be read and was replaced."""
    detail = str(exc).splitlines()[0][:160] if str(exc) else ""
    note = f"{what} could not be read ({type(exc).__name__}{': ' + detail if detail else ''}); {action}"
    with _LOCK:
        _RECOVERED.append({"what": what, "error": type(exc).__name__, "action": action,
                           "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "message": note})
        del _RECOVERED[:-MAX_KEPT]
    print(f"warning: {note}", file=sys.stderr, flush=True)
    return note


def recovered() -> list[dict[str, Any]]:
    """The recoveries of this process, oldest first."""
    with _LOCK:
        return [dict(r) for r in _RECOVERED]
