"""`/v1/wake`: the context block an agent reads when it starts, within a token budget.

The shape is Dory's (`dory-contract.md` §1.5), so agents written for Dory read the same
block:

1. The profile's core sections, in the profile's order, each the file's text as written
   (frontmatter included): `default` user, soul, env, active, identity, defaults;
   `casual` user, soul, identity, defaults, active, env; `coding` active, env, defaults;
   `writing` soul, writing voice, defaults, active; `privacy` the boundary lines of
   core/user.md and core/identity.md, then defaults, soul. A section is `core/<name>.md`;
   the writing voice is `core/writing-voice.md` (or `_`), else the first
   `knowledge/personal/*writing-voice.md`. Some profiles cap a section's share of the
   budget; a capped section keeps its leading lines and says where the rest is.
   commonplace adds: after the named sections, the other pinned `core/` pages (every
   profile but privacy), then in `default` and `casual` the remaining `core/` pages, so a
   corpus whose core files have other names (`commonplace init` writes identity and
   working-agreements) still wakes with them.
2. The project page when `project` names one (`project:` prefix allowed): 
   `projects/<slug>/state.md`, else a state page whose title, slug or alias matches, else
   any page the name resolves to.
3. Up to three pinned decisions (`pinned: true`, not retired, superseded or stale),
   newest `updated` first.
4. `## Recent sessions`: one line per session under `logs/sessions/`, newest file first,
   `- <path>: <first line of its body>`.

Sections are joined by blank lines and added while they fit; the one that does not fit is
cut to the room left, and nothing after it is added. Unlike Dory (whose first section
always goes in whole), the block never exceeds `budget_tokens` by our estimate.

Text is read from the files on disk (`root`), not from the parsed documents: a server
that starts over an existing build holds documents loaded from the manifest, which keeps
frontmatter but no text (issue 16), and the disk is what an agent would read with get.

Token counting is an offline estimate, no tokenizer is loaded: a text costs
`max(ceil(characters / 4), ceil(words * 4 / 3))` tokens. Four characters per token is the
usual figure for English under BPE tokenizers; the word-based term keeps short-word and
non-English text from being undercounted. Both overestimate slightly for plain English,
the safe direction for a budget.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .markdown import slugify
from .scan import session_files
from .model import Document
from .sessions.actors import is_personal, preferences

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
NAMED_CORE = ("active", "defaults", "env", "identity", "soul", "user")
DEFAULT_BUDGET = 600
MAX_BUDGET = 1500
MAX_PINNED = 3
SESSION_LINE_CHARS = 120
READ_LIMIT = 256 * 1024  # a wake never shows more than a few thousand characters of a file
MIN_CUT_TOKENS = 24  # less room than this: leave a section out rather than show a stub
RETIRED = {"retired", "superseded", "stale"}
_WORDS = re.compile(r"\S+")
_BOUNDARY_HEADINGS = ("boundar", "private", "privacy", "sensitive", "public", "redact", "do not", "don't", "avoid")
_BOUNDARY_WORDS = ("boundary", "boundaries", "private", "privacy", "sensitive", "redact", "do not mention",
                   "don't mention", "do not share", "avoid sharing", "public-safe", "public safe")
_IDENTIFIERS = ("telegram", "email", "phone", "dob", "birth", "passport", "ssn", "address", "orcid")


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    words = len(_WORDS.findall(text))
    return max(math.ceil(len(text) / 4), math.ceil(words * 4 / 3))


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


@dataclass
class _Section:
    name: str  # core name, "project", "decision" or "core"
    paths: list[str]
    text: str


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in {"true", "yes", "1", "on"}
    return v is True or (isinstance(v, int) and not isinstance(v, bool) and v == 1)


class _Reader:
    """File text by corpus path: from disk under `root` (symlinks and paths leaving the
    corpus refused), else the parsed document's text."""

    def __init__(self, root: Path | None, docs: dict[str, Document]) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self.docs = docs

    def full(self, rel: str) -> Path | None:
        if self.root is None:
            return None
        p = self.root / rel
        try:
            if p.is_symlink() or not p.is_file():
                return None
            p.resolve().relative_to(self.root)
        except (OSError, ValueError):
            return None
        return p

    def text(self, rel: str) -> str | None:
        p = self.full(rel)
        if p is not None:
            try:
                with open(p, "rb") as f:
                    return f.read(READ_LIMIT).decode("utf-8", "replace").replace("\r\n", "\n")
            except OSError:
                pass
        doc = self.docs.get(rel)
        if doc is not None and doc.text:
            return doc.text
        return None

    def exists(self, rel: str) -> bool:
        return self.full(rel) is not None or bool(self.docs.get(rel) and self.docs[rel].text)


def _strip_frontmatter(text: str) -> str:
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---", 4)
    if end < 0:
        return text
    nl = text.find("\n", end + 4)
    return text[nl + 1:] if nl >= 0 else ""


def _cut_lines(text: str, fits: Any) -> str | None:
    """The longest run of leading lines (or, for one long line, leading characters) of
    `text` for which `fits(piece)` holds; None if not even a little fits."""
    lines = text.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi:  # binary search: the estimate only grows with more lines
        mid = (lo + hi + 1) // 2
        if fits("\n".join(lines[:mid]).rstrip()):
            lo = mid
        else:
            hi = mid - 1
    piece = "\n".join(lines[:lo]).rstrip()
    if piece:
        return piece
    first = lines[0] if lines else ""
    lo, hi = 0, len(first)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(first[:mid].rstrip()):
            lo = mid
        else:
            hi = mid - 1
    return first[:lo].rstrip() or None


def _note(paths: list[str]) -> str:
    where = paths[0] if paths else "the source"
    return f"<!-- wake excerpt truncated; read the rest with dory_get path={where} -->"


def _capped(section: _Section, cap: int | None) -> tuple[str, bool]:
    """A section's text within its profile cap: (text, truncated)."""
    text = section.text
    if cap is None or estimate_tokens(text) <= cap:
        return text, False
    piece = _cut_lines(text, lambda t: estimate_tokens(t) <= cap)
    if not piece:
        return text, False  # nothing fits the cap: the budget check decides
    return f"{piece}\n\n{_note(section.paths)}", True


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


def _named_section(name: str, read: _Reader) -> _Section | None:
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
            if line.casefold() not in seen:
                seen.add(line.casefold())
                unique.append(line)
        if not unique:
            return None
        return _Section(name, used, "# Privacy boundaries\n\n" + "\n".join(unique))
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
                return _Section(name, [rel], text.strip())
        return None
    rel = f"core/{name}.md"
    text = read.text(rel)
    if not text or not text.strip():
        return None
    return _Section(name, [rel], text.strip())


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


def find_project(docs: dict[str, Document], project: str, resolver: Any = None,
                 root: Path | None = None) -> str | None:
    """Corpus path of the page `project` names, or None."""
    p = project.strip()
    if p.lower().startswith("project:"):
        p = p.split(":", 1)[1].strip()
    if not p:
        return None
    read = _Reader(root, docs)
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
    """Paths of the newest session files (by modification time) under logs/sessions/."""
    if limit <= 0:
        return []
    if root is None:
        sessions = sorted((d for d in docs.values() if d.is_session), key=lambda d: (d.sort_date or "", d.path),
                          reverse=True)
        return [d.path for d in sessions[:limit]]
    found = [(mtime, rel) for rel, (mtime, _size) in session_files(Path(root)).items()]
    return [p for _, p in heapq.nlargest(limit, found)]


def session_line(rel: str, text: str | None) -> str:
    first = rel.rsplit("/", 1)[-1].removesuffix(".md")
    for raw in _strip_frontmatter(text or "").split("\n"):
        line = raw.strip()
        if line and not line.startswith("#"):
            first = line
            break
    return f"- {rel}: {' '.join(first.split())[:SESSION_LINE_CHARS]}"


def wake(docs: dict[str, Document] | Iterable[Document], *, root: Path | None = None,
         budget_tokens: int = DEFAULT_BUDGET, profile: str | None = None, project: str | None = None,
         agent: str | None = None, include_recent_sessions: int = 5, include_pinned_decisions: bool = True,
         resolver: Any = None) -> WakeResult:
    """The wake block for `docs` (path -> Document); file text comes from `root`."""
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

    sections: list[_Section] = []
    taken: set[str] = set()
    for name in SECTION_ORDERS[prof]:
        s = _named_section(name, read)
        if s is not None and not (name != "privacy_boundaries" and s.paths[0] in taken):
            sections.append(s)
            if name != "privacy_boundaries":
                taken.update(s.paths)
    # Dory's named core files appear only where their profile puts them (coding leaves
    # out user, soul and identity on purpose), never as extras.
    taken.update(f"core/{n}.md" for n in NAMED_CORE)
    personal = preferences(root, agent) if prof != "privacy" else None
    if personal is not None:
        sections.append(_Section("personal", [personal[0]], personal[1]))
    for d in _extra_core(docs, prof, taken):
        text = read.text(d.path)
        if text and text.strip():
            sections.append(_Section("core", [d.path], text.strip()))
            taken.add(d.path)
    if project and project.strip():
        rel = find_project(docs, project, resolver, root)
        text = read.text(rel) if rel else None
        if rel is None or not text:
            warnings.append(f"no project page found for {project.strip()[:200]!r}")
        elif rel not in taken:
            sections.append(_Section("project", [rel], text.strip()))
            taken.add(rel)
    if include_pinned_decisions:
        for d in pinned_decisions(docs):
            text = read.text(d.path)
            if text and text.strip() and d.path not in taken:
                sections.append(_Section("decision", [d.path], text.strip()))
                taken.add(d.path)

    block = ""
    sources: list[str] = []
    truncated: list[str] = []
    omitted: list[str] = []
    stopped = False
    for s in sections:
        if stopped:
            omitted += s.paths
            continue
        text, cut = _capped(s, caps.get(s.name))
        sep = "\n\n" if block else ""
        if estimate_tokens(block + sep + text) <= budget:
            block += sep + text
            sources += s.paths
            if cut:
                truncated += s.paths
            continue
        # The first section that does not fit is cut to the room left; nothing follows it.
        stopped = True
        note = _note(s.paths)
        room = budget - estimate_tokens(block + sep + "\n\n" + note)
        piece = None
        if room >= MIN_CUT_TOKENS:
            piece = _cut_lines(text, lambda t: estimate_tokens(block + sep + t + "\n\n" + note) <= budget)
        if piece:
            block += f"{sep}{piece}\n\n{note}"
            sources += s.paths
            truncated += s.paths
        else:
            omitted += s.paths

    if not stopped:
        heading = "## Recent sessions"
        lines: list[str] = []
        for rel in recent_sessions(docs, root, include_recent_sessions):
            line = session_line(rel, read.text(rel))
            candidate = (block + "\n\n" if block else "") + "\n".join([heading, *lines, line])
            if estimate_tokens(candidate) > budget:
                break
            lines.append(line)
            sources.append(rel)
        if lines:
            block = (block + "\n\n" if block else "") + "\n".join([heading, *lines])

    frozen = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    return WakeResult(prof, block, estimate_tokens(block), budget, sources, frozen, truncated, omitted, warnings)
