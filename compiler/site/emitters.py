"""The site's emitters: every generated page (all but the document pages), as one list.

Each `Emitter` says its name, the document facets it shows (`deps.FACETS`: a change to one
of them re-runs it after an update; a document appearing or vanishing re-runs them all),
the URLs it owns, and how it emits them. `EMITTERS` is the one list the build and the live
site read, in order: adding a generated page is one new entry here (its page function goes
in `emit.py` or a module of its own). A `full_only` emitter shows nothing a document
changes (the templates' fixed pages): it runs on a full emit only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import jinja2

from . import emit, emit_parts, search as site_search
from .deps import RENDER_FACETS
from .emit import Output
from .model import Site, folder_url, tag_url, type_url


@dataclass
class Selection:
    """Which generated pages to emit; None everywhere means all of them."""

    emitters: set[str] | None = None  # names from `EMITTERS`; None = all, the full-only ones too
    types: set[str] | None = None
    tags: set[str] | None = None
    folders: set[str] | None = None
    search_shards: set[int] | None = None


@dataclass
class Pass:
    """One emit over a site: what every emitter reads, and what they share."""

    site: Site
    env: jinja2.Environment
    sel: Selection
    _broken: list[dict] | None = field(default=None, repr=False)

    @property
    def broken(self) -> list[dict]:
        """The broken links (~30 ms at 10k): found once for the two emitters that show them."""
        if self._broken is None:
            self._broken = self.site.broken_links()
        return self._broken


@dataclass(frozen=True)
class Emitter:
    name: str
    facets: frozenset[str]  # the document facets it shows
    emit: Callable[[Pass], Iterable[Output]]
    urls: Callable[[Site], Iterable[str]]  # what it may write, without rendering anything
    full_only: bool = False

    @property
    def needs_render(self) -> bool:
        """It shows something only rendering produces (it waits for the documents' pages)."""
        return bool(self.facets & RENDER_FACETS)


def _broken(p: Pass) -> Iterator[Output]:
    # An update renders it again only if what it shows changed (50-100 ms at 10k in the
    # benchmark corpus); a full emit always does.
    shown = (p.broken, tuple(p.site.types), p.site.name, p.site.site_url)
    if not emit_parts.unchanged(p.site, "broken-page", shown) or p.sel.emitters is None:
        yield emit.broken_page(p.site, p.env, p.broken)


def _graph(p: Pass) -> Iterator[Output]:
    yield emit.graph_json(p.site, p.broken)
    yield emit.graph_data(p.site)
    yield emit.graph_page(p.site, p.env)  # its type and tag filters


def _fixed(p: Pass) -> Iterator[Output]:
    yield emit.search_page(p.site, p.env)
    yield emit.not_found_page(p.site, p.env)
    yield from emit.static_assets()


def _e(name: str, facets: set[str], fn: Callable[[Pass], Iterable[Output]], urls: Callable[[Site], Iterable[str]],
       full_only: bool = False) -> Emitter:
    return Emitter(name, frozenset(facets), fn, urls, full_only)


EMITTERS: list[Emitter] = [
    # With a home document, its page is the home page (the document pages write it).
    _e("home", {"title", "type", "date", "meta"}, lambda p: [] if p.site.home else [emit.home_page(p.site, p.env)],
       lambda s: ["index.html"]),
    _e("types", {"title", "type", "status", "date"}, lambda p: emit.type_pages(p.site, p.env, p.sel.types),
       lambda s: [type_url(t) for t in s.by_type]),
    _e("tags", {"title", "tags", "status", "date"}, lambda p: emit.tag_pages(p.site, p.env, p.sel.tags),
       lambda s: ["_/tags/index.html", *(tag_url(t) for t in s.by_tag)]),
    _e("folders", {"title", "status", "date", "folder"}, lambda p: emit.folder_pages(p.site, p.env, p.sel.folders),
       lambda s: [folder_url(f) for f in s.all_folders()]),
    _e("recent", {"title", "status", "date"}, lambda p: [emit.recent_page(p.site, p.env)],
       lambda s: ["_/recent/index.html"]),
    _e("broken", {"links"}, _broken, lambda s: ["_/broken/index.html"]),
    _e("graph", {"title", "type", "tags", "links"}, _graph,
       lambda s: ["graph.json", "_/graph-data.js", "_/graph/index.html"]),
    _e("search_data", {"title", "tags", "search_text"}, lambda p: emit.search_data(p.site, p.sel.search_shards),
       lambda s: site_search.search_urls(s.docs, owner=s.resolver)),
    _e("sitemap", {"date"}, lambda p: [emit.sitemap(p.site)] if p.site.site_url else [],
       lambda s: ["sitemap.xml"] if s.site_url else []),
    _e("feed", {"title", "date", "excerpt"}, lambda p: [emit.feed(p.site)], lambda s: ["feed.xml"]),
    # Pages that only change with the navigation or the templates.
    _e("fixed", set(), _fixed,
       lambda s: ["_/search/index.html", "404.html", *(url for url, _ in emit.static_files())], full_only=True),
]
BY_NAME = {e.name: e for e in EMITTERS}


def emitters_to_run(changed: set[str]) -> set[str]:
    """The emitters that show one of these changed facets ("exists": all of them)."""
    chosen = [e for e in EMITTERS if not e.full_only]
    if "exists" in changed:
        return {e.name for e in chosen}
    return {e.name for e in chosen if e.facets & changed}


def site_pages(site: Site, env: jinja2.Environment, sel: Selection | None = None,
               rendered: bool | None = None) -> Iterator[Output]:
    """The generated pages (everything but document pages) that `sel` asks for.

    `rendered=False` keeps to the pages that show nothing rendering produces (they can
    be emitted while documents render), `True` to the others, None means both."""
    p = Pass(site, env, sel or Selection())
    run = p.sel.emitters
    for e in EMITTERS:
        if e.full_only and run is not None or run is not None and e.name not in run:
            continue
        if rendered is not None and e.needs_render != rendered:
            continue
        yield from e.emit(p)


def site_urls(site: Site) -> set[str]:
    """Every generated page's path, without rendering any of them."""
    return {url for e in EMITTERS for url in e.urls(site)}
