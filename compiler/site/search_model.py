"""What the site's search data holds now, kept up to date page by page, so that a refresh
re-emits only the files a change reaches (see `site_search` for the files).

Pages fall into BLOCKS blocks by a hash of their path. A block's page list and its term
shards number its pages locally (path order within the block), so a page added, edited
or deleted changes its own block's files and the small `meta.js` (counts and averages),
never another block's. The bytes depend only on the current pages: an incremental
update writes what a clean build writes.
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_left, insort
from collections import Counter
from collections import _count_elements  # type: ignore[attr-defined]
from dataclasses import dataclass
from itertools import repeat
from typing import Iterable

from ..model import Document
from .search_terms import parse_terms, script_safe, text_terms, title_terms

BLOCKS = 8  # files per letter the browser loads; a clean build writes 36 x BLOCKS term files
TEXT_SHARDS = 256  # ~120 KB each at 10,000 pages (snippets load a few); see the decision of 2026-11-24


def text_shard(path: str) -> int:
    return int(hashlib.sha1(path.encode("utf-8")).hexdigest()[:8], 16) % TEXT_SHARDS


@dataclass
class Entry:
    doc: Document
    title: str  # the document's title, and its tags, as last seen
    tags: list[str]
    text_json: bytes  # the page's sections, as its text shard holds them (Document.search_text)
    path_json: bytes  # the path as its text shard names it
    shard: int
    block: int
    n_title: int
    title_terms: str  # "term count ..."
    n_text: int
    text: dict[str, str]  # shard key -> "terms:counts"


# Path -> (search text, its terms) from the workers, taken when the page is next seen.
PENDING: dict[str, tuple[bytes, str]] = {}


def _current(e: Entry | None, d: Document) -> bool:
    """The entry still describes `d`: a changed page is a new Document, or the same one
    with a new search text."""
    return e is not None and e.doc is d and e.text_json is d.search_text


def make_entry(d: Document, old: Entry | None) -> Entry:
    if old is not None and old.text_json == d.search_text:
        n_text, text = old.n_text, old.text
    else:
        pending = PENDING.pop(d.path, None)
        terms = pending[1] if pending is not None and pending[0] == d.search_text else text_terms(d.search_text)
        n_text, text = parse_terms(terms)
    if old is not None and old.title == d.title and old.tags == d.tags:
        n_title, tt = old.n_title, old.title_terms
    else:
        n_title, tt = title_terms(" ".join([d.title, *d.tags]))
    if old is not None:
        shard, path_json = old.shard, old.path_json
    else:
        shard, path_json = text_shard(d.path), script_safe(json.dumps(d.path, ensure_ascii=False)).encode("utf-8")
    return Entry(d, d.title, list(d.tags), d.search_text, path_json, shard, shard % BLOCKS, n_title, tt, n_text, text)


@dataclass
class Dirty:
    meta: bool = False
    blocks: set[int] | None = None  # page lists
    terms: set[tuple[str, int]] | None = None  # (shard key, block)
    texts: set[int] | None = None  # text shards
    term_blocks: set[int] | None = None  # blocks whose term files all change (pages came or went)

    def any(self) -> bool:
        return self.meta or bool(self.blocks or self.terms or self.texts or self.term_blocks)

    def term_files(self, model: "SearchModel") -> list[tuple[str, int]]:
        """The (key, block) term files to write now, in a fixed order."""
        out = set(self.terms or ())
        for b in self.term_blocks or ():
            out.update((k, b) for k in model.block_keys[b])
        return sorted(kb for kb in out if model.has(*kb))


class SearchModel:
    """The search data of one site (one SiteState), as entries per page."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.blocks: list[list[str]] = [[] for _ in range(BLOCKS)]  # paths, sorted
        self.block_keys: list[Counter] = [Counter() for _ in range(BLOCKS)]  # key -> pages with such words
        self.shard_paths: dict[int, set[str]] = {}
        self.sums = [0, 0]  # title and text lengths over all pages
        self.synced: list[Document] | None = None  # the docs list last synced with
        self.dirty = Dirty(False, set(), set(), set(), set())  # what changed since `take_dirty`

    def take_dirty(self) -> Dirty:
        dirty, self.dirty = self.dirty, Dirty(False, set(), set(), set(), set())
        return dirty

    def sync(self, docs: list[Document]) -> None:
        """Bring the entries up to date with `docs` (raw session logs stay out) and note
        what changed in `dirty`. Unchanged pages cost an identity check each; changed ones
        their own work."""
        if docs is self.synced:
            return
        dirty = self.dirty
        get, seen = self.entries.get, 0
        for d in docs:
            e = get(d.path)
            if _current(e, d):
                seen += 1
                continue
            if d.is_session:
                continue
            seen += 1
            self._put(make_entry(d, e), e, dirty)
        if seen != len(self.entries):  # some pages are gone
            paths = {d.path for d in docs}
            for path in [p for p in self.entries if p not in paths]:
                self._drop(path, dirty)
        self.synced = docs

    def take(self, docs: Iterable[Document]) -> None:
        """Bring the entries of `docs` up to date now (as `sync` would, for these pages
        only); a later `sync` finds them current."""
        get, dirty = self.entries.get, self.dirty
        for d in docs:
            e = get(d.path)
            if d.is_session or _current(e, d):
                continue
            self._put(make_entry(d, e), e, dirty)

    def _put(self, new: Entry, old: Entry | None, dirty: Dirty) -> None:
        path, b = new.doc.path, new.block
        self.entries[path] = new
        if old is None:
            insort(self.blocks[b], path)
            self.shard_paths.setdefault(new.shard, set()).add(path)
            self._count(new.text, b, +1)
            self._block_changed(b, dirty)
        else:
            self.sums[0] -= old.n_title
            self.sums[1] -= old.n_text
            if old.text is not new.text:
                self._count(old.text, b, -1)
                self._count(new.text, b, +1)
                for key in old.text.keys() | new.text.keys():
                    if old.text.get(key) != new.text.get(key):
                        dirty.terms.add((key, b))
        self.sums[0] += new.n_title
        self.sums[1] += new.n_text
        dirty.meta = True
        dirty.blocks.add(b)
        if old is None or old.text_json != new.text_json:
            dirty.texts.add(new.shard)

    def _drop(self, path: str, dirty: Dirty) -> None:
        e = self.entries.pop(path)
        b = e.block
        self._block_changed(b, dirty)
        del self.blocks[b][bisect_left(self.blocks[b], path)]
        self._count(e.text, b, -1)
        paths = self.shard_paths[e.shard]
        paths.discard(path)
        if not paths:
            del self.shard_paths[e.shard]
        self.sums[0] -= e.n_title
        self.sums[1] -= e.n_text
        dirty.meta = True
        dirty.blocks.add(b)
        dirty.texts.add(e.shard)

    def _block_changed(self, b: int, dirty: Dirty) -> None:
        dirty.term_blocks.add(b)  # the later pages' local numbers moved

    def _count(self, text: dict[str, str], b: int, step: int) -> None:
        keys = self.block_keys[b]
        if step > 0:
            _count_elements(keys, text)  # C: +1 per key
        else:
            for key in text:
                if keys[key] > 1:
                    keys[key] -= 1
                else:
                    del keys[key]

    def has(self, key: str, b: int) -> bool:
        return key in self.block_keys[b]

    def key_blocks(self) -> list[tuple[str, int]]:
        return [(k, b) for b, keys in enumerate(self.block_keys) for k in keys]

    # ----- the files' contents ---------------------------------------------------------
    def meta(self) -> dict:
        n = len(self.entries) or 1
        keys: dict[str, list[int]] = {}
        for key, b in sorted(self.key_blocks()):
            keys.setdefault(key, []).append(b)
        return {"version": 2, "fields": ["title", "text"], "blocks": [len(p) for p in self.blocks],
                "avg": [self.sums[0] / n, self.sums[1] / n], "terms": keys}

    def page_list(self, b: int) -> dict:
        docs, lengths, titles = [], [], []
        for path in self.blocks[b]:
            e = self.entries[path]
            docs.append([path, e.title, e.shard, e.tags])
            lengths += (e.n_title, e.n_text)
            titles.append(e.title_terms)
        return {"block": b, "docs": docs, "lengths": lengths, "titles": titles}

    def block_texts(self, b: int) -> list[dict[str, str]]:
        entries = self.entries
        return [entries[p].text for p in self.blocks[b]]

    @staticmethod
    def term_rows(key: str, texts: list[dict[str, str]]) -> str:
        """One row per page of the block (`block_texts`), in order, rows joined by `,`:
        its words starting with `key`, `:`, their counts; empty for a page without such
        words. (No page numbers: a row per page costs a byte where there are none, and
        the parent joins ready strings instead of formatting a row per page and letter.)
        Words are letters and digits, so the rows need no JSON escapes."""
        return ",".join(map(dict.get, texts, repeat(key), repeat(""))).rstrip(",")

    def text_pages(self, shard: int) -> list[str]:
        return sorted(self.shard_paths.get(shard, ()))

    def all_dirty(self) -> Dirty:
        return Dirty(True, {b for b in range(BLOCKS) if self.blocks[b]}, set(),
                     set(self.shard_paths), set(range(BLOCKS)))

    def used(self) -> tuple[Iterable[int], Iterable[tuple[str, int]], Iterable[int]]:
        """(blocks with pages, (key, block) pairs with rows, text shards with pages)."""
        return ((b for b in range(BLOCKS) if self.blocks[b]), self.key_blocks(), self.shard_paths.keys())
