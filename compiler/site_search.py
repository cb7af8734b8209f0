"""The site's own full-text search data: every word of every page, for the browser.

The browser searches with MiniSearch (vendored in templates/static/vendor/). Indexing a
10,000-page corpus in a browser takes seconds (measured: 7.7 s), so the build does the
tokenizing and hands MiniSearch ready term postings, split by the term's first
character: the first keystroke loads one shard, not the whole index. Everything is a
script file (`CommonplaceData.*(...)` calls), so it loads from file:// too.

- `_/search-data/meta.js`: the pages (path, title, text shard), each page's field
  lengths and the averages MiniSearch's BM25 scoring needs, the term shard names.
- `_/search-data/t-<key>.js`: one line per term, `term TAB title-postings TAB
  text-postings`; postings are `gap[:tf]` in base 36 (tf 1 is left out).
- `_/search-data/NN.js`: the text of each page by section (anchor, heading, text), for
  snippets, highlights and links to the matching section; sharded by a hash of the
  path, so an edit rewrites one text shard.

The tokenizer here and the one in search.js must agree: lower-cased runs of letters and
digits (Unicode), at most MAX_TERM characters.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Iterator

from .model import Document

MAX_TERM = 40
TEXT_SHARDS = 256  # ~150 KB each at 10,000 pages; a small corpus writes only those in use
SECTION_SEP, FIELD_SEP = "\x1e", "\x1f"  # in Document.search_text (render.search_text)

_WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if len(t) <= MAX_TERM]


def sections(search_text: str) -> list[list[str]]:
    """[[anchor, heading, text], ...] from `Document.search_text`."""
    return [s.split(FIELD_SEP, 2) for s in search_text.split(SECTION_SEP)] if search_text else []


def text_shard(path: str) -> int:
    return int(hashlib.sha1(path.encode("utf-8")).hexdigest()[:8], 16) % TEXT_SHARDS


def text_shard_url(k: int) -> str:
    return f"_/search-data/{k:02d}.js"


def term_key(term: str) -> str:
    c = term[0]
    return c if c.isascii() and c.isalnum() else f"u{ord(c):04x}"


def term_shard_url(key: str) -> str:
    return f"_/search-data/t-{key}.js"


META_URL = "_/search-data/meta.js"


def searchable(docs: list[Document]) -> list[Document]:
    """The documents the offline search covers (raw session logs stay out), path order."""
    return sorted((d for d in docs if not d.is_session), key=lambda d: d.path)


# Per document: (title text, search text) -> (title counts, text counts). A long-running
# server re-emits the search data after each save: only changed documents are tokenized.
_COUNTS: dict[str, tuple[str, str, Counter, Counter, frozenset[str]]] = {}


def _entry(d: Document) -> tuple[str, str, Counter, Counter, frozenset[str]]:
    title = " ".join([d.title, *d.tags])
    held = _COUNTS.get(d.path)
    if held is not None and held[0] == title and held[1] == d.search_text:
        return held
    text = " ".join(f"{s[1]} {s[-1]}" if len(s) == 3 else s[-1] for s in sections(d.search_text))  # not anchors
    title_counts, text_counts = Counter(tokens(title)), Counter(tokens(text))
    keys = frozenset(term_key(t) for t in (title_counts | text_counts))
    held = _COUNTS[d.path] = (title, d.search_text, title_counts, text_counts, keys)
    return held


def _counts(d: Document) -> tuple[Counter, Counter]:
    held = _entry(d)
    return held[2], held[3]


def _b36(n: int) -> str:
    if n < 36:
        return "0123456789abcdefghijklmnopqrstuvwxyz"[n]
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append("0123456789abcdefghijklmnopqrstuvwxyz"[r])
    return "".join(reversed(out))


def _postings(items: list[tuple[int, int]]) -> str:
    parts, prev = [], 0
    for doc_id, tf in items:
        gap = _b36(doc_id - prev)
        parts.append(gap if tf == 1 else f"{gap}:{_b36(tf)}")
        prev = doc_id
    return ",".join(parts)


def _script(call: str, *args: object) -> bytes:
    payload = ",".join(json.dumps(a, ensure_ascii=False, sort_keys=True, separators=(",", ":")) for a in args)
    # `</` would end a script element if this were ever inlined; escape it anyway.
    payload = payload.replace("</", "<\\/")
    return f"CommonplaceData.{call}({payload});\n".encode("utf-8")


def search_files(docs: list[Document], only_text: set[int] | None = None, index: bool = True) -> Iterator[tuple[str, bytes]]:
    """The offline search files. `only_text` limits the text shards written; `index`
    False skips the meta and term files (nothing they show changed)."""
    docs = searchable(docs)
    if index:
        yield from _index_files(docs)
    shards: dict[int, list] = {}
    for d in docs:
        k = text_shard(d.path)
        if only_text is None or k in only_text:
            shards.setdefault(k, []).append([d.path, sections(d.search_text)])
    for k, items in sorted(shards.items()):
        yield text_shard_url(k), _script("text", k, items)


def _index_files(docs: list[Document]) -> Iterator[tuple[str, bytes]]:
    postings: dict[str, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
    lengths: list[int] = []
    for i, d in enumerate(docs):
        title, text = _counts(d)
        lengths += (len(title), len(text))
        for field, counts in ((0, title), (1, text)):
            for term, tf in counts.items():
                entry = postings.get(term)
                if entry is None:
                    entry = postings[term] = ([], [])
                entry[field].append((i, tf))
    by_key: dict[str, list[str]] = {}
    for term in sorted(postings):
        title_p, text_p = postings[term]
        by_key.setdefault(term_key(term), []).append(f"{term}\t{_postings(title_p)}\t{_postings(text_p)}")
    n = len(docs) or 1
    meta = {
        "version": 1,
        "fields": ["title", "text"],
        "docs": [[d.path, d.title, text_shard(d.path)] for d in docs],
        "lengths": lengths,
        "avg": [round(sum(lengths[0::2]) / n, 4), round(sum(lengths[1::2]) / n, 4)],
        "terms": sorted(by_key),
    }
    yield META_URL, _script("meta", meta)
    for key, lines in sorted(by_key.items()):
        yield term_shard_url(key), _script("terms", key, "\n".join(lines))


def search_urls(docs: list[Document]) -> set[str]:
    """Every search file's path, without tokenizing anything but what the cache lacks."""
    docs = searchable(docs)
    keys = frozenset().union(*(_entry(d)[4] for d in docs))
    return ({META_URL} | {term_shard_url(k) for k in keys}
            | {text_shard_url(text_shard(d.path)) for d in docs})
