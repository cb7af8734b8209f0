"""Text analysis shared by the BM25 index, query parsing and snippet highlighting.

One pass turns text into index terms:

- A token is a run of word characters, optionally joined by `- . / + # _` and optionally
  ending in `++` or `#`: `svc-auth-v2`, `foo_bar`, `C++`, `C#`, `node.js`, `foo/bar`.
- A compound token is indexed twice: whole (lowercased, never stemmed, so an exact
  identifier is a rare and therefore strong term) and as its parts (split at the joiners
  and at camelCase boundaries), which are analysed like ordinary words. So `svc-auth-v2`
  finds `svc-auth-v2` first, and `auth` still finds it.
- Ordinary words are lowercased, accent-folded, dropped if they are stop words or one
  character long, and Porter-stemmed if purely alphabetic.

Index and query use the same function, so whatever the index holds a query can reach.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterator, NamedTuple

from whoosh.lang.porter2 import stem as _porter_stem  # Porter2 (English Snowball); a pure function

MAX_TERM_CHARS = 64

_TOKEN = re.compile(r"\w+(?:[-./+#]+\w+)*(?:\+\+|#)?")
_JOINERS = re.compile(r"[-./+#_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")

# Function words that would make every natural-language question match everything
# (Whoosh's list plus question words). Content words are never stop words.
STOP_WORDS = frozenset(
    """a about an and are as at be but by can could did do does for from had has have how i if in
    into is it its may me my no not of on or our should so than that the their them then there
    these they this those to tbd us was we were what when where which while who whom why will
    with would yet you your""".split()
)


class Term(NamedTuple):
    text: str  # the index term
    pos: int  # token position
    start: int  # char offsets in the analysed text (of the whole token for parts)
    end: int
    kind: int = 0  # WORD, WHOLE (a compound identifier) or PART (a piece of one)


WORD, WHOLE, PART = 0, 1, 2


_stem_cache: dict[str, str] = {}


def _stem(word: str) -> str:
    s = _stem_cache.get(word)
    if s is None:
        s = _porter_stem(word) if word.isalpha() and word.isascii() else word
        if len(_stem_cache) > 200_000:
            _stem_cache.clear()
        _stem_cache[word] = s
    return s


def _fold(word: str) -> str:
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _word(raw: str) -> str | None:
    """An ordinary word -> its index term, or None when it is not indexed."""
    w = _fold(raw.lower())
    if len(w) < 2 or len(w) > MAX_TERM_CHARS or w in STOP_WORDS:
        return None
    return _stem(w)


def _parts(raw: str) -> list[str]:
    pieces = [p for p in _JOINERS.split(raw) if p]
    out: list[str] = []
    for p in pieces:
        if _HAS_CAMEL.search(p):
            out.extend(_CAMEL.findall(p))
        else:
            out.append(p)
    return out


def is_compound(raw: str) -> bool:
    return bool(_JOINERS.search(raw)) or raw.endswith(("++", "#")) or bool(_HAS_CAMEL.search(raw))


_token_cache: dict[str, tuple[tuple[str, int], ...]] = {}


def _token_terms(raw: str) -> tuple[tuple[str, int], ...]:
    """(term, kind) pairs of one raw token, in order; cached (most tokens repeat)."""
    got = _token_cache.get(raw)
    if got is not None:
        return got
    out: list[tuple[str, int]] = []
    if not is_compound(raw):
        t = _word(raw)
        if t is not None:
            out.append((t, WORD))
    else:
        whole = _fold(raw.lower())
        if len(whole) <= MAX_TERM_CHARS:
            out.append((whole, WHOLE))
        for part in _parts(raw):
            t = _word(part)
            if t is not None and t != whole:
                out.append((t, PART))
    got = tuple(out)
    if len(_token_cache) > 500_000:
        _token_cache.clear()
    _token_cache[raw] = got
    return got


def analyze(text: str) -> Iterator[Term]:
    """Yield the index terms of `text` with positions and character offsets."""
    pos = 0
    for m in _TOKEN.finditer(text):
        found = _token_terms(m.group(0))
        if not found:
            continue
        start, end = m.span()
        n = 0
        for term, kind in found:
            if kind == PART:
                yield Term(term, pos + n, start, end, kind)
                n += 1
            else:
                yield Term(term, pos, start, end, kind)
        pos += max(1, n)


def term_counts(text: str) -> dict[str, int]:
    """term -> frequency: what the index stores (the fast path for indexing)."""
    counts: dict[str, int] = {}
    get = counts.get
    cache = _token_cache
    for raw in _TOKEN.findall(text):
        found = cache.get(raw)
        if found is None:
            found = _token_terms(raw)
        for term, _kind in found:
            counts[term] = get(term, 0) + 1
    return counts


def terms(text: str) -> list[str]:
    """Index terms of `text`, in order, with duplicates."""
    return [t.text for t in analyze(text)]


def unique_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for t in analyze(text):
        seen.setdefault(t.text, None)
    return list(seen)


def weighted_terms(text: str) -> dict[str, float]:
    """Query terms with weights: whole identifiers 2, ordinary words 1, identifier parts 0.5."""
    weights = {WORD: 1.0, WHOLE: 2.0, PART: 0.5}
    out: dict[str, float] = {}
    for t in analyze(text):
        out[t.text] = max(out.get(t.text, 0.0), weights[t.kind])
    return out
