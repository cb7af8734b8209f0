"""`commonplace lint`: problems a person should fix in the corpus.

Broken and ambiguous links, self-links, links to a heading the page does not have,
malformed frontmatter and unreadable files, missing titles, and duplicate titles or
aliases that make links ambiguous.

`link_problems` is the one home of the broken-link, self-link and heading rules: lint reports
from it, and so does the server's `link` operation (op=lint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .pipeline import Corpus
from ..model import Document


@dataclass(frozen=True)
class LinkProblem:
    """One link that resolves to no page, or to the page it is written on."""

    source: str  # path of the document the link is written in
    target: str  # the target as written; `#heading` for a link to a heading of the same page
    line: int  # 1-based line of the link in the source file
    candidates: tuple[str, ...] = ()  # an ambiguous link: every page its name matches

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": self.source, "target": self.target, "line": self.line}
        if self.candidates:
            d["candidates"] = list(self.candidates)
        return d


@dataclass
class LinkProblems:
    broken: list[LinkProblem] = field(default_factory=list)  # no page (ambiguous ones carry candidates)
    self_links: list[LinkProblem] = field(default_factory=list)  # a named link back to its own page
    # the page exists but has no such heading (`[[page#Nope]]`); target is `page#Nope`
    missing_headings: list[LinkProblem] = field(default_factory=list)


def link_problems(docs: Mapping[str, Document], path: str | None = None) -> LinkProblems:
    """Broken, self and missing-heading links of `docs` (path -> resolved document), or of
    `docs[path]` alone; documents in path order, links in source order. A same-page
    `[[#heading]]` link is not a self link: only one that names its own page is."""
    found = LinkProblems()
    pool = [docs[path]] if path is not None else [docs[p] for p in sorted(docs)]
    anchors: dict[str, set[str]] = {}
    for d in pool:
        for link in d.links:
            shown = link.target or (f"#{link.heading}" if link.heading else "")
            if link.resolved is None:
                found.broken.append(LinkProblem(d.path, shown, link.line, tuple(link.candidates)))
                continue
            if link.resolved == d.path and link.target and not link.heading:  # [[Page#Part]] on Page: navigation
                found.self_links.append(LinkProblem(d.path, shown, link.line))
            target = docs.get(link.resolved)
            if link.heading and target is not None and not _has_heading(target, link.heading, anchors):
                found.missing_headings.append(
                    LinkProblem(d.path, f"{link.target}#{link.heading}", link.line))
    return found


def _has_heading(doc: Document, heading: str, cache: dict[str, set[str]]) -> bool:
    """Whether `heading` (as written after `#`) names a heading of `doc`: by its anchor,
    as the renderer links it (`slugify`), or as an anchor written out. A nested heading
    (`A#B#C`) names its last part; `^id` names a block, which a document read without its
    text (a served state keeps none) is taken to have."""
    from ..markdown.mdit import slugify

    heading = heading.split("#")[-1].strip() or heading
    if heading.startswith("^"):
        if not doc.body:
            return True
        key = doc.path + "\0^"
        if key not in cache:
            cache[key] = block_ids(doc.body)
        return heading[1:] in cache[key]
    known = cache.get(doc.path)
    if known is None:
        known = {a for _, _, a in doc.headings if a} | {slugify(t) for _, t, _ in doc.headings}
        if doc.title_anchor:
            known.add(doc.title_anchor)
        cache[doc.path] = known
    return slugify(heading) in known or heading in known


def block_ids(body: str) -> set[str]:
    """The block ids (`^id` ending a line, outside code) a body defines."""
    from ..markdown.embeds import _BLOCK_ID, _outside_fences

    lines = body.split("\n")
    return {m.group(1) for line, ok in zip(lines, _outside_fences(lines)) if ok and (m := _BLOCK_ID.search(line))}


# Findings that make `lint` exit 1: the site shows something broken. Everything else is
# a warning (exit 1 only with --strict).
ERRORS = {"broken-link", "missing-attachment", "ambiguous-link", "skipped", "unreadable", "frontmatter"}


@dataclass(frozen=True)
class LintFinding:
    code: str  # broken-link | ambiguous-link | missing-attachment | self-link | missing-heading | frontmatter | ...
    path: str
    message: str
    line: int | None = None
    severity: str = ""  # error | warning; empty: by `ERRORS`

    def __post_init__(self) -> None:
        if not self.severity:
            object.__setattr__(self, "severity", "error" if self.code in ERRORS else "warning")

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: [{self.code}] {self.message}"


def lint(corpus: Corpus) -> list[LintFinding]:
    findings: list[LintFinding] = []
    for w in corpus.warnings:
        findings.append(LintFinding(w.code, w.path, w.message, w.line))
    docs = {d.path: d for d in corpus.docs}
    links = link_problems(docs)
    kinds = {(d.path, l.line, l.target): l.kind for d in corpus.docs for l in d.links if l.broken}
    for p in links.broken:
        if kinds.get((p.source, p.line, p.target)) == "file":
            findings.append(LintFinding("missing-attachment", p.source, f"no file {p.target!r} in the corpus", p.line))
        elif p.candidates:
            findings.append(LintFinding(
                "ambiguous-link", p.source,
                f"[[{p.target}]] matches several pages, none nearest: {', '.join(p.candidates)}", p.line))
        else:
            findings.append(LintFinding("broken-link", p.source, f"link to {p.target!r} matches no page", p.line))
    for d in corpus.docs:
        for link in d.links:
            if link.kind != "file" and link.resolved and len(link.candidates) > 1 and link.resolved.rpartition("/")[0] != d.folder:
                findings.append(LintFinding(
                    "ambiguous-link", d.path, f"[[{link.target}]] matches several pages; the nearest, "
                    f"{link.resolved}, is used (others: {', '.join(c for c in link.candidates if c != link.resolved)})",
                    link.line, "warning"))
    for p in links.self_links:
        findings.append(LintFinding("self-link", p.source, f"link to {p.target!r} points at the page itself", p.line))
    for p in links.missing_headings:
        page, _, heading = p.target.rpartition("#")
        findings.append(LintFinding(
            "missing-heading", p.source,
            f"link to {p.target!r}: {page or 'this page'} has no heading {heading!r}", p.line))
    # A title taken from the file name is a vault's convention, not a finding; two notes of
    # one name in different folders are Obsidian's too (links go to the nearest), so only
    # titles and aliases someone wrote count as duplicates.
    # A project's slug names only the project, and its decision log never shares its name:
    # the resolver says which pages a name counts (`Resolver.named`), so lint agrees with it.
    for name in sorted(corpus.resolver.names):
        unique = sorted(p for p in corpus.resolver.named(name) if _named(docs.get(p), name))
        if len(unique) > 1:
            findings.append(LintFinding(
                "duplicate-name", unique[0],
                f"title or alias {name!r} is shared by {', '.join(unique)}; links to it are ambiguous"))
    findings.sort(key=lambda f: (f.path, f.line or 0, f.code, f.message))
    return findings


def _named(d: Document | None, name: str) -> bool:
    """Whether `name` is a title or alias written in `d` (not just its file name)."""
    if d is None:
        return False
    if any(a.strip().lower() == name for a in d.aliases):
        return True
    return d.title.strip().lower() == name and d.title != d.stem
