"""A question's words as the context builder matches them: stems, weighted.

Kept apart from `evidence` so the modules that read a source's text (`transcript`) match
words the same way without importing the evidence pipeline.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .plain import STOP, words


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    w = word.casefold().strip("'")
    if not w.isascii():  # "Tomas" is "Tomás", "Muller" is "Müller": accents are not what a word says
        w = "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    for suffix in ("'s", "ing", "ies", "es", "ed", "s"):
        # a plural of four letters counts ("pets" is "pet"), but not "plus", "less" or "this"
        least = 4 if suffix == "s" and not w.endswith(("ss", "us", "is")) else len(suffix) + 4
        if len(w) >= least and w.endswith(suffix):
            w = w[: -len(suffix)] + ("i" if suffix == "ies" else "")
            break
    # "urgently" is "urgent", "weekly" is "week" (not "family", "early", "supply" or "assembly")
    if len(w) >= 6 and w.endswith("ly") and w[-3] not in "aeiouylbp" and w[-3] != w[-4]:
        w = w[:-2]
    # "share", "shares" and "shared" are one word: a final e goes too; "try" is "tri" as
    # in "tried" and "tries"
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    elif len(w) > 3 and w.endswith("y"):
        w = w[:-1] + "i"
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
    for a, b in _SAME:  # "when is it due?" is answered by a `Deadline` row
        if a in out and b not in out:
            out[b] = out[a] * 0.75
    return out


# Words a question and the line that answers it use for the same thing, as stems.
_SAME = [(stem(a), stem(b)) for x, y in (("due", "deadline"),) for a, b in ((x, y), (y, x))]


def overlap(terms: dict[str, float], text: str) -> float:
    have = {stem(w) for w in words(text)}
    return sum(wt for s, wt in terms.items() if s in have)


# When nothing found shares a content word with the question, only a strong match by
# meaning is evidence ("who handles the money side of things" and the finance lead's page
# scored 0.88); made-up or off-topic words have neighbours too (0.45-0.50 on a 30-page
# corpus).
MEANING_ALONE = 0.6


def shares_a_word(question: str, texts) -> bool:
    """Whether any of `texts` holds a content word of `question` (not a stop word)."""
    terms = {t: w for t, w in query_terms(question).items() if t not in STOP}
    return any(overlap(terms, t) > 0 for t in texts)


HEADING = 0.5  # a question's word in the heading a line is under, against one in the line itself


@lru_cache(maxsize=4096)
def heading_stems(heading: str) -> frozenset[str]:
    """The words of a section heading, stemmed: "What's the status of lanternfish?" is
    answered by the lines under `## Status`, which need not say "status" themselves."""
    got = frozenset(stem(w) for w in words(heading) if w not in STOP)
    # A project's "Current State" (and a state claim's heading) is what "the status" asks.
    return got | _STATUS if got & _STATUS else got


_STATUS = frozenset({stem("status"), stem("state")})
