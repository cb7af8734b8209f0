"""Keeping the site and indexes current after a write: group-committed refreshes, the
links a write added, and the purge after a forget. Free of Flask.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from contextlib import nullcontext
from typing import Any

log = logging.getLogger("commonplace.server")

# While writes overlap, a refresh waits this long for more writers before it starts: each
# refresh makes an index generation every search then switches to, and its Python work
# shares the GIL with the searches. bench_server 10k mixed 90/10 (8 clients): see
# docs/decisions/2026-11-24-write-path-under-load.md. COMMONPLACE_WRITE_GATHER overrides.
GATHER_DEFAULT = 0.05


def _gather_seconds(raw: str | None) -> float:
    """COMMONPLACE_WRITE_GATHER, in seconds; a value that is not a number >= 0 is said
    once and the default kept (a tuning knob should not stop a server from starting)."""
    if not raw:
        return GATHER_DEFAULT
    try:
        value = float(raw)
        if value >= 0:
            return value
    except ValueError:
        pass
    log.warning("COMMONPLACE_WRITE_GATHER=%r is not a number of seconds >= 0; using %s", raw, GATHER_DEFAULT)
    return GATHER_DEFAULT


GATHER_SECONDS = _gather_seconds(os.environ.get("COMMONPLACE_WRITE_GATHER"))


def _lock(live: Any) -> Any:
    lock = getattr(live, "write_lock", None)
    return lock if lock is not None else nullcontext()


def _refresh_now(live: Any, paths: list[str]) -> tuple[bool, str | None]:
    try:
        r = live.refresh(paths)
    except Exception as exc:  # noqa: BLE001 - reported in the answer, logged in full
        log.exception("refresh of %s failed", paths[:5])
        return False, f"written, but updating the site and index failed ({type(exc).__name__}); it will be retried"
    indexed = bool(getattr(r, "indexed", True))
    note = None
    if not indexed:
        note = "written; the search index will include it once embedding succeeds"
    return indexed, note


class RefreshBatcher:
    """Group commit for refreshes: concurrent writers share one refresh.

    A writer registers its paths and waits. If no refresh is running, it becomes the
    leader: it takes every pending path (its own and those of writers that arrived
    meanwhile), runs one `live.refresh`, and wakes everyone whose paths were in it.
    Each writer returns only after a refresh that started after its write finished, so
    `indexed: true` still means "searchable now". Under load this turns N refreshes into
    about N / (writers waiting) refreshes; alone, a writer refreshes at once. While writes
    overlap (the last refresh had several writers or left some waiting), a leader first
    waits `GATHER_SECONDS` for more.
    """

    def __init__(self) -> None:
        # No reference to the live corpus: the registry's weak key must be able to die.
        self.cv = threading.Condition()
        self.pending: set[str] = set()
        self.ticket = 0  # last ticket handed out
        self.done = 0  # every ticket <= done has been refreshed
        self.running = False
        self.outcomes: list[tuple[int, tuple[bool, str | None]]] = []
        self.batches = 0
        self.contended = False  # the last refresh overlapped other writers (see GATHER_SECONDS)

    def refresh(self, live: Any, paths: list[str]) -> tuple[bool, str | None]:
        with self.cv:
            self.ticket += 1
            mine = self.ticket
            self.pending.update(paths)
            while True:
                if self.done >= mine:
                    return self._outcome(mine)
                if not self.running:
                    self.running = True
                    if self.contended and GATHER_SECONDS > 0:
                        self.cv.wait(GATHER_SECONDS)  # writers arriving meanwhile join this refresh
                    batch, self.pending = sorted(self.pending), set()
                    first, upto = self.done + 1, self.ticket
                    break
                self.cv.wait()
        outcome: tuple[bool, str | None] = (False, "written; refresh did not run")
        try:
            outcome = _refresh_now(live, batch)
        finally:
            with self.cv:
                self.running = False
                # Writers overlapped (several in this batch, or some waiting now): the next
                # leader gathers. A lone writer, or one client writing in turn, never waits.
                self.contended = upto > first or bool(self.pending)
                self.done = upto
                self.batches += 1
                self.outcomes.append((upto, outcome))
                del self.outcomes[:-64]
                self.cv.notify_all()
        return outcome

    def _outcome(self, ticket: int) -> tuple[bool, str | None]:
        for upto, outcome in self.outcomes:
            if upto >= ticket:
                return outcome
        return True, None  # pragma: no cover - pruned long ago


_batchers: "weakref.WeakKeyDictionary[Any, RefreshBatcher]" = weakref.WeakKeyDictionary()
_batchers_guard = threading.Lock()


def batcher(live: Any) -> RefreshBatcher:
    """The batcher of a live corpus (one per corpus object, dropped with it)."""
    with _batchers_guard:
        try:
            b = _batchers.get(live)
            if b is None:
                b = _batchers[live] = RefreshBatcher()
        except TypeError:  # not weak-referenceable: no sharing, refresh directly
            b = RefreshBatcher()
        return b


def refresh(live: Any, paths: list[str]) -> tuple[bool, str | None]:
    """Rebuild what `paths` touch (shared with concurrent writers). Never raises: a write
    that landed is not undone by a failed index update; the answer says `indexed: false`
    and the next refresh catches up."""
    return batcher(live).refresh(live, paths)


def links_of(live: Any, rel: str, data: bytes | None) -> set[str]:
    """Documents that `data` (the bytes of `rel`) links to, resolved against the live corpus."""
    if not data:
        return set()
    resolver = getattr(live, "resolver", None)
    if resolver is None:
        return set()
    from commonplace.compiler.parse import SkipFile, parse

    try:
        doc, _ = parse(rel, data)
    except SkipFile:
        return set()
    out = set()
    for link in doc.links:
        try:
            res = resolver.resolve(link, rel)
        except Exception:  # noqa: BLE001
            continue
        if res.path and res.path != rel:
            out.add(res.path)
    return out


def purge(live: Any) -> None:
    """After a forget: physically drop the forgotten text from derived state a refresh
    keeps (older index generations, deleted index entries, the embedding cache). Runs
    under the live corpus's write lock, like its own purge after claim-log forgets."""
    purge = getattr(live, "purge", None)
    try:
        if callable(purge):
            purge()
        elif getattr(live, "index", False) and getattr(live, "root", None) is not None:
            from commonplace.compiler.search import purge as purge_index

            with _lock(live):
                purge_index(live.root)
    except Exception:  # noqa: BLE001 - the tombstone is written; the next build purges too
        log.exception("purge after forget failed")


