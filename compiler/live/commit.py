"""The write path of a live corpus: one call applies a write, refreshes what it touched and
says what changed.

`LiveWrites` is mixed into `LiveCorpus`. `write(request)` applies a `writes.WriteRequest`
(`writes.apply_write`), then `commit(paths)`: a group-committed refresh (`RefreshBatcher`:
concurrent writers share one refresh), and returns the paths, whether they are searchable
now, and the links the write added and removed, read from the refreshed link graph. Every
other writer (session ingest, migrate, purge, the memory and research tools) writes its
files and calls `commit`. Nothing here knows HTTP: the server words the outcome.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

log = logging.getLogger("commonplace")

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


@dataclass(frozen=True)
class Refreshed:
    """How one shared refresh went: `indexed` (searchable now), or the name of the error
    that stopped it (`failed`; the files are written, the next refresh catches up)."""

    indexed: bool = True
    failed: str | None = None
    relinked: tuple[Any, ...] = ()  # state.Relink: other pages' links this refresh moved


# A write that moves many links says the first few and how many more.
WARN_LINKS = 5


def _link_text(r: Any) -> str:
    return f"[{r.target}]({r.target})" if r.kind == "md" else f"{'!' if r.kind == 'embed' else ''}[[{r.target}]]"


def relink_warnings(relinked: Iterable[Any], paths: Iterable[str], cap: int = WARN_LINKS) -> list[str]:
    """Warnings for the links of other pages that a write of `paths` moved: those whose
    old or new target, or whose candidates, are among `paths` (a shared refresh also
    carries other writers' moves). At most `cap` lines, then one saying how many more."""
    mine = set(paths)
    lines: list[str] = []
    for r in relinked:
        if not ({r.was, r.now} & mine or mine.intersection(r.candidates)):
            continue
        link = f"{_link_text(r)} in {r.source}"
        if r.now is not None:
            lines.append(f"{link} now resolves to {r.now} (was {r.was})")
        elif len(r.candidates) > 1:
            lines.append(f"{link} is now ambiguous between {', '.join(r.candidates)} (was {r.was})")
        else:
            lines.append(f"{link} is now broken (was {r.was})")
    lines = list(dict.fromkeys(lines))  # a page that names the note twice says it once
    if len(lines) > cap:
        lines[cap:] = [f"... and {len(lines) - cap} more links now resolve differently"]
    return lines


@dataclass
class Committed:
    """What a write changed: its paths, whether they are searchable now, and per path the
    link targets it added and removed (from the link graph before and after the refresh)."""

    paths: list[str]
    indexed: bool = True
    failed: str | None = None  # the refresh failed with this error; the files are written
    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    # Links in other documents this write moved to another target, or left ambiguous or
    # broken (`relink_warnings`): the write stands, the writer is told.
    warnings: list[str] = field(default_factory=list)

    @property
    def edges_added(self) -> int:
        return sum(len(v) for v in self.added.values())

    @property
    def edges_removed(self) -> int:
        return sum(len(v) for v in self.removed.values())


@dataclass
class Written:
    """A write's result (`writes.WriteResult`) and, unless it was a dry run, its commit."""

    result: Any  # writes.WriteResult
    committed: Committed | None = None


class RefreshBatcher:
    """Group commit for refreshes: concurrent writers share one refresh.

    A writer registers its paths and waits. If no refresh is running, it becomes the
    leader: it takes every pending path (its own and those of writers that arrived
    meanwhile), runs one refresh, and wakes everyone whose paths were in it. Each writer
    returns only after a refresh that started after its write finished, so `indexed`
    still means "searchable now". Under load this turns N refreshes into about
    N / (writers waiting) refreshes; alone, a writer refreshes at once. While writes
    overlap (the last refresh had several writers or left some waiting), a leader first
    waits `GATHER_SECONDS` for more.
    """

    def __init__(self) -> None:
        self.cv = threading.Condition()
        self.pending: set[str] = set()
        self.ticket = 0  # last ticket handed out
        self.done = 0  # every ticket <= done has been refreshed
        self.running = False
        self.outcomes: list[tuple[int, Refreshed]] = []
        self.batches = 0
        self.contended = False  # the last refresh overlapped other writers (see GATHER_SECONDS)

    def run(self, refresh: Callable[[list[str]], Any], paths: Iterable[str]) -> Refreshed:
        """Refresh `paths` (with whatever other writers are waiting); never raises."""
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
        outcome = Refreshed(False, "the refresh did not run")
        try:
            outcome = _refresh_now(refresh, batch)
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

    def _outcome(self, ticket: int) -> Refreshed:
        for upto, outcome in self.outcomes:
            if upto >= ticket:
                return outcome
        return Refreshed()  # pragma: no cover - pruned long ago


def _refresh_now(refresh: Callable[[list[str]], Any], paths: list[str]) -> Refreshed:
    try:
        r = refresh(paths)
    except Exception as exc:  # noqa: BLE001 - reported in the outcome, logged in full
        log.exception("refresh of %s failed", paths[:5])
        return Refreshed(False, type(exc).__name__)
    return Refreshed(bool(getattr(r, "indexed", True)), relinked=tuple(getattr(r, "relinked", ()) or ()))


class LiveWrites:
    """The write half of `LiveCorpus` (it provides `root`, `index`, `write_lock`, `graph`
    and `refresh`)."""

    _batcher: RefreshBatcher

    def write(self, request: Any, excluded: tuple[Any, ...] = ()) -> Written:
        """Apply one `writes.WriteRequest` (raises its `writes.WriteError`s), then refresh
        what it changed, shared with concurrent writers; a dry run changes nothing."""
        from ..writes import WriteError, apply_write, normalize_target, tombstone_path

        try:  # the links of the files as they are, before the write (a refresh may follow it at once)
            rel = normalize_target(request.target)
            before = self._edges([rel, tombstone_path(rel)])
        except WriteError:
            before = {}  # apply_write refuses the same target
        result = apply_write(self.root, request, excluded)  # type: ignore[attr-defined]
        if result.dry_run:
            return Written(result)
        old = {c.path: (before.get(c.path, set()) if c.old is not None else set()) for c in result.changes or []}
        return Written(result, self.commit(result.paths, before=old))

    def commit(self, paths: Iterable[str], *, before: dict[str, set[str]] | None = None,
               purge: bool = False) -> Committed:
        """Refresh files already written (shared with concurrent writers; never raises:
        a write that landed is not undone by a failed refresh). `before`: the link targets
        of some of these paths before the write, to say which links it added and removed.
        `purge`: afterwards drop deleted text from derived state (`purge()`)."""
        paths = list(dict.fromkeys(p for p in paths if p))
        outcome = self._batcher.run(self.refresh, paths)  # type: ignore[attr-defined]
        done = Committed(paths, outcome.indexed, outcome.failed)
        done.warnings = relink_warnings(outcome.relinked, paths)
        if before:
            after = self._edges(before)
            for p, old in before.items():
                done.added[p] = sorted(after[p] - old)
                done.removed[p] = sorted(old - after[p])
        if purge:
            self.purge()
        return done

    def purge(self) -> None:
        """After a forget or a purge: physically drop the forgotten text from derived state
        a refresh keeps (older index generations, deleted index entries, the embedding
        cache). Never raises: the files are already gone, and the next build purges too."""
        try:  # the manifest holds documents' text too: saved now, not after the debounce
            self._save_locked()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001
            log.exception("saving the manifest after a purge failed")
        from ..build import parse_cache

        parse_cache.clear(self.root)  # type: ignore[attr-defined]
        if not self.index:  # type: ignore[attr-defined]
            return
        from ..search import purge as purge_index

        try:
            with self.write_lock:  # type: ignore[attr-defined]
                purge_index(self.root)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001
            log.exception("purge after forget failed")

    def _edges(self, paths: Iterable[str]) -> dict[str, set[str]]:
        """Each path's resolved link targets in the link graph now (no self-links)."""
        state = self.state  # type: ignore[attr-defined]
        outgoing = state.graph.outgoing if state is not None else {}
        return {p: set(outgoing.get(p, ())) for p in paths}
