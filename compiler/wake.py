"""`/v1/wake`: the context block an agent reads when it starts, within a token budget.

What goes in, in priority order (a later section only gets what earlier ones left):

1. `core/` documents (pinned first, then by path): who the memory is for, the rules.
2. The project page, when `project` names one (a path, slug, title or alias): for a
   project slug that is `projects/<slug>/state.md`.
3. Pinned decisions (`decisions/` documents with `pinned: true` that are not superseded).
4. Recent session notes (`logs/sessions/`), newest first, each shown by its last lines:
   where the previous session stopped matters more than how it began.

Profiles choose sections: `default` (all four), `core` (1), `project` (2 and 3),
`minimal` (1, then one line per pinned decision). An unknown profile falls back to
`default` with a warning, so agents written for other servers keep working.

Token counting is an offline estimate, no tokenizer is loaded: a text costs
`max(ceil(characters / 4), ceil(words * 4 / 3))` tokens. Four characters per token is the
usual figure for English under BPE and WordPiece tokenizers; the word-based term keeps
short-word and non-English text from being undercounted. Both overestimate slightly for
plain English, which is the safe direction for a budget: the returned block's estimate is
never above `budget_tokens`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from .model import Document

PROFILES = ("default", "core", "project", "minimal")
DEFAULT_BUDGET = 2000
MIN_BUDGET = 50
MAX_BUDGET = 200_000
MAX_SESSIONS = 3
_WORDS = re.compile(r"\S+")
_TRUNCATED = "\n[… truncated; read the rest with get path={path}]\n"


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    words = len(_WORDS.findall(text))
    return max(math.ceil(len(text) / 4), math.ceil(words * 4 / 3))


@dataclass
class WakeResult:
    profile: str
    block: str
    tokens: int
    budget_tokens: int
    sources: list[dict[str, Any]] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "block": self.block,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "sources": self.sources,
            "omitted": self.omitted,
            "warnings": self.warnings,
        }


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in {"true", "yes", "1", "on"}
    return bool(v)


def _body(doc: Document) -> str:
    return doc.body.strip("\n")


class _Block:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[str] = []
        self.used = 0

    def left(self) -> int:
        return self.budget - self.used

    def add(self, text: str) -> bool:
        cost = estimate_tokens(text)
        # Parts are joined by newlines: count each part's cost plus one for the join.
        if self.used + cost + 1 > self.budget:
            return False
        self.parts.append(text)
        self.used += cost + 1
        return True

    def add_clipped(self, head: str, body: str, path: str, tail: bool = False) -> str:
        """Add `head` + `body`, cutting `body` at a line boundary if needed.
        Returns "full", "truncated" or "omitted"."""
        whole = f"{head}\n{body}\n" if body else f"{head}\n"
        if self.add(whole):
            return "full"
        note = _TRUNCATED.format(path=path)
        room = self.left() - estimate_tokens(head) - estimate_tokens(note) - 3
        if room < 12:
            return "omitted"
        lines = body.split("\n")
        kept: list[str] = []
        cost = 0
        seq = reversed(lines) if tail else iter(lines)
        for line in seq:
            c = estimate_tokens(line) + 1
            if cost + c > room:
                break
            kept.append(line)
            cost += c
        if tail:
            kept.reverse()
        if not kept:  # one huge line: cut by characters
            chars = max(0, room * 3)
            piece = body[-chars:] if tail else body[:chars]
            while piece and estimate_tokens(piece) > room:
                piece = piece[len(piece) // 8 + 1 :] if tail else piece[: -(len(piece) // 8 + 1)]
            if not piece:
                return "omitted"
            kept = [piece]
        text = "\n".join(kept)
        text = f"{head}\n[… earlier lines omitted]\n{text}{note}" if tail else f"{head}\n{text}{note}"
        while not self.add(text):  # the estimate is not additive; trim until it fits
            if len(kept) <= 1:
                return "omitted"
            kept = kept[1:] if tail else kept[:-1]
            body_text = "\n".join(kept)
            text = f"{head}\n[… earlier lines omitted]\n{body_text}{note}" if tail else f"{head}\n{body_text}{note}"
        return "truncated"

    def text(self) -> str:
        return "\n".join(self.parts)


def find_project(docs: dict[str, Document], project: str, resolver: Any = None) -> Document | None:
    p = project.strip()
    if not p:
        return None
    slug = p.lower()
    for cand in (p, p + ".md", f"projects/{p}/state.md", f"projects/{slug}/state.md", f"projects/{p}.md"):
        if cand in docs:
            return docs[cand]
    if resolver is not None:
        try:
            res = resolver.resolve_wiki(p, "")
        except Exception:  # noqa: BLE001 - a name that cannot resolve is simply absent
            res = None
        if res is not None and res.path in docs:
            return docs[res.path]
    return None


def _recency(d: Document) -> tuple[str, str]:
    return (d.sort_date or "", d.path)


def wake(docs: dict[str, Document] | Iterable[Document], *, budget_tokens: int = DEFAULT_BUDGET,
         profile: str | None = None, project: str | None = None, agent: str | None = None,
         resolver: Any = None) -> WakeResult:
    if not isinstance(docs, dict):
        docs = {d.path: d for d in docs}
    budget = max(1, min(MAX_BUDGET, int(budget_tokens)))
    warnings: list[str] = []
    prof = (profile or "default").strip().lower() or "default"
    if prof not in PROFILES:
        warnings.append(f"unknown profile {profile!r}; used 'default' (profiles: {', '.join(PROFILES)})")
        prof = "default"
    sections = {
        "default": ("core", "project", "decisions", "sessions"),
        "core": ("core",),
        "project": ("project", "decisions"),
        "minimal": ("core", "decision-titles"),
    }[prof]

    block = _Block(budget)
    sources: list[dict[str, Any]] = []
    omitted: list[str] = []
    who = re.sub(r"[\x00-\x1f\x7f-\x9f#`]+", " ", agent or "").strip()[:80]  # one plain line
    block.add(f"# Memory wake-up{f' for {who}' if who else ''}")

    heading: list[str] = []  # a section heading waiting for its first item that fits

    def item(section: str, doc: Document, body: str, tail: bool = False) -> None:
        head = f"### {doc.title} ({doc.path})"
        if heading:
            head = f"{heading[0]}\n{head}"
        how = block.add_clipped(head, body, doc.path, tail=tail)
        if how == "omitted":
            omitted.append(doc.path)
        else:
            heading.clear()
            sources.append({"section": section, "path": doc.path, "title": doc.title, "truncated": how == "truncated"})

    def section(title: str) -> None:
        heading.clear()
        heading.append(title)

    ordered = sorted(docs.values(), key=lambda d: d.path)
    if "core" in sections:
        core = [d for d in ordered if d.type == "core" or d.path.startswith("core/")]
        core.sort(key=lambda d: (not _truthy(d.frontmatter.get("pinned")), d.path))
        section("## Core")
        for d in core:
            item("core", d, _body(d))

    if "project" in sections and project:
        doc = find_project(docs, project, resolver)
        if doc is None:
            warnings.append(f"no project page found for {project!r}")
        else:
            section("## Project")
            item("project", doc, _body(doc))

    pinned = [d for d in ordered if (d.type == "decision" or d.path.startswith("decisions/"))
              and _truthy(d.frontmatter.get("pinned")) and d.status != "superseded"
              and not _truthy(d.frontmatter.get("forgotten"))]
    if "decisions" in sections:
        section("## Pinned decisions")
        for d in pinned:
            item("decisions", d, _body(d))
    if "decision-titles" in sections and pinned:
        section("## Pinned decisions")
        for d in pinned:
            line = f"- {d.title} ({d.path})"
            if block.add(f"{heading[0]}\n{line}" if heading else line):
                heading.clear()
                sources.append({"section": "decisions", "path": d.path, "title": d.title, "truncated": True})
            else:
                omitted.append(d.path)

    if "sessions" in sections:
        sessions = sorted((d for d in docs.values() if d.is_session), key=_recency, reverse=True)[:MAX_SESSIONS]
        section("## Recent sessions")
        for d in sessions:
            item("sessions", d, _body(d), tail=True)

    text = block.text()
    if not text.endswith("\n"):
        text += "\n"
    # Guard against any estimate drift: the block never exceeds the budget.
    while estimate_tokens(text) > budget and "\n" in text.rstrip("\n"):
        text = text.rstrip("\n").rsplit("\n", 1)[0] + "\n"
    return WakeResult(prof, text, estimate_tokens(text), budget, sources, omitted, warnings)
