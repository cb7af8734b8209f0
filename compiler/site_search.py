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
- `_/search-data/t-<key>-<block>.js`: one line per page of the block, in order: its text
  words starting with `key`, TAB, their counts (empty when it has none).
- `_/search-data/NN.js`: the text of each page by section (anchor, heading, text), for
  snippets, highlights and links to the matching section; sharded by a hash of the path.
"""

from __future__ import annotations

import json
import weakref
from typing import Any, Iterator

from .model import Document, is_session_path
from .site_search_model import PENDING, SearchModel, text_shard
from .site_search_terms import FIELD_SEP, MAX_TERM, SECTION_SEP, term_key, text_terms, tokens

__all__ = ["MAX_TERM", "META_URL", "remember", "search_files", "search_urls", "sections", "term_key",
           "text_shard", "text_terms", "tokens"]

META_URL = "_/search-data/meta.js"


def sections(search_text: str) -> list[list[str]]:
    """[[anchor, heading, text], ...] from `Document.search_text`."""
    return [s.split(FIELD_SEP, 2) for s in search_text.split(SECTION_SEP)] if search_text else []


def text_shard_url(k: int) -> str:
    return f"_/search-data/{k:02d}.js"


def page_list_url(b: int) -> str:
    return f"_/search-data/p-{b}.js"


def term_shard_url(key: str, b: int) -> str:
    return f"_/search-data/t-{key}-{b}.js"


def searchable(docs: list[Document]) -> list[Document]:
    """The documents the offline search covers (raw session logs stay out)."""
    return [d for d in docs if not d.is_session]


def remember(path: str, search_text: str, terms: str) -> None:
    """Take a worker's `text_terms` for a page, so the parent never tokenizes it."""
    if is_session_path(path):
        PENDING.pop(path, None)
    else:
        PENDING[path] = (search_text, terms)


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
    # `</` would end a script element if this were ever inlined; U+2028/9 ended a string
    # literal in JavaScript before 2019. Escaped as JSON allows.
    payload = payload.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"CommonplaceData.{call}({payload});\n".encode("utf-8")


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
        yield term_shard_url(key, b), _script("terms", {"key": key, "block": b, "rows": model.term_rows(key, texts[b])})
    entries = model.entries
    for k in sorted(dirty.texts):
        paths = model.text_pages(k)
        if paths:
            yield text_shard_url(k), _script("text", {"shard": k, "pages": [
                [p, sections(entries[p].search_text)] for p in paths]})


def search_urls(docs: list[Document], owner: Any = None) -> set[str]:
    """Every search file's path (tokenizing only what the model lacks)."""
    model = _model(owner)
    model.sync(docs)
    blocks, terms, texts = model.used()
    return ({META_URL} | {page_list_url(b) for b in blocks} | {term_shard_url(k, b) for k, b in terms}
            | {text_shard_url(k) for k in texts})
