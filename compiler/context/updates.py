"""Whether a session line updates a durable fact: about the same subject, with a value
changed ("Invoicing v2 beta ... due 2026-12-12" and "the invoicing v2 beta moved, now due
2026-12-19"). Active memory, research and wake put such a line beside the fact, dated;
words in common alone are too loose ("due", a year), so one project's session went under
another project's milestone.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from ..markdown.restate import content_words
from .facts import ROLE, split_meta
from .plain import plain_line

_NUMBER = re.compile(r"\d+(?:[.:/-]\d+)*")
_PROJECT = re.compile(r"projects/([^/]+?)(?:/|\.md$)")  # projects/<slug>/... or a one-page projects/<slug>.md
_PERSON = re.compile(r"people/([^/]+)\.md$")
# Words every update says, whatever it updates: they tell nothing about the subject.
GENERIC = frozenset("""due now moved move moves changed change changes new date time today still instead also
just noted got recorded update updated because not will from into than then there this another needs need
it's is are was were has have had been""".split())
# Words any note says of anything: who said it, and the day or month it is about. Two
# lines sharing "says" and "Friday" are not about the same thing (the dinner's move went
# under the packaging deadline); the day as a value is compared by `changes_value`.
SAYING = frozenset("""say says said saying tell tells told ask asks asked mention mentions mentioned think thinks
thought confirm confirms confirmed she her hers he him his they them their you your we our want wants wanted monday tuesday wednesday thursday friday saturday sunday january february
march april june july august september october november december""".split())
TURN_LINES = 60  # the session lines wake reads for updates: a session's start, not all of it
TURN_CHARS = 400


def project_of(path: str) -> str | None:
    m = _PROJECT.match(path)
    return m.group(1).casefold() if m else None


def distinct_words(text: str) -> frozenset[str]:
    """The words that say what `text` is about: no numbers, stop or update words."""
    return frozenset(w.rstrip("s") for w in content_words(text)
                     if len(w) > 2 and not any(c.isdigit() for c in w) and w not in GENERIC
                     and w not in SAYING)


def _names(project: str, text: str) -> bool:
    """`text` names the project by its slug, its dashes as spaces too ("the Marchetti
    wedding cake" names `marchetti-wedding`)."""
    name = r"[-\s]+".join(map(re.escape, project.split("-")))
    return re.search(r"(?<![\w-])" + name + r"(?![\w-])", text, re.I) is not None


def _names_file(project: str, name: str) -> bool:
    """A file name names the project as one of its dash-separated parts (`2026-12-03-thesis.md`)."""
    return re.search(r"(?:^|[-_.])" + re.escape(project) + r"(?:$|[-_.])", name, re.I) is not None


def same_subject(fact_path: str, fact_text: str, line_path: str, line_text: str,
                 projects: Iterable[str] = (), line_project: str | None = None) -> bool:
    """A line is about a project page's fact when it (its text, its file name or its
    session's `project`) names that project; it is not when it names another of
    `projects` instead; otherwise it must share two words of what the fact is about. A
    line about a person's fact names them (a word of their page's name)."""
    own = project_of(fact_path)
    said = f"{line_text} {posixpath.basename(line_path)} {line_project or ''}"
    person = _PERSON.match(fact_path)
    if person and not any(_names(n, line_text) for n in person.group(1).split("-") if len(n) > 2):
        return False  # a person's fact changes by a line that names them ("Priya now wants..." is not Dana's)
    if own is not None:
        if line_project:
            return line_project.casefold() == own
        base = posixpath.basename(line_path)
        if _names(own, said) or _names_file(own, base):
            return True
        if any(p != own and (_names(p, said) or _names_file(p, base)) for p in projects):
            return False
    # the fact's own date or time said again ("not 2027-02-10") counts as a word shared
    named = said_values(fact_text) & {v for vs in values_of(line_text).values() for v in vs}
    return len(distinct_words(fact_text) & distinct_words(line_text)) + len(named) >= 2


_TIME = re.compile(r"\b\d{1,2}(?::\d{2}\s*(?:[ap]\.?m\.?)?|\s*[ap]\.?m\.?)(?![\w:])", re.I)
# A number that names a thing (a pull request, an issue, a ticket) is no value of a fact.
_REF = re.compile(r"(?:#|\b(?:pr|issue|ticket|pull request|build|commit|version|v)\s*#?)\d+\b", re.I)
# Words that say a value changed ("Dana now prefers Slack over email"): an update said in
# words, with no number.
_SAYS_CHANGE = re.compile(r"\b(?:now|no longer|any ?more|instead|switched|switches|switching|changed|changes|"
                          r"moved|moves|replaced|from now on|going forward|stopped|stops)\b", re.I)
WORDS_SHARED = 2  # what a change said in words must share with the fact, the project's name aside


@lru_cache(maxsize=16384)
def values_of(text: str) -> Mapping[str, frozenset[str]]:
    """The values a text says, by kind: times of day, and other numbers and dates;
    references (`#482`, `PR 482`) are left out. Cached (read-only): one block compares
    each session line with every durable line, 30,000 calls at 10,000 documents."""
    rest = _REF.sub(" ", text)
    times = frozenset(re.sub(r"\s+", "", m.group(0)).casefold() for m in _TIME.finditer(rest))
    rest = _TIME.sub(" ", rest)
    # Money and years are kinds of their own: a fee of €270 is no new word count beside
    # "1,800 words an issue", nor is "from January 2027" a new one.
    money = frozenset(m.group(1) or m.group(2) for m in _MONEY.finditer(rest))
    rest = _MONEY.sub(" ", rest)
    numbers = _NUMBER.findall(rest)
    out = {"time": times, "money": money, "year": frozenset(v for v in numbers if _YEAR.fullmatch(v)),
           "other": frozenset(v for v in numbers if not _YEAR.fullmatch(v))}
    return MappingProxyType({k: v for k, v in out.items() if v})


_MONEY = re.compile(r"[€£$]\s?(\d[\d,.]*\d|\d)|(?<![\w.])(\d[\d,.]*\d|\d)\s?(?:eur|usd|gbp|euros?|dollars?|pounds?)\b",
                    re.I)


@lru_cache(maxsize=16384)
def said_values(text: str) -> frozenset[str]:
    """The dates, times and long numbers a text says (not "chapter 3", nor a year alone:
    "from January 2027" and "by 15 January 2027" are not the same value, and a shared
    year put a fee's change under another project's deadline)."""
    return frozenset(v for vs in values_of(text).values() for v in vs if len(v) >= 4 and not _YEAR.fullmatch(v))


_YEAR = re.compile(r"(?:19|20)\d\d")


def changes_value(fact_text: str, line_text: str, strict: bool = False, fact_path: str = "") -> bool:
    """The line has a value the fact does not, of a kind the fact has (a new time beside
    "runs at 02:00", not a pull request's number), or it says in words that something
    changed and shares WORDS_SHARED words of what the fact is about ("Dana now prefers
    Slack over email" beside "prefers short emails"). A fact with no value passes unless
    `strict` or it is a person's (their name is in every line about them: only a change
    said in words, two words shared besides the name, changes it)."""
    mine, theirs = values_of(fact_text), values_of(line_text)
    person = _PERSON.match(fact_path)
    if not mine and not strict and not person:  # a person's fact: any line naming them has some value
        return True
    if any(v not in mine.get(kind, ()) for kind, vs in theirs.items() if kind in mine for v in vs):
        return True
    if not _SAYS_CHANGE.search(line_text):
        return False
    own = distinct_words((project_of(fact_path) or (person.group(1) if person else "")).replace("-", " "))
    about = distinct_words(fact_text) - own
    said = distinct_words(line_text)
    return len(about & said) >= WORDS_SHARED and bool(said - about - own)


def updates(fact_path: str, fact_text: str, line_path: str, line_text: str, around: Iterable[object] = ()) -> bool:
    """`same_subject` and `changes_value` for evidence: `around` is the evidence shown
    (objects with a `path`), whose project pages name the projects a line may be about."""
    projects = {p for p in (project_of(getattr(x, "path", "")) for x in around) if p}
    return same_subject(fact_path, fact_text, line_path, line_text, projects) and \
        changes_value(fact_text, line_text, fact_path=fact_path)


def session_turns(text: str) -> tuple[str | None, list[str]]:
    """(the session's `project`, its first lines as plain sentences without the speaker)."""
    meta, body = split_meta(text or "")
    project = meta.get("project") if isinstance(meta.get("project"), str) else None
    out: list[str] = []
    for raw in body.split("\n"):
        if len(out) >= TURN_LINES:
            break
        line = ROLE.sub("", raw, count=1).strip()
        if not line or line.startswith("#"):
            continue
        t = plain_line(line[:TURN_CHARS])
        if t:
            out.append(t)
    return (project.strip() or None) if project else None, out


def bearing(units: list, about: "set[str] | frozenset[str]", content: Callable[[Any], frozenset[str]]) -> list:
    """The units of a session line that bear on the fact it is shown beside (`about`: that
    fact's words): those sharing at least two words with it and 60% as many as the best
    one. A short session is kept whole as evidence, but beside the page's "runs at 04:15"
    its "can you check the jobs? Looked at the queue." says nothing."""
    shared = [len(content(u) & about) for u in units]
    top = max(shared, default=0)
    if top < 2:
        return units
    return [u for u, n in zip(units, shared) if n >= max(2, 0.6 * top)]
