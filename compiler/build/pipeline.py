"""The build pipeline: claims -> scan -> parse -> resolve links -> render -> emit -> index.

Each stage is a module of its own; this file only runs them in order and collects
what they report. Nothing here reads the clock into the output.
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

from . import dates, manifest, parse_cache, purging as purge_mark
from ..corpus.links import LinkGraph, Resolver, resolve_all
from ..model import Document, Warning_, content_hash
from ..site.output import check_out_dir, existing_files, is_fresh, mark_output, remove_unlisted
from ..corpus.attachments import scan_files
from ..corpus.scan import SourceFile, scan
from ..site.model import resolve_site, title_rule
from .stages import parse_file
from .state import SiteState, StaleState

T = TypeVar("T")


@dataclass
class BuildOptions:
    corpus: Path
    out: Path
    strict: bool = False
    embed: bool = True
    site_url: str = ""
    name: str | None = None
    progress: bool = False  # show a progress bar (only on a terminal)
    clean: bool = False  # ignore the manifest: rebuild everything
    index: bool = True  # write the search indexes (False: the site only)
    engine: str = "local"  # where parsing, rendering and embedding run: local | ray (engines/)
    address: str | None = None  # the Ray cluster (--engine ray); None: RAY_ADDRESS, else a local Ray
    # The local engine writes the site and the BM25 index first, then embeds ("now"), or
    # leaves the vectors to the caller ("later": a server's `index_fill.VectorFiller`).
    vectors: str = "now"
    # Called once the site and the BM25 index are complete, before any embedding:
    # (seconds since the build started, chunks still waiting for a vector).
    on_site_ready: Callable[[float, int], None] | None = None
    # Deleted text must leave derived state (an erase or a file purge ran before this
    # build): older index generations, the embedding and parse caches. A forget in the
    # claim log asks for the same by itself.
    purge: bool = False


@dataclass
class BuildResult:
    documents: int = 0
    documents_changed: int = 0
    documents_removed: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    files_removed: int = 0
    broken_links: int = 0
    warnings: list[Warning_] = field(default_factory=list)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.warnings and not self.broken_links

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["warnings"] = [w.as_dict() for w in self.warnings]
        d["seconds"] = round(self.seconds, 3)
        d["stages"] = {k: round(v, 3) for k, v in self.stages.items()}
        return d


@dataclass
class Corpus:
    """The parsed corpus: what lint, the site and the indexes are built from."""

    root: Path
    docs: list[Document]
    resolver: Resolver
    graph: LinkGraph
    warnings: list[Warning_]


def make_progress(enabled: bool) -> Any:
    """The parse and render workers' progress: bars on a terminal (see `progress`), else None."""
    from .. import progress

    return progress.Stages() if enabled and progress.active() else None


def _progress(items: list[T], label: str, enabled: bool) -> Iterator[T]:
    from .. import progress

    with progress.bar(label, len(items)) if enabled else progress.bar(label, 0) as bar:
        for item in items:
            yield item
            bar.update(1)


def make_corpus(root: Path, parsed: Iterable[tuple[Document | None, list[Warning_]]],
                warnings: list[Warning_], files: Iterable[str] = ()) -> Corpus:
    """Collect parsed documents and resolve every link against the whole corpus (and its
    attachments, `files`)."""
    docs: list[Document] = []
    for doc, doc_warnings in parsed:
        warnings.extend(doc_warnings)
        if doc is not None:
            docs.append(doc)
    resolver = Resolver.build(docs)
    for f in files:
        resolver.add_file(f)
    resolve_all(docs, resolver)
    return Corpus(root, docs, resolver, LinkGraph.build(docs), warnings)


def load_corpus(root: Path, out: Path | None = None, progress: bool = False) -> Corpus:
    """Scan, parse and resolve links. Bad files become warnings, never exceptions."""
    files, warnings = scan(root, out)
    disk, file_warnings = scan_files(root, out)
    return make_corpus(root, (parse_file(f) for f in _progress(files, "Parsing", progress)), warnings + file_warnings,
                       files=disk)


@contextmanager
def _timed(stages: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        stages[name] = stages.get(name, 0.0) + time.perf_counter() - t0


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC: a build holds ~100 tokens per document alive and the
    collector rescanning them doubled parse time (measured). Token trees have no
    cycles, so reference counting still frees them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build(opts: BuildOptions) -> BuildResult:
    return build_state(opts)[0]


def build_state(opts: BuildOptions) -> tuple[BuildResult, SiteState]:
    """Build, and also return the in-memory state (the server keeps it for live updates)."""
    with gc_paused():
        engine = _open_engine(opts)
        error: BaseException | None = None
        try:
            return _build(opts, engine)
        except BaseException as exc:
            error = exc
            raise
        finally:
            if engine is not None:
                engine.close(error)


def _open_engine(opts: BuildOptions) -> Any:
    """None for the local engine (this module's own workers); another engine is connected
    here, before the build writes anything, so an unreachable cluster changes nothing."""
    if opts.engine == "local" and not opts.address:
        return None
    from ..engines import open_engine

    return open_engine(opts.engine, opts.address, opts.corpus.resolve(), embed=opts.embed and opts.index,
                       progress=opts.progress)


def _build(opts: BuildOptions, engine: Any = None) -> tuple[BuildResult, SiteState]:
    t0 = time.perf_counter()
    result = BuildResult()
    root = opts.corpus.resolve()
    out = opts.out.resolve()
    check_out_dir(root, out)
    out.mkdir(parents=True, exist_ok=True)
    mark_output(out)
    fresh = is_fresh(out)  # nothing in it yet: no stale files to look for
    name, site_url = resolve_site(root, opts.name, opts.site_url)  # flags, else commonplace.toml

    # Stage: claims (the claim log compiles into canonical pages before the scan).
    with _timed(result.stages, "claims"):
        from ..claims.stage import run_stage

        claims = run_stage(root, commit=False)  # forgets count as handled once the index purged them
        result.extra.update(claims.extra())  # claims_pages_updated, claims_forgotten, ...

    with _timed(result.stages, "scan"):
        files, scan_warnings = scan(root, out)
        fp = manifest.fingerprint(name, site_url, out, title_rule(root, fresh=True))
        state = None if opts.clean else manifest.load(root, out, name, site_url, fp)
        if state is not None and not state.outputs <= existing_files(out):
            state = None  # someone deleted part of the site: rebuild it whole
        if state is None:
            state = _new_state(root, out, name, site_url, fresh)
        upserts, deletes = _changes(state, files)
        scan_warnings += _take_files(state, root, out)
    progress = make_progress(opts.progress)
    runner = {"runner_factory": engine.runner_factory} if engine is not None else {}
    with _timed(result.stages, "update"):
        try:
            stats = state.update(upserts, deletes, progress=progress, **runner)
        except StaleState:
            # A file changed under us; start over from a clean state (rare).
            state = _new_state(root, out, name, site_url, fresh)
            files, scan_warnings = scan(root, out)
            scan_warnings += _take_files(state, root, out)
            stats = state.update(files, [], progress=progress, **runner)
        finally:
            if progress is not None:
                progress.close()
    with _timed(result.stages, "manifest"):
        manifest.save(state, fp)
        # Files someone else left in the output folder go, as a clean build would do
        # (the update already did so when it rebuilt the site whole).
        if not stats.swept:
            result.files_removed = remove_unlisted(out, state.outputs)
    purging = opts.purge or bool(result.extra.get("claims_forgotten")) or purge_mark.pending(root)
    with _timed(result.stages, "parse cache"):
        if purging:
            parse_cache.clear(root)
        else:
            parse_cache.prune(root, len(stats.changed))  # keeps it under its bound

    # Stage: index (search indexes for the documents that changed). The local engine
    # writes BM25 first (vectors from the cache and the old index only), so the site and
    # word search are complete before the slow part; an interrupted embedding loses neither.
    site_first = opts.index and opts.embed and engine is None
    if opts.index:
        with _timed(result.stages, "index"):
            from ..search import run_index_stage

            with engine.index_hooks() if engine is not None else nullcontext():
                result.extra.update(run_index_stage(root, list(state.docs.values()),
                                                    embed=opts.embed and not site_first,
                                                    progress=opts.progress, stages=result.stages,
                                                    purge=purging))
        claims.commit()
        if purging:
            purge_mark.done(root)
    result.extra["site_ready_seconds"] = round(time.perf_counter() - t0, 3)
    if opts.on_site_ready is not None:
        opts.on_site_ready(time.perf_counter() - t0, int(result.extra.get("embeddings_pending", 0)))
    if site_first and opts.vectors == "now" and result.extra.get("embeddings_pending"):
        with _timed(result.stages, "embed"):
            from ..search import run_embed_stage

            result.extra.update(run_embed_stage(root, progress=opts.progress, stages=result.stages))

    result.documents = len(state.docs)
    result.documents_changed = len(stats.changed)
    result.documents_removed = len(stats.removed)
    result.pages_written = stats.pages_written
    result.pages_unchanged = stats.pages_unchanged
    result.files_removed += stats.files_removed
    result.broken_links = state.broken_links
    result.warnings = claims.warnings + scan_warnings + state.warnings
    result.extra["workers"] = stats.workers
    if engine is not None:
        engine.finish(result.extra)
    result.stages.update({f"update.{k}": v for k, v in stats.stages.items()})
    result.seconds = time.perf_counter() - t0
    return result, state


def _new_state(root: Path, out: Path, name: str, site_url: str, fresh: bool) -> SiteState:
    """An empty site state: a first or clean build, or a restart after a file moved under us."""
    state = SiteState(root, out, name, site_url)
    state.out_fresh = fresh
    return state


def _take_files(state: SiteState, root: Path, out: Path) -> list:
    """Tell the state which non-document files the corpus has now; their warnings."""
    disk, warnings = scan_files(root, out)
    state.set_files(disk)
    return warnings


def _changes(state: SiteState, files: list[SourceFile]) -> tuple[list[SourceFile], list[str]]:
    """Files whose bytes differ from what the state holds, and documents that vanished."""
    if not state.docs:
        return files, []
    upserts = []
    for f in files:
        known = state.docs.get(f.path)
        try:
            data = f.abspath.read_bytes()
        except OSError:
            upserts.append(f)  # parse_file reports why
            continue
        if known is None or known.hash != content_hash(data):
            upserts.append(f)
    # An undated document's date is its file's: a commit or a touch can change it alone.
    waiting = {f.path for f in upserts}
    held = [f for f in files if f.path not in waiting and state.docs[f.path].file_date is not None]
    now = dates.file_dates(state.root, [f.path for f in held])
    upserts += [f for f in held if now.get(f.path) != state.docs[f.path].file_date]
    upserts.sort(key=lambda f: f.path)
    present = {f.path for f in files}
    return upserts, sorted(p for p in state.docs if p not in present)
