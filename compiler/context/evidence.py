"""Search results into compact evidence lines: the sentence(s) of each source that bear
on the question, with the source's date and path.

The search engine ranks sources; this module reads each one (from disk, so a server
restarted over a build reads what an agent would get) and keeps the units that share
the most words with the question, at most `PER_SOURCE` of them, in page order. A source
whose units share nothing falls back to its search snippet, cleaned.

Audit and generated material is not evidence here unless the caller asks for it: the
per-write evidence files (`sources/semantic/`), inbox and quarantine, saved research
(`references/reports/`, `references/briefings/`), generated wiki pages (`wiki/`),
archives, and any page whose frontmatter says `source_kind: generated|semantic`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .facts import ROLE, Page, Unit, page_units
from .plain import plain_line, sentences, words

PER_SOURCE = 2
LINE_CHARS = 200
AUDIT_PREFIXES = ("sources/semantic/", "inbox/", "references/reports/", "references/briefings/", "wiki/",
                  "archive/", ".commonplace/")
AUDIT_KINDS = {"generated", "semantic"}
STOP = set("""a an and are as at be been being but by can could did do does doing for from had has have having
he her hers him his how i if in into is it its just me my no nor not of on or our ours she should so some such
than that the their them then there these they this those to too us very was we were what when where which while
who whom why will with would you your yours about above after again all am any because before below between both
down during each few further here just more most off once only other out over own same under until up also
anything something know tell please thing things get got really much many any ever now
""".split())

Reader = Callable[[str], "tuple[str | None, str]"]  # path -> (text, modification date)


@dataclass
class Evidence:
    path: str
    text: str
    date: str = ""
    score: float = 0.0
    session: bool = False
    units: list[Unit] = field(default_factory=list)
    updates: list["Evidence"] = field(default_factory=list)


def is_audit(path: str, fm: dict[str, Any] | None = None) -> bool:
    if path.startswith(AUDIT_PREFIXES) or "/quarantine/" in path or path.endswith(".tombstone.md"):
        return True
    if isinstance(fm, dict):
        if str(fm.get("source_kind") or "").strip().lower() in AUDIT_KINDS:
            return True
        if str(fm.get("status") or "").strip().lower() in ("quarantined", "quarantine"):
            return True
    return False


def stem(word: str) -> str:
    w = word.casefold().strip("'")
    for suffix in ("'s", "ing", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:7]


def query_terms(query: str) -> dict[str, float]:
    """Content words of the question as stems, each weighted (longer words and names
    say more than short ones)."""
    out: dict[str, float] = {}
    for raw in re.findall(r"[\w']+", query):
        w = raw.casefold()
        if w in STOP or len(w) < 3 or w.isdigit() and len(w) < 2:
            continue
        weight = 1.0 + (0.5 if len(w) >= 7 else 0.0) + (0.5 if raw[:1].isupper() else 0.0)
        s = stem(w)
        out[s] = max(out.get(s, 0.0), weight)
    return out


def overlap(terms: dict[str, float], text: str) -> float:
    have = {stem(w) for w in words(text)}
    return sum(wt for s, wt in terms.items() if s in have)


def _split_units(page: Page, session: bool) -> list[Unit]:
    out: list[Unit] = []
    for u in page.units:
        text = u.text
        if session:
            m = ROLE.match(text)
            if m:
                if m.group(1).casefold() in ("system", "developer", "tool"):
                    continue
                text = text[m.end():].strip()
        if u.kind == "claim" or len(text) <= LINE_CHARS:
            out.append(Unit(text, u.kind, u.date, u.heading))
            continue
        for s in sentences(text):  # a long paragraph: its sentences compete on their own
            out.append(Unit(s, u.kind, u.date, u.heading))
    return [u for u in out if u.text]


def _clip(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def pick(page: Page, terms: dict[str, float], snippet: str, session: bool, per_source: int = PER_SOURCE) -> list[Unit]:
    """The units of `page` that answer best, in page order."""
    units = _split_units(page, session)
    if not units:
        return []
    snip = set(words(snippet))
    scored = []
    for i, u in enumerate(units):
        s = overlap(terms, u.text)
        if snip and s > 0:
            uw = set(words(u.text))
            if uw and len(uw & snip) / len(uw) > 0.6:
                s += 0.5  # the search engine's own snippet points here
        if u.kind == "claim" and s > 0:
            s += 0.25
        scored.append((s, i, u))
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:per_source]
    if not best:
        return []
    top = best[0][0]
    keep = [x for x in best if x[0] >= top * 0.5]
    return [u for _, _, u in sorted(keep, key=lambda x: x[1])]


def gather(results: list[dict[str, Any]], query: str, read: Reader, *, include_audit: bool = False,
           session: bool = False, per_source: int = PER_SOURCE) -> list[Evidence]:
    """One `Evidence` per usable result, in the results' order."""
    terms = query_terms(query)
    out: list[Evidence] = []
    seen: set[str] = set()
    for r in results:
        path = str(r.get("path") or "")
        fm = r.get("frontmatter") if isinstance(r.get("frontmatter"), dict) else None
        if not path or path in seen or (not include_audit and is_audit(path, fm)):
            continue
        seen.add(path)
        text, mdate = read(path)
        page = page_units(path, text) if text else Page(path)
        if not include_audit and is_audit(path, page.meta):
            continue
        snippet = plain_line(str(r.get("snippet") or ""))
        units = pick(page, terms, snippet, session, per_source) if text else []
        if not units and snippet:
            if session:
                snippet = ROLE.sub("", snippet)
            units = [Unit(_clip(snippet), "prose", page.date)]
        if not units:
            continue
        date = page.date or mdate
        shown = _clip(" ".join(u.text for u in units), LINE_CHARS + (100 if len(units) > 1 else 0))
        unit_date = max((u.date for u in units if u.date), default="") or date
        out.append(Evidence(path, shown, unit_date, float(r.get("score_normalized") or 0.0), session, units))
    return out


def attach_updates(durable: list[Evidence], sessions: list[Evidence], terms: dict[str, float]) -> list[Evidence]:
    """Session evidence newer than a durable fact and about the same thing goes beside it
    (both dated); returns the session evidence left over."""
    left: list[Evidence] = []
    for s in sessions:
        best, best_score = None, 0.0
        sw = {stem(w) for w in words(s.text) if w not in STOP and len(w) > 2}
        for d in durable:
            if d.date and s.date and s.date <= d.date:
                continue
            dw = {stem(w) for w in words(d.text) if w not in STOP and len(w) > 2}
            shared = sw & dw
            score = len(shared) + sum(terms.get(x, 0.0) for x in shared)
            if len(shared) >= 2 and any(x in terms for x in shared) and score > best_score:
                best, best_score = d, score
        if best is not None:
            best.updates.append(s)
        else:
            left.append(s)
    return left


def mtime_date(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).date().isoformat()
