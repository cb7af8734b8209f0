"""A corpus kept built while a process runs: the server's and the watcher's view.

`LiveCorpus.open()` builds (incrementally) and keeps the in-memory `SiteState`;
`refresh(paths)` applies a few changed files in well under a second: the claims they
touch, their pages, the pages that depend on them, and their search-index entries.
The manifest is saved shortly after the last refresh (it is only a cache: a crash
before that costs the next build a re-hash, never a wrong page).
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..build import manifest
from ..site.model import title_rule
from ..build.pipeline import BuildOptions, BuildResult, build_state, gc_paused
from .commit import LiveWrites, RefreshBatcher
from ..model import Document
from ..corpus.scan import SourceFile, is_hidden, scan
from ..build.stages import parse_file, parse_page, render_page
from ..build.state import SiteState, StaleState
from ..build.workers import InProcess

if TYPE_CHECKING:
    from ..search import SearchRequest

SAVE_DELAY_SECONDS = 2.0
SAVE_MAX_DELAY_SECONDS = 30.0  # under steady writes the save still runs this often
MERGE_IN_CHILD = True  # merge BM25 segments in a child process (`search.bm25_merge`): no GIL shared
STALE_RETRIES = 4  # rescans when a page changes on disk while a refresh re-renders it


@dataclass
class RefreshResult:
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    pages_written: int = 0
    indexed: bool = True
    index: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    relinked: list[Any] = field(default_factory=list)  # state.Relink: links of other pages this moved
    seconds: float = 0.0
    # seconds: site (pages and data files), index (search indexes), index.<step> (IndexReport.timings)
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 4)
        return d

    def summary(self) -> str:
        what = ", ".join(self.changed[:3] + [f"-{p}" for p in self.removed[:3]]) or "nothing"
        more = len(self.changed) + len(self.removed) - min(3, len(self.changed)) - min(3, len(self.removed))
        if more > 0:
            what += f" (+{more} more)"
        return f"rebuilt {what}: {self.pages_written} files written in {self.seconds * 1000:.0f} ms"


def _in_process(_: int) -> InProcess:
    # Never fork from a process that runs server threads: a child could inherit a
    # lock some other thread held. A refresh is a handful of documents anyway.
    return InProcess(parse_page, render_page)


class _EarlyIndex:
    """The search-index half of a refresh, run in a thread while the site half runs.

    It parses the saved files itself (parsing is pure: the same documents the site state
    gets) and updates the indexes; most of that time (embedding, fsync, SQLite, hnswlib)
    runs outside the GIL, so it overlaps the site update's Python work. The refresh joins
    it, and indexes sequentially whatever it did not cover (a failure, a file that changed
    again between the two parses, a missing index).
    """

    def __init__(self, live: "LiveCorpus", state: SiteState, upserts: list[SourceFile], deletes: list[str]):
        self.live = live
        self.upserts = list(upserts)
        self.known = {f.path for f in upserts if f.path in state.docs} | {p for p in deletes if p in state.docs}
        self.deletes = [p for p in deletes if p in state.docs]
        self.changed: set[str] = set()
        self.removed: set[str] = set()
        self.report: Any = None
        self.seconds = 0.0
        self.site_done: float | None = None
        self.thread = threading.Thread(target=self._run, name="commonplace-index", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from ..search import hold_engine, prepare_engine_switch, update_indexes

        t0 = time.perf_counter()
        try:
            docs: list[Document] = []
            changed, removed = set(), set(self.deletes)
            for f in self.upserts:
                doc, _ = parse_file(f)
                if doc is None:
                    if f.path in self.known:
                        removed.add(f.path)
                else:
                    docs.append(doc)
                    changed.add(f.path)
            with hold_engine(self.live.root):
                report = update_indexes(self.live.root, docs, sorted(removed), embed=self.live.embed,
                                        defer_merge=True)
                self.changed, self.removed, self.report = changed, removed, report
                prepare_engine_switch(self.live.root)
        except Exception:  # noqa: BLE001 - the refresh indexes sequentially instead
            self.report = None
        self.seconds = time.perf_counter() - t0

    def join(self) -> None:
        self.site_done = time.perf_counter()
        self.thread.join()

    def apply(self, result: RefreshResult) -> None:
        report = self.report
        result.index = report.as_extra()
        result.timings["index"] = self.seconds
        result.timings.update({f"index.{k}": v for k, v in report.timings.items()})
        result.indexed = not (self.live.embed and set(report.pending_documents) & self.changed)
        result.warnings += [str(w) for w in report.warnings]
        self.live._schedule_merge()


class LiveCorpus(LiveWrites):
    """A corpus kept open: reads (`docs`, `graph`, `resolver`, `search`), the write path
    (`write`, `commit`, `purge`, in `live_writes`) and refreshes. The server depends on its
    contract, `live_contract.LiveContract`."""

    def __init__(self, corpus: Path, out: Path, embed: bool = True, name: str | None = None, site_url: str = "",
                 index: bool = True, vectors: str = "now"):
        self.root = Path(corpus).resolve()
        self.out = Path(out).resolve()
        self.embed = embed
        self.index = index
        # "later": open() returns once the site and BM25 are complete, and a
        # `search.index_fill.VectorFiller` embeds the rest behind it (`commonplace serve`).
        self.vectors = vectors
        self.filler: Any = None
        self.opts = BuildOptions(corpus=self.root, out=self.out, embed=embed, name=name, site_url=site_url,
                                 index=index, vectors=vectors)
        self.write_lock = threading.RLock()
        self.state: SiteState | None = None
        self.ready = False
        self.last_build: BuildResult | None = None
        self.last_refresh: RefreshResult | None = None
        self._save_timer: threading.Timer | None = None
        self._merger: Any = None  # `search.bm25_merge.BackgroundMerger`, made by the first update
        self._save_io_lock = threading.Lock()  # one manifest write at a time
        self._save_pending_since: float | None = None
        self._watcher: Any = None
        self._batcher = RefreshBatcher()  # group commit of the writers' refreshes
        # Paths whose index update failed (disk full): retried by every later refresh.
        self._unindexed: set[str] = set()

    # ----- lifecycle ---------------------------------------------------------------
    def open(self) -> BuildResult:
        with self.write_lock:
            result, self.state = build_state(self.opts)
            self.last_build = result
            _ = self.state.link_index  # built now, at start-up, rather than by the first save
            self.state.warm()  # ... as are the site view and its search model
            if self.index and self.embed:
                from ..search import warm_or_rebuild_vectors

                try:  # an unreadable HNSW file is rebuilt here, before searches read it
                    warm_or_rebuild_vectors(self.root, list(self.state.docs.values()),
                                            embed=self.vectors != "later")
                except Exception as exc:  # noqa: BLE001 - the first update loads it instead
                    import logging

                    logging.getLogger("commonplace").warning("loading the vector index failed: %s", exc)
            self.ready = True
            if self.index and self.embed and self.vectors == "later":
                from ..search import start_filler

                self.filler = start_filler(self.root)
            # The state lives as long as the process: exempt it from the cyclic GC, whose
            # full collections would otherwise rescan millions of objects now and then,
            # in the middle of a refresh or a search.
            import gc

            gc.collect()
            gc.freeze()
            return result

    def preload(self) -> None:
        """Load the search index before the first request, and the model too unless the
        vectors come later (the filler loads it then, not in the way of readiness)."""
        mode = "hybrid" if self.embed and self.vectors != "later" else "bm25"
        try:
            self.search({"query": "warm up", "k": 1, "mode": mode})
        except Exception as exc:  # noqa: BLE001 - an empty corpus has no index yet; the first query loads it
            import logging

            logging.getLogger("commonplace").info("search warm-up failed: %s", exc)

    def close(self, wait: float | None = None) -> None:
        """Stop the background work and save. `wait` bounds how long each background thread
        (vector filler, BM25 merger) is waited for; a stopping server passes a few seconds:
        what they have not finished is redone from the embedding cache or the next merge."""
        if self.filler is not None:
            self.filler.stop(30.0 if wait is None else wait)
            self.filler = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        with self.write_lock:
            if self._save_timer is not None:
                self._save_timer.cancel()
                self._save_timer = None
            self._save()
        if self._merger is not None:  # outside the lock: its publish step takes the index lock only
            self._merger.stop(60.0 if wait is None else wait)
            self._merger = None

    def __enter__(self) -> "LiveCorpus":
        self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----- read-only views -------------------------------------------------------
    @property
    def docs(self) -> dict[str, Document]:
        return self._state().docs

    @property
    def graph(self):  # noqa: ANN201 - LinkGraph
        return self._state().graph

    @property
    def resolver(self):  # noqa: ANN201 - Resolver
        return self._state().resolver

    def _state(self) -> SiteState:
        if self.state is None:
            raise RuntimeError("LiveCorpus.open() has not run")
        return self.state

    # ----- updates -----------------------------------------------------------------
    def refresh(self, paths: Iterable[str], rescan: bool = False) -> RefreshResult:
        """Apply changes to these corpus-relative paths (created, modified or deleted)."""
        t0 = time.perf_counter()
        with self.write_lock, gc_paused():
            state = self._state()
            wanted = {p for p in paths if p and not is_hidden(p)}
            forgotten = False
            warnings: list[str] = []
            if rescan or any(p.startswith("claims/") and p.endswith(".jsonl") for p in wanted):
                # Claim events compile into canonical pages (and redact evidence on forget).
                from ..claims.stage import run_stage

                claims = run_stage(self.root)
                wanted |= set(claims.pages_updated) | set(claims.pages_created) | set(claims.redacted)
                forgotten = claims.forgotten
                warnings += [str(w) for w in claims.warnings]
            upserts, deletes = self._classify(state, wanted, rescan)
            early = None
            if self.index and not rescan and not forgotten and (upserts or deletes):
                early = _EarlyIndex(self, state, upserts, deletes)
            t_site = time.perf_counter()
            try:
                # A page re-rendered here changed on disk meanwhile (another writer): rescan
                # and go again. Writers that keep appending can do it twice in a row (6
                # clients, tests/hostile/test_hostile_load.py), so a few times.
                for attempt in range(STALE_RETRIES + 1):
                    try:
                        stats = state.update(upserts, deletes, runner_factory=_in_process)
                        break
                    except StaleState:
                        if attempt == STALE_RETRIES:
                            raise
                        upserts, deletes = self._classify(state, set(), True)
            finally:
                if early is not None:
                    early.join()
            result = RefreshResult(stats.changed, stats.removed, stats.pages_written)
            result.relinked = stats.relinked
            result.timings["site"] = early.site_done - t_site if early and early.site_done else (
                time.perf_counter() - t_site)
            result.warnings = warnings + [str(w) for f in upserts for w in state.doc_warnings.get(f.path, [])]
            if self.index and (stats.changed or stats.removed or forgotten or self._unindexed):
                changed, removed = stats.changed, stats.removed
                if self._unindexed:  # an earlier write's index update failed: catch it up now
                    changed = sorted(set(changed) | {p for p in self._unindexed if p in state.docs})
                    removed = sorted(set(removed) | {p for p in self._unindexed if p not in state.docs})
                if early is not None and early.report is not None:
                    early.apply(result)
                    changed = sorted(set(changed) - early.changed)
                    removed = sorted(set(removed) - early.removed)
                if changed or removed or forgotten:
                    t_index = time.perf_counter()
                    self._index(state, changed, removed, forgotten, result)
                    result.timings["index"] = result.timings.get("index", 0.0) + time.perf_counter() - t_index
            self._schedule_save()
        result.seconds = time.perf_counter() - t0
        self.last_refresh = result
        return result

    def _index(self, state: SiteState, changed: list[str], removed: list[str], forgotten: bool,
               result: RefreshResult) -> None:
        """Bring the search indexes in line; a failure never loses the write itself."""
        from ..search import IndexNeedsRebuild, build_indexes, hold_engine, prepare_engine_switch, purge, update_indexes

        try:
            try:
                with hold_engine(self.root):
                    report = update_indexes(self.root, [state.docs[p] for p in changed], removed,
                                            embed=self.embed, defer_merge=True)
                    prepare_engine_switch(self.root)
                self._schedule_merge()
            except IndexNeedsRebuild:
                report = build_indexes(self.root, list(state.docs.values()), embed=self.embed)
            if forgotten:
                purge(self.root)
            result.index = report.as_extra()
            result.timings.update({f"index.{k}": v for k, v in report.timings.items()})
            result.indexed = not (self.embed and set(report.pending_documents) & set(changed))
            result.warnings += [str(w) for w in report.warnings]
            self._unindexed.difference_update(changed)
            self._unindexed.difference_update(removed)
        except Exception as exc:  # the pages are written; the next refresh indexes them
            self._unindexed.update(changed)
            self._unindexed.update(removed)
            result.indexed = False
            result.warnings.append(f"search index not updated: {type(exc).__name__}: {exc}")

    def search(self, request: "SearchRequest | Mapping[str, Any] | str") -> dict[str, Any]:
        """A search: the engine's `SearchRequest` (what the server sends), or a dict or a query
        string (the Python API's, checked by `query.normalize_request`)."""
        from ..search import open_engine

        return open_engine(self.root).search(request)

    def _classify(self, state: SiteState, wanted: set[str], rescan: bool) -> tuple[list[SourceFile], list[str]]:
        if rescan:
            from ..build.pipeline import _changes

            files, _ = scan(self.root, self.out)
            from ..corpus.attachments import scan_files

            state.set_files(scan_files(self.root, self.out)[0])  # attachments that came, went or changed
            return _changes(state, files)
        upserts: list[SourceFile] = []
        deletes: list[str] = []
        for rel in sorted(wanted):
            if not rel.endswith(".md"):
                continue
            full = self.root / rel
            if full.is_file() and not full.is_symlink():
                upserts.append(SourceFile(rel, full))
            elif rel in state.docs:
                deletes.append(rel)
        return upserts, deletes

    # ----- watching ----------------------------------------------------------------
    def watch(self, echo: Any = print) -> None:
        """Refresh on every save until `close()`; prints one line per refresh."""
        from .watch import Watcher

        def on_change(paths: set[str], rescan: bool) -> None:
            result = self.refresh(paths, rescan=rescan)
            if result.changed or result.removed:
                echo(result.summary())
            for w in result.warnings:
                echo(f"warning: {w}")

        self._watcher = Watcher(self.root, self.out, on_change)
        self._watcher.start()

    # ----- index maintenance -------------------------------------------------------
    @staticmethod
    def _restart_timer(current: threading.Timer | None, delay: float, fn: Any) -> threading.Timer:
        """A one-shot daemon timer, restarted by each call: a burst of edits runs `fn` once."""
        if current is not None:
            current.cancel()
        timer = threading.Timer(delay, fn)
        timer.daemon = True
        timer.start()
        return timer

    def _schedule_merge(self) -> None:
        """After an index update: merge the small BM25 segments updates leave, in the
        background (`search.bm25_merge`: neither this refresh nor the next waits for it)."""
        if self._merger is None:
            from ..search import BackgroundMerger

            self._merger = BackgroundMerger(self.root, child=MERGE_IN_CHILD)
        self._merger.poke()

    # ----- the manifest ----------------------------------------------------------
    def _schedule_save(self) -> None:
        # Each refresh restarts the timer (a burst saves once), unless a save has waited
        # long enough: writes every second would otherwise postpone it for ever.
        now = time.monotonic()
        if self._save_pending_since is None:
            self._save_pending_since = now
        elif now - self._save_pending_since > SAVE_MAX_DELAY_SECONDS and self._save_timer is not None:
            return
        self._save_timer = self._restart_timer(self._save_timer, SAVE_DELAY_SECONDS, self._save_locked)

    def _save_locked(self) -> None:
        # Take the snapshot under the lock (only documents changed since the last one are
        # encoded), write it outside: writers must not queue behind 58 MB of I/O at 10k.
        with self.write_lock:
            self._save_pending_since = None
            snap = self._snapshot()
        if snap is not None:
            with self._save_io_lock:
                manifest.write(snap)

    def _snapshot(self) -> Any:
        if self.state is None:
            return None
        return manifest.snapshot(self.state, manifest.fingerprint(self.state.name, self.state.site_url, self.out,
                                                                    title_rule(self.state.root, fresh=True)))

    def _save(self) -> None:
        snap = self._snapshot()
        if snap is not None:
            with self._save_io_lock:
                manifest.write(snap)
