"""Derived state that cannot be read is discarded and rebuilt, never a reason not to start.

The search index (`.commonplace/index/`) and the embedding cache are rebuildable from the
corpus ([[derived-state]]). When a generation's `meta.json`, `table.sqlite`,
`delta.sqlite`, Whoosh segments or `vectors.hnsw` fail to open, or the Whoosh table of
contents holds a schema this version cannot load (`UnreadableSchema`), the index is built afresh
into a new generation (the unreadable one is collected later like any old one); an
unreadable cache is moved aside and started empty. Each recovery is said on stderr and
kept here for `/v1/status` (`recovered`).
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

_RECOVERED: list[dict[str, Any]] = []
_LOCK = threading.Lock()
MAX_KEPT = 20


class UnreadableSchema(Exception):
    """A BM25 index whose schema cannot be loaded. Whoosh pickles the schema into every
    table of contents, naming our tokenizer's classes by module path; an index written by
    a version of commonplace whose paths this one lacks fails there (ModuleNotFoundError,
    or AttributeError for a class gone from a module). Its bytes are fine; this version
    cannot read them, so it is unreadable like a corrupt index, and rebuilt the same way."""

    def __init__(self, where: Path, cause: BaseException):
        super().__init__(f"written by another version of commonplace: its schema names code this one lacks "
                         f"({cause})")
        self.where = where  # not in the message: /v1/status shows it, and names no server path


@contextmanager
def loading_schema(where: Path) -> Iterator[None]:
    """Around a read of a Whoosh table of contents: a schema that cannot be unpickled
    becomes `UnreadableSchema`, whose message says why."""
    try:
        yield
    except (ImportError, AttributeError) as exc:
        raise UnreadableSchema(where, exc) from exc


def unreadable(exc: BaseException) -> bool:
    """An error that says the file's bytes are bad (truncated, garbage, wrong format), not
    that the disk refused: the disk's own errors (full, read-only, no permission) are left
    to propagate, as a rebuild would meet them too."""
    if isinstance(exc, (FileNotFoundError, UnreadableSchema)):
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
