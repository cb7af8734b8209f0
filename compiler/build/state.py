"""The site as a whole, kept up to date one change at a time.

`SiteState` holds every document (without its parse tree), the link resolver and
graph, each document's facets and the set of files the site consists of. `update()`
takes files that changed or vanished and re-emits exactly the pages that depend on
them (see `deps`). A clean build is the same update applied to an empty state, so
both paths run the same code and must produce the same bytes.
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import dates
from ..site import emit, emitters, search as site_search
from ..corpus.attachments import Attachments, Stat
from ..site.folder_tree import all_folders
from .stages import PageContext, parse_page, render_page
from ..site.deps import changed_facets, facets
from ..site.emitters import emitters_to_run
from ..corpus.links import LinkGraph, Resolver, _project_slug, resolve_all
from ..model import Document, Warning_
from ..site.output import remove_files, remove_unlisted, write_file
from ..corpus.scan import SourceFile
from ..site.model import Site, SiteContext, SettingsError, home_document, load_settings, patch_site, tag_family
from .workers import InProcess, Pool, Rendered, worker_count

RunnerFactory = Callable[[int], Any]


def default_runner(n_docs: int) -> Any:
    n = worker_count(n_docs)
    return Pool(n, parse_page, render_page) if n > 1 else InProcess(parse_page, render_page)


def _link_keys(target: str) -> set[str]:
    """Names under which a link could match a document (an over-approximation). A
    wikilink's `\\` reads as `/` (`links._wiki_name`): `[[notes\\a]]` is `notes/a`."""
    t = target.strip().lower()
    keys = {t.removesuffix(".md"), posixpath.basename(t).removesuffix(".md")}
    if "\\" in t:
        t = t.replace("\\", "/")
        keys |= {t.removesuffix(".md"), posixpath.basename(t).removesuffix(".md")}
    return keys


def _index_links(index: dict[str, set[str]], d: Document) -> None:
    for link in d.links:
        for key in _link_keys(link.target):
            index.setdefault(key, set()).add(d.path)


def _resolver_keys(d: Document | None) -> set[tuple[str, str]]:
    """The keys `d` holds in the resolver's tables, exactly as the tables hold them
    (stems are case-sensitive; titles, aliases and project slugs folded):
    `links.Resolver.add`. A project's slug is a name of its own: `[[atlas]]` names
    `projects/atlas/state.md`, whatever its title, and the project keeps the name from
    its decision log `decisions/atlas.md`."""
    if d is None:
        return set()
    keys = {("path", d.path), ("stem", d.stem)} | {("name", k) for k in Resolver._name_keys(d)}
    slug = _project_slug(d.path)
    if slug is not None:
        keys.add(("project", slug))
    return keys


@dataclass(frozen=True)
class Relink:
    """A link in a document the update did not change that now resolves elsewhere:
    `was` and `now` are paths, `now` None when it no longer resolves (`candidates`: the
    documents it could mean, when that is why)."""

    source: str
    target: str  # the link as written, e.g. "Identity"
    kind: str  # wiki, embed or md
    was: str | None
    now: str | None
    candidates: tuple[str, ...] = ()


@dataclass
class UpdateStats:
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    pages_rendered: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    files_removed: int = 0
    workers: int = 1
    swept: bool = False  # the output folder was checked for files not in the site
    relinked: list[Relink] = field(default_factory=list)  # resolved links other pages' changes moved
    stages: dict[str, float] = field(default_factory=dict)  # seconds per step


class SiteState:
    def __init__(self, root: Path, out: Path, name: str, site_url: str = ""):
        self.root, self.out, self.name, self.site_url = root, out, name, site_url
        self.docs: dict[str, Document] = {}
        self.doc_warnings: dict[str, list[Warning_]] = {}
        self.facets: dict[str, dict[str, Any]] = {}
        self.titles: dict[str, str] = {}
        self.type_counts: dict[str, int] = {}
        self.folder_counts: dict[str, int] = {}
        self.folders: tuple[str, ...] = ()  # the sidebar's folder tree (`folder_tree`)
        self.resolver = Resolver()
        self.graph = LinkGraph({}, {})
        self._link_index: dict[str, set[str]] | None = None  # see link_index
        self.types: list[str] = []
        self.outputs: set[str] = set()
        self.doc_urls: set[str] = set()  # every document page's URL (kept with `docs`)
        # Paths whose documents changed since the manifest last encoded them (None: all).
        self.manifest_dirty: set[str] | None = None
        self.site: Site | None = None  # the whole-corpus view, patched by each update
        self.home: str | None = None  # the document shown as the home page (`site.home_document`)
        self.attachments = Attachments()  # the corpus's other files, and the site's copies
        self._file_keys: set[str] = set()  # link keys of attachments that came or went
        # Set by the caller when the output folder held no file at all (but our marker)
        # before this state's first update: a clean build then has nothing to sweep.
        self.out_fresh = False

    # ----- queries -------------------------------------------------------------
    @property
    def warnings(self) -> list[Warning_]:
        return [w for path in sorted(self.doc_warnings) for w in self.doc_warnings[path]]

    @property
    def link_index(self) -> dict[str, set[str]]:
        """Link key -> the documents with such a link. Only incremental updates use it,
        so a one-off build never pays for it (0.3 s at 10,000 documents): built on
        first use, then kept up to date."""
        if self._link_index is None:
            index: dict[str, set[str]] = {}
            for d in self.docs.values():
                _index_links(index, d)
            self._link_index = index
        return self._link_index

    @property
    def broken_links(self) -> int:
        return sum(1 for d in self.docs.values() for l in d.links if l.broken)

    def set_files(self, disk: dict[str, Stat]) -> None:
        """The attachments now on disk (`attachments.scan_files`); the next update
        re-resolves the links that could name one that came or went, and copies edits."""
        old = self.attachments.disk
        for p in set(old) ^ set(disk):
            (self.resolver.add_file if p in disk else self.resolver.remove_file)(p)
            self._file_keys |= {p.lower(), posixpath.basename(p).lower()}
        self.attachments.disk = dict(disk)

    def _referenced_files(self) -> set[str]:
        return {l.resolved for d in self.docs.values() for l in d.links if l.kind == "file" and l.resolved}

    # ----- the update ------------------------------------------------------------
    def update(self, upserts: list[SourceFile], deletes: list[str],
               runner_factory: RunnerFactory = default_runner, progress: Any = None) -> UpdateStats:
        try:
            return self._update(upserts, deletes, runner_factory, progress)
        except BaseException:
            self.site = None  # maybe not patched to match `docs`: the next update rebuilds it
            self.manifest_dirty = None  # ... and the manifest encodes every document again
            raise

    def _update(self, upserts: list[SourceFile], deletes: list[str], runner_factory: RunnerFactory,
                progress: Any) -> UpdateStats:
        stats = UpdateStats()
        full = was_empty = not self.docs
        clock = _Clock(stats.stages)
        with runner_factory(len(upserts)) as runner:
            stats.workers = getattr(runner, "n", 1)
            if progress is not None:
                runner.progress = progress
            parsed = runner.parse(upserts)
            clock("parse")
            old_docs: dict[str, Document | None] = {}
            for sf, (doc, warnings) in zip(upserts, parsed):
                old_docs.setdefault(sf.path, self.docs.get(sf.path))
                self.doc_warnings[sf.path] = warnings
                if doc is None:
                    self._remove(sf.path)
                else:
                    self._put(doc)
            for path in deletes:
                old_docs.setdefault(path, self.docs.get(path))
                self.doc_warnings.pop(path, None)
                self._remove(path)
            changed = {p for p in old_docs if p in self.docs}
            dates.fill(self.root, (self.docs[p] for p in sorted(changed)))
            removed = {p for p, d in old_docs.items() if d is not None and p not in self.docs}
            stats.changed, stats.removed = sorted(changed), sorted(removed)

            render = self._relink(old_docs, changed, removed, full, stats.relinked)
            home = home_document(self.docs, _home_setting(self.root))
            home_moved = home != self.home
            if home_moved:
                self.home = home
                if home is not None:
                    render.add(home)  # its page is written at the top too (`stages.render_page`)
            types = sorted(t for t, n in self.type_counts.items() if n)
            folders = tuple(all_folders([f for f, n in self.folder_counts.items() if n]))
            if types != self.types or folders != self.folders:
                self.types, self.folders = types, folders
                render = set(self.docs)  # the navigation on every page changed
                full = True
            clock("links")

            # Pages to re-render whose documents were not parsed in this round.
            reparse = sorted(render - changed)
            if reparse:
                again = runner.parse([SourceFile(p, self.root / p) for p in reparse])
                for p, (doc, _) in zip(reparse, again):
                    if doc is None or doc.hash != self.docs[p].hash:
                        raise StaleState(p)
                    held = self.docs[p]
                    held.draft, held.deferred, held.title_anchor = doc.draft, doc.deferred, doc.title_anchor
            ctx = SiteContext(self.resolver, self.graph, self.titles, self.types, self.name, self.site_url, self.root,
                              self.home, self.folders)
            def emit_early() -> None:
                # Every generated page is due. Those that show nothing rendering makes
                # (all but the search data and the feed) are emitted while the workers
                # render, by this otherwise idle process.
                self.site = self._site_view()
                self._emit_site(emitters.Selection(), stats, rendered=False)

            def take(part: list[Rendered]) -> None:
                # Rendered pages, as they come: the search model's entries are made now,
                # while the workers go on, not after the round.
                for r in part:
                    self.docs[r.path].excerpt = r.excerpt
                    self.docs[r.path].search_text = r.search_text
                    site_search.remember(r.path, r.search_text, r.search_terms)
                site_search.prepare([self.docs[r.path] for r in part], owner=self.resolver)

            rendered = runner.render(PageContext(ctx, self.out), [self.docs[p] for p in sorted(render)],
                                     emit_early if full else None, take)
            clock("render")
        stats.pages_rendered += len(rendered)
        stats.pages_written += sum(1 for r in rendered if r.written)
        stats.pages_unchanged += sum(1 for r in rendered if not r.written)

        selection, touched = self._selection(render | removed, full)
        if home_moved and selection.emitters is not None:
            selection.emitters.add("home")
        if not full:
            self.site = self._site_view(old_docs)
        if selection.emitters is None or selection.emitters:
            self._emit_site(selection, stats, rendered=True if full else None)
            clock("emit")
        before = self.attachments.urls()
        copied, gone = self.attachments.publish(self.root, self.out, self._referenced_files())
        stats.pages_written += copied
        stats.files_removed += gone
        files_moved = before != self.attachments.urls()
        # Pages may appear or vanish (search term files with the words in titles and text).
        if full or files_moved or touched & {"exists", "type", "tags", "folder", "title", "search_text"}:
            assert self.site is not None
            new_outputs = self.doc_urls | emitters.site_urls(self.site) | self.attachments.urls()
            if was_empty:  # a clean build also clears whatever an older build left behind
                stats.files_removed += 0 if self.out_fresh else remove_unlisted(self.out, new_outputs)
                stats.swept = True
            else:
                stats.files_removed += remove_files(self.out, self.outputs - new_outputs)
            self.outputs = new_outputs
        self.out_fresh = False
        if self.manifest_dirty is not None:
            # Every document this update replaced, removed, relinked or rendered.
            self.manifest_dirty |= changed | removed | render
        clock("write")
        return stats

    def warm(self) -> None:
        """Build the whole-corpus view and the offline search model now, so the first save
        of a long-running process does not pay for them (1.8-3.5 s at 10,000 documents:
        the model tokenizes every page once). What they would write stays due."""
        if self.site is None:
            self.site = self._site_view()
        emitters.site_urls(self.site)

    def _site_view(self, old_docs: dict[str, Document | None] | None = None) -> Site:
        """The whole-corpus view (lists, graph, feed). It holds the documents themselves,
        so excerpts set after rendering show in it. Built whole (O(n log n): 80 ms at
        10,000 documents) the first time; after that each update patches the previous
        view with the documents it replaced (`old_docs`: path -> the document before)."""
        site = self.site
        if old_docs is None or site is None or site.resolver is not self.resolver or site.graph is not self.graph:
            site = Site.build(list(self.docs.values()), self.resolver, self.graph, self.name, self.site_url)
        else:
            patch_site(site, old_docs, self.docs)
        site.root, site.home, site.folders = self.root, self.home, self.folders
        return site

    def _emit_site(self, selection: emitters.Selection, stats: UpdateStats, rendered: bool | None) -> None:
        """Write the generated pages `selection` asks for (see `emitters.site_pages` for
        `rendered`), each only if its bytes changed."""
        assert self.site is not None
        doc_urls = self.doc_urls
        for url, data in emitters.site_pages(self.site, emit.make_env(), selection, rendered):
            if url in doc_urls:
                continue  # a document page always wins its path
            if write_file(self.out / url, data):
                stats.pages_written += 1
            else:
                stats.pages_unchanged += 1

    def _relink(self, old_docs: dict[str, Document | None], changed: set[str], removed: set[str],
                full: bool, relinked: list[Relink] | None = None) -> set[str]:
        """Re-resolve the links a change could affect; return the pages to re-render.
        `relinked` collects the resolved links of unchanged pages that now resolve
        elsewhere or not at all (a write warns of them)."""
        if full:
            self._file_keys = set()
            # Every page is rendered anyway: resolve and graph, skip the change tracking.
            resolve_all((self.docs[p] for p in sorted(self.docs)), self.resolver)
            for p in sorted(set(self.docs) | removed):
                self.graph.set_outgoing(p, self.docs.get(p))
            return set(self.docs)
        # Other pages' links can resolve differently only through a resolver key (path,
        # stem, title or alias, each as its own table keys it) that appeared or
        # disappeared. (A body edit to a page with 2,000 backlinks re-resolved all of
        # them: 50 ms a save.) The lookup names of those keys find the linking pages.
        names, self._file_keys = self._file_keys, set()  # attachments that came or went
        for p, old in old_docs.items():
            new = self.docs.get(p)
            gone_or_new = _resolver_keys(old) ^ _resolver_keys(new)
            names |= {key.lower().removesuffix(".md") for _, key in gone_or_new}  # as `_link_keys`
        reresolve = set(changed)
        for n in names:
            reresolve |= self.link_index.get(n, set())
        reresolve = {p for p in reresolve if p in self.docs}
        render: set[str] = set(changed)
        for p in sorted(reresolve):
            d = self.docs[p]
            before = [(l.resolved, l.candidates) for l in d.links]
            for link in d.links:
                res = self.resolver.resolve(link, p)
                link.resolved, link.candidates = res.path, res.candidates
            if before != [(l.resolved, l.candidates) for l in d.links]:
                render.add(p)
                if relinked is not None and p not in changed:
                    relinked.extend(Relink(p, l.target, l.kind, was, l.resolved, l.candidates)
                                    for (was, _), l in zip(before, d.links)
                                    if was is not None and was != l.resolved and l.kind != "file")
        for p in sorted(reresolve | removed):
            old_targets, new_targets = self.graph.set_outgoing(p, self.docs.get(p))
            render |= old_targets ^ new_targets  # their backlinks changed
        render |= self._embedders(changed | removed)
        # A title shows on every page that links to or from its document.
        for p, old in old_docs.items():
            new = self.docs.get(p)
            if old is None or new is None or old.title != new.title:
                render |= set(self.graph.backlinks.get(p, ())) | set(self.graph.outgoing.get(p, ()))
        return {p for p in render if p in self.docs}

    def _embedders(self, paths: set[str]) -> set[str]:
        """Pages that show one of `paths` embedded (`![[Note]]`), directly or through
        other embeds: their text changes with it."""
        found: set[str] = set()
        todo = list(paths)
        while todo:
            p = todo.pop()
            for s in self.graph.backlinks.get(p, ()):
                d = self.docs.get(s)
                if s not in found and d is not None and any(l.kind == "embed" and l.resolved == p for l in d.links):
                    found.add(s)
                    todo.append(s)
        return found

    def _selection(self, paths: set[str], full: bool) -> tuple[emitters.Selection, set[str]]:
        """Which generated pages show something that changed (and which facets did)."""
        touched: set[str] = set()
        sel = emitters.Selection(set(), set(), set(), set(), set())
        for p in sorted(paths):
            old_f = self.facets.get(p)
            new_f = facets(self.docs[p]) if p in self.docs else None
            diff = changed_facets(old_f, new_f)
            if not diff:
                continue
            touched |= diff
            sel.search_shards.add(emit.search_shard(p))
            for f in (old_f, new_f):
                if f is None:
                    continue
                sel.types.add(f["type"])
                sel.tags.update(tag_family(f["tags"]))
                parts = f["folder"].split("/") if f["folder"] else []
                sel.folders.update("/".join(parts[:i]) for i in range(len(parts) + 1))
            if new_f is None:
                self.facets.pop(p, None)
            else:
                self.facets[p] = new_f
        if full:
            return emitters.Selection(), touched
        sel.emitters = emitters_to_run(touched)
        return sel, touched

    # ----- bookkeeping -----------------------------------------------------------
    def _put(self, doc: Document) -> None:
        self._remove(doc.path)
        self.docs[doc.path] = doc
        self.doc_urls.add(doc.url)
        self.titles[doc.path] = doc.title
        self.resolver.add(doc)
        self.type_counts[doc.type] = self.type_counts.get(doc.type, 0) + 1
        self.folder_counts[doc.folder] = self.folder_counts.get(doc.folder, 0) + 1
        if self._link_index is not None:
            _index_links(self._link_index, doc)

    def _remove(self, path: str) -> None:
        old = self.docs.get(path)
        if old is None:
            return
        self._unindex_links(path)
        self.resolver.remove(old)
        self.type_counts[old.type] -= 1
        self.folder_counts[old.folder] -= 1
        del self.docs[path]
        self.doc_urls.discard(old.url)
        del self.titles[path]

    def _unindex_links(self, path: str) -> None:
        old = self.docs.get(path)
        if old is None or self._link_index is None:
            return
        for link in old.links:
            for key in _link_keys(link.target):
                holders = self._link_index.get(key)
                if holders:
                    holders.discard(path)
                    if not holders:
                        del self._link_index[key]


def _home_setting(root: Path) -> str:
    try:
        return load_settings(root).home
    except SettingsError:
        return ""  # the build reported it before it started


class _Clock:
    """Adds the time since the previous call to `stages[name]`."""

    def __init__(self, stages: dict[str, float]):
        self.stages, self.t = stages, time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.stages[name] = self.stages.get(name, 0.0) + now - self.t
        self.t = now


class StaleState(RuntimeError):
    """A page's source changed on disk while we re-rendered it; the caller rescans."""
