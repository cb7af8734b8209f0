"""The site-wide model the emitters share: URLs of generated pages, tags, folders, nav.

Generated pages live under `_/` so they can never collide with a document's page
(`<path-without-.md>/index.html`).
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import operator
import re
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..corpus.links import LinkGraph, Resolver
from ..model import Document
from .output import OutputError

SETTINGS_FILE = "commonplace.toml"


class SettingsError(OutputError):
    """commonplace.toml cannot be used; the build stops before writing anything."""


@dataclass(frozen=True)
class SiteSettings:
    title: str = ""
    url: str = ""
    home: str = ""  # the corpus page shown as the home page (`home_document`)
    titles: str = "heading"  # a page without a frontmatter title: "heading" or "filename"


def check_site_url(url: str, where: str) -> str:
    """An absolute http(s) URL without query or fragment, returned without its final '/'."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise SettingsError(f"{where}: the site URL must be an absolute http(s) URL such as "
                            f"https://example.org/notes (got {url!r})")
    return url.rstrip("/")


def load_settings(root: Path) -> SiteSettings:
    """The site settings in `<corpus>/commonplace.toml` (all optional):

        [site]
        title = "Team memory"                  # default: the corpus folder's name
        url = "https://notes.example.org/"     # absolute sitemap and feed links
        home = "Start.md"                      # default: Home.md, else index.md
        state_dir = "~/.cache/my-vault"        # derived state outside the corpus
        titles = "filename"                    # default "heading": see TITLE_RULES

    Command-line options win over the file. Unknown keys are an error, so a typo never
    silently does nothing."""
    path = root / SETTINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return SiteSettings()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read the settings: {exc}") from None
    unknown = sorted(set(data) - {"site"})
    site = data.get("site", {})
    if not isinstance(site, dict):
        raise SettingsError(f"{path}: [site] must be a table")
    unknown += [f"site.{k}" for k in sorted(set(site) - {"title", "url", "home", "state_dir", "titles"})]
    if unknown:
        raise SettingsError(f"{path}: unknown setting {', '.join(unknown)} "
                            "(known: site.title, site.url, site.home, site.state_dir, site.titles)")
    title, url, home = site.get("title", ""), site.get("url", ""), site.get("home", "")
    if not isinstance(title, str) or not isinstance(url, str) or not isinstance(home, str):
        raise SettingsError(f"{path}: site.title, site.url and site.home must be strings")
    titles = site.get("titles", "heading")
    if titles not in TITLE_RULES:
        raise SettingsError(f"{path}: site.titles must be one of {', '.join(map(repr, TITLE_RULES))} (got {titles!r})")
    return SiteSettings(title.strip(), check_site_url(url, str(path)) if url else "", home.strip().lstrip("/"), titles)


# Where a page's title comes from when its frontmatter has none: "heading" (the default)
# takes the first `# ` heading outside code, else the file name; "filename" takes the
# file name, as Obsidian shows a note (its `# ` headings stay in the body).
TITLE_RULES = ("heading", "filename")

_TITLE_RULE: dict[str, tuple[float, int | None, str]] = {}  # root -> (checked at, mtime, rule)


def title_rule(root: Path | str, fresh: bool = False) -> str:
    """`site.titles` of the corpus at `root`. Asked once per parsed file (in workers
    too), so commonplace.toml is looked at again only when a second has passed, and read
    again only when it changed. An unreadable file counts as the default here: the build
    reports it where settings are loaded. `fresh`: look now (a build's start does)."""
    key = str(root)
    now = time.monotonic()
    got = _TITLE_RULE.get(key)
    if got is not None and now - got[0] < 1.0 and not fresh:
        return got[2]
    path = Path(key) / SETTINGS_FILE
    try:
        stamp: int | None = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    if got is None or got[1] != stamp:
        rule = "heading"
        if stamp is not None:
            try:
                rule = load_settings(Path(key)).titles
            except SettingsError:
                pass
        got = (now, stamp, rule)
    _TITLE_RULE[key] = (now, got[1], got[2])
    return got[2]


HOME_NAMES = ("Home.md", "home.md", "index.md", "Index.md")


def home_document(paths: "set[str] | dict[str, object]", configured: str = "") -> str | None:
    """The document the site shows as its home page: the configured one (`site.home`,
    with or without `.md`), else `Home.md`, else `index.md` at the top of the corpus;
    None: the generated overview."""
    if configured:
        for cand in (configured, configured + ".md"):
            if cand in paths:
                return cand
        return None
    return next((n for n in HOME_NAMES if n in paths), None)


def as_home_page(data: bytes, url: str) -> bytes:
    """A document page's bytes moved to the site's top (`index.html`): every reference
    in it is relative and climbs to the top first ("../" per folder: `render.href`,
    `render.root_prefix`), so the climb is all that changes."""
    depth = url.count("/")
    return data.replace(b'="' + b"../" * depth, b'="./') if depth else data


def resolve_site(root: Path, name: str | None, site_url: str) -> tuple[str, str]:
    """The site's title and URL: command-line values, else commonplace.toml, else the
    folder's name and no URL."""
    settings = load_settings(root)
    url = check_site_url(site_url, "--site-url") if site_url else settings.url
    return name or settings.title or root.name, url

_SAFE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def slug(text: str) -> str:
    """URL-safe, collision-free slug: plain names stay, anything else gets a hash suffix."""
    if _SAFE.match(text) and len(text) <= 80:
        return text
    base = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")[:60] or "x"
    return f"{base}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:6]}"


def type_url(t: str) -> str:
    return f"_/types/{slug(t)}/index.html"


def tag_url(t: str) -> str:
    return f"_/tags/{slug(t)}/index.html"


def tag_family(tags: list[str]) -> list[str]:
    """Each tag and, for a nested one (`a/b/c`), its parents (`a/b`, `a`): a page tagged
    `#a/b` is listed on the pages of both, as Obsidian's tag pane counts it."""
    out: dict[str, None] = {}
    for t in tags:
        out.setdefault(t, None)
        while "/" in t:
            t = t.rsplit("/", 1)[0]
            if t:
                out.setdefault(t, None)
    return list(out)


def folder_url(folder: str) -> str:
    if not folder:
        return "_/folders/index.html"
    return "_/folders/" + "/".join(slug(p) for p in folder.split("/")) + "/index.html"


TYPE_LABELS = {
    "core": "Core", "person": "People", "project": "Projects", "concept": "Concepts",
    "decision": "Decisions", "daily": "Daily logs", "session": "Sessions", "source": "Sources",
    "reference": "References", "capture": "Inbox", "wiki": "Wiki", "note": "Notes",
}


def type_label(t: str) -> str:
    return TYPE_LABELS.get(t, t.capitalize())


@dataclass
class SiteContext:
    """What one document page needs to know about the rest of the corpus.

    Small enough to send to build workers; `Site` adds the full document lists.
    """

    resolver: Resolver
    graph: LinkGraph
    titles: dict[str, str]
    types: list[str]
    name: str
    site_url: str = ""
    root: Path | None = None  # the corpus: embedded notes are read from it
    home: str | None = None  # the document shown as the home page (`home_document`)
    folders: tuple[str, ...] = ()  # every folder holding a document: the sidebar's tree

    @property
    def root_path(self) -> str:
        """The site's root as an absolute path ("/" unless the site URL has a path)."""
        return (urlsplit(self.site_url).path.rstrip("/") + "/") if self.site_url else "/"

    def nav_types(self) -> list[dict]:
        return [{"label": type_label(t), "url": type_url(t)} for t in self.types]

    def title_of(self, path: str) -> str:
        return self.titles.get(path, path)


@dataclass
class Site(SiteContext):
    """Everything about the corpus as a whole that the generated pages need."""

    docs: list[Document] = field(default_factory=list)
    by_path: dict[str, Document] = field(default_factory=dict)
    by_type: dict[str, list[Document]] = field(default_factory=dict)
    by_tag: dict[str, list[Document]] = field(default_factory=dict)
    by_folder: dict[str, list[Document]] = field(default_factory=dict)
    # The newest documents, selected once per view and patched by an update (`_patch_recent`).
    recent_memo: list[Document] | None = field(default=None, repr=False, compare=False)
    recent_asked: int = field(default=0, repr=False, compare=False)  # how many the memo was selected for
    recent_all: bool = field(default=False, repr=False, compare=False)  # the memo holds every dated doc
    # Fragments of whole-corpus outputs, kept between a live site's updates (`emit_parts`).
    parts: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, docs: list[Document], resolver: Resolver, graph: LinkGraph, name: str, site_url: str = "") -> "Site":
        docs = sorted(docs, key=lambda d: d.path)
        by_type: dict[str, list[Document]] = defaultdict(list)
        by_tag: dict[str, list[Document]] = defaultdict(list)
        by_folder: dict[str, list[Document]] = defaultdict(list)
        for d in docs:
            by_type[d.type].append(d)
            for t in tag_family(d.tags):
                by_tag[t].append(d)
            by_folder[d.folder].append(d)
        return cls(
            resolver=resolver, graph=graph, titles={d.path: d.title for d in docs},
            types=sorted(by_type), name=name, site_url=site_url.rstrip("/"),
            docs=docs, by_path={d.path: d for d in docs},
            by_type=dict(sorted(by_type.items())),
            by_tag=dict(sorted(by_tag.items(), key=lambda kv: (kv[0].lower(), kv[0]))),
            by_folder=dict(sorted(by_folder.items())),
        )

    def context(self) -> SiteContext:
        return SiteContext(self.resolver, self.graph, self.titles, self.types, self.name, self.site_url,
                           self.root, self.home, self.folders)
    def all_folders(self) -> list[str]:
        """Every folder that holds a document, directly or below it (sorted)."""
        out: set[str] = set()
        for f in self.by_folder:
            parts = f.split("/") if f else []
            for i in range(len(parts) + 1):
                out.add("/".join(parts[:i]))
        return sorted(out)

    def recent(self, limit: int) -> list[Document]:
        """The `limit` newest dated documents (sort date, then path, descending). The
        recent page, the home page and the feed each ask, after every save: one O(n)
        selection serves them all instead of three sorts of the corpus, and an update
        patches it (`_patch_recent`) instead of selecting again."""
        memo = self.recent_memo
        if memo is None or (len(memo) < limit and not self.recent_all):
            want = max(limit, 200)
            memo = heapq.nlargest(want, (d for d in self.docs if d.sort_date), key=_recent_key)
            self.recent_memo, self.recent_asked, self.recent_all = memo, want, len(memo) < want
        return memo[:limit]

    def broken_links(self) -> list[dict]:
        """Every unresolved link, by document path then line order. A document's entries
        are remembered with the document and its edge list in the graph: an update that
        re-resolves a document's links gives it a new edge list (`LinkGraph.set_outgoing`)
        and a changed document is a new object, so only those are scanned again (every
        link, 100,000 at 10k, took ~30 ms)."""
        held = self.parts.get("broken", {})
        fresh: dict[str, tuple] = {}
        out: list[dict] = []
        outgoing = self.graph.outgoing
        for d in self.docs:
            edges = outgoing.get(d.path)
            got = held.get(d.path)
            if got is None or got[0] is not d or got[1] is not edges or edges is None:
                got = (d, edges, _broken_of(d) if None in map(_resolved, d.links) else ())
            fresh[d.path] = got
            out += got[2]
        self.parts["broken"] = fresh
        return out


def _broken_of(d: Document) -> list[dict]:
    return [{"path": d.path, "url": d.url, "line": link.line, "target": link.target, "kind": link.kind,
             "candidates": list(link.candidates)} for link in d.links if link.broken]


# ---------------------------------------------------------------- patching a view
# Beside `Site.build`, whose list orders these must keep.

_resolved = operator.attrgetter("resolved")


def _by_path(d: Document) -> str:
    return d.path


def _recent_key(d: Document) -> tuple[str, str]:
    return (d.sort_date or "", d.path)


def _patch_recent(site: Site, changed: dict[str, Document | None]) -> None:
    """`Site.recent`'s memo after an update (`changed`: path -> its new document or None).
    The memo is the exact top of the dated documents by (sort date, path), unique keys: a
    document outside it ranks below its last entry. So it stays exact with the changed
    documents taken out and those ranking above that last entry put in (all of them when
    the memo held every dated document); it may come out shorter than asked, which
    `recent` serves up to its length."""
    memo = site.recent_memo
    if memo is None:
        return
    complete = site.recent_all
    floor = _recent_key(memo[-1]) if memo else None
    kept = [d for d in memo if d.path not in changed]
    for new in changed.values():
        if new is not None and new.sort_date and (complete or floor is None or _recent_key(new) > floor):
            kept.append(new)
    kept.sort(key=_recent_key, reverse=True)
    asked = site.recent_asked
    if len(kept) > asked:
        del kept[asked:]
        complete = False
    if not kept and not complete:
        site.recent_memo = None  # nothing left to serve from: select again when asked
        return
    site.recent_memo, site.recent_all = kept, complete


def _drop(items: list[Document], d: Document) -> None:
    i = bisect.bisect_left(items, d.path, key=_by_path)
    if i < len(items) and items[i] is d:
        del items[i]
    else:  # not where the order says: find it by identity
        items[:] = [x for x in items if x is not d]


def _patch_groups(groups: dict[str, list[Document]], old_keys: list[str], new_keys: list[str],
                  old: Document | None, new: Document | None) -> bool:
    """Move a document between the path-sorted lists of `groups`; True if a key came or went."""
    keys_changed = False
    if old is not None:
        for k in old_keys:
            items = groups.get(k)
            if items is not None:
                _drop(items, old)
                if not items:
                    del groups[k]
                    keys_changed = True
    if new is not None:
        for k in new_keys:
            items = groups.get(k)
            if items is None:
                items = groups[k] = []
                keys_changed = True
            bisect.insort(items, new, key=_by_path)
    return keys_changed


def patch_site(site: Site, old_docs: dict[str, Document | None], docs: dict[str, Document]) -> None:
    """Bring `site` (a `Site.build` of the documents before an update) in line with `docs`,
    given each changed path's document before the update: the same lists and key orders as
    `Site.build(docs)`, at O(changes x log n) plus list moves instead of a rebuild."""
    resort: set[str] = set()
    # A new list object: consumers remember the list they last saw and skip an identical
    # one (`site_search`'s model: `docs is synced`). Copying pointers is microseconds.
    site.docs = list(site.docs)
    _patch_recent(site, {p: docs.get(p) for p, old in old_docs.items() if old is not docs.get(p)})
    for path, old in old_docs.items():
        new = docs.get(path)
        if old is new:
            continue
        if old is not None:
            _drop(site.docs, old)
            site.by_path.pop(path, None)
            site.titles.pop(path, None)
        if new is not None:
            bisect.insort(site.docs, new, key=_by_path)
            site.by_path[path] = new
            site.titles[path] = new.title
        if _patch_groups(site.by_type, [old.type] if old else [], [new.type] if new else [], old, new):
            resort.add("type")
        if _patch_groups(site.by_tag, tag_family(old.tags) if old else [],
                         tag_family(new.tags) if new else [], old, new):
            resort.add("tag")
        if _patch_groups(site.by_folder, [old.folder] if old else [], [new.folder] if new else [], old, new):
            resort.add("folder")
    if "type" in resort:
        site.by_type = dict(sorted(site.by_type.items()))
        site.types = sorted(site.by_type)
    if "tag" in resort:
        site.by_tag = dict(sorted(site.by_tag.items(), key=lambda kv: (kv[0].lower(), kv[0])))
    if "folder" in resort:
        site.by_folder = dict(sorted(site.by_folder.items()))
