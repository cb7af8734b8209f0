"""A page's text as units an agent can use.

A unit is a piece of plain text with its date and the heading it sat under:

- a current claim from the managed claims section becomes the claim's statement, dated
  by its `since` bound, else the day it was recorded: `Alex is allergic to peanuts.`
  with date 2026-11-27. The claim id, kind, actor and confidence are not part of it;
- replaced, retired or ended claims (the collapsed history), contradictions notes, the
  Timeline and the Evidence sections are left out: they are the page's bookkeeping, and
  the current claim already says what holds now;
- other body lines become prose units (headings and list markers off, links as labels),
  dated by the page (frontmatter `updated`, `date`, `created`).

Frontmatter never reaches a unit. A fenced code block is kept as one unit only when it
is not the raw input of an evidence file.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from ..markdown import frontmatter as fm
from ..markdown.comments import strip_comments
from ..markdown.restate import restates
from .tables import cells, is_separator, row_text
from .plain import plain_line
from .transcript import LABEL
from .when import parse_day, resolve, stated_day, style_of

_MARKER = re.compile(r"^\s{0,3}<!-- commonplace:([a-z0-9_-]+):(start|end)\b.*-->\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_CLAIM_META = re.compile(r"\s+—\s+(?=[^—]*\brecorded \d{4}-\d{2}-\d{2})")
_RECORDED = re.compile(r"\brecorded (\d{4}-\d{2}-\d{2})")
_SINCE = re.compile(r"\bsince (\d{4}-\d{2}-\d{2})")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
# A line that is only links ("- [[decisions/x.md|X]]", "See [[A]], [[B]]." aside): a pointer,
# not a fact; the page it points to is read on its own.
_LINKS_ONLY = re.compile(r"^(?:\s*(?:\[\[[^\]\n]+\]\]|\[[^\]\n]*\]\([^)\n]*\))[\s,;·|.]*)+$")
_SKIP_SECTIONS = {"timeline", "evidence", "details"}
# A line that goes on with the one before it (a paragraph or list item wrapped at 80
# columns) must not start a block of its own or a speaker's turn.
# A speaker's turn is a name of up to three capitalised words and a colon (`Maya:`, `Jon
# Silva:`), not any sentence with a colon in it ("Dory can point at it unchanged: ...").
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#|>|\||<|\*\*|`{3}|~{3}|\[\^|[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}:\s)")
# A number and a dot mid-paragraph ("...now also grabs\n8001. Updated") goes on with the
# paragraph: only `1.` starts a list there (CommonMark), or any number inside a list.
_ORDERED = re.compile(r"^\s*(\d+)[.)]\s")
_ENDS = re.compile(r"(?:[.!?:;]|[.!?][\"')\]*_]+)$")
ROLE = re.compile(r"^\s*(?:\*\*)?(user|assistant|system|developer|tool|human|ai)(?:\*\*)?\s*[:>—-]\s*", re.I)


@dataclass
class Unit:
    text: str
    kind: str = "prose"  # prose | claim
    date: str = ""
    heading: str = ""
    stems: frozenset[str] | None = field(default=None, repr=False, compare=False)  # filled on first use
    content: frozenset[str] | None = field(default=None, repr=False, compare=False)  # stems less stop words
    follows: bool = False  # the next sentence of the same paragraph as the unit before it


@dataclass
class Page:
    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    date: str = ""
    units: list[Unit] = field(default_factory=list)
    split: dict[bool, list[Unit]] = field(default_factory=dict, repr=False)  # evidence units, kept with the page


def split_meta(text: str) -> tuple[dict[str, Any], str]:
    text = (text or "").lstrip("\ufeff").replace("\r\n", "\n")
    try:
        raw, body, _ = fm.split(text)
    except fm.FrontmatterError:
        return {}, text
    if raw is None:
        return {}, body
    try:
        meta = fm.load(raw)
    except Exception:  # noqa: BLE001 - unusable frontmatter is still not shown
        meta = {}
    return (meta if isinstance(meta, dict) else {}), body


def page_date(meta: dict[str, Any]) -> str:
    for key in ("updated", "date", "created", "at"):
        v = meta.get(key)
        if v:
            m = _DATE.match(str(v).strip())
            if m:
                return m.group(1)
    return ""


def _claim(line: str, heading: str) -> Unit | None:
    body = _LIST.sub("", line, count=1)
    if body == line:
        return None
    parts = _CLAIM_META.split(body, maxsplit=1)
    statement = plain_line(parts[0])
    if not statement or statement.startswith(("*replaced", "replaced ")):
        return None
    meta = parts[1] if len(parts) > 1 else ""
    since, rec = _SINCE.search(meta), _RECORDED.search(meta)
    date = (since or rec).group(1) if (since or rec) else ""
    if rec:  # "moved yesterday", recorded on the 27th: the 26th (`when`)
        statement = resolve(statement, parse_day(rec.group(1)))
    if heading.casefold() == "upcoming":
        statement = f"Upcoming: {statement}"
    return Unit(statement, "claim", date, heading)


DATED_TYPES = {"daily", "weekly", "session", "digest", "digest-daily", "digest-weekly", "journal", "meeting"}


def said_on(path: str, meta: dict[str, Any], head: str = "") -> dt.date | None:
    """The day a page's lines were said, when the page is the record of one day:

    - a file named by its day (a daily note, a session, `meetings/2026-11-20-standup.md`);
    - a daily, weekly, session or journal page (its `type`, or under `logs/`): its `date`
      (or `created`, `at`), unless a later `updated` says lines were added since;
    - a page whose title or first line (`head`) states its day, as a chat turn's does
      (`Maya — 4:10 pm on 2 March, 2024`), and no other date of it disagrees.

    Any other page's `date` says when it was begun: a line added to it later would be
    given a wrong day, so it has none."""
    m = re.search(r"\d{4}-\d{2}-\d{2}", path.rsplit("/", 1)[-1])
    named = parse_day(m.group(0)) if m else None
    if named is not None:
        return named
    said = next((parse_day(meta[k]) for k in ("date", "created", "at") if meta.get(k)), None)
    edited = parse_day(meta.get("updated"))
    if said is not None and (str(meta.get("type") or "").casefold() in DATED_TYPES or path.startswith("logs/")):
        return said if edited is None or edited == said else None
    stated = stated_day(head)
    if stated is not None and said in (None, stated) and edited in (None, stated):
        return stated
    return None


def _unwrap(lines: list[str]) -> list[str]:
    """Lines wrapped mid-sentence joined back: a line that ends without a sentence's end
    (and without a hard break) goes on into the next, unless that one starts a block,
    a list item or a speaker's turn. Fenced code is left as it is."""
    out: list[str] = []
    fence = False
    joinable = False
    for raw in lines:
        if _FENCE.match(raw):
            fence = not fence
            out.append(raw)
            joinable = False
            continue
        line = raw.strip()
        if fence or not line:
            out.append(raw)
            joinable = False
            continue
        num = _ORDERED.match(raw)
        # Only `1.` starts a list inside a paragraph or a bullet (CommonMark); another number
        # goes on from a numbered item, else it is the wrapped line's text ("from 8000 to / 8001.").
        starts = bool(_BLOCK_START.match(raw)) and not (num and num.group(1) != "1" and out
                                                        and not _ORDERED.match(out[-1]))
        if joinable and not starts and not _MARKER.match(raw):
            out[-1] = out[-1].rstrip() + " " + line
        else:
            out.append(raw)
        last = out[-1]
        joinable = not (last.endswith(("  ", "\\")) or _ENDS.search(last.rstrip()) or _HEADING.match(last)
                        or _MARKER.match(last) or last.lstrip().startswith("|") or last.strip() in ("---", "***"))
    return out


def page_units(path: str, text: str) -> Page:
    """`text` (the file as on disk) as a `Page` of units; relative times in its prose get
    their day when the page was written on one (`said_on`, `when.resolve`)."""
    meta, body = split_meta(text)
    body = strip_comments(body)  # `%%hidden%%` is never published, nor read to an agent
    head = str(meta.get("title") or "") or next((ln for ln in body.split("\n") if ln.strip()), "")[:200]
    said = said_on(path, meta, head)
    # A daily note without frontmatter is dated by its name, not by its file's last write.
    page = Page(path, meta, str(meta.get("title") or ""), page_date(meta) or (said.isoformat() if said else ""))
    style = style_of(head) if said else "iso"
    managed: list[str] = []
    fence: str | None = None
    code: list[str] = []
    heading = ""
    header: list[str] | None = None  # the table being read (its header's cells)
    pending: tuple[list[str], Unit] | None = None  # a row that may be a table's header
    for raw in _unwrap(body.split("\n")):
        m = _FENCE.match(raw)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
                snippet = " ".join(c.strip() for c in code if c.strip())
                if snippet and heading.casefold() not in ("raw input",) and not managed:
                    if len(snippet) > 400:
                        snippet = snippet[:399].rsplit(" ", 1)[0] + "…"
                    # In its ticks, a command reads as one, not as a sentence of the prose.
                    page.units.append(Unit(snippet if "`" in snippet else f"`{snippet}`", "prose", page.date,
                                           heading))
                code = []
            else:
                code.append(raw)
            continue
        if m:
            fence = m.group(1)
            continue
        mk = _MARKER.match(raw)
        if mk:
            name, which = mk.group(1), mk.group(2)
            if which == "start":
                managed.append(name)
            elif managed and managed[-1] == name:
                managed.pop()
            continue
        if any(n in _SKIP_SECTIONS for n in managed):
            continue
        h = _HEADING.match(raw)
        if h:
            header = pending = None
            heading = plain_line(h.group(2))
            if len(h.group(1)) == 1 and not page.title:
                page.title = heading
            continue
        line = raw.strip()
        if not line or line in ("---", "***") or line.startswith("> ⚠"):
            header = pending = None
            continue
        if "claims" in managed:
            if line.startswith("*No current claims"):
                continue
            unit = _claim(line, heading)
            if unit is not None:
                unit.date = unit.date or page.date
                page.units.append(unit)
            continue
        if line.startswith("Raw input:") or heading.casefold() == "timeline":
            continue
        # A table: its header row, once the separator under it shows it is one, names
        # the cells of each row after it (`tables`).
        if is_separator(line):  # never a fact of its own
            if pending is not None and page.units and page.units[-1] is pending[1]:
                page.units.pop()
                header, pending = pending[0], None
            continue
        if line.startswith("|") or header is not None and "|" in line:
            row = cells(line)
            if header is not None:
                text_line = row_text(header, row)
                if text_line:
                    page.units.append(Unit(text_line, "prose", page.date, heading))
                continue
            text_line = " | ".join(c for c in row if c)
            if text_line:  # no table yet: a line of cells, unless the separator follows
                pending = (row, Unit(text_line, "prose", page.date, heading))
                page.units.append(pending[1])
            continue
        header = pending = None
        item = _LIST.sub("", line.lstrip("> "), count=1)
        if _LINKS_ONLY.match(item):
            continue
        text_line = plain_line(item)
        if said is not None and text_line:
            text_line = resolve(text_line, said, style)
        if text_line:
            page.units.append(Unit(text_line, "prose", page.date, heading))
    if not page.title:
        page.title = path.rsplit("/", 1)[-1].removesuffix(".md")
    page.units = _current(page.units)
    return page


def _current(units: list[Unit]) -> list[Unit]:
    """A page's prose without the sentences one of its current claims restates: a claim
    changed by hand or by `claim change` ("deadline 29 January") and the prose it changes
    ("deadline 15 January") would both read as true. The claim takes the place of the
    prose it restates (under its heading): the page's own order says what matters first,
    and a project's changed headcount was shown last, after its unchanged facts, where a
    tight wake cut it."""
    claims = [u for u in units if u.kind == "claim"]
    if not claims:
        return units
    placed: set[int] = set()
    out: list[Unit] = []
    for u in units:
        if u.kind == "claim":
            if id(u) not in placed:
                out.append(u)
            continue
        parts = re.split(r"(?<=[.!?])\s+(?=\S)", u.text)
        kept = [p for p in parts if not any(restates(p, c.text) for c in claims)]
        if kept:
            out.append(u if len(kept) == len(parts) else Unit(" ".join(kept), u.kind, u.date, u.heading))
        for c in claims:
            if id(c) not in placed and any(restates(p, c.text) for p in parts if p not in kept):
                placed.add(id(c))
                out.append(Unit(c.text, c.kind, c.date, u.heading or c.heading))
    return out


def session_summary(text: str, limit: int = 160, path: str = "") -> str:
    """One line that says what a session did: frontmatter `summary` (or `description`),
    else the first line of a `## Summary`/`Outcome`/`Stopped at` section, else the last
    thing the assistant said, else the first line that is not the user's message. Its
    relative times get their day when the session was on one (`said_on`)."""
    meta, body = split_meta(text)
    said = said_on(path, meta)
    line = _summary(meta, body, limit)
    return resolve(line, said) if said is not None else line


def _summary(meta: dict[str, Any], body: str, limit: int) -> str:
    for key in ("summary", "description", "synopsis"):
        v = meta.get(key)
        if isinstance(v, str) and v.strip():
            return _clip(plain_line(v), limit)
    lines = body.split("\n")
    for i, raw in enumerate(lines):
        h = _HEADING.match(raw)
        if h and re.match(r"(summary|outcome|result|stopped at|next steps?)\b", h.group(2).strip(), re.I):
            for nxt in lines[i + 1:]:
                if _HEADING.match(nxt):
                    break
                t = plain_line(_LIST.sub("", nxt.strip(), count=1))
                if t:
                    return _clip(t, limit)
    for raw in lines:
        m = re.match(r"^\s*(?:[-*]\s+)?(summary|outcome|stopped at|decided|result)\s*:\s*(.+)$", raw, re.I)
        if m:
            return _clip(plain_line(f"{m.group(1).capitalize()}: {m.group(2)}"), limit)
    last_assistant = ""
    pairs: list[list[str]] = []  # [an ask, the assistant's last answer to it], in order
    named: list[str] = []  # `Name: ...` lines of a talk between people (no user or assistant)
    asks = 0  # the user's turns
    first_other = ""
    first_user = ""
    role = ""
    for raw in lines:
        h = _HEADING.match(raw)
        if h:
            r = h.group(2).strip().casefold()
            role = r if r in ("user", "assistant", "human", "ai") else role
            continue
        m = ROLE.match(raw)
        if m:
            role = m.group(1).casefold()
            raw = raw[m.end():]
        t = plain_line(raw.strip())
        if not t:
            continue
        if role in ("assistant", "ai"):
            last_assistant = t
            if pairs:
                pairs[-1][1] = t
        elif role in ("user", "human"):
            asks += 1
            first_user = first_user or t
            pairs.append([t, ""])
        elif role not in ("user", "human", "system", "developer", "tool"):
            first_other = first_other or t
            if LABEL.match(t):
                named.append(t)
    talk = asks == 0 and not last_assistant and len({n.split(":", 1)[0] for n in named}) > 1
    # Each exchange of several is said by its answer, or by its ask when the answer says
    # nothing of its own ("Got it.", a question back).
    said = _specific(named if talk else [a if _says(a) and not a.endswith("?") else q for q, a in pairs]
                     if asks > 1 or talk else [], limit, cut=not talk)
    if said:
        return said
    # The ask leads the last answer when the answer alone does not say what the session
    # was about: it names nothing ("Looked at the queue and the alerts."), it answers a
    # later ask than the first (a session of several), or it is a few words ("I can't
    # check that.").
    led = bool(last_assistant and first_user) and (
        len(last_assistant.split()) < SHORT_ANSWER
        or bool(_SPECIFIC.search(first_user)) and (not _SPECIFIC.search(last_assistant) or asks > 1))
    if led:
        ask = first_user if first_user[-1] in ".?!" else first_user + "."
        ask = f"{ask[:1].upper()}{ask[1:]}"
        answer = " ".join(last_assistant.split())
        room = limit - len(answer) - 1  # the answer is kept whole: cut, the ask would be all that is left
        if len(ask) + len(answer) + 1 <= limit or room < MIN_ASK:
            return _clip(f"{ask} {answer}" if room >= MIN_ASK else answer, limit)
        return f"{_clip(ask, room)} {answer}"
    return _clip(last_assistant or first_other, limit)


def _specific(lines: list[str], limit: int, cut: bool = True) -> str:
    """What a session of several asks (the assistant's answers), or a talk between people
    (its `Name: ...` lines), settled: its lines that name or number something, the last
    ones that fit in `limit`, in order. A first ask with the last answer said one of three
    things, and a call's first line is its greeting."""
    specific = [t for t in lines if _says(t)]
    out: list[str] = []
    for t in reversed(specific):
        room = limit - len(" ".join(out)) - 1
        if len(t) > room:
            if cut and out and room >= MIN_ASK:  # an earlier one, cut, before what fits whole
                out.insert(0, _clip(t, room))
            break
        out.insert(0, t)
    return " ".join(out)


def _says(t: str) -> bool:
    """A line that names or numbers something, in a few words at least."""
    return bool(_SPECIFIC.search(t.split(":", 1)[-1])) and len(t.split()) >= SHORT_ANSWER


SHORT_ANSWER = 5  # an answer of fewer words says little without its ask
MIN_ASK = 30  # characters of the ask worth keeping before the answer
# A name (a capital inside the line) or a number: what tells one session from another.
_SPECIFIC = re.compile(r"\d|(?<=[\w,;:] )[A-Z]")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    stop = cut.rfind(". ")
    if stop > limit // 2:
        return cut[: stop + 1]
    clause = max(cut.rfind(", "), cut.rfind("; "))  # a cut at ";" goes on ("…"), it does not end  # else at a clause: "so she can no…" reads as its opposite
    if clause > limit // 2:
        return cut[:clause] + "…"
    words = cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut  # between words ("this mor…" said nothing)
    return words.rstrip(" ,;:") + "…"
