"""What a search engine keeps across a switch to the next index generation, and the
switch itself done ahead of the searches (`prepare_switch`).

After each write the engine opens the new generation. Rebuilding its per-generation
tables from scratch there (the document table, 65 ms at 10,000 documents; the chunk ids a
`durable` query may return, 150 ms over 70,000 chunks) made every write cost each reader
about a quarter of a second, under the engine's lock. A small update shares the base
table (`table.sqlite`, the same file by hard link) and differs from the previous
generation only in its delta (`store.py`), so the paths a switch changed are the paths
either delta names; everything else carries over, patched for those paths.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .generation import Generation

DOC_COLUMNS = "path, type, status, tags, sort_date, is_session"


def table_identity(gen: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(gen / "table.sqlite")
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def delta_paths(db: Any) -> set[str] | None:
    """Paths a generation's delta touches (rows added, replaced or hidden), read through
    its read-only connection (the delta attached as `delta`); empty without a delta;
    None when the connection cannot say."""
    try:
        if not _has_delta(db):
            return set()
        out = {r[0] for r in db.execute("SELECT path FROM delta.delta_docs UNION SELECT path FROM delta.gone_docs "
                                        "UNION SELECT path FROM delta.delta_chunks")}
        out |= {r[0] for r in db.execute(
            "SELECT path FROM main.chunks WHERE id IN (SELECT id FROM delta.gone_chunks)")}
        return out
    except Exception:  # noqa: BLE001 - an unexpected layout: nothing is carried
        return None


def _allowed(row: Any, corpus: str) -> bool:
    """The engine's corpus test for a scope-free query (`SearchEngine._allowed_paths`)."""
    if corpus == "durable":
        return not row["is_session"]
    if corpus == "sessions":
        return bool(row["is_session"])
    return True


@dataclass
class Carry:
    """The previous generation's tables, taken before the engine closes it."""

    table: tuple[int, int] | None
    changed_before: set[str]  # the old generation's delta paths
    docs: dict[str, Any]
    sets: dict[tuple, Any] = field(default_factory=dict)  # (kind, corpus) -> set, scope-free
    titles: Any = None  # the old generation's `results.TitleResolver`
    db: Any = None  # the old generation's connection (closed by `after_switch`)


def _has_delta(db: Any) -> bool:
    return "delta" in {r[0] for r in db.execute("SELECT name FROM pragma_database_list")}


def _chunk_ids(db: Any, paths: set[str], vectors_only: bool) -> dict[str, list[int]]:
    """Chunk ids by path. Base table and delta are asked separately: through the union
    view SQLite scans every chunk (30 ms at 70,000) instead of using the path index."""
    out: dict[str, list[int]] = {}
    plist = sorted(paths)
    cond = " AND +has_vector = 1" if vectors_only else ""  # unary +: the path index, not has_vector's
    delta = _has_delta(db)
    for i in range(0, len(plist), 500):
        batch = plist[i : i + 500]
        marks = ",".join("?" * len(batch))
        if delta:
            q = (f"SELECT id, path FROM main.chunks WHERE path IN ({marks}){cond} "
                 f"AND id NOT IN (SELECT id FROM delta.gone_chunks) "
                 f"UNION ALL SELECT id, path FROM delta.delta_chunks WHERE path IN ({marks}){cond}")
            rows = db.execute(q, batch + batch)
        else:
            rows = db.execute(f"SELECT id, path FROM chunks WHERE path IN ({marks}){cond}", batch)
        for cid, path in rows:
            out.setdefault(path, []).append(cid)
    return out


def _titles(db: Any, paths: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(paths), 500):
        batch = paths[i : i + 500]
        out.update(db.execute(f"SELECT path, title FROM docs WHERE path IN ({','.join('?' * len(batch))})", batch))
    return out


def _carry_titles(resolver: Any, changed: set[str], old_db: Any, db: Any) -> Any:
    """The old generation's title lookups, less every key a changed document (before or
    after) could answer: its path, any path suffix, its title (`TitleResolver`'s rules).
    The keys to drop are listed from the changed paths and taken out of the old cache,
    which moves over (the old generation is closing): testing every cached key against
    every changed path took 15% of the server's GIL in the mixed benchmark at 10,000
    documents (a cache of thousands of keys, a switch per write, under the engine lock)."""
    from .results import TitleResolver

    plist = sorted(changed)
    drop = {t.lower() for t in (*_titles(old_db, plist).values(), *_titles(db, plist).values())}
    for p in plist:
        low = p.lower()
        drop.add(low)
        if low.endswith(".md"):
            stem = low[:-3]
            drop.add(stem)
            drop.update(stem[i + 1:] for i, ch in enumerate(stem) if ch == "/")
    cache, resolver._cache = resolver._cache, {}
    for key in drop:
        cache.pop(key, None)
    fresh = TitleResolver(db)
    fresh._cache = cache
    return fresh


def before_switch(engine: Any) -> Carry | None:
    """Take what may carry over from the engine's open generation (call before it closes
    it); the engine's connection is handed to the carry and closed by `after_switch`."""
    from .query import Scope

    gen = engine.gen
    if gen is None or gen.db is None or gen.docs is None:
        return None
    changed = delta_paths(gen.db)
    if changed is None:
        return None
    empty = Scope().key()
    sets = {key[:2]: value for key, value in gen.cache.items()
            if len(key) == 3 and key[0] in ("paths", "vec-filter") and key[2] == empty and value is not None}
    db = gen.detach_db()  # kept open for `after_switch`
    return Carry(table_identity(engine.store.dir / gen.name), changed, gen.docs, sets, gen.cache.get(("titles",)),
                 db=db)


def after_switch(engine: Any, carry: Carry | None) -> None:
    """Give the newly opened generation the carried tables, patched for what changed."""
    if carry is None:
        return
    gen = engine.gen
    try:
        got = _patched(carry, engine.store.dir / gen.name, gen.db)
    except Exception:  # noqa: BLE001 - the engine rebuilds its tables lazily instead
        got = None
    finally:
        drop(carry)
    gen.adopt(got, _empty_scope_key())


def drop(carry: Carry | None) -> None:
    """Close the carried connection (an open that failed carries nothing)."""
    if carry is not None:
        carry.db.close()


def _patched(carry: Carry, gen: Path, db: Any) -> tuple[dict, dict, Any] | None:
    """The new generation's document table and scope-free sets, patched from `carry`;
    None when nothing can be carried (another base table: after a fold or a full build)."""
    if carry.table is None or carry.table != table_identity(gen):
        return None
    now = delta_paths(db)
    if now is None:
        return None
    changed = now | carry.changed_before
    docs = dict(carry.docs)
    for p in changed:
        docs.pop(p, None)
    plist = sorted(changed)
    for i in range(0, len(plist), 500):
        batch = plist[i : i + 500]
        for r in db.execute(f"SELECT {DOC_COLUMNS} FROM docs WHERE path IN ({','.join('?' * len(batch))})", batch):
            docs[r["path"]] = r
    sets: dict[tuple, Any] = {}
    vec = any(kind == "vec-filter" for kind, _ in carry.sets)
    old_ids = _chunk_ids(carry.db, changed, vectors_only=False) if vec else {}
    new_ids = _chunk_ids(db, changed, vectors_only=True) if vec else {}
    for (kind, corpus), value in carry.sets.items():
        value = set(value)
        keep = {p for p in changed if p in docs and _allowed(docs[p], corpus)}
        if kind == "paths":
            value -= changed
            value |= keep
        else:
            for p in changed:
                value.difference_update(old_ids.get(p, ()))
            for p in keep:
                value.update(new_ids.get(p, ()))
        sets[(kind, corpus)] = value
    titles = _carry_titles(carry.titles, changed, carry.db, db) if carry.titles is not None else None
    return docs, sets, titles


HOLD_SECONDS = 10.0  # a hold older than this is ignored (a writer that never released it)


def hold(engine: Any) -> tuple:
    """A writer in this process is about to publish a generation and hand it over
    (`prepare_switch`): until `release`, searches keep the generation they have open,
    if it is at least the live one now, rather than each opening the new one under the
    engine's lock while the writer opens it too. The writer releases only after its
    prepared generation is in place, and answers after that, so a search that starts
    after the answer sees the write."""
    token = (_number(engine.store.current_name()), time.monotonic())
    with _PREPARED_LOCK:
        engine.handover.holds.append(token)
    return token


def release(engine: Any, token: tuple) -> None:
    with _PREPARED_LOCK:
        if token in engine.handover.holds:
            engine.handover.holds.remove(token)


def _keeps(engine: Any) -> bool:
    """May a search stay on the engine's open generation though a newer one is live?
    Only under one recent hold whose floor it has reached: every write answered before
    the hold began is in a generation at most that floor. (Writes in a process are
    serialized; with two holds at once, nothing is kept.)"""
    holds = list(engine.handover.holds)
    if len(holds) != 1 or engine.generation is None:
        return False
    floor, since = holds[0]
    have = _number(engine.generation)
    return floor is not None and have is not None and have >= floor and time.monotonic() - since < HOLD_SECONDS


def _number(name: str | None) -> int | None:
    try:
        return int(name[1:]) if name else None
    except ValueError:
        return None


def ensure_open(engine: Any) -> None:
    """Under the engine's lock, before each search: install what a writer prepared, else
    stay on the open generation during a writer's hold, else open the live one."""
    from ..store.disk import IndexNotReady, pin

    if engine.handover.prepared is not None:
        install_prepared(engine)
    for attempt in range(3):
        name = engine.store.current_name()
        if name is None:
            engine.close()
            raise IndexNotReady(f"no search index in {engine.root}: run `commonplace build`")
        if name == engine.generation or _keeps(engine):
            return
        carry = before_switch(engine) if attempt == 0 else None  # tables a write leaves
        engine.retire()
        try:
            gen = Generation.open(engine.store.dir, name)
        except Exception:  # noqa: BLE001 - collected between reading CURRENT and opening it
            drop(carry)
            if attempt == 2:
                raise
            continue
        engine.install(gen)
        pin(engine.store.dir / name)  # not collected while this searcher may still open its files
        after_switch(engine, carry)
        return


@dataclass
class Prepared:
    """A generation a writer opened for an engine, installed by its next search."""

    gen: Generation
    old: str  # the generation the engine had open when this was prepared
    got: tuple | None  # `_patched`'s tables, or None (rebuilt lazily)


_PREPARED_LOCK = threading.Lock()


def prepare_switch(engine: Any) -> bool:
    """Open the live generation for `engine` beside the one its searches use, for its
    next search to swap in (`install_prepared`, under the engine's lock: a swap of fields).

    A search that finds a new generation switches under the engine's lock (~25-35 ms at
    10,000 documents: Whoosh segment readers, the table, the carried tables) while every
    other search waits. A writer calls this after publishing, inside its `hold` (so the
    searches meanwhile stay on the generation they have rather than switching by
    themselves): the engine's tables are read without its lock, as copies of its dicts
    (single C-level operations under the GIL), kept only if its generation did not change
    meanwhile; the new generation is opened and the tables carried outside the lock. A
    search that switched first makes the prepared one be dropped. True if prepared."""
    from ..store.disk import open_table, pin

    name = engine.store.current_name()
    have = engine.gen  # one read: the searches may switch it meanwhile
    old = have.name if have is not None else None
    if name is None or old is None or name == old or have.db is None:
        return False
    docs = have.docs
    empty = _empty_scope_key()
    try:
        items = list(have.cache.items())
    except RuntimeError:  # changed while copied
        return False
    sets = {key[:2]: value for key, value in items
            if len(key) == 3 and key[0] in ("paths", "vec-filter") and key[2] == empty and value is not None}
    titles = dict(items).get(("titles",))
    if titles is not None:
        from .results import TitleResolver

        copy = TitleResolver(None)
        copy._cache = dict(titles._cache)
        titles = copy
    if engine.gen is not have:
        return False  # a search switched meanwhile: what was read may be of either generation
    gen = engine.store.dir / name
    pin(gen)  # not collected while it is being opened (then the engine's pin)
    opened: list[Any] = []
    try:
        # fast: the per-generation scoring arrays, built here rather than by a search
        new = Generation.open(engine.store.dir, name, fast=True)
        opened.append(new)
        db = new.db
        got = None
        if docs is not None:
            old_db = open_table(engine.store.dir / old, readonly=True)
            carry = Carry(table_identity(engine.store.dir / old), delta_paths(old_db) or set(), docs, sets,
                          titles, db=old_db)
            try:
                got = _patched(carry, gen, db)
            except Exception:  # noqa: BLE001 - the tables are rebuilt lazily instead
                got = None
            finally:
                drop(carry)
    except Exception:  # noqa: BLE001 - a search opens it the usual way
        for o in opened:
            o.close()
        from ..store.disk import unpin

        unpin(gen)
        return False
    with _PREPARED_LOCK:
        prev, engine.handover.prepared = engine.handover.prepared, Prepared(new, old, got)
    _release(engine, prev)
    # The next search swaps it in (a swap of fields): the writer waits for no search. Under
    # 8 readers it had waited ~75% of its prepare for the engine's lock (py-spy, 10k).
    return True


def install_prepared(engine: Any) -> None:
    """Under the engine's lock (its `_ensure_open`): switch to what a writer prepared, if
    it was prepared from the generation still open; else drop it."""
    with _PREPARED_LOCK:
        p, engine.handover.prepared = engine.handover.prepared, None
    if p is None:
        return
    if engine.generation != p.old:
        _release(engine, p)
        return
    engine.retire()
    engine.install(p.gen)  # pinned when prepared
    p.gen.adopt(p.got, _empty_scope_key())


def discard_prepared(engine: Any) -> None:
    with _PREPARED_LOCK:
        p, engine.handover.prepared = engine.handover.prepared, None
    _release(engine, p)


def _release(engine: Any, p: Prepared | None) -> None:
    if p is None:
        return
    from ..store.disk import unpin

    p.gen.close()
    unpin(engine.store.dir / p.gen.name)


def _empty_scope_key() -> Any:
    from .query import Scope

    return Scope().key()
