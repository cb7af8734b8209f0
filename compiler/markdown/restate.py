"""Whether one line of prose says the same thing as another, perhaps with a changed value:
"Paper deadline is 15 January" and "Paper deadline is 29 January". Two uses: a semantic
`replace` rewrites the page's line that its new statement restates, and the context
builder shows a page's current claim instead of a prose line the claim restates. A looser
test, `same_subject`, tells whether two `state` claims of one entity are about the same
thing, so that only those can contradict each other."""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+")
_STOP = frozenset("a an and the of to in on at for by is are was were be it its this that with as or from".split())
MIN_WORDS = 4  # shorter lines ("Owner: you") share too few words to tell
SHARE = 0.6  # the share of the two lines' words they have in common


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _STOP)


def restates(line: str, statement: str) -> bool:
    """`statement` says what `line` says, with at most a few words changed: most of the
    words of both are shared (a date, a number or a name may differ). Compared whole, and
    then as their main clauses (`main_clause`): "runs on port 8001 (`runserver 8001`)
    because 8000 is taken" restates "runs on port 8002"."""
    if _shares(content_words(line), content_words(statement)):
        return True
    a, b = main_clause(line), main_clause(statement)
    return (a != line or b != statement) and _shares(content_words(a), content_words(b))


def _shares(a: frozenset[str], b: frozenset[str]) -> bool:
    if len(a) < MIN_WORDS or len(b) < MIN_WORDS:
        return False
    return len(a & b) / len(a | b) >= SHARE


_CODE = re.compile(r"`([^`]*)`")
_PAREN = re.compile(r"\s*\([^()]*\)")
_REASON = re.compile(r"(?:,\s*|\s+)(?:because|since|so that|which|as of)\b.*$|\s+[—–]\s.*$", re.I | re.S)


def main_clause(text: str) -> str:
    """`text` without what it adds to its fact: a parenthesis, a code span of several words
    (a command; a one-word span such as a port is the value and stays), and a reason or
    aside after "because", "since", "which" or a dash."""
    t = _CODE.sub(lambda m: m.group(1) if len(m.group(1).split()) == 1 else " ", text)
    t = _PAREN.sub("", t)
    return _REASON.sub("", t).strip()


def same_subject(a: str, b: str, ignore: frozenset[str] = frozenset()) -> bool:
    """Whether two statements are about the same thing, their values aside: numbers (dates,
    versions, ports) and the words in `ignore` (the entity's own name) are left out; then
    at least two words are shared and they are half the shorter one's words, or both are a
    bare status of one word ("Atlas is on track" / "Atlas is blocked")."""
    wa = {w for w in content_words(a) - ignore if not w.isdigit()}
    wb = {w for w in content_words(b) - ignore if not w.isdigit()}
    if len(wa) <= 1 and len(wb) <= 1:
        return True
    shared = len(wa & wb)
    return shared >= 2 and shared / min(len(wa), len(wb)) >= 0.5
