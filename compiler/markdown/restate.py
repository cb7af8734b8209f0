"""Whether one line of prose says the same thing as another, perhaps with a changed value:
"Paper deadline is 15 January" and "Paper deadline is 29 January". Two uses: a semantic
`replace` rewrites the page's line that its new statement restates, and the context
builder shows a page's current claim instead of a prose line the claim restates. A looser
test, `same_subject`, tells whether two `state` claims of one entity are about the same
thing, so that only those can contradict each other. `restated_by` picks, among an
entity's claims, the one a new statement restates (a `replace` that names no claim).

Lines are compared as tokens: a time (02:00), a date (2026-12-15) or a number (3.5) is one
token, and words that only say a value changed ("now", "moved", "from", "still",
"instead") do not count."""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+")
_STOP = frozenset("a an and the of to in on at for by is are was were be it its this that with as or from".split())
# Tokens for comparing statements: a date, a time or a number with its separators is one.
_TOKEN = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?|\d+(?:[.,]\d+)+|[\w']+")
# Words that say a value changed, not what the statement is about.
_CHANGE = frozenset("now moved move moves moving still instead currently changed change changes updated "
                    "new newly today anymore longer no not been has have had will".split())
# Calendar words are values: "due 15 January" restates "due 2 February".
_CALENDAR = frozenset("january february march april june july august september october november december "
                      "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
                      "friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays "
                      "sundays".split())
MIN_WORDS = 4  # shorter lines ("Owner: you") share too few words to tell
SHARE = 0.6  # the share of the two lines' words they have in common


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _STOP)


def _tokens(text: str, ignore: frozenset[str] = frozenset()) -> frozenset[str]:
    return frozenset(t for t in (m.casefold() for m in _TOKEN.findall(text))
                     if t not in _STOP and t not in _CHANGE and t not in ignore)


def restates(line: str, statement: str) -> bool:
    """`statement` says what `line` says, with at most a few words changed: most of the
    words of both are shared (a date, a number or a name may differ). Compared whole, and
    then as their main clauses (`main_clause`): "runs on port 8001 (`runserver 8001`)
    because 8000 is taken" restates "runs on port 8002"."""
    if _shares(_tokens(line), _tokens(statement)):
        return True
    a, b = main_clause(line), main_clause(statement)
    return (a != line or b != statement) and _shares(_tokens(a), _tokens(b))


def _shares(a: frozenset[str], b: frozenset[str]) -> bool:
    if len(a) < MIN_WORDS or len(b) < MIN_WORDS:
        return False
    return len(a & b) / len(a | b) >= SHARE


_CODE = re.compile(r"`([^`]*)`")
_PAREN = re.compile(r"\s*\([^()]*\)")
_REASON = re.compile(r"(?:,\s*|\s+)(?:because|since|so that|so(?= (?:she|he|they|we|i|you|it)\b)|which|as of)\b.*$"
                     r"|\s+[—–]\s.*$", re.I | re.S)


def main_clause(text: str) -> str:
    """`text` without what it adds to its fact: a parenthesis, a code span of several words
    (a command; a one-word span such as a port is the value and stays), and a reason or
    aside after "because", "since", "so she/he/they...", "which" or a dash."""
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


FLOOR = 0.3  # the least score of the claim a statement restates
MARGIN = 0.15  # how much better than every other claim it must be


def _is_value(token: str) -> bool:
    return token in _CALENDAR or any(ch.isdigit() for ch in token)


def restate_score(line: str, statement: str, ignore: frozenset[str] = frozenset()) -> float:
    """How surely `statement` restates `line`, from 0 to 1: the words they share, both as
    a share of all their words and of `line`'s. A value (number, time, date, month, day)
    both hold counts as a shared word; one that changed counts neither way, so "runs at
    03:30 UTC" restates "runs at 02:00 UTC" fully. `ignore` holds words every statement
    of the entity has (its name). Compared whole and as main clauses (`main_clause`); the
    better counts."""
    def score(a: str, b: str) -> float:
        ta, tb = _tokens(a, ignore), _tokens(b, ignore)
        wa = {t for t in ta if not _is_value(t)}
        wb = {t for t in tb if not _is_value(t)}
        values = len({t for t in ta & tb if _is_value(t)})
        shared = len(wa & wb) + values
        if not shared:
            return 0.0
        return (shared / (len(wa | wb) + values) + shared / (len(wa) + values)) / 2

    whole = score(line, statement)
    a, b = main_clause(line), main_clause(statement)
    return max(whole, score(a, b)) if (a, b) != (line, statement) and a and b else whole


def restated_by(statement: str, lines: list[str], ignore: frozenset[str] = frozenset(),
                floor: float = FLOOR) -> tuple[int | None, list[int]]:
    """Which of `lines` `statement` restates: (its index, []) when one scores at least
    `floor` and `MARGIN` more than any other; else (None, the indexes of the lines that
    score at least `floor` and within `MARGIN` of the best, when there are several: the
    statement could restate any of them), or (None, []) when it restates none."""
    if not lines:
        return None, []
    scores = [restate_score(line, statement, ignore) for line in lines]
    order = sorted(range(len(lines)), key=lambda i: -scores[i])
    best = scores[order[0]]
    second = scores[order[1]] if len(order) > 1 else 0.0
    if best >= floor and best - second >= MARGIN:
        return order[0], []
    close = [i for i in order if scores[i] >= max(floor, best - MARGIN)]
    return None, close if len(close) > 1 else []
