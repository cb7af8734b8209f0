"""One open index generation, as a search engine holds it.

`Generation` is what the engine switches between: the generation's name, meta, table
connection, BM25 searcher, and the tables the engine builds over them (the document
table, cached sets and titles). `engine_carry` opens the next one, carries tables into it
and hands it to the engine (`SearchEngine.install`); it never edits the engine's fields.
`Handover` is the engine's state for that hand-over: writers' holds and a generation a
writer prepared.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE_ENTRIES = 64  # per generation: scope sets, vector filters, titles


@dataclass
class Generation:
    name: str
    meta: Any  # store.Meta
    db: Any  # read-only connection to its table (the delta attached)
    bm25: Any  # bm25.BM25Searcher
    docs: dict[str, Any] | None = None  # path -> row of the document table, built lazily or carried
    cache: "OrderedDict[tuple, Any]" = field(default_factory=OrderedDict)

    @classmethod
    def open(cls, folder: Path, name: str, fast: bool = False) -> "Generation":
        """Open generation `name` in the index folder (closing what it opened if a part
        fails). `fast`: build BM25's scoring arrays now rather than in the first search."""
        from ..store.bm25 import BM25Searcher
        from ..store.disk import Meta, open_table

        gen = folder / name
        opened: list[Any] = []
        try:
            meta = Meta.load(gen)
            db = open_table(gen, readonly=True)
            opened.append(db)
            bm25 = BM25Searcher(gen / "whoosh")
            opened.append(bm25)
            if fast:
                bm25.fast()
        except BaseException:
            for o in opened:
                o.close()
            raise
        return cls(name, meta, db, bm25)

    def cached(self, key: tuple, make: Any) -> Any:
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        value = make()
        self.cache[key] = value
        if len(self.cache) > CACHE_ENTRIES:
            self.cache.popitem(last=False)
        return value

    def adopt(self, tables: tuple | None, empty_scope: Any) -> None:
        """Take tables carried from the previous generation: (docs, scope-free sets by
        (kind, corpus), titles); None: they are built lazily."""
        if tables is None:
            return
        docs, sets, titles = tables
        self.docs = docs
        if titles is not None:
            self.cached(("titles",), lambda: titles)
        for (kind, corpus), value in sets.items():
            self.cached((kind, corpus, empty_scope), lambda value=value: value)

    def detach_db(self) -> Any:
        """Hand the table connection to a carry (which closes it); `close` leaves it."""
        db, self.db = self.db, None
        return db

    def close(self) -> None:
        if self.bm25 is not None:
            self.bm25.close()
        if self.db is not None:
            self.db.close()
        self.bm25 = self.db = None
        self.cache.clear()
        self.docs = None


@dataclass
class Handover:
    """Writers' holds (`engine_carry.hold`) and the generation one prepared
    (`engine_carry.prepare_switch`), guarded by `engine_carry`'s lock."""

    holds: list[tuple] = field(default_factory=list)
    prepared: Any = None  # engine_carry.Prepared
