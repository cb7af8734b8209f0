"""The per-document stages, as plain functions a worker process can run.

`parse_file`: read + parse one file (stage 2); `parse_page`: that and the body rendered
but for its links; `render_page`: complete the body with resolved links and write its
page (stages 5 and 6 for one document).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import jinja2

from ..site import emit, search as site_search, textscan
from ..model import Document, Warning_
from ..site.output import write_file
from ..markdown.mdit import markdown
from ..markdown.parse import SkipFile, parse
from ..site.render import draft_document, plain_text, render_document, sections_excerpt, text_sections
from ..corpus.scan import SourceFile
from ..site.model import SiteContext, as_home_page, title_rule
from . import parse_cache
from .workers import Rendered


def parse_file(f: SourceFile, titles: str | None = None) -> tuple[Document | None, list[Warning_]]:
    """Read and parse one file; a file that cannot be a document becomes a warning.
    `titles`: the corpus's `site.titles` rule, when the caller has it (a Ray task gets it
    from the driver, its files being bytes); otherwise read beside the file."""
    return _read_and(parse, f, titles)


def _read_and(fn: Callable[[str, bytes, str], tuple[Document, list[Warning_]]], f: SourceFile,
              titles: str | None, cached: bool = False) -> tuple[Document | None, list[Warning_]]:
    try:
        on_disk = isinstance(f.abspath, Path)
        if titles is None:
            titles = title_rule(corpus_root(f)) if on_disk else "heading"
        data = f.abspath.read_bytes()
        if cached and on_disk:
            return parse_cache.cached_parse(fn, f.path, data, titles, corpus_root(f))
        return fn(f.path, data, titles)
    except SkipFile as exc:
        return None, [Warning_(f.path, str(exc), code="skipped")]
    except OSError as exc:
        return None, [Warning_(f.path, f"cannot read: {exc.strerror or exc}", code="unreadable")]


def corpus_root(f: SourceFile) -> str:
    """The corpus folder `f` belongs to (its absolute path less its corpus path)."""
    full = str(f.abspath)
    if full.endswith("/" + f.path):
        return full[: -len(f.path) - 1]
    root = f.abspath
    for _ in range(f.path.count("/") + 1):
        root = root.parent
    return str(root)


def _parse_draft(path: str, data: bytes, titles: str) -> tuple[Document, list[Warning_]]:
    doc, warnings = parse(path, data, titles)
    draft_document(doc)
    return doc, warnings


def parse_page(f: SourceFile, titles: str | None = None) -> tuple[Document | None, list[Warning_]]:
    """`parse_file`, then the body rendered as far as it can be before links resolve
    (`render.draft_document`): what a build's first round does per document. A file on
    disk goes through the parse cache (`parse_cache`): bytes parsed before, under the
    same code and `site.titles`, are loaded instead of parsed again."""
    return _read_and(_parse_draft, f, titles, cached=True)


# `workers.Pool` calls this before forking: every worker needs the parsing code's
# fingerprint for the cache's keys, so it is computed once here.
parse_page.prefork = parse_cache.code_fingerprint  # type: ignore[attr-defined]


@dataclass
class PageContext:
    site: SiteContext
    out: Path


_ENV: jinja2.Environment | None = None


def render_page(ctx: PageContext, d: Document) -> Rendered:
    """Render one document's body and page, and write the page if its bytes changed."""
    rendered, data = page_bytes(ctx.site, d)
    rendered.written = write_page(ctx.site, ctx.out, rendered, data)
    return rendered


def write_page(site: SiteContext, out: Path, rendered: Rendered, data: bytes) -> bool:
    """Write one document's page, and the home page too when it is the site's home
    document (`site.home`): the one write every engine does, so a local and a Ray build
    write the same files. True when the page's bytes changed."""
    written = write_file(out / rendered.url, data)
    if rendered.path == site.home:
        write_file(out / "index.html", as_home_page(data, rendered.url))
    return written


def _warm() -> None:
    """Build the parser and compile the page templates once, in the parent, before it
    forks the build workers: each worker compiled them for itself (~45 ms, measured)."""
    global _ENV
    markdown()
    if _ENV is None:
        _ENV = emit.make_env()
    _ENV.get_template("page.html")


# `workers.Pool` calls this before forking (a function attribute, so the callers that
# build a Pool from these two functions need no change).
render_page.prefork = _warm  # type: ignore[attr-defined]


def page_bytes(site: SiteContext, d: Document) -> tuple[Rendered, bytes]:
    """`render_page` without the write: what the build keeps (`written` still False) and
    the page's bytes. A Ray build renders on other machines and writes here."""
    global _ENV
    if _ENV is None:
        _ENV = emit.make_env()
    d.html = render_document(d, site.resolver, site.titles, site.root)  # also frees its parse tree
    rendered = page_text(d)
    url, data = emit.document_page(site, _ENV, d)
    rendered.url = url
    return rendered, data


def page_text(d: Document) -> Rendered:
    """The rendered page's excerpt and its text for the site's search: the sections once
    (`render.text_sections`), the excerpt taken from them (not from the HTML again), and
    the page's terms and text shard JSON made from them here, in parallel; all in one C
    pass where the compiled scanner is built and covers the page (`textscan`)."""
    fast = textscan.page(d.html) if textscan.page is not None else None
    if fast is not None:
        d.excerpt, terms, d.search_text = fast
    else:
        sections = text_sections(d.html)
        d.excerpt = sections_excerpt(sections, 600)
        d.search_text = site_search.sections_json(sections).encode("utf-8")
        terms = site_search.sections_terms(sections)
    if d.is_session:  # raw session logs stay out of the site's search
        return Rendered(d.path, "", False, d.excerpt, d.search_text)
    return Rendered(d.path, "", False, d.excerpt, d.search_text, terms)

