"""The site search's tokenizer: what a page's words are, and each page's terms grouped by
term shard. Runs in the build workers, once per rendered page (`sections_terms`; in C
`textscan.page`).

The tokenizer here and the one in templates/static/search.js must agree: lower-cased runs
of letters and digits (Unicode), at most MAX_TERM characters.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from itertools import repeat

from . import textscan

MAX_TERM = 40

_WORD = re.compile(r"[^\W_]+")  # letters and digits: str.isalnum, as \p{L}\p{N} in search.js
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# ASCII text: everything but letters and digits becomes a space and A-Z lower case, so
# str.split finds the words (measured: 5x faster than the regex, which builds each match).
_ASCII_FOLD = {i: (chr(i).lower() if chr(i).isalnum() else " ") for i in range(128) if not chr(i).islower()
               and not chr(i).isdigit()}


def words(text: str) -> list[str]:
    """The words of `text`, lower case, in order (not yet cut at MAX_TERM)."""
    if not text.isascii():
        odd = set(_NON_ASCII.findall(text))
        if any(c.isalnum() for c in odd):
            return _WORD.findall(text.lower())
        # Only punctuation (typographic quotes, dashes, arrows) outside ASCII: blank it
        # (str.replace: translate has a fast path for ASCII text only).
        for c in odd:
            text = text.replace(c, " ")
    return text.translate(_ASCII_FOLD).split()


def tokens(text: str) -> list[str]:
    return [t for t in words(text) if len(t) <= MAX_TERM]


def term_key(term: str) -> str:
    """A term's shard: its first character (`u` and the code point outside a-z, 0-9)."""
    c = term[0]
    return c if c.isascii() and c.isalnum() else f"u{ord(c):04x}"


def text_terms(text_json: bytes) -> str:
    """`sections_terms` of a page's `sections_json` (`Document.search_text`; the parent's
    fallback when no worker made them)."""
    return sections_terms(json.loads(text_json or b"[]"))


def sections_terms(sections: list) -> str:
    """The text field's terms and counts, grouped by term shard, as one string: what a
    build worker sends with a rendered page (cheap to pickle; the parent then neither
    tokenizes nor touches single terms). `sections` are (anchor, heading, text); anchors
    are not text; headings and text are.

    Form: `<unique terms>`, then per shard `U+001E key U+001D terms:counts`, terms and
    counts space-separated and in the same order (`:`, not a TAB: a term file's rows
    then need no JSON escapes, so the parent writes them without encoding). Work here is C-level per word
    and per term: no Python statement runs per term."""
    return _terms(" ".join([f"{s[1]} {s[2]}" for s in sections]))


def _terms(text: str) -> str:
    if textscan.terms is not None and (out := textscan.terms(text)) is not None:
        return out
    return _terms_py(text)


def _terms_py(text: str) -> str:
    counts = Counter(words(text))
    terms = sorted(counts)  # the terms of one shard are one run
    if terms and max(map(len, terms)) > MAX_TERM:
        terms = [t for t in terms if len(t) <= MAX_TERM]
    if not terms:
        return "0"
    ns = list(map(str, map(counts.__getitem__, terms)))
    out = [str(len(terms))]
    start, n = 0, len(terms)
    while start < n:
        first = terms[start][0]
        end = bisect.bisect_left(terms, chr(ord(first) + 1), start)
        out.append(f"{term_key(first)}\x1d{' '.join(terms[start:end])}:{' '.join(ns[start:end])}")
        start = end
    return "\x1e".join(out)


# One encoder for every page: json.dumps with options makes a new one per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sections_json(sections: list) -> str:
    """A page's sections as the text shards hold them: `[[anchor, heading, text], ...]`
    as JSON, safe inside a script file. Encoded in the build workers, so the parent only
    joins ready strings (encoding 30 MB of page text was a serial 0.3 s at 10,000 pages)."""
    return script_safe(_ENCODE(sections)) if sections else "[]"


def script_safe(payload: str) -> str:
    """JSON text that can stand in a script file: `</` would end a script element if it
    were ever inlined; U+2028/9 ended a string literal in JavaScript before 2019. Escaped
    as JSON allows."""
    if "</" in payload:
        payload = payload.replace("</", "<\\/")
    if not payload.isascii():
        payload = payload.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return payload


def parse_terms(terms: str) -> tuple[int, dict[str, str]]:
    """`text_terms` -> (unique terms, {shard key: "terms:counts"})."""
    n, *groups = terms.split("\x1e")
    return int(n), dict(map(str.split, groups, repeat("\x1d"), repeat(1)))


def title_terms(title: str) -> tuple[int, str]:
    """(unique terms, "term count term count ...") of the title field."""
    counts: dict[str, int] = {}  # a few words: Counter's own set-up cost more than the counting
    for t in tokens(title):
        counts[t] = counts.get(t, 0) + 1
    return len(counts), " ".join(map(" ".join, zip(counts, map(str, counts.values()))))
