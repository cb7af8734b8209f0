"""The project a wake or an active-memory call is about: the page a `project` name or a
working directory (`cwd`) names, and the pages that go with it (its folder, the people
and decisions it links)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .reader import Reader
from ..markdown.mdit import slugify
from ..model import Document


def find_project(docs: dict[str, Document], project: str, resolver: Any = None,
                 root: Path | None = None) -> str | None:
    """Corpus path of the page `project` names, or None."""
    p = project.strip()
    if p.lower().startswith("project:"):
        p = p.split(":", 1)[1].strip()
    if not p:
        return None
    read = Reader(root, docs)
    slug = slugify(p)
    for cand in (f"projects/{slug}/state.md", f"projects/{slug}.md"):
        if cand in docs or read.exists(cand):
            return cand
    for cand in (p, p + ".md"):
        if cand in docs:
            return cand
    for d in sorted(docs.values(), key=lambda d: d.path):
        if not (d.path.startswith("projects/") and d.path.endswith("/state.md")):
            continue
        names = [d.title, str(d.frontmatter.get("slug") or ""), d.path.split("/")[-2], *map(str, d.aliases)]
        if slug in {slugify(n) for n in names if n and n.strip()}:
            return d.path
    if resolver is not None and "\x00" not in p:
        try:
            res = resolver.resolve_wiki(p, "")
        except Exception:  # noqa: BLE001 - a name that cannot resolve is simply absent
            res = None
        if res is not None and res.path in docs:
            return res.path
    return None



CWD_DEPTH = 4  # the folders of a cwd, from its last, that may name its project


def cwd_project(docs: dict[str, Document], cwd: str, resolver: Any = None,
                root: Path | None = None) -> tuple[str, str | None]:
    """(the folder name, the project page) a working directory names: its last folder, else
    the nearest folder above it that names a project page (`~/code/harbor/ios/App` is in
    Harbor), a folder's name or its first word (`harbor-app`). Above the last folder only
    a page under `projects/` counts: "App" or "src" may name any page."""
    parts = [x for x in re.split(r"[\\/]", cwd.strip()) if x and not x.endswith(":")][-CWD_DEPTH:]
    last = parts[-1] if parts else ""
    for i, part in enumerate(reversed(parts)):
        for name in dict.fromkeys((part, re.split(r"[-_. ]", part)[0])):
            rel = find_project(docs, name, resolver, root) if name else None
            if rel is not None and (i == 0 and name == part or rel.startswith("projects/")):
                return name, rel
    return last, None


def project_pages(docs: dict[str, Document], cwd: str | None, resolver: Any = None,
                  root: Path | None = None) -> frozenset[str]:
    """The project page `cwd` names (`cwd_project`), and its folder's pages and the people
    and decisions it links: what an agent working there is about (active memory puts them
    first among close results). Empty when the folder names no project."""
    rel = cwd_project(docs, cwd, resolver, root)[1] if cwd else None
    if rel is None:
        return frozenset()
    folder = rel.rsplit("/", 1)[0] + "/" if rel.endswith("/state.md") else rel
    return frozenset((rel, *[p for p in docs if p.startswith(folder)], *project_links(docs, rel, Reader(root, docs))))


def project_links(docs: dict[str, Document], rel: str, read: Reader) -> list[str]:
    """People and decisions the project page links to, and the decision page a
    `kind: decision` memory-write about the project lands in."""
    out: list[str] = []
    doc = docs.get(rel)
    for link in (doc.links if doc is not None else []):
        target = link.resolved
        if target and target.startswith(("people/", "decisions/")) and target not in out:
            out.append(target)
    slug = rel.split("/")[-2] if rel.endswith("/state.md") else rel.rsplit("/", 1)[-1].removesuffix(".md")
    for cand in (f"decisions/{slug}.md", f"decisions/canonical/{slug}.md"):
        if cand not in out and (cand in docs or read.exists(cand)):
            out.append(cand)
    return out
