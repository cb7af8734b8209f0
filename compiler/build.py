"""The build pipeline: scan -> parse -> resolve links -> claims -> render -> emit -> index.

Each stage is a module of its own; this file only runs them in order and collects
what they report. Nothing here reads the clock into the output.
"""

from __future__ import annotations

import gc
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

import jinja2

from . import emit
from .links import LinkGraph, Resolver, resolve_all
from .model import Document, Warning_
from .output import check_out_dir, mark_output, write_file, write_site
from .parse import SkipFile, parse
from .render import plain_text, render_document
from .scan import SourceFile, scan
from .site import Site, SiteContext
from .workers import InProcess, Pool, Rendered, worker_count

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


@dataclass
class BuildResult:
    documents: int = 0
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


def _progress(items: list[T], label: str, enabled: bool) -> Iterator[T]:
    if not enabled or not sys.stderr.isatty():
        yield from items
        return
    import click

    with click.progressbar(items, label=label, file=sys.stderr) as bar:
        yield from bar


def parse_file(f: SourceFile) -> tuple[Document | None, list[Warning_]]:
    """Read and parse one file; a file that cannot be a document becomes a warning."""
    try:
        return parse(f.path, f.abspath.read_bytes())
    except SkipFile as exc:
        return None, [Warning_(f.path, str(exc), code="skipped")]
    except OSError as exc:
        return None, [Warning_(f.path, f"cannot read: {exc.strerror or exc}", code="unreadable")]


def make_corpus(root: Path, parsed: Iterable[tuple[Document | None, list[Warning_]]],
                warnings: list[Warning_]) -> Corpus:
    """Collect parsed documents and resolve every link against the whole corpus."""
    docs: list[Document] = []
    for doc, doc_warnings in parsed:
        warnings.extend(doc_warnings)
        if doc is not None:
            docs.append(doc)
    resolver = Resolver.build(docs)
    resolve_all(docs, resolver)
    return Corpus(root, docs, resolver, LinkGraph.build(docs), warnings)


def load_corpus(root: Path, out: Path | None = None, progress: bool = False) -> Corpus:
    """Scan, parse and resolve links. Bad files become warnings, never exceptions."""
    files, warnings = scan(root, out)
    return make_corpus(root, (parse_file(f) for f in _progress(files, "Parsing", progress)), warnings)


@dataclass
class PageContext:
    site: SiteContext
    out: Path


_ENV: jinja2.Environment | None = None


def render_page(ctx: PageContext, d: Document) -> Rendered:
    """Render one document's body and page and write it if its bytes changed."""
    global _ENV
    if _ENV is None:
        _ENV = emit.make_env()
    d.html = render_document(d, ctx.site.resolver, ctx.site.titles)
    d.tokens = d.md_env = None  # free the parse tree
    d.excerpt = plain_text(d.html, 600)
    url, data = emit.document_page(ctx.site, _ENV, d)
    return Rendered(d.path, url, write_file(ctx.out / url, data), d.excerpt)


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
    with gc_paused():
        return _build(opts)


def _build(opts: BuildOptions) -> BuildResult:
    t0 = time.perf_counter()
    result = BuildResult()
    corpus_root = opts.corpus.resolve()
    out = opts.out.resolve()
    check_out_dir(corpus_root, out)
    out.mkdir(parents=True, exist_ok=True)
    mark_output(out)

    with _timed(result.stages, "scan"):
        files, warnings = scan(corpus_root, out)
    n_workers = worker_count(len(files))
    runner = Pool(n_workers, parse_file, render_page) if n_workers > 1 else InProcess(parse_file, render_page)
    with runner:
        with _timed(result.stages, "parse"):
            parsed = runner.parse(list(_progress(files, "Parsing", opts.progress and n_workers == 1)))
        with _timed(result.stages, "links"):
            corpus = make_corpus(corpus_root, parsed, warnings)
            site = Site.build(corpus.docs, corpus.resolver, corpus.graph, opts.name or corpus_root.name, opts.site_url)
        with _timed(result.stages, "render"):
            rendered = runner.render(PageContext(site.context(), out), site.docs)
    by_path = {d.path: d for d in site.docs}
    for r in rendered:
        by_path[r.path].excerpt = r.excerpt
    written = sum(1 for r in rendered if r.written)
    keep = {r.url for r in rendered}

    with _timed(result.stages, "emit"):
        outputs = {url: data for url, data in emit.site_pages(site, emit.make_env()) if url not in keep}
    with _timed(result.stages, "write"):
        stats = write_site(out, outputs, keep=keep)

    result.documents = len(corpus.docs)
    result.pages_written = stats.written + written
    result.pages_unchanged = stats.unchanged + len(rendered) - written
    result.files_removed = stats.removed
    result.broken_links = sum(1 for d in corpus.docs for l in d.links if l.broken)
    result.warnings = corpus.warnings
    result.extra["workers"] = n_workers
    result.seconds = time.perf_counter() - t0
    return result
