"""A `replace` makes a two-column table row agree with the new statement.

A page kept by hand often holds its values in a table (`| close date | 2026-12-18 |`).
A statement that names a row's key ("The Northwind renewal close date is now
2027-01-15") changes that row's value: the value the statement gives of the same kind (a
date for a date, a number for a number), or, for a word value ("Negotiation"), the few
words the statement says besides the key, the entity's name and the words of change
("Contract"). A statement that gives no one such value changes no row. The
row rewritten is the one whose key the statement names with the most words; two rows
named as well are left alone (which one changed is not said).
"""

from __future__ import annotations

import re

from ..markdown.restate import main_clause

_ROW = re.compile(r"^(\s*\|)([^|]*)\|([^|]*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_WORD = re.compile(r"[\w'’-]+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_NUMBER = re.compile(r"[€£$]?\d(?:[\d,.]*\d)?(?:\s?(?:k|m|%|eur|usd|gbp))?", re.I)  # not the full stop after it
# Words that say a value changed or join a sentence, not what the new value is.
_FILLER = frozenset("""a an and the of to in on at for by is are was were be been it its this that with as or
from now moved move moves changed change changes updated new is's into instead currently no longer still
has have had will set goes went become becomes became""".split())
MAX_WORDS = 3  # more words left than this: the statement says more than a value


def _words(text: str) -> list[str]:
    return [w.casefold().rstrip("s") for w in _WORD.findall(text)]


def _value(old: str, statement: str, key: set[str], name: set[str]) -> str | None:
    """The statement's new value for a cell holding `old`; None when it gives no one value."""
    for kind in (_DATE, _TIME, _NUMBER):
        had = [m.group(0).strip() for m in kind.finditer(old)]
        if had:
            got = [v for v in (m.group(0).strip() for m in kind.finditer(statement)) if v not in had]
            if len(got) != 1:
                return None
            # the rest of the cell stays ("48,000 EUR a year" becomes "52,000 EUR a year")
            return old.replace(had[0], got[0], 1) if len(had) == 1 else got[0]
    said = [w for w in _WORD.findall(main_clause(statement))  # not its parenthesis or its reason
            if w.casefold().rstrip("s") not in key | name and w.casefold() not in _FILLER]
    return " ".join(said) if 0 < len(said) <= MAX_WORDS else None


def rewrite_row(lines: list, free: set[int], statement: str, name: frozenset[str] = frozenset()) -> bool:
    """Rewrite, in `lines` (indices in `free` only: hand-written text), the table row whose
    key `statement` names; True when one changed."""
    said = set(_words(statement))
    best: list[tuple[int, int]] = []  # (key words named, line)
    for i in sorted(free):
        m = _ROW.match(lines[i] or "")
        if not m or _RULE.match(lines[i]) or (i + 1 < len(lines) and _RULE.match(lines[i + 1] or "")):
            continue  # not a two-column row, or the table's header
        key = set(_words(m.group(2))) - _FILLER
        if key and key <= said:
            best.append((len(key), i))
    best.sort(reverse=True)
    if not best or (len(best) > 1 and best[0][0] == best[1][0]):
        return False
    i = best[0][1]
    m = _ROW.match(lines[i])
    old = m.group(3).strip()
    new = _value(old, statement, set(_words(m.group(2))), {w.rstrip("s") for w in name})
    if new is None or new.casefold() == old.casefold() or "|" in new:
        return False
    lines[i] = f"{m.group(1)}{m.group(2)}| {new} |"
    return True
