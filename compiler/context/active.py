"""The active-memory block: evidence first by relevance, one compact line per source.

    ## Active memory            the best few sources (Dory's synthesis bullets)
    ## Durable evidence         the two best sources' other claims, then the rest, while
                                the budget lasts
    ## Session evidence         session lines the prompt asked for (recent work)
    ## More evidence            budget left: the best sources' other facts, claims first

Every line is `<the relevant sentence(s)> (<date>, <path>)`; no line repeats another's
text, so the synthesis and the evidence never carry the same snippet twice. A session
line newer than a durable line about the same thing is shown under it, both dated, so
an agent sees the update next to what it changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .caution import cautions
from .evidence import BRIEF_CHARS, Evidence
from .pack import Packer, fact_line, key_of
from .turns import next_line

LEAD = 3
EXPAND = 3  # sources whose other facts fill the budget left
EXPAND_UNITS = 8
CLAIMS_FROM = 2  # sources whose other claims go before weaker sources
EXPAND_CLAIMS = 4
FULL = 5  # sources shown whole; past them a line is cut to SHORT characters, so more sources fit
SHORT = BRIEF_CHARS
FOOD_LINES = 4  # allergies and diets shown for a prompt about food, from the found and from the rest


@dataclass
class Block:
    text: str = ""
    sources: list[str] = field(default_factory=list)
    summary: str = ""
    lines: int = 0


def _line(e: Evidence, clip: int = 0) -> tuple[str, str, str]:
    text = e.text if not clip or len(e.text) <= clip else (e.brief or e.text)
    text = text if not clip or len(text) <= clip else text[: clip - 1].rsplit(" ", 1)[0] + "…"
    key, shown, path = _beside(e.text, fact_line(text, "" if e.dated else e.date, e.path), e.date, e.updates, e.path)
    for a in e.after:  # what was said next in its conversation (`turns.read_on`), short
        shown += f"\n  - next: {fact_line(next_line(a, e.date), '' if a.dated else a.date, a.path)}"
        key += " " + a.text
    return key, shown, path


def _beside(key: str, shown: str, date: str, updates: list[Evidence], path: str) -> tuple[str, str, str]:
    """A line with the newer session lines that update it under it, both dated."""
    for u in updates:
        # never older (`attach_updates`); against the fact it changes, not a claim beside it
        when = "same day, in a session" if u.date == (u.over or date) else "newer"
        shown += f"\n  - {when}: {fact_line(u.text, u.date, u.path)}"
        key += " " + u.text
    return key, shown, path


def _other(e: Evidence, i: int) -> tuple[str, str, str]:
    """The source's other fact `e.rest[i]`, with any session line that updates it."""
    u = e.rest[i]
    return _beside(u.text, fact_line(u.text, u.date, e.path), u.date, e.rest_updates.get(i, []), e.path)


def _cautions(durable: list[Evidence]) -> list[tuple[str, str, str]]:
    """Each candidate person's facts that could hurt them if missed (`caution`), led by
    their name when the sentence does not say it ("He has a tree-nut allergy")."""
    out = []
    for e in durable:
        if not e.path.startswith("people/"):
            continue
        name = " ".join(w.capitalize() for w in e.path[len("people/"):-3].split("-"))
        for u in (*e.units, *e.rest):
            if cautions(u.text):
                text = u.text if name.split()[0].casefold() in u.text.casefold() else f"{name}: {u.text}"
                out.append((text, fact_line(text, u.date or e.date, e.path), e.path))
    return out


def render(durable: list[Evidence], sessions: list[Evidence], budget: int, lead: int = LEAD,
           sessions_first: bool = False, food: bool = False, others: list[Evidence] | None = None,
           named: frozenset[str] = frozenset()) -> Block:
    """The block; with `sessions_first` (a prompt about recent work) the session lines
    come right after the best three, before the other durable sources; with `food` (a
    prompt about what someone will eat), every candidate person's allergies and diets come
    right after the best three, then those of `others` (people pages the search did not
    find); otherwise those of the people the prompt names (`named`, their pages' paths)."""
    pack = Packer(budget)
    first = [_line(e) for e in durable[:lead]]
    # The two best sources' other claims come before weaker sources: a question's words
    # do not always match the fact that answers it ("food restrictions", "allergic"). A
    # person's page is facts about them in its prose too ("anything to know before dinner
    # with Tomasz?" is answered by "Tomasz is allergic to shellfish").
    # A person's facts that could hurt them if missed (`caution`) go first among them.
    claims = [_other(e, i) for e in durable[:CLAIMS_FROM]
              for i, u in sorted(enumerate(e.rest), key=lambda x: not (e.path.startswith("people/")
                                                                      and cautions(x[1].text)))
              if u.kind == "claim" or e.path.startswith("people/")
              ][:CLAIMS_FROM * EXPAND_CLAIMS]
    # The people the prompt names (`named`: their pages) have theirs first too, whatever it asks
    # ("Leo's been invited to a party, what should I tell the host?").
    safety = _cautions(durable)[:FOOD_LINES] + _cautions(others or [])[:FOOD_LINES] if food else \
        _cautions([e for e in durable if e.path in named])[:FOOD_LINES]
    rest = safety + claims + \
        [_line(e, 0 if i < FULL else SHORT) for i, e in enumerate(durable[lead:], start=lead)]
    n = pack.section("## Active memory", first)
    if n < len(first):
        rest = first[n:] + rest
    if sessions_first:
        n += pack.section("## Session evidence", [_line(e) for e in sessions])
    n += pack.section("## Durable evidence", rest)
    if not sessions_first:
        n += pack.section("## Session evidence", [_line(e) for e in sessions])
    # Budget left over goes to the best sources' other text.
    more = [_other(e, i) for e in durable[:EXPAND] if e.path in pack.sources for i in range(len(e.rest[:EXPAND_UNITS]))]
    n += pack.section("## More evidence", more)
    paths = []
    for e in [*durable, *sessions]:
        shown_later = [u.path for i, ups in e.rest_updates.items() if pack.seen(key_of(_other(e, i)[0])) for u in ups]
        for p in (e.path, *[u.path for u in (*e.updates, *e.after)], *shown_later):
            if p in pack.sources or p in shown_later or any(p == u.path for u in (*e.updates, *e.after)
                                                            if e.path in pack.sources):
                if p not in paths:
                    paths.append(p)
    # A fact a newer session changed is summed up with the change: the summary is all some
    # hosts show, and "runs at 22:00" alone was the stale answer.
    summary = " | ".join(e.text + "".join(f" Newer ({u.date}): {u.text}" for u in e.updates[-1:])
                         for e in (durable + sessions)[:2])
    if len(summary) > 280:  # cut between words
        summary = summary[:279].rsplit(" ", 1)[0] + "…"
    return Block(pack.text(), paths, summary, n)
