"""The build pipeline: scan -> parse -> resolve links -> claims -> render -> emit -> index.

Each stage is a module of its own; this file only runs them in order and collects
what they report. Nothing here reads the clock into the output.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, TypeVar

from . import emit
from .links import LinkGraph, Resolver, resolve_all
from .model import Document, Warning_
from .output import check_out_dir, write_site
from .parse import SkipFile, parse
from .render import render_document
from .scan import scan
from .site import Site

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


def load_corpus(root: Path, out: Path | None = None, progress: bool = False) -> Corpus:
    """Scan, parse and resolve links. Bad files become warnings, never exceptions."""
    files, warnings = scan(root, out)
    docs: list[Document] = []
    for f in _progress(files, "Parsing", progress):
        try:
            data = f.abspath.read_bytes()
            doc, doc_warnings = parse(f.path, data)
        except SkipFile as exc:
            warnings.append(Warning_(f.path, str(exc), code="skipped"))
            continue
        except OSError as exc:
            warnings.append(Warning_(f.path, f"cannot read: {exc.strerror or exc}", code="unreadable"))
            continue
        docs.append(doc)
        warnings.extend(doc_warnings)
    resolver = Resolver.build(docs)
    resolve_all(docs, resolver)
    return Corpus(root, docs, resolver, LinkGraph.build(docs), warnings)


def render_all(corpus: Corpus, progress: bool = False) -> None:
    titles = {d.path: d.title for d in corpus.docs}
    for d in _progress(corpus.docs, "Rendering", progress):
        d.html = render_document(d, corpus.resolver, titles)
        d.tokens = d.md_env = None  # free the parse trees


def emit_site(corpus: Corpus, name: str, site_url: str = "") -> dict[str, bytes]:
    site = Site.build(corpus.docs, corpus.resolver, corpus.graph, name, site_url)
    env = emit.make_env()
    outputs: dict[str, bytes] = {}
    for d in site.docs:
        url, data = emit.document_page(site, env, d)
        outputs[url] = data
    for url, data in emit.site_pages(site, env):
        if url in outputs:
            # A document page already claimed this path; documents win, generated pages
            # live under `_/` so this only happens for a corpus folder named `_`.
            continue
        outputs[url] = data
    return outputs


@contextmanager
def _timed(stages: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        stages[name] = stages.get(name, 0.0) + time.perf_counter() - t0


def build(opts: BuildOptions) -> BuildResult:
    t0 = time.perf_counter()
    result = BuildResult()
    corpus_root = opts.corpus.resolve()
    check_out_dir(corpus_root, opts.out)

    with _timed(result.stages, "scan+parse"):
        corpus = load_corpus(corpus_root, opts.out, opts.progress)
    with _timed(result.stages, "render"):
        render_all(corpus, opts.progress)
    with _timed(result.stages, "emit"):
        outputs = emit_site(corpus, opts.name or corpus_root.name, opts.site_url)
    with _timed(result.stages, "write"):
        stats = write_site(opts.out, outputs)

    result.documents = len(corpus.docs)
    result.pages_written = stats.written
    result.pages_unchanged = stats.unchanged
    result.files_removed = stats.removed
    result.broken_links = sum(1 for d in corpus.docs for l in d.links if l.broken)
    result.warnings = corpus.warnings
    result.seconds = time.perf_counter() - t0
    return result
