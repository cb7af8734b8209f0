"""The site's own full-text search data: every word of every page, for the browser.

The browser searches with MiniSearch (vendored in templates/static/vendor/). Indexing a
10,000-page corpus in a browser takes seconds (measured: 7.7 s), so the build does the
tokenizing and hands MiniSearch ready term postings, split by the term's first
character: the first keystroke loads one shard, not the whole index. Everything is a
script file (`CommonplaceData.*(...)` calls), so it loads from file:// too.

- `_/search-data/meta.js`: the pages (path, title, text shard, tags), each page's field
  lengths and the averages MiniSearch's BM25 scoring needs, the term shard names, and
  each page's title words as `term count term count ...`.
- `_/search-data/t-<key>.js`: one line per page with text words starting with `key`: the
  gap to the previous such page's number, TAB, those words as `term count ...`.
- `_/search-data/NN.js`: the text of each page by section (anchor, heading, text), for
  snippets, highlights and links to the matching section; sharded by a hash of the
  path, so an edit rewrites one text shard.

The tokenizer here and the one in search.js must agree: lower-cased runs of letters and
digits (Unicode), at most MAX_TERM characters.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections import Counter
from typing import Iterator

from .model import Document, is_session_path

MAX_TERM = 40
TEXT_SHARDS = 1024  # ~30 KB each at 10,000 pages (snippets load a few); a small corpus writes only those in use
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
def text_terms(search_text: str) -> str:
    """The text field's terms and counts, grouped by term shard, as one string: what a
    build worker sends with a rendered page (cheap to pickle; the parent then neither
    tokenizes nor touches single terms). Anchors are not text; headings and text are.

    Form: `<unique terms>` then per shard `U+001E key U+001D term count term count ...`."""
    text = " ".join([s.partition(FIELD_SEP)[2] for s in search_text.split(SECTION_SEP)])  # not the anchors
    counts = Counter(_WORD.findall(text.lower()))
    if not counts:
        return "0"
    items = sorted(counts.items())  # terms by shard: each shard's terms are one run
    terms, ns = zip(*items)
    if max(map(len, terms)) > MAX_TERM:
        items = [(t, n) for t, n in items if len(t) <= MAX_TERM]
        if not items:
            return "0"
        terms, ns = zip(*items)
    pairs = list(map(" ".join, zip(terms, map(str, ns))))  # C-level: no Python per term
    out = [str(len(terms))]
    start = 0
    while start < len(terms):
        first = terms[start][0]
        end = bisect.bisect_left(terms, chr(ord(first) + 1), start)
        out.append(f"{term_key(first)}\x1d{' '.join(pairs[start:end])}")
        start = end
    return "\x1e".join(out)


# Path -> (title field, search text, the title's "term count ...", {shard key: "term
# count ..."} for the text, number of unique terms in each). A long-running server re-emits the search
# data after each save: only changed documents are tokenized again.
Entry = tuple[str, str, str, dict[str, str], int, int]
_COUNTS: dict[str, Entry] = {}
_PENDING: dict[str, tuple[str, str]] = {}


def remember(path: str, search_text: str, terms: str) -> None:
    """Take a worker's `text_terms` for a page, so the parent never tokenizes it."""
    _COUNTS.pop(path, None)
    if not is_session_path(path):
        _PENDING[path] = (search_text, terms)


def _entry(d: Document) -> Entry:
    title = " ".join([d.title, *d.tags])
    held = _COUNTS.get(d.path)
    if held is not None and held[0] == title and held[1] == d.search_text:
        return held
    pending = _PENDING.pop(d.path, None)
    terms = pending[1] if pending is not None and pending[0] == d.search_text else text_terms(d.search_text)
    n_text, *groups = terms.split("\x1e")
    text = dict(g.split("\x1d", 1) for g in groups)
    title_counts = Counter(tokens(title))
    held = _COUNTS[d.path] = (title, d.search_text, " ".join(f"{t} {c}" for t, c in title_counts.items()), text,
                              len(title_counts), int(n_text))
    return held


def _script(call: str, value: object) -> bytes:
    """`CommonplaceData.<call>(<one JSON value>);`: nothing from a document can step out
    of the JSON (tests/hostile checks this)."""
    payload = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # `</` would end a script element if this were ever inlined; U+2028/9 ended a string
    # literal in JavaScript before 2019. Escaped as JSON allows.
    payload = payload.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
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
        yield text_shard_url(k), _script("text", {"shard": k, "pages": items})


def _index_files(docs: list[Document]) -> Iterator[tuple[str, bytes]]:
    """The page list carries every page's title terms (a first keystroke searches titles
    with nothing more to load); term shards hold, per page with text words starting with
    their key, the gap to the previous such page and those words with counts (a forward
    index: the browser inverts the one shard it loads). Work here is per page and shard,
    never per word: 10,000 pages hold 2.3 million postings."""
    rows: dict[str, list[str]] = {}
    last: dict[str, int] = {}
    lengths: list[int] = []
    titles: list[str] = []
    for i, d in enumerate(docs):
        _, _, title, text, n_title, n_text = _entry(d)
        lengths += (n_title, n_text)
        titles.append(title)
        for key, terms in text.items():
            line = f"{i - last.get(key, 0)}\t{terms}"
            last[key] = i
            if key in rows:
                rows[key].append(line)
            else:
                rows[key] = [line]
    by_key = rows
    n = len(docs) or 1
    meta = {
        "version": 1,
        "fields": ["title", "text"],
        "docs": [[d.path, d.title, text_shard(d.path), d.tags] for d in docs],
        "lengths": lengths,
        "avg": [sum(lengths[0::2]) / n, sum(lengths[1::2]) / n],
        "terms": sorted(by_key),
        "titles": titles,
    }
    yield META_URL, _script("meta", meta)
    for key, lines in sorted(by_key.items()):
        yield term_shard_url(key), _script("terms", {"key": key, "rows": "\n".join(lines)})


def search_urls(docs: list[Document]) -> set[str]:
    """Every search file's path, without tokenizing anything but what the cache lacks."""
    docs = searchable(docs)
    keys: set[str] = set()
    for d in docs:
        keys.update(_entry(d)[3])
    return ({META_URL} | {term_shard_url(k) for k in keys}
            | {text_shard_url(text_shard(d.path)) for d in docs})
