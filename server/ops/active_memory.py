"""`/v1/active-memory`: the memory that bears on the message an agent is about to answer,
in one bounded pass (Dory's clients call it before every turn, with a 1.2 s timeout).

Dory's deterministic path (`dory-contract.md` §1.5; its optional language-model planner
and composer are off by default and commonplace has none):

1. The profile: the request's, or for `auto` one read from the prompt (privacy words,
   then personal, writing, coding, else general). Each profile has a source policy:
   which wake profile, whether durable and session evidence may be used, and which paths
   it leaves out (coding leaves out core/user, soul, identity and people/; privacy uses
   nothing but the privacy wake).
2. Durable evidence: one hybrid search with the prompt (six results), re-ranked by
   Dory's path weights (core/active.md first, project state pages, core files, canonical
   decisions; wiki/, logs/, inbox/ and archive/ down), a stale result down; results that
   are tombstones, sessions, quarantined, superseded, raw or weak matches are dropped.
3. Session evidence, only when the prompt asks about recent work (today, yesterday, last
   session, ...) and the profile allows it, while time is left: a session search.
4. The block: `## Active memory` (up to five bullets: the best evidence, with the opening
   of each canonical page), then, only when nothing was found, the wake block (with
   `include_wake`), then `## Durable evidence` (three paths with snippets) and
   `## Session evidence` (two), cut to the budget (four characters a token, 700-3200
   characters, at a section boundary when it can).

The answer is `{kind: memory|none, block, summary, sources}`; debug adds `took_ms`,
`profile` and `confidence` (high with durable and session evidence, medium with either).
`rerank` is accepted and ignored. The prompt used as the query is cut to 2,000 characters:
a longer message adds nothing a search can use, and costs time.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import ActiveMemoryRequest, SearchRequest
from . import OpContext
from .search import engine_body, run_engine, shape

DURABLE_K = 6
SESSION_K = 3
MAX_QUERY = 2000
BULLET_CHARS = 220
DURABLE_SNIPPET = 300
SESSION_SNIPPET = 160
EXCERPT_CHARS = 360
MAX_BLOCK = 3200
MIN_BLOCK = 700
WEAK = 0.3  # score_normalized below this: not evidence (fusion.WEAK_VECTOR_ONLY)
EXCERPT_READ = 64 * 1024
_SUMMARY_SECTIONS = ("Summary", "Current Focus", "Current State", "Open Work", "Topology", "Defaults")

_PRIVACY = ("privacy", "private", "sensitive", "boundary", "boundaries", "redact", "public-safe", "do not share")
_PERSONAL = ("who am i", "about me", "my profile", "personal", "preference", "preferences",
             "how should you talk to me")
_WRITING = ("writing", "voice", "draft", "copy", "post", "essay", "tone", "style", "blog")
_CODING = ("code", "coding", "repo", "implementation", "bug", "test", "tests", "api", "integration",
           "integrations", "schema", "mcp", "module")
_RECENT = ("last worked", "worked on last", "what did i work", "recent session", "latest session",
           "previous session", "session context", "conversation", "yesterday", "today", "this morning",
           "last night")


@dataclass(frozen=True)
class Policy:
    profile: str
    wake_profile: str
    pinned: bool
    durable: bool
    sessions: bool
    blocked: frozenset[str] = frozenset()
    blocked_prefixes: tuple[str, ...] = ()

    def allows(self, path: str, session: bool) -> bool:
        if session:
            return self.sessions
        return self.durable and path not in self.blocked and not path.startswith(self.blocked_prefixes)


POLICIES = {
    "privacy": Policy("privacy", "privacy", False, False, False),
    "coding": Policy("coding", "coding", False, True, True, frozenset({"core/user.md", "core/soul.md",
                                                                    "core/identity.md"}),
                     ("people/", "knowledge/personal/")),
    "writing": Policy("writing", "writing", True, True, True, frozenset({"core/user.md", "core/identity.md"}),
                      ("people/",)),
    "personal": Policy("personal", "default", True, True, True),
    "general": Policy("general", "default", True, True, True),
}


def profile_for(prompt: str) -> str:
    low = prompt.casefold()
    for name, words in (("privacy", _PRIVACY), ("personal", _PERSONAL), ("writing", _WRITING), ("coding", _CODING)):
        if any(w in low for w in words):
            return name
    return "general"


def wants_sessions(prompt: str) -> bool:
    low = prompt.casefold()
    return any(w in low for w in _RECENT)


def path_weight(path: str) -> float:
    """Dory's preference among sources for an agent's next turn."""
    if path == "core/active.md":
        return 0.9
    if path in ("core/env.md", "core/defaults.md", "core/user.md", "core/soul.md"):
        return 0.45
    if path.startswith("projects/") and path.endswith("/state.md"):
        return 0.65
    if path.startswith("decisions/canonical/"):
        return 0.5
    for prefix, weight in (("people/", 0.25), ("knowledge/", 0.15), ("wiki/", -1.0), ("logs/", -0.8),
                           ("inbox/", -0.5), ("archive/", -0.5)):
        if path.startswith(prefix):
            return weight
    return 0.0


def _candidate(r: dict[str, Any], session: bool) -> bool:
    path = str(r.get("path", ""))
    if not path or path.endswith(".tombstone.md"):
        return False
    fm = r.get("frontmatter") if isinstance(r.get("frontmatter"), dict) else {}
    status = str(fm.get("status", "")).strip().lower()
    if status in ("stale", "superseded", "quarantined", "quarantine") or fm.get("superseded_by"):
        return False
    if session:
        return True
    if path.startswith(("logs/sessions/", "wiki/", "inbox/quarantine/", "archive/")) or status == "raw":
        return False
    return float(r.get("score_normalized") or 0.0) >= WEAK


def _search(ctx: OpContext, query: str, k: int, corpus: str) -> list[dict[str, Any]]:
    sreq = SearchRequest(query=query, k=k, mode="hybrid", corpus=corpus, include_content=False, debug=True)
    return shape(run_engine(ctx.live, engine_body(sreq)), sreq)["results"]


def _ranked(results: list[dict[str, Any]], policy: Policy, session: bool) -> list[dict[str, Any]]:
    kept = [r for r in results if _candidate(r, session) and policy.allows(str(r["path"]), session)]
    if session:
        return kept
    scored = []
    for i, r in enumerate(kept, start=1):
        s = float(r.get("score_normalized") or 0.0) + path_weight(r["path"]) - i * 0.01
        if r.get("stale_warning"):
            s -= 0.15
        scored.append((-s, r["path"], r))
    scored.sort(key=lambda x: (x[0], x[1]))
    ordered = [r for _, _, r in scored]
    fresh = [r for r in ordered if not r.get("stale_warning")]
    return fresh or ordered


def _truncate(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _clean_line(raw: str) -> str:
    """One line of a page as plain evidence text: no heading, list or quote markers, links
    shown by their labels."""
    line = raw.strip()
    if not line or line == "---" or line.startswith("#"):
        return ""
    if line.startswith(">"):
        line = line.lstrip("> ").strip()
    if line.startswith(("- ", "* ")):
        line = line[2:].strip()
    line = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), line)
    return _MDLINK.sub(lambda m: m.group(1), line)


def _excerpt(root: Path, path: str) -> str:
    """The opening of a curated page: its summary-like section's first two lines, else its
    first two lines of text (frontmatter and headings skipped)."""
    if path.startswith(("logs/", "inbox/", "archive/", "wiki/")):
        return ""
    full = root / path
    try:
        if full.is_symlink() or not full.is_file():
            return ""
        full.resolve().relative_to(root.resolve())
        with open(full, "rb") as f:
            text = f.read(EXCERPT_READ).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        text = text[text.find("\n", end + 4) + 1:] if end >= 0 else text
    for heading in _SUMMARY_SECTIONS:
        m = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        if m:
            lines = [c for c in map(_clean_line, m.group(1).split("\n")) if c][:2]
            if lines:
                return _truncate(" ".join(lines), EXCERPT_CHARS)
    lines = [c for c in map(_clean_line, text.split("\n")) if c][:2]
    return _truncate(" ".join(lines), EXCERPT_CHARS)


def _safe(snippet: str) -> str:
    """A snippet as evidence text: role-prefixed lines (a transcript's system: or tool:
    lines) dropped, whitespace collapsed."""
    keep = []
    for raw in str(snippet or "").split("\n"):
        line = raw.strip()
        low = line.lower()
        if not line or low.startswith(("system:", "developer:", "assistant:", "tool:")):
            continue
        keep.append(line[5:].strip() if low.startswith("user:") else line)
    return " ".join(" ".join(keep).replace("**", "").split())  # no match marks in evidence


def _evidence(root: Path, r: dict[str, Any]) -> str:
    snippet = _safe(r.get("snippet", ""))
    excerpt = _excerpt(root, r["path"])
    if not excerpt or excerpt.casefold() in snippet.casefold():
        return snippet
    if not snippet or snippet.casefold() in excerpt.casefold():
        return excerpt
    return _truncate(f"{snippet} {excerpt}", EXCERPT_CHARS)


def _bullets(durable: list[tuple[dict[str, Any], str]], sessions: list[tuple[dict[str, Any], str]]) -> list[str]:
    weighted = []
    for pos, (r, text) in enumerate(durable[:4], start=1):
        if text:
            weighted.append((5.0 + float(r.get("score_normalized") or 0.0) - pos * 0.25, _truncate(text, BULLET_CHARS)))
    for pos, (r, text) in enumerate(sessions[:3], start=1):
        if text:
            weighted.append((4.0 + float(r.get("score_normalized") or 0.0) - pos * 0.2, _truncate(text, BULLET_CHARS)))
    weighted.sort(key=lambda x: (-x[0], x[1].casefold()))
    out: list[str] = []
    seen: set[str] = set()
    for _, text in weighted:
        if text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


def _fit(block: str, budget_tokens: int) -> str:
    limit = min(MAX_BLOCK, max(MIN_BLOCK, budget_tokens * 4))
    if len(block) <= limit:
        return block
    cut = block[: limit - 1].rstrip()
    if "\n## " in cut:
        whole = cut.rsplit("\n## ", 1)[0].rstrip()
        if len(whole) >= MIN_BLOCK:
            return whole
    return cut + "…"


def _section(title: str, items: list[tuple[dict[str, Any], str]], n: int, chars: int) -> str:
    if not items:
        return ""
    lines = [f"## {title}"]
    for r, text in items[:n]:
        lines.append(f"- {r['path']}")
        if text:
            lines.append(f"  {_truncate(text, chars)}")
    return "\n".join(lines)


def active_memory(ctx: OpContext, req: ActiveMemoryRequest) -> dict[str, Any]:
    t0 = time.perf_counter()
    deadline = t0 + req.timeout_ms / 1000
    profile = req.profile if req.profile != "auto" else profile_for(req.prompt)
    base = POLICIES[profile]
    recent = wants_sessions(req.prompt)
    policy = Policy(base.profile, base.wake_profile, base.pinned, base.durable, base.sessions and recent,
                    base.blocked, base.blocked_prefixes)
    query = " ".join(req.prompt.split())[:MAX_QUERY]
    durable: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    if query and policy.durable:
        durable = _ranked(_search(ctx, query, DURABLE_K, "durable"), policy, False)[:DURABLE_K]
    if query and policy.sessions and time.perf_counter() < deadline:
        sessions = _ranked(_search(ctx, query, SESSION_K, "sessions"), policy, True)[:SESSION_K]
    root = Path(ctx.root)
    d_items = [(r, _evidence(root, r)) for r in durable[:4]]
    s_items = [(r, _safe(r.get("snippet", ""))) for r in sessions[:3]]
    bullets = _bullets(d_items, s_items)

    wake_block, wake_sources = "", []
    if req.include_wake and not durable and not sessions:  # Dory shows the wake only when nothing was found
        from commonplace.compiler.wake import wake

        w = wake(ctx.live.docs, root=root, budget_tokens=min(req.budget_tokens, 600), profile=policy.wake_profile,
                 agent=req.agent, include_recent_sessions=3 if policy.sessions else 0,
                 include_pinned_decisions=policy.pinned, resolver=getattr(ctx.live, "resolver", None))
        wake_block, wake_sources = w.block.strip(), w.sources

    parts = [
        "\n".join(["## Active memory", *[f"- {b}" for b in bullets[:5]]]) if bullets else "",
        wake_block,
        _section("Durable evidence", d_items, 3, DURABLE_SNIPPET),
        _section("Session evidence", s_items, 2, SESSION_SNIPPET),
    ]
    block = _fit("\n\n".join(p for p in parts if p).strip(), req.budget_tokens)
    if bullets:
        summary = " | ".join(bullets[:2])[:280]
    else:
        first = next((ln.strip() for ln in wake_block.split("\n") if ln.strip()), "")
        summary = first[:280]
    sources: list[str] = []
    for p in [*(wake_sources if wake_block else []), *[r["path"] for r in durable[:4]], *[r["path"] for r in sessions[:3]]]:
        if p not in sources:
            sources.append(p)
    confidence = "high" if durable and sessions else "medium" if durable or sessions else None
    answer: dict[str, Any] = {"kind": "memory" if block else "none", "block": block, "summary": summary,
                              "sources": sources}
    if req.debug:
        answer.update(took_ms=max(1, round((time.perf_counter() - t0) * 1000)), profile=profile,
                      confidence=confidence)
    return answer
