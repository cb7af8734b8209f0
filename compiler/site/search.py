"""The site's own full-text search data: every word of every page, for the browser.

The browser searches with MiniSearch (vendored in templates/static/vendor/). Indexing a
10,000-page corpus in a browser takes seconds (measured: 7.7 s), so the build does the
tokenizing (`site_search_terms`, in the workers) and hands MiniSearch ready term
postings, split by the term's first character: a keystroke loads one letter's files,
not the whole index. Everything is a script file (`CommonplaceData.*(...)` calls), so
it loads from file:// too.

Pages fall into 8 blocks by a hash of their path (`site_search_model`); each block has
its own page list and term files, numbering its pages locally, so a change to one page
rewrites its block's files that the change reaches, its text shard and the small meta.

- `_/search-data/meta.js`: pages per block, the average field lengths MiniSearch's BM25
  needs, and which blocks have words for each term shard.
- `_/search-data/p-<block>.js`: the block's pages (path, title, text shard, tags), field
  lengths, and each page's title words as `term count term count ...`.
- `_/search-data/t-<key>-<block>.js`: one row per page of the block, in order, rows
  joined by `,`: its text words starting with `key`, `:`, their counts (empty when it
  has none).
- `_/search-data/NN.js`: the text of each page by section (anchor, heading, text), for
  snippets, highlights and links to the matching section; sharded by a hash of the path.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..model import Document, is_session_path
from .search_model import PENDING, SearchModel, text_shard
from .search_terms import MAX_TERM, script_safe, sections_json, sections_terms, term_key, text_terms, tokens

__all__ = ["MAX_TERM", "META_URL", "prepare", "remember", "script_safe", "search_files", "search_urls", "sections_json",
           "sections_terms", "term_key", "text_shard", "text_terms", "tokens"]

META_URL = "_/search-data/meta.js"


def text_shard_url(k: int) -> str:
    return f"_/search-data/{k:02d}.js"


def page_list_url(b: int) -> str:
    return f"_/search-data/p-{b}.js"


def term_shard_url(key: str, b: int) -> str:
    return f"_/search-data/t-{key}-{b}.js"


def searchable(docs: list[Document]) -> list[Document]:
    """The documents the offline search covers (raw session logs stay out)."""
    return [d for d in docs if not d.is_session]


def remember(path: str, search_text: bytes, terms: str) -> None:
    """Take a worker's search text (`sections_json`) and `sections_terms` for a page, so
    the parent neither tokenizes nor encodes it."""
    if is_session_path(path):
        PENDING.pop(path, None)
    else:
        PENDING[path] = (search_text, terms)


def prepare(docs: list[Document], owner: Any = None) -> None:
    """Make the search model's entries for `docs` (pages just rendered, after `remember`)
    now, so that the files' emit later only joins them: a build takes its pages in as the
    workers send them, while they render the rest."""
    if owner is not None:
        _model(owner).take(docs)


# One model per site state, found through an object that lives as long as the state (its
# resolver, which compares by value and so is no dict key: kept by id, with a weak
# reference that drops the model with the state). A long-running server updates its
# model page by page; a new state (a build in a fresh process) starts from nothing.
_MODELS: dict[int, tuple["weakref.ref[Any]", SearchModel]] = {}


def _model(owner: Any) -> SearchModel:
    """The owner's model; without an owner (or one that takes no weak reference) a new
    one, so every call emits every file: slower, never stale."""
    if owner is None:
        return SearchModel()
    key = id(owner)
    held = _MODELS.get(key)
    if held is not None and held[0]() is owner:
        return held[1]
    try:
        ref = weakref.ref(owner, lambda _, key=key: _MODELS.pop(key, None))
    except TypeError:
        return SearchModel()
    model = SearchModel()
    _MODELS[key] = (ref, model)
    return model


def _script(call: str, value: object) -> bytes:
    """`CommonplaceData.<call>(<one JSON value>);`: nothing from a document can step out
    of the JSON (tests/hostile checks this)."""
    payload = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return f"CommonplaceData.{call}({script_safe(payload)});\n".encode("utf-8")


def _term_file(key: str, b: int, rows: str) -> bytes:
    """`_script("terms", {"block": b, "key": key, "rows": rows})` without encoding: the
    key is ASCII letters and digits, and the rows words (letters and digits), digits,
    spaces, `:` and `,` (`site_search_model.term_rows`), none of which JSON escapes.
    The 18 MB of rows at 10,000 pages took the parent 0.18 s to encode."""
    if '"' in rows or "\\" in rows:  # never, as words are made; but never a broken file
        return _script("terms", {"block": b, "key": key, "rows": rows})
    return f'CommonplaceData.terms({{"block":{b},"key":"{key}","rows":"{rows}"}});\n'.encode("utf-8")


def _text_shard(k: int, rows: list[tuple[bytes, bytes]]) -> bytes:
    """`_script("text", {"pages": [[path, sections], ...], "shard": k})` from the pages'
    ready path and sections JSON (the same bytes, joined instead of encoded)."""
    return b"".join([b'CommonplaceData.text({"pages":[', b",".join([b"[%s,%s]" % row for row in rows]),
                     b'],"shard":%d});\n' % k])


def search_files(docs: list[Document], only_text: set[int] | None = None, owner: Any = None
                 ) -> Iterator[tuple[str, bytes]]:
    """The offline search files: all of them when `only_text` is None (a full emit), else
    those the pages changed since the last call for this `owner` reach (`only_text` is
    then only a hint: the model knows what changed)."""
    model = _model(owner)
    model.sync(docs)
    dirty = model.take_dirty()
    if only_text is None:
        dirty = model.all_dirty()
    if not dirty.any():
        return
    yield META_URL, _script("meta", model.meta())
    for b in sorted(dirty.blocks):
        if model.blocks[b]:
            yield page_list_url(b), _script("meta", model.page_list(b))
    texts: dict[int, list] = {}
    for key, b in dirty.term_files(model):
        if b not in texts:
            texts[b] = model.block_texts(b)
        yield term_shard_url(key, b), _term_file(key, b, model.term_rows(key, texts[b]))
    entries = model.entries
    for k in sorted(dirty.texts):
        paths = model.text_pages(k)
        if paths:
            yield text_shard_url(k), _text_shard(k, [(entries[p].path_json, entries[p].text_json) for p in paths])


def read_texts(out: Path, paths: Iterable[str]) -> dict[str, bytes] | None:
    """The search text of `paths` as the text shards in the site at `out` hold it, or None
    when a shard is missing or unreadable or lacks one of them. The build manifest does
    not keep the pages' text (about half of it at 10,000 pages); a build in a new process
    reads it back from here instead."""
    by_shard: dict[int, list[str]] = {}
    for p in paths:
        by_shard.setdefault(text_shard(p), []).append(p)
    found: dict[str, bytes] = {}
    prefix = "CommonplaceData.text("
    for k, want in by_shard.items():
        try:
            raw = (out / text_shard_url(k)).read_text(encoding="utf-8")
            if not raw.startswith(prefix) or not raw.endswith(");\n"):
                return None
            pages = dict(json.loads(raw[len(prefix):-3])["pages"])
            for p in want:
                found[p] = sections_json(pages[p]).encode("utf-8")  # the same bytes: one encoding, one result
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return found


def search_urls(docs: list[Document], owner: Any = None) -> set[str]:
    """Every search file's path (tokenizing only what the model lacks)."""
    model = _model(owner)
    model.sync(docs)
    blocks, terms, texts = model.used()
    return ({META_URL} | {page_list_url(b) for b in blocks} | {term_shard_url(k, b) for k, b in terms}
            | {text_shard_url(k) for k in texts})
