"""`/v1/wake`: the context block an agent reads when it starts, within a token budget.

Dory's shape (`dory-contract.md` §1.5: profiles, their core sections and order, the
project page, pinned decisions, recent sessions), packed as facts by the context builder
(`compiler/context/`), not pasted as files:

1. The profile's core sections, in the profile's order: `default` user, soul, env,
   active, identity, defaults; `casual` user, soul, identity, defaults, active, env;
   `coding` active, env, defaults; `writing` soul, writing voice, defaults, active;
   `privacy` the boundary lines of core/user.md and core/identity.md, then defaults,
   soul. A section is `core/<name>.md`; the writing voice is `core/writing-voice.md` (or
   `_`), else the first `knowledge/personal/*writing-voice.md`. commonplace adds the other
   pinned `core/` pages (every profile but privacy), then in `default` and `casual` the
   remaining `core/` pages (`commonplace init` writes identity and working-agreements).
   A named page a profile leaves out (coding: user, soul, identity) stays out unless it
   is pinned: a pinned `core/user.md` holds working agreements that bind every task.
2. The project's current state when `project` (or the basename of `cwd`) names one:
   `projects/<slug>/state.md`, else a state page whose title, slug or alias matches,
   else any page the name resolves to. Then the people and decisions it links to, and
   `decisions/<slug>.md` (where a `kind: decision` memory-write about it lands), each a
   few lines, claims first.
3. Up to three pinned decisions (`pinned: true`, not retired, superseded or stale),
   newest `updated` first.
4. Today's and yesterday's daily notes (`logs/daily/`).
5. `## Recent sessions`: one line per session under `logs/sessions/`, newest file first,
   `- <path>: <summary>`, the summary being what the session did (its `summary`, a
   summary or outcome section, else the assistant's last words), not the first message.

Every section is a heading with the page's title and path, then its text as facts:
frontmatter, marker comments, claim ids, Timeline and Evidence lists left out, current
claims as `- statement (date, path)`, replaced ones not at all. A line already shown in
an earlier section is not shown again. Room for the recent sessions is kept aside first;
the block never exceeds `budget_tokens` by the estimate (`compiler/context/tokens.py`).
When the sections do not all fit, room goes by priority (`compiler/context/wakefit.py`):
the project's first fact; the rules (the profile's core sections, the agent's
preferences, pinned core pages) whole, within half the budget; the first fact of today's
note, of each pinned decision and of yesterday's note; then the project's first three
facts, two of each note and decision, the first of each page the project links to and of
the other core pages (whole lines or nothing); then the rest, each up to its cap (a
profile's cap, else a share of the budget), then past it. A cut section ends with
`[wake excerpt truncated; get path=<path> for the rest]` (with `transport`, the call of
that transport: `GET /v1/get?path=`, `dory_get path=`); one cut to nothing but labels is
left out and listed in `omitted`. The same files give the same block: only `frozen_at`
changes across calls and restarts.

Text is read from the files on disk (`root`), not from the parsed documents: a server
that starts over an existing build holds documents loaded from the manifest, which keeps
frontmatter but no text (issue 16), and the disk is what an agent would read with get.
"""

from __future__ import annotations

import datetime as dt
import heapq
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .facts import session_summary
from .plain import plain_line
from .projects import cwd_project, find_project, project_links
from .reader import Reader as _Reader
from .sections import Section, page_section, plain_section
from .tokens import estimate_tokens
from .wakefit import (DECISION, LINKED, NAMED_CORE, NEWER, OTHER, PROJECT, RULES, TODAY,
                      YESTERDAY, allot, cap, fit, visible)
from ..corpus.scan import session_files
from ..model import Document
from ..sessions.actors import is_personal, preferences

PROFILES = ("default", "casual", "coding", "writing", "privacy")
SECTION_ORDERS: dict[str, tuple[str, ...]] = {
    "default": ("user", "soul", "env", "active", "identity", "defaults"),
    "casual": ("user", "soul", "identity", "defaults", "active", "env"),
    "coding": ("active", "env", "defaults"),
    "writing": ("soul", "writing_voice", "defaults", "active"),
    "privacy": ("privacy_boundaries", "defaults", "soul"),
}
# Token caps on single sections, per profile (Dory's numbers): a small start-up budget
# goes to what the profile is for first.
SECTION_BUDGETS: dict[str, dict[str, int]] = {
    "default": {"project": 360},
    "casual": {"project": 320},
    "coding": {"active": 480, "env": 340, "defaults": 260, "project": 360, "user": 220, "soul": 220,
               "identity": 180},
    "writing": {"soul": 520, "writing_voice": 420, "defaults": 180, "active": 180, "project": 260},
    "privacy": {"privacy_boundaries": 420, "defaults": 260, "soul": 180, "project": 220},
}
DEFAULT_BUDGET = 600
MAX_BUDGET = 1500
MAX_PINNED = 3
SESSION_LINE_CHARS = 120
RETIRED = {"retired", "superseded", "stale"}
_BOUNDARY_HEADINGS = ("boundar", "private", "privacy", "sensitive", "public", "redact", "do not", "don't", "avoid")
_BOUNDARY_WORDS = ("boundary", "boundaries", "private", "privacy", "sensitive", "redact", "do not mention",
                   "don't mention", "do not share", "avoid sharing", "public-safe", "public safe")
_IDENTIFIERS = ("telegram", "email", "phone", "dob", "birth", "passport", "ssn", "address", "orcid")


@dataclass
class WakeResult:
    profile: str
    block: str
    tokens_estimated: int
    budget_tokens: int
    sources: list[str] = field(default_factory=list)
    frozen_at: str = ""
    truncated: list[str] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self, debug: bool = False) -> dict[str, Any]:
        """Dory's answer: `{profile, block}`; debug adds tokens_estimated, sources and
        frozen_at (and commonplace's budget_tokens, truncated, omitted). Warnings, when
        there are any, are always there."""
        d: dict[str, Any] = {"profile": self.profile, "block": self.block}
        if self.warnings:
            d["warnings"] = self.warnings
        if debug:
            d.update(tokens_estimated=self.tokens_estimated, sources=self.sources, frozen_at=self.frozen_at,
                     budget_tokens=self.budget_tokens, truncated=self.truncated, omitted=self.omitted)
        return d


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in {"true", "yes", "1", "on"}
    return v is True or (isinstance(v, int) and not isinstance(v, bool) and v == 1)


def _strip_frontmatter(text: str) -> str:
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---", 4)
    if end < 0:
        return text
    nl = text.find("\n", end + 4)
    return text[nl + 1:] if nl >= 0 else ""


def _privacy_lines(text: str) -> list[str]:
    out: list[str] = []
    in_section = False
    for raw in _strip_frontmatter(text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        low = line.casefold()
        if line.startswith("#"):
            in_section = any(m in low for m in _BOUNDARY_HEADINGS)
            if in_section:
                out.append(line)
            continue
        if not (in_section or any(m in low for m in _BOUNDARY_WORDS)):
            continue
        if any(m in low for m in _IDENTIFIERS):
            continue  # a boundary about an identifier must not repeat the identifier
        out.append(raw.rstrip())
    return out


def _named_section(name: str, read: _Reader) -> Section | None:
    if name == "privacy_boundaries":
        lines: list[str] = []
        used: list[str] = []
        for rel in ("core/user.md", "core/identity.md"):
            text = read.text(rel)
            found = _privacy_lines(text) if text else []
            if found:
                used.append(rel)
                lines += found
        seen: set[str] = set()
        unique: list[str] = []
        for line in lines:
            line = line.strip()
            if line.startswith("#"):
                continue  # the boundary headings: one heading says it
            line = plain_line(line.lstrip("-*+ ").strip())
            if line and line.casefold() not in seen:
                seen.add(line.casefold())
                unique.append(f"- {line}")
        return plain_section(name, used, "# Privacy boundaries", unique)
    if name == "writing_voice":
        candidates = ["core/writing-voice.md", "core/writing_voice.md"]
        candidates += sorted(p for p in read.docs if p.startswith("knowledge/personal/") and p.endswith("writing-voice.md"))
        if read.root is not None:
            folder = read.root / "knowledge" / "personal"
            if folder.is_dir():
                candidates += sorted(f"knowledge/personal/{p.name}" for p in folder.glob("*writing-voice.md"))
        for rel in candidates:
            text = read.text(rel)
            if text and text.strip():
                return page_section(name, rel, text)
        return None
    rel = f"core/{name}.md"
    text = read.text(rel)
    if not text or not text.strip():
        return None
    return page_section(name, rel, text)


def _is_core(d: Document) -> bool:
    return d.path.startswith("core/") or d.type == "core"


def _extra_core(docs: dict[str, Document], profile: str, taken: set[str]) -> list[Document]:
    """commonplace's addition: other core pages (pinned ones in every profile but privacy,
    all of them in default and casual), pinned first, then by path."""
    if profile == "privacy":
        return []
    everything = profile in ("default", "casual")
    extra = [d for d in docs.values() if _is_core(d) and d.path not in taken and not d.is_session
             and not is_personal(d.path)  # an actor's own page: only in that actor's wake
             and (everything or _truthy(d.frontmatter.get("pinned")))
             and str(d.status or "").lower() not in RETIRED]
    extra.sort(key=lambda d: (not _truthy(d.frontmatter.get("pinned")), d.path))
    return extra


def _date_key(d: Document) -> str:
    fm = d.frontmatter
    v = fm.get("updated") or fm.get("created") or d.updated or d.created or ""
    return str(v)


def pinned_decisions(docs: dict[str, Document], limit: int = MAX_PINNED) -> list[Document]:
    found = [d for d in docs.values()
             if (d.path.startswith("decisions/") or d.type == "decision") and not d.is_session
             and _truthy(d.frontmatter.get("pinned"))
             and str(d.status or d.frontmatter.get("status") or "").strip().lower() not in RETIRED
             and not d.frontmatter.get("superseded_by") and not _truthy(d.frontmatter.get("forgotten"))]
    found.sort(key=lambda d: (_date_key(d), d.path.rsplit("/", 1)[-1]), reverse=True)
    return found[:limit]


def recent_sessions(docs: dict[str, Document], root: Path | None, limit: int) -> list[str]:
    """Paths of the newest session files under logs/sessions/."""
    if limit <= 0:
        return []
    if root is None:
        sessions = sorted((d for d in docs.values() if d.is_session), key=lambda d: (d.sort_date or "", d.path),
                          reverse=True)
        return [d.path for d in sessions[:limit]]
    # By the day a session's file name says (Dory's `<day>-<slug>.md`), then by modification
    # time: ingesting an older transcript later put it first.
    found = [(_named_day(rel) or mtime_day(ns / 1e9), ns, rel) for rel, (ns, _size) in session_files(Path(root)).items()]
    return [p for *_, p in heapq.nlargest(limit, found)]


_DAY = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def _named_day(rel: str) -> str:
    m = _DAY.search(rel.rsplit("/", 1)[-1])
    return m.group(1) if m else ""


def mtime_day(seconds: float) -> str:
    try:
        return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).date().isoformat()
    except (OverflowError, OSError, ValueError):  # a file dated past what the platform's clock can say
        return "9999-12-31" if seconds > 0 else ""


def session_line(rel: str, text: str | None) -> str:
    summary = session_summary(text or "", SESSION_LINE_CHARS, rel) or rel.rsplit("/", 1)[-1].removesuffix(".md")
    return f"- {rel}: {summary}"


def _beside_sessions(sec: Section, rel: str, text: str, sessions: list[tuple[str, str | None]],
                     least: int = 2) -> None:
    """A recent session that changes a fact of the project page (or of a daily note) goes
    under that fact, dated ("Next milestone: ... due 2026-12-12" / "  - newer: ... now due
    2026-12-19"): the page alone states the old value as the project's state. The session's turns are read
    (its first `TURN_LINES`), not only its summary line, for the line about the same thing
    (`updates.same_subject`: the session's project, two words of what the fact is about)
    with a date or number the fact does not have; the session not older than the fact.
    `least`: the words (a value counts two) a line shares with the fact, at least; a
    daily note's facts are about anything, and two words ("Sofia", "wedding") put the
    cake's change under "confirm the headcount with Sofia"."""
    from .facts import page_units, said_on, split_meta
    from .pack import fact_line
    from .updates import values_of, changes_value, distinct_words, same_subject, session_turns

    news = []
    for path, body in sessions:
        said = said_on(path, split_meta(body or "")[0])
        project, turns = session_turns(body or "")
        news += [(path, said.isoformat() if said else "", t, project, distinct_words(t)) for t in turns]
    # Each session line goes under the one fact it shares the most with, a value of the
    # fact's it names ("not 2027-02-10", "instead of 01:00") counting as two words: when
    # every fact chose its own best line, the one naming the advisor took "the advisor
    # agreed to push chapter 3" by the two words of her name.
    units = page_units(rel, text).units if news else []
    chosen: dict[int, tuple[int, Any]] = {}  # unit index -> (words shared, session line)
    for n in news:
        best, best_shared = None, least - 1
        said = set().union(*values_of(n[2]).values())
        for k, u in enumerate(units):
            shared = len(n[4] & distinct_words(u.text)) + 2 * len(said & set().union(*values_of(u.text).values()))
            if (shared > best_shared and not (u.date and n[1] and n[1] < u.date)
                    and changes_value(u.text, n[2], strict=True, fact_path=rel)
                    and same_subject(rel, u.text, n[0], n[2], line_project=n[3])):
                best, best_shared = k, shared
        if best is not None and best_shared > chosen.get(best, (0, None))[0]:
            chosen[best] = (best_shared, n)
    for k, (_, n) in chosen.items():
        at = next((i for i, ln in enumerate(sec.lines) if units[k].text in ln), None)
        if at is not None:
            sec.lines.insert(at + 1, f"{NEWER}{fact_line(n[2], n[1], n[0])}")
            sec.keys.insert(at + 1, "")


def _undated(sec: Section | None, day: dt.date) -> Section | None:
    """A daily note without the label of its own heading ("Friday 2026-12-04:"): the
    section's heading says the day, and a tight budget has no room for it twice."""
    if sec is not None:
        iso = day.isoformat()
        kept = [(ln, k) for ln, k in zip(sec.lines, sec.keys) if k or ln.startswith(NEWER) or iso not in ln]
        sec.lines, sec.keys = [ln for ln, _ in kept], [k for _, k in kept]
    return sec if sec is not None and sec.lines else None


def daily_notes(docs: dict[str, Document], read: _Reader, today: dt.date) -> list[str]:
    """Today's and yesterday's daily notes."""
    return notes_of(docs, read.exists, today, today - dt.timedelta(days=1))


def notes_of(docs: dict[str, Document], exists: Callable[[str], bool], *days: dt.date) -> list[str]:
    """The daily notes of `days`, in their order, each once: pages of type `daily` dated
    that day, and `logs/daily/<day>.md` (also under a year or year/month folder). The
    documents are read once for all the days (a week's research at 10k: one pass, not seven)."""
    wanted = {day.isoformat() for day in days}
    typed: dict[str, list[str]] = {}
    for d in docs.values():
        if d.type == "daily":
            iso = str(d.date or d.frontmatter.get("date") or "")[:10]
            if iso in wanted:
                typed.setdefault(iso, []).append(d.path)
    found: list[str] = []
    for day in days:
        iso = day.isoformat()
        y, m, _ = iso.split("-")
        found += [p for p in sorted(typed.get(iso, ())) if p not in found]
        found += [c for c in (f"logs/daily/{iso}.md", f"logs/daily/{y}/{iso}.md", f"logs/daily/{y}/{m}/{iso}.md")
                  if c not in found and exists(c)]
    return found


SESSION_SHARE = 0.2


def wake(docs: dict[str, Document] | Iterable[Document], *, root: Path | None = None,
         budget_tokens: int = DEFAULT_BUDGET, profile: str | None = None, project: str | None = None,
         agent: str | None = None, include_recent_sessions: int = 5, include_pinned_decisions: bool = True,
         resolver: Any = None, cwd: str | None = None, today: dt.date | None = None,
         transport: str | None = None) -> WakeResult:
    """The wake block for `docs` (path -> Document); file text comes from `root`. With
    `transport` ("http", "mcp") a cut section's note names that transport's call to read
    the rest; without it, the op (`get path=...`)."""
    if not isinstance(docs, dict):
        docs = {d.path: d for d in docs}
    budget = max(1, min(MAX_BUDGET, int(budget_tokens)))
    warnings: list[str] = []
    prof = (profile or "default").strip().lower() or "default"
    if prof not in PROFILES:
        warnings.append(f"unknown profile {profile!r}; used 'default' (profiles: {', '.join(PROFILES)})")
        prof = "default"
    read = _Reader(root, docs)
    caps = SECTION_BUDGETS.get(prof, {})
    day = today or dt.datetime.now(dt.timezone.utc).date()

    sections: list[tuple[Section, int]] = []  # in the block's order, each with its rank (`wakefit`)
    taken: set[str] = set()
    # Newest sessions, listed once: the project section looks for updates in at least three,
    # the Recent sessions section shows `include_recent_sessions` of them.
    sessions = recent_sessions(docs, root, max(include_recent_sessions, 3))

    def add(sec: Section | None, rank: int) -> None:
        if sec is not None:
            sections.append((sec, rank))
            taken.update(sec.paths)

    for name in SECTION_ORDERS[prof]:
        s = _named_section(name, read)
        if s is not None and not (name != "privacy_boundaries" and s.paths[0] in taken):
            sections.append((s, RULES))
            if name != "privacy_boundaries":
                taken.update(s.paths)
    # Dory's named core files the profile leaves out (coding: user, soul, identity) stay
    # out, unless pinned: a page the user pinned is a rule for every task (`_extra_core`).
    taken.update(p for p in (f"core/{n}.md" for n in NAMED_CORE)
                 if not (p in docs and _truthy(docs[p].frontmatter.get("pinned"))))
    personal = preferences(root, agent) if prof != "privacy" else None
    if personal is not None:
        heading, _, body = personal[1].partition("\n")
        lines = []
        for raw in body.split("\n"):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            bullet = line.startswith(("- ", "* ", "+ "))
            text = plain_line(line[2:] if bullet else line)
            if text:
                lines.append(f"- {text}" if bullet else text)
        add(plain_section("personal", [personal[0]], heading, lines), RULES)
    for d in _extra_core(docs, prof, taken):
        text = read.text(d.path)
        if text and text.strip():
            add(page_section("core", d.path, text), RULES if _truthy(d.frontmatter.get("pinned")) else OTHER)
    name = (project or "").strip()
    if not name and cwd and cwd.strip():
        found, rel = cwd_project(docs, cwd, resolver, root)
        name = found if rel else ""  # a cwd that names no project is not a problem to report
    if name:
        rel = find_project(docs, name, resolver, root)
        text = read.text(rel) if rel else None
        if rel is None or not text:
            warnings.append(f"no project page found for {name[:200]!r}")
        elif rel not in taken:
            sec = page_section("project", rel, text, label="Project: ")
            if sec is not None and prof != "privacy":
                _beside_sessions(sec, rel, text, [(p, read.text(p)) for p in sessions])
            add(sec, PROJECT)
            pinned = {d.path for d in pinned_decisions(docs)} if include_pinned_decisions else set()
            for linked in project_links(docs, rel, read):
                if linked not in taken and prof != "privacy":
                    t = read.text(linked)
                    if t and t.strip() and linked in pinned:  # a pinned decision keeps its rank (a nut-free menu)
                        add(page_section("decision", linked, t, label="Decision: "), DECISION)
                    elif t and t.strip():
                        add(page_section("linked", linked, t, limit=4, claims_first=True), LINKED)
    if include_pinned_decisions:
        for d in pinned_decisions(docs):
            text = read.text(d.path)
            if text and text.strip() and d.path not in taken:
                add(page_section("decision", d.path, text, label="Decision: "), DECISION)
    if prof != "privacy":
        for when, rank in ((day, TODAY), (day - dt.timedelta(days=1), YESTERDAY)):
            for rel in notes_of(docs, read.exists, when):
                text = read.text(rel)
                if text and text.strip() and rel not in taken:
                    sec = page_section("daily", rel, text, label="Daily note: ")
                    if sec is not None:  # yesterday's "dinner on Saturday", and today's session that moved it
                        _beside_sessions(sec, rel, text, [(p, read.text(p)) for p in sessions], least=3)
                    add(_undated(sec, when), rank)

    heading = "## Recent sessions"
    session_lines: list[tuple[str, str]] = []
    for rel in sessions[:max(0, include_recent_sessions)]:
        session_lines.append((rel, session_line(rel, read.text(rel))))
    reserve = 0
    if session_lines:
        reserve = min(estimate_tokens("\n".join([heading, *[ln for _, ln in session_lines]])) + 2,
                      int(budget * SESSION_SHARE))

    # Each section's room by priority (`wakefit.allot`), priced on the lines it would
    # show after the sections before it; then shown in order, each within its room.
    seen: set[str] = set()
    parts = []
    for sec, rank in sections:
        pairs = visible(sec, seen)
        parts.append((sec, rank, pairs, cap(sec, rank, caps, budget)))
        seen.update(k for k in sec.keys if k)
    grants = allot(parts, budget - reserve, budget, transport)
    block = ""
    sources: list[str] = []
    truncated: list[str] = []
    omitted: list[str] = []
    seen = set()
    for (s, rank, _, _), grant in zip(parts, grants):
        sep = "\n\n" if block else ""
        room = min(grant, budget - reserve - estimate_tokens(block + sep))
        pairs = visible(s, seen)
        text, cut = fit(s, pairs, room, rank <= YESTERDAY, transport) if room > 0 else ("", bool(pairs))
        if not text:
            if cut:
                omitted += s.paths
            continue
        block += sep + text
        sources += s.paths
        seen.update(k for k in s.keys if k)
        if cut:
            truncated += s.paths

    lines: list[str] = []
    for rel, line in session_lines:
        candidate = (block + "\n\n" if block else "") + "\n".join([heading, *lines, line])
        if estimate_tokens(candidate) > budget:
            break
        lines.append(line)
        sources.append(rel)
    if lines:
        block = (block + "\n\n" if block else "") + "\n".join([heading, *lines])

    frozen = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    return WakeResult(prof, block, estimate_tokens(block), budget, sources, frozen, truncated, omitted, warnings)
