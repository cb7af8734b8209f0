"""A query's embedding made before the engine's lock is taken.

A search holds the engine's lock for its whole call. The query embedding was made inside
it, so a first vector query loading the model (about 1.5 s on two cores, right after a
server says it is ready) held every other search that long, words-only ones included, and
any embedding (8 ms) held the rest in turn. Made here first, outside the lock, it is
remembered (`SearchEngine._query_vector`), and the search under the lock finds it ready.
"""

from __future__ import annotations

from typing import Any

from .query import ParsedQuery, SearchRequest, parse_query

MAX_TEXT = 4000  # characters of a query that are embedded


def embedded_text(pq: ParsedQuery) -> str:
    """The part of a parsed query that is embedded (here, and in `SearchEngine._vector_list`)."""
    return (pq.semantic_text or pq.raw.strip())[:MAX_TEXT]


def query_vector(engine: Any, req: SearchRequest) -> None:
    """Embed `req`'s query for `engine`, if its mode and index use vectors. Failures are
    left to the search, which says what happened."""
    if req.mode not in ("hybrid", "vector"):
        return
    with engine._lock:
        engine._ensure_open()
        meta = engine.meta
    if meta is None or not meta.vectors:
        return
    text = embedded_text(parse_query(req.query))
    if not text:
        return
    try:
        engine._query_vector(text)
    except Exception:  # noqa: BLE001 - the search under the lock tries again and reports it
        pass
