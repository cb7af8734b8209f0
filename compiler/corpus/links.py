"""Stage 3, links: extract links from tokens and resolve them against the corpus.

Resolution order (design): exact relative path, path without `.md`, file stem, then
title or alias (case-insensitive). One exception comes first: a bare name that is a
project's slug (Dory's `projects/<slug>/state.md`) names the project, whatever else is
called so. And a project's decision log never competes with the project for a name:
memory-write files a project's decisions as `decisions/<slug>.md`, titled as the
project, and that log must not take the project's links -- whether the project is a
folder or one page kept by hand, `projects/<slug>.md` (`Resolver.named`, which lint's
duplicate titles ask too). A stem several documents share goes to the one
nearest the linking note (most leading folders in common, as Obsidian prefers the
note's own folder); the link keeps every candidate, so it still shows as ambiguous.
No fuzzy guessing: a tie for nearest, or no match, is broken.

Links to other files (attachments: images, PDFs, audio...) are links of kind "file",
resolved against the corpus's attachment table (`attachments`): the path as written
(relative to the note, then from the corpus root), else the bare file name anywhere
in the corpus, nearest first. They are never graph edges.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable
from urllib.parse import unquote

from .attachments import is_attachment_target
from ..model import Document, Link

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:|^//", re.I)


def file_target(href: str) -> str | None:
    """A markdown href or image src that points at a corpus attachment -> its path, decoded."""
    if not href or _SCHEME.match(href) or href.startswith("#"):
        return None
    path = unquote(href.partition("#")[0].split("?", 1)[0])
    return path if is_attachment_target(path) else None


def _md_target(href: str) -> tuple[str, str | None] | None:
    """A markdown href that points at a corpus document -> (path, heading)."""
    if not href or _SCHEME.match(href) or href.startswith("#"):
        return None
    path, _, frag = href.partition("#")
    path = unquote(path.split("?", 1)[0])
    if not path.lower().endswith(".md"):
        return None
    return path, (unquote(frag) or None)


def extract_links(tokens: list, body_line: int) -> list[Link]:
    """All document links in parse order, with 1-based source lines."""
    links: list[Link] = []
    line = body_line
    for tok in tokens:
        if tok.map:
            line = body_line + tok.map[0]
        if tok.type != "inline" or not tok.children:
            continue
        child_line = line
        for child in tok.children:
            if child.type in ("softbreak", "hardbreak"):
                child_line += 1  # links later in a paragraph sit on later lines
            elif child.type == "wikilink":
                meta = child.meta
                kind = "file" if is_attachment_target(meta["target"]) else ("embed" if meta.get("embed") else "wiki")
                links.append(Link(meta["target"], meta["label"], meta["heading"], child_line, kind))
            elif child.type == "link_open":
                href = str(child.attrGet("href") or "")
                parsed = _md_target(href)
                if parsed:
                    links.append(Link(parsed[0], None, parsed[1], child_line, "md"))
                elif (path := file_target(href)) is not None:
                    links.append(Link(path, None, None, child_line, "file"))
            elif child.type == "image":
                path = file_target(str(child.attrGet("src") or ""))
                if path is not None:
                    links.append(Link(path, None, None, child_line, "file"))
    return links


def _wiki_name(target: str) -> str:
    """A wikilink target as `Resolver.resolve_wiki` looks it up."""
    return target.strip().replace("\\", "/").lstrip("/")


@dataclass
class Resolution:
    path: str | None
    candidates: tuple[str, ...] = ()


@dataclass
class Resolver:
    """Name tables for the whole corpus, built once per build."""

    paths: set[str] = field(default_factory=set)
    stems: dict[str, set[str]] = field(default_factory=dict)
    stems_folded: dict[str, set[str]] = field(default_factory=dict)  # stems lowercased: Obsidian ignores case
    names: dict[str, set[str]] = field(default_factory=dict)  # title/alias, lowercased
    projects: dict[str, set[str]] = field(default_factory=dict)  # project slug, lowercased
    files: set[str] = field(default_factory=set)  # attachments (non-markdown files)
    file_names: dict[str, set[str]] = field(default_factory=dict)  # file name, lowercased -> paths

    @classmethod
    def build(cls, docs: Iterable[Document]) -> "Resolver":
        r = cls()
        for d in docs:
            r.add(d)
        return r

    @staticmethod
    def _name_keys(d: Document) -> set[str]:
        keys = {d.title.strip().lower()} | {a.strip().lower() for a in d.aliases}
        keys.discard("")
        return keys

    def add(self, d: Document) -> None:
        self.paths.add(d.path)
        self.stems.setdefault(d.stem, set()).add(d.path)
        self.stems_folded.setdefault(d.stem.lower(), set()).add(d.path)
        for key in self._name_keys(d):
            self.names.setdefault(key, set()).add(d.path)
        slug = _project_slug(d.path)
        if slug:
            self.projects.setdefault(slug, set()).add(d.path)

    def remove(self, d: Document) -> None:
        """Forget a document (pass the version that was added)."""
        self.paths.discard(d.path)
        for table, keys in ((self.stems, {d.stem}), (self.stems_folded, {d.stem.lower()}),
                            (self.names, self._name_keys(d)),
                            (self.projects, {_project_slug(d.path)} - {None})):
            for key in keys:
                holders = table.get(key)
                if holders is not None:
                    holders.discard(d.path)
                    if not holders:
                        del table[key]

    def add_file(self, path: str) -> None:
        self.files.add(path)
        self.file_names.setdefault(posixpath.basename(path).lower(), set()).add(path)

    def remove_file(self, path: str) -> None:
        self.files.discard(path)
        key = posixpath.basename(path).lower()
        holders = self.file_names.get(key)
        if holders is not None:
            holders.discard(path)
            if not holders:
                del self.file_names[key]

    def resolve_file(self, target: str, source: str) -> Resolution:
        """An attachment: relative to the note, then from the corpus root, then by its
        bare file name anywhere (case-insensitive), nearest the note first."""
        t = target.strip().replace("\\", "/")
        folder = posixpath.dirname(source)
        for cand in (posixpath.normpath(posixpath.join(folder, t)), posixpath.normpath(t.lstrip("/"))):
            if cand in self.files and not cand.startswith("../"):
                return Resolution(cand)
        hits = self.file_names.get(posixpath.basename(t).lower(), ())
        if "/" in t.strip("/"):  # a path that matches no file: only files ending so
            tail = "/" + t.strip("/").lstrip("./").lower()
            hits = [h for h in hits if ("/" + h.lower()).endswith(tail)]
        return _nearest(hits, folder)

    def resolve_wiki(self, target: str, source: str) -> Resolution:
        if not target.strip():
            return Resolution(source)  # [[#heading]] is a link into the same page
        t = _wiki_name(target)
        for cand in (t, t + ".md"):
            if cand in self.paths:
                return Resolution(cand)
        folder = posixpath.dirname(source) if "/" in t else ""
        if folder:
            rel = posixpath.normpath(posixpath.join(folder, t))
            for cand in (rel, rel + ".md"):
                if cand in self.paths:
                    return Resolution(cand)
        stem = t[:-3] if t.endswith(".md") else t
        if "/" not in stem:
            project = self._project(stem.lower())
            if project is not None:
                return Resolution(project)
            hits = self._without_logs(self.stems.get(stem, ()))
            if len(hits) == 1:
                return Resolution(hits[0])
            if hits:
                near = _nearest(hits, posixpath.dirname(source))
                if near.path is not None:
                    return near
            by_name = self._without_logs(self.names.get(t.lower(), ()))
            if len(by_name) == 1:
                return Resolution(by_name[0])
            if not hits and not by_name:  # `[[basic formatting syntax]]`: a stem in another case
                folded = self._without_logs(self.stems_folded.get(stem.lower(), ()))
                if folded:
                    return _nearest(folded, posixpath.dirname(source))
            ambiguous = sorted(set(hits) | set(by_name))
            return Resolution(None, tuple(ambiguous) if len(ambiguous) > 1 else ())
        by_name = self._without_logs(self.names.get(t.lower(), ()))
        if len(by_name) == 1:
            return Resolution(by_name[0])
        return Resolution(None, tuple(by_name) if len(by_name) > 1 else ())

    def _project(self, slug: str) -> str | None:
        """The folder project a slug (lowercased) names: its one `projects/<slug>/state.md`."""
        holders = [p for p in self.projects.get(slug, ()) if p.endswith("/state.md")]
        return holders[0] if len(holders) == 1 else None

    @staticmethod
    def _without_logs(paths: Iterable[str]) -> list[str]:
        """`paths` (sorted) without the decision logs of projects among them: a
        `decisions/<slug>.md` beside `projects/<slug>.md` or `projects/<slug>/state.md`."""
        paths = sorted(paths)
        if len(paths) < 2:
            return paths
        logs = {f"decisions/{slug}.md" for p in paths if (slug := _project_slug(p)) is not None}
        return [p for p in paths if p.lower() not in logs] if logs else paths

    def named(self, name: str) -> list[str]:
        """The pages a bare title or alias (any case) names from anywhere, as `resolve_wiki`
        counts them: a folder project's slug names the project alone, and a project's
        decision log does not share its name. Lint's duplicate titles ask this."""
        key = name.strip().lower()
        project = self._project(key)
        return [project] if project is not None else self._without_logs(self.names.get(key, ()))

    def resolve_md(self, target: str, source: str) -> Resolution:
        if target.startswith("/"):
            cand = posixpath.normpath(target.lstrip("/"))
        else:
            cand = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        if cand.startswith("../") or cand == "..":
            return Resolution(None)
        if cand in self.paths:
            return Resolution(cand)
        # Obsidian writes `[text](Note.md)` by name ("shortest path when possible"): a
        # bare name that is not beside the page resolves as `[[Note]]` would, nearest
        # first, ambiguous when it is.
        if "/" not in target and target.endswith(".md") and target not in (".md", "..md"):
            return self.resolve_wiki(target, source)
        return Resolution(None)

    def resolve(self, link: Link, source: str) -> Resolution:
        if link.kind == "md":
            return self.resolve_md(link.target, source)
        if link.kind == "file":
            return self.resolve_file(link.target, source)
        return self.resolve_wiki(link.target, source)


# A project: a folder's `projects/<slug>/state.md`, or one page `projects/<slug>.md`
# (not a forgotten page's `<slug>.tombstone.md`).
_PROJECT_PAGE = re.compile(r"projects/([^/]+?)(?:/state)?\.md")


def _project_slug(path: str) -> str | None:
    m = _PROJECT_PAGE.fullmatch(path)
    if m is None or path.endswith(".tombstone.md"):
        return None
    return m.group(1).lower()


def _shared(a: str, b: str) -> int:
    """How many leading folders two folders have in common."""
    n = 0
    for x, y in zip(a.split("/") if a else [], b.split("/") if b else []):
        if x != y:
            break
        n += 1
    return n


def _nearest(paths: Iterable[str], folder: str) -> Resolution:
    """The one path nearest `folder` (most leading folders shared, then the shallowest);
    a tie is no answer. Several paths: the resolution keeps them all as candidates."""
    paths = sorted(paths)
    if len(paths) <= 1:
        return Resolution(paths[0] if paths else None)
    ranked = sorted(paths, key=lambda p: (-_shared(posixpath.dirname(p), folder), p.count("/"), p))
    a, b = ranked[0], ranked[1]
    key = lambda p: (_shared(posixpath.dirname(p), folder), p.count("/"))  # noqa: E731
    return Resolution(None if key(a) == key(b) else a, tuple(paths))


def resolve_all(docs: Iterable[Document], resolver: Resolver) -> None:
    """Fill `Link.resolved` / `Link.candidates` on every document.

    A corpus names the same pages over and over, so each name is resolved once: a wiki
    name without `/` means the same from every page, a relative path the same from
    every page of one folder (0.4 -> 0.1 s for 105,000 links)."""
    memo: dict[tuple[str, str, str], Resolution] = {}
    for d in docs:
        folder = posixpath.dirname(d.path)
        for link in d.links:
            target = link.target
            if link.kind in ("md", "file"):
                key = (link.kind, target, folder)
            else:
                name = _wiki_name(target)
                key = ("wiki", target, folder if (not name or "/" in name) else "")
                if not name:
                    key = ("self", target, d.path)  # [[#heading]]: the page itself
            res = memo.get(key)
            if res is None:
                res = memo[key] = resolver.resolve(link, d.path)
            if len(res.candidates) > 1 and key[2] != folder:
                # An ambiguous name resolves nearest the page: per folder, not once.
                key = (key[0], target, folder)
                res = memo.get(key)
                if res is None:
                    res = memo[key] = resolver.resolve(link, d.path)
            link.resolved = res.path
            link.candidates = res.candidates


def outgoing_targets(d: Document) -> list[str]:
    """Resolved targets of a document's links: unique, in order, no self-links."""
    seen: list[str] = []
    for link in d.links:
        if link.kind == "file":
            continue  # attachments are not pages
        if link.resolved and link.resolved != d.path and link.resolved not in seen:
            seen.append(link.resolved)
    return seen


@dataclass
class LinkGraph:
    outgoing: dict[str, list[str]]  # path -> resolved targets (unique, in order)
    backlinks: dict[str, list[str]]  # path -> sources (sorted)

    @classmethod
    def build(cls, docs: Iterable[Document]) -> "LinkGraph":
        graph = cls({}, {})
        for d in docs:
            graph.set_outgoing(d.path, d)
        return graph

    def set_outgoing(self, path: str, doc: Document | None) -> tuple[set[str], set[str]]:
        """Replace one document's edges; returns (old targets, new targets)."""
        old = set(self.outgoing.pop(path, ()))
        targets = outgoing_targets(doc) if doc is not None else []
        if doc is not None:
            self.outgoing[path] = targets
        new = set(targets)
        for t in old - new:
            sources = self.backlinks.get(t, [])
            if path in sources:
                sources.remove(path)
            if not sources:
                self.backlinks.pop(t, None)
        for t in new - old:
            sources = self.backlinks.setdefault(t, [])
            bisect.insort(sources, path)
        return old, new
