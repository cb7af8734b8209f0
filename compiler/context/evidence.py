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

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from .entity import entity_names as _entity_names, named
from .facts import ROLE, Page, Unit
from .plain import STOP, plain_line, sentences, words
from .terms import HEADING, heading_stems, overlap, query_terms, stem
from .transcript import speakers, with_reply, without
from .updates import bearing, said_values as _said, updates
from .when import DAYS
from .window import best_window, drop_restated
from .pages import Reader, disk_reader, load_page, mtime_date  # noqa: F401 - evidence's API (readers, pages)

PER_SOURCE = 2
STANDOUT = 2.0  # a first result scored this many times the second keeps its place (`rerank`)
SECTION = 4  # lines of the section a question names by its heading (`pick`)
OWN_NAME = 0.25  # a word of an entity page's own name, in a line of that page (`pick`)
LINE_CHARS = 200
BRIEF_CHARS = 90  # a line past the block's first sources (`briefly`)
AUDIT_PREFIXES = ("sources/semantic/", "inbox/", "references/reports/", "references/briefings/", "wiki/",
                  "archive/", ".commonplace/")
AUDIT_KINDS = {"generated", "semantic"}

@dataclass
class Evidence:
    path: str
    text: str
    date: str = ""
    score: float = 0.0
    session: bool = False
    units: list[Unit] = field(default_factory=list)
    updates: list["Evidence"] = field(default_factory=list)
    rest: list[Unit] = field(default_factory=list)  # the source's other units, claims first
    rest_updates: dict[int, list["Evidence"]] = field(default_factory=dict)  # by index into `rest`
    matched: float = 0.0  # how much of the question its text holds (`overlap`)
    dated: bool = False  # its text already says its date (a chat line's `who — when` header)
    # Its short form (who, a chat line's speaker, and the window that matches best), made
    # on first use: most evidence gathered is never shown short (a tenth of a call's time).
    brief_of: "Callable[[], str] | None" = field(default=None, repr=False, compare=False)
    _brief: "str | None" = field(default=None, repr=False, compare=False)
    terms: dict[str, float] = field(default_factory=dict, repr=False)  # the question's (`query_terms`)
    after: list["Evidence"] = field(default_factory=list)  # a chat turn's next turns (`turns.read_on`)
    over: str = ""  # an update's: the date of the fact it changes (`attach_updates`), if not the line's

    @property
    def brief(self) -> str:
        if self._brief is None:
            self._brief = self.brief_of() if self.brief_of is not None else ""
        return self._brief

    @brief.setter
    def brief(self, text: str) -> None:
        self._brief = text


def is_audit(path: str, fm: dict[str, Any] | None = None) -> bool:
    if path.startswith(AUDIT_PREFIXES) or "/quarantine/" in path or path.endswith(".tombstone.md"):
        return True
    if isinstance(fm, dict):
        # A note is memory the agent or a person kept, though Dory's defaults mark one
        # written through /v1/write `source_kind: generated`.
        if str(fm.get("source_kind") or "").strip().lower() in AUDIT_KINDS and \
                str(fm.get("type") or "").strip().lower() != "note":
            return True
        if str(fm.get("status") or "").strip().lower() in ("quarantined", "quarantine"):
            return True
    return False


def unit_stems(u: Unit) -> frozenset[str]:
    if u.stems is None:
        u.stems = frozenset(stem(w) for w in words(u.text))
    return u.stems


def _split_units(page: Page, session: bool) -> list[Unit]:
    """The page's units as evidence competes on them (kept with the cached page)."""
    got = page.split.get(session)
    if got is None:
        got = page.split[session] = _split(page, session)
    return got


def _split(page: Page, session: bool) -> list[Unit]:
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
            out.append(u if text == u.text else Unit(text, u.kind, u.date, u.heading))
            continue
        for j, s in enumerate(sentences(text)):  # a long paragraph: its sentences compete on their own
            out.append(Unit(s, u.kind, u.date, u.heading, follows=j > 0))
    return [u for u in out if u.text]


def _clip(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def pick(page: Page, terms: dict[str, float], snippet: "str | Callable[[], str]", session: bool,
         per_source: int = PER_SOURCE, units: list[Unit] | None = None) -> list[Unit]:
    """The units of `page` that answer best, in page order. `snippet` is the search's
    snippet of the page, or a function that makes it: it is made only when it can change
    the choice (more units share words with the question than are kept, or their scores
    are far apart, or none does)."""
    units = _split_units(page, session) if units is None else units
    if not units:
        return []
    who = speakers(units)  # a conversation in one page: its speakers' names are not matched
    terms = without(terms, who) if who else terms
    made: list[set[str]] = []

    def snip() -> set[str]:
        if not made:
            made.append({stem(w) for w in words(snippet() if callable(snippet) else snippet)})
        return made[0]

    own = _entity_names(page)
    scored = []
    for i, u in enumerate(units):
        have = unit_stems(u)
        # On an entity's own page its name is what every line is about: "When does the
        # Northwind renewal close?" is answered by `close date: ...`, not by the line that
        # says "Northwind renewal" again.
        s = sum(wt * (OWN_NAME if t in own else 1.0) for t, wt in terms.items() if t in have) + HEADING * sum(
            wt for t, wt in terms.items() if t not in have and t not in own and t in heading_stems(u.heading))
        if u.kind == "claim" and s > 0:
            s += 0.25
        scored.append([s, i, u])
    matching = [x for x in scored if x[0] > 0]
    # The snippet's bonus (below) can change the choice only when more units match than
    # are kept, or when a boosted top would leave a matching unit under the 0.6 line.
    settled = len(matching) <= per_source and \
        min((x[0] for x in matching), default=0.0) >= (max((x[0] for x in matching), default=0.0) + 0.5) * 0.6
    if len(matching) > 1 and not settled and snip():
        for x in matching:
            have = unit_stems(x[2])
            if have and len(have & snip()) / len(have) > 0.6:
                x[0] += 0.5  # the search engine's own snippet points here
    ranked = sorted(matching, key=lambda x: (-x[0], x[1]))
    under = sum(1 for x in ranked if terms.keys() & heading_stems(x[2].heading) - own)
    if under and terms.keys() & heading_stems(ranked[0][2].heading) - own:
        # The question names the section ("the status of lanternfish"): its lines are the answer.
        per_source = max(per_source, min(SECTION, under))
    best = ranked[:per_source]
    if not best:
        # No word of the question (a match by meaning): the unit the engine's snippet
        # comes from, else the page's opening, never the snippet itself, which may be a
        # Timeline or Evidence list.
        snip_ = snip()
        near = max(((len(unit_stems(u) & snip_) / (len(unit_stems(u)) or 1), -i, u) for i, u in enumerate(units)),
                   key=lambda x: (x[0], x[1]))
        claims = [u for u in units if u.kind == "claim"]
        if note(page, units):
            return units  # a chat turn: its header alone (who, when) says nothing
        if near[0] > 0.3:
            return [near[2]]
        if claims:
            return [claims[0]]
        # A short note's short first line says only who or when (`Maya — 1:56 pm`): the
        # text after it goes with it.
        return units[:2] if len(units) > 1 and len(units) <= 4 and len(units[0].text) <= 40 else units[:1]
    top = best[0][0]
    keep = [x for x in best if x[0] >= top * 0.6]
    # On a person's or project's page every claim says its name: a unit kept beside the best
    # shares another word of the question ("what can Dana eat?" kept "Dana wants updates as
    # short emails" beside her allergy, both matching "Dana" alone).
    # (or whose heading does: the lines under `## Status` for "the status of lanternfish")
    if own and len(keep) > 1:
        keep = keep[:1] + [x for x in keep[1:] if any(t in unit_stems(x[2]) or t in heading_stems(x[2].heading)
                                                      for t in terms if t not in own)]
    # The sentence after the best one goes with it: a question restates the setting
    # ("while camping", "last weekend") and the answer is what was said next ("We
    # explored nature, roasted marshmallows...").
    after = best[0][1] + 1
    if after < len(units) and units[after].follows and all(i != after for _, i, _ in keep):
        keep.append((0.0, after, units[after]))
    if note(page, units):
        # A short note (a chat turn: who and when, then a message) is shown whole: the
        # sentence that answers is often not the one that shares the question's words.
        return drop_restated(units, _content)
    if len(page.units) <= 4 and len(units[0].text) <= 40 and page.units and units[0].text == page.units[0].text:
        if all(i != 0 for _, i, _ in keep):
            keep.append((0.0, 0, units[0]))  # a short note's short first line says who or what (`Maya — 1:56 pm`)
        elif len(units) > 1 and all(i == 0 for _, i, _ in keep):
            keep.append((0.0, 1, units[1]))  # and it alone (the name matched) says nothing: what follows it
    kept = drop_restated([u for _, _, u in sorted(keep, key=lambda x: x[1])], _content)
    return with_reply(units, kept, best[0][2]) if who else kept  # and its reply with the best turn


def _content(u: Unit) -> frozenset[str]:
    if u.content is None:
        u.content = frozenset(s for s in unit_stems(u) if (len(s) > 2 or s.isdigit()) and s not in STOP)
    return u.content


NOTE_CHARS = 320


def note(page: Page, units: list[Unit]) -> bool:
    """A short note: a short first line (who, when) and at most three more lines, all of
    it within NOTE_CHARS."""
    return 1 < len(page.units) <= 4 and len(page.units[0].text) <= 40 and \
        sum(len(u.text) for u in units) <= NOTE_CHARS


def gather(results: list[dict[str, Any]], query: str, read: Reader, *, include_audit: bool = False,
           session: bool = False, per_source: int = PER_SOURCE,
           snippet_of: Callable[[dict[str, Any]], str] | None = None) -> list[Evidence]:
    """One `Evidence` per usable result, in the results' order. A result without a
    snippet gets one from `snippet_of` when one is needed (`pick`)."""
    terms = query_terms(query)
    out: list[Evidence] = []
    seen: set[str] = set()
    for r in results:
        path = str(r.get("path") or "")
        fm = r.get("frontmatter") if isinstance(r.get("frontmatter"), dict) else None
        if not path or path in seen or (not include_audit and is_audit(path, fm)):
            continue
        seen.add(path)
        loaded, mdate = load_page(read, path)
        text = loaded is not None
        page = loaded if loaded is not None else Page(path)
        if not include_audit and is_audit(path, page.meta):
            continue
        raw_snippet = str(r.get("snippet") or "")
        if not raw_snippet and snippet_of is not None:
            def lazy(r: dict[str, Any] = r) -> str:
                return snippet_of(r).replace("**", "")
            hint: "str | Callable[[], str]" = lazy
        else:
            hint = raw_snippet.replace("**", "")
        every = _split_units(page, session) if text else []
        units = pick(page, terms, hint, session, per_source, every) if every else []
        if not units and loaded is None and not raw_snippet and snippet_of is not None:
            raw_snippet = snippet_of(r)
        snippet = plain_line(raw_snippet) if not units and loaded is None else ""
        if not units and snippet:
            if session:
                snippet = ROLE.sub("", snippet)
            units = [Unit(_clip(snippet), "prose", page.date)]
        if not units:
            continue
        date = page.date or mdate
        shown, dated = joined(units, every, date)
        shown = named(page, shown)

        def brief_of(units: list[Unit] = units, every: list[Unit] = every, page: Page = page) -> str:
            return named(page, briefly(units, every, terms, asks_when(query)))

        shown = _clip(shown, LINE_CHARS + (100 if len(units) > 1 else 0))
        unit_date = max((u.date for u in units if u.date), default="") or date
        rest = [u for u in every if all(u is not x for x in units)]
        rest.sort(key=lambda u: u.kind != "claim")  # stable: claims first, then page order
        out.append(Evidence(path, shown, unit_date, float(r.get("score_normalized") or 0.0), session, units,
                            rest=rest, matched=overlap(terms, shown), terms=terms, dated=dated, brief_of=brief_of))
    return out


CHAT_HEADER = re.compile(r"^(?P<who>[^—:]{1,40}?) — (?P<when>.*\d.*)$")


def joined(units: list[Unit], every: list[Unit], date: str) -> tuple[str, bool]:
    """The kept units as one line. A short note's header line (`Maya — 4:10 pm on 2 March,
    2024`, a chat export's speaker and time) leads the text as `Maya — <when>: ...`; when
    it names the page's own day (its year and day of the month), it leads as `Maya, 2
    March, 2024: ...` and the line's date is not repeated after it (`dated`)."""
    if len(units) > 1 and every and units[0] is every[0]:
        m = CHAT_HEADER.match(units[0].text)
        if m:
            rest = " ".join(u.text for u in units[1:])
            y, _, d = (date.split("-") + ["", ""])[:3] if date else ("", "", "")
            said = set(words(m.group("when")))
            dated = bool(y) and y in said and d.lstrip("0") in said
            if dated:  # the day, not the time of day: what a question about when needs (the file keeps it)
                return f"{m.group('who').strip()}, {_TIME.sub('', m.group('when'))}: {rest}", dated
            return f"{units[0].text}: {rest}", dated
    # A list item without a full stop ("Priya Raman (co-maintainer)") ends before the next.
    return " ".join(u.text if i == len(units) - 1 or u.text[-1:] in ".!?;:…" else u.text + "."
                    for i, u in enumerate(units)), False


_TIME = re.compile(r"^\d{1,2}[:.]\d{2}\s*(?:[ap]\.?m\.?)?\s*(?:on\s+)?", re.I)


_ASKS_WHEN = re.compile(r"^\W*when\b|\b(?:what|which) (?:year|month|day|date|week|time)\b|\bhow long\b", re.I)
_SAYS_WHEN = re.compile(r"\b(?:\d{4}|yesterday|tomorrow|ago|tonight|weekend|(?:last|next|this) (?:week|month|year)|"
                        r"(?:jan|febr)uary|march|april|may|june|july|august|september|october|november|december|"
                        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)


def asks_when(question: str) -> bool:
    """A question about time ("When did...", "What year...", "How long..."): the sentence
    that answers says a time."""
    return bool(_ASKS_WHEN.search(question or ""))


def briefly(units: list[Unit], every: list[Unit], terms: dict[str, float], when: bool = False,
            room: int = BRIEF_CHARS, fill: float = 0.0) -> str:
    """The line in `room` characters, for a line with little room: a chat line's speaker
    and day (`Maya, 2 March, 2024: ...`, the time of day left out), then the window of its
    text that holds most of the question's words (`best_window`). For a question about
    time (`when`), a window that says a time and shares a word goes first; with `fill`
    (below any word's weight), the fuller of two windows that hold as much goes first."""
    who = ""
    body = units
    if len(units) > 1 and every and units[0] is every[0]:
        m = CHAT_HEADER.match(units[0].text)
        if m:
            who, body = m.group("who").strip() + ", " + _TIME.sub("", m.group("when")), units[1:]

    def says_when(span: str) -> float:
        timed = 10.0 if when and _SAYS_WHEN.search(span) and overlap(terms, span) > 0 else 0.0
        return timed + fill * len(span) / room

    text = " ".join(u.text for u in body)
    best = best_window(text, terms, room - (len(who) + 2 if who else 0), stem, says_when)
    return f"{who}: {best}" if who else best


def rerank(items: list[Evidence], weight: float = 0.5, boilerplate: float = 0.3, head: int = 0,
           names_of: list[str] | None = None) -> list[Evidence]:
    """The search engine's order blended with how much of the question each line holds:
    a line naming the person asked about goes before one that only shares common words.
    Position, not score, stands for the engine (its scores are normalised per query).

    Two things say a line holds less than its words suggest, both measured on the
    candidates themselves: a question word found in most of them (the name of the
    person every turn of a conversation is by) tells them apart no better than none, so
    each word counts by its rarity among the candidates; and text that several
    candidates repeat word for word is a template (a greeting, a footer), placed after
    text that is said once. The first `head` items stay ahead of the rest (reordered
    among themselves): what the search put at its top is never pushed out by a deeper
    candidate. Before both, `names_of` (the question's names) filters (`_naming`): the
    items naming none of them go after those that do."""
    if len(items) < 2:
        return items
    n = len(items)
    have = [{stem(w) for w in words(e.text)} for e in items]
    terms: dict[str, float] = {}
    for e in items:
        for t, wt in e.terms.items():
            terms[t] = max(terms.get(t, 0.0), wt)
    rare: dict[str, float] = {}
    for t, wt in terms.items():
        df = sum(1 for h in have if t in h)
        rare[t] = wt * max(0.0, math.log((n + 1) / (df + 0.5))) / math.log(n + 1) if df else 0.0
    matched = [sum(rare[t] for t in terms if t in h) for h in have]
    top = max(matched) or 1.0
    def body(e: Evidence) -> str:  # its longest unit: a chat line's message, not its speaker and time
        return " ".join(words(max(e.units, key=lambda u: len(u.text)).text if e.units else e.text))

    copies: dict[str, int] = {}
    for e in items:
        copies[body(e)] = copies.get(body(e), 0) + 1
    named = _naming(items, names_of)
    # The search's first result, scored twice the next one's, stays first: "the status of
    # the wedding order" (the project page, by its alias) is answered by lines that share
    # few of the prompt's words.
    lead = items[0].score >= STANDOUT * max(items[1].score, 1e-9) and items[0].score > 0.5
    keyed = []
    for i, e in enumerate(items):
        s = (1 - weight) * (1 - i / n) + weight * matched[i] / top
        if copies[body(e)] > 1:
            s -= boilerplate
        keyed.append((named[i], i < head, lead and i == 0, s, -i, e))
    keyed.sort(key=lambda x: x[:5], reverse=True)
    return [e for *_, e in keyed]


def _naming(items: list[Evidence], asked: list[str]) -> list[int]:
    """Which items name someone the question names (anywhere in the source: a chat
    line's speaker is in its header). A name is a filter, not a word to match: when the
    question names people and some candidates name them, the others go after them
    (another person's line that shares the question's other words is not about them)."""
    if not asked:
        return [1] * len(items)
    want = {stem(a) for a in asked}
    # A core page (the working agreements) is a rule for everyone: it names no one and
    # keeps its place ("never more than 15% discount" for "what can I offer Northwind?")
    # when it shares a word of the prompt; "Short answers, bullet points" found by meaning
    # alone is nothing to know before calling Mrs Abernathy.
    out = [(2 if want & speaker_stems(e) else 1) if want & source_stems(e) else 0 for e in items]
    return ([o or int(e.path.startswith("core/") and e.matched > 0) for o, e in zip(out, items)] if any(out)
            else [1] * len(items))


def speaker_stems(e: Evidence) -> set[str]:
    """Who says a chat line (its `who — when` header), as stems."""
    for u in (*e.units, *e.rest):
        m = CHAT_HEADER.match(u.text) if len(u.text) <= 80 else None
        if m:
            return {stem(w) for w in words(m.group("who"))}
    return set()


def source_stems(e: Evidence) -> set[str]:
    got: set[str] = set()
    for u in (*e.units, *e.rest):
        got |= unit_stems(u)
    return got


_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)?|[A-Z]{2,})\b")


# Days of the week name no one ("my Friday update to Otto" names Otto). Months stay: a
# question's month matches the dated header of the turns said in it ("in July, 2023"),
# which filtered LoCoMo's candidates well (without them: -1.0 evidence, -0.3 to -1.3 answer).
_WEEKDAYS = frozenset(DAYS)


def names(text: str) -> list[str]:
    """Capitalised words that do not open a sentence (people, places, projects), once each;
    not days of the week ("my Friday update to Otto" names Otto, not Friday)."""
    out: list[str] = []
    for m in _NAME.finditer(text):
        if m.group(1) not in out and m.group(1).casefold() not in STOP and m.group(1).casefold() not in _WEEKDAYS:
            out.append(m.group(1))
    return out


def hop_names(best: list[Evidence], query: str, limit: int = 3) -> list[str]:
    """Names (capitalised words, not opening a sentence) in the best evidence that the
    question does not hold: a second search for them finds what the first hop points to
    ("I booked flights to visit Ana" -> the turn that says where Ana lives)."""
    asked = {stem(w) for w in words(query)}
    out: list[str] = []
    for e in best:
        for u in e.units:
            out += [w for w in names(u.text) if stem(w) not in asked and w not in out]
    return out[:limit]


def attach_updates(durable: list[Evidence], sessions: list[Evidence], terms: dict[str, float]) -> list[Evidence]:
    """Session evidence about the same thing as a durable fact, and not older than it,
    goes beside it (both dated); returns the session evidence left over. A session of the
    same day counts: a page's date is often its file's, which any later write to the page
    moves, so an agent's day of calls puts the page and the session on one date. The
    fact is the one the session shares the most words with, among the lines shown and the
    best sources' other facts (`_best_other_fact`): "the job now runs at 03:30 instead of
    02:00" went under a decision that shares "job" and "reconciliation" while the page's
    "runs nightly at 02:00 UTC" was shown without it."""
    left: list[Evidence] = []
    dws: dict[int, set[str]] = {}  # each durable line's words, once (4 sessions x 130 lines: 3 ms)
    for s in sessions:
        best, best_score, best_shared = None, 0.0, 0
        sw = {stem(w) for w in words(s.text) if w not in STOP and len(w) > 2}
        sv = _said(s.text)  # its dates and times: one the fact says ("not 2027-02-10") decides what it changes
        for d in durable:
            if d.date and s.date and s.date < _date_of(d, sw):
                continue
            dw = dws.get(id(d))
            if dw is None:
                dw = dws[id(d)] = {stem(w) for w in words(d.text) if w not in STOP and len(w) > 2}
            shared = sw & dw
            # Counted in its one sentence that shares the most: a line of several
            # sentences about jobs in general shares more words in all than the fact does.
            one = max((sw & unit_stems(u) for u in d.units), key=len, default=shared) if len(d.units) > 1 else shared
            score = len(one) + sum(terms.get(x, 0.0) for x in one) + len(shared) / 100 + 100 * len(sv & _said(d.text))
            if (len(shared) >= 2 and any(x in terms for x in shared) and score > best_score
                    and updates(d.path, d.text, s.path, _bearing(s, dw).text, durable)):
                best, best_score, best_shared = d, score, len(shared) + 2 * len(sv & _said(d.text))  # as `_best_other_fact` counts
        other = _best_other_fact(durable, s, sw)
        if other is not None and (best is None or other[2] > best_shared):
            d, i, _ = other
            d.rest_updates.setdefault(i, []).append(_bearing(s, unit_stems(d.rest[i])))
        elif best is not None:
            upd, over = _bearing(s, dws[id(best)]), _date_of(best, sw)
            best.updates.append(replace(upd, over=over) if over != best.date else upd)
        else:
            left.append(s)
    _old_value_named(durable, sessions)
    return left


def _old_value_named(durable: list[Evidence], sessions: list[Evidence]) -> None:
    """A fact no session line went under, and a turn of a session (one the line did not
    show) that names the fact's value as the old one: "pay the balance on 2026-12-15
    instead of 2026-12-12" beside "balance of £1,450 due on 2026-12-12". One session of
    several changes showed the cake's, and the balance's stale date was the answer."""
    for d in durable:
        if d.updates or d.session:
            continue
        mine = _said(d.text)
        for s in sessions:
            if not mine or d.date and s.date and s.date < d.date:
                continue
            turn = next((u for u in s.rest if mine & _said(u.text) and _said(u.text) - mine
                         and updates(d.path, d.text, s.path, u.text, durable)), None)
            if turn is not None:
                d.updates.append(replace(s, text=turn.text, units=[turn], rest=[], updates=[], dated=False))
                break


def attach_to_other_facts(durable: list[Evidence], sessions: list[Evidence]) -> None:
    """Each session line beside the other fact of `durable` it updates, if any
    (`_best_other_fact`)."""
    for s in sessions:
        other = _best_other_fact(durable, s, {stem(w) for w in words(s.text) if w not in STOP and len(w) > 2})
        if other is not None:
            d, i, _ = other
            d.rest_updates.setdefault(i, []).append(_bearing(s, unit_stems(d.rest[i])))


def _date_of(d: Evidence, sw: set[str]) -> str:
    """The date of what a session line would update in `d`: its unit that shares the most
    words with it, two at least (a line can join an old fact and a claim recorded today:
    "runs nightly at 02:00 UTC" and "now runs on Postgres 16" share "runs" with a session
    about the job), else `d`'s date."""
    dated = [(len(sw & unit_stems(u)), u.date) for u in d.units if u.date]
    shared, date = max(dated, default=(0, ""))
    return date if shared >= 2 else d.date


def _best_other_fact(durable: list[Evidence], s: Evidence, sw: set[str]) -> tuple[Evidence, int, int] | None:
    """The other fact of a durable source (one the block may show under `## More
    evidence`: "Next milestone: sensitivity analysis by 18 December", and the session
    "moved the sensitivity analysis milestone to 8 January") that a session line updates,
    as (source, index into its `rest`, words shared). The fact is not what the prompt
    asked, so the bar is higher: three words shared."""
    best, best_shared = None, 2
    sv = _said(s.text)
    for d in durable:
        for i, u in enumerate(d.rest):
            if u.date and s.date and s.date < u.date:
                continue
            shared = len(sw & unit_stems(u)) + 2 * len(sv & _said(u.text))  # `sw`: no stop word; a date is two
            if shared > best_shared and updates(d.path, u.text, s.path, _bearing(s, unit_stems(u)).text, durable):
                best, best_shared = (d, i), shared
    return None if best is None else (best[0], best[1], best_shared)


def _bearing(s: Evidence, about: "set[str] | frozenset[str]") -> Evidence:
    """`s` shown beside the fact it updates: only its units that bear on that fact."""
    kept = bearing(s.units, about, _content)
    return s if s.dated or len(kept) == len(s.units) else replace(s, text=" ".join(u.text for u in kept), units=kept)
