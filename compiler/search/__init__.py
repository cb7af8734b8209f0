"""Search: chunking, embeddings, the Whoosh BM25 index, the HNSW vector index, hybrid queries.

Rooms, one responsibility each (docs/core/package-map.md):

- `text`, `plaintext`  text -> index terms (BM25, query parsing, snippets); markdown -> what
                       a reader sees
- `store/`      where indexes live and how they are read: generations on disk (`disk`),
                the Whoosh BM25 schema and searcher (`bm25`, `bm25_segments`), the hnswlib
                vectors (`vectors`), discarding what cannot be read (`recover`)
- `embedding/`  the embedding model (lazy, batched, bf16 when the CPU supports it), its
                backends and worker processes, and the embedding cache keyed by model +
                chunk text hash
- `index/`      the write side: documents -> chunks (`chunk`), the build stage (`stage`:
                full build, incremental update) and its steps, BM25 segments written and
                merged, `purge` dropping deleted text everywhere, `fill` embedding behind a
                running server
- `read/`       the read side: the query engine (`engine`, loaded once and reused) and the
                generation it holds, query parsing, fusion, results, snippets
- `status`      what `commonplace status` reports

This module is the facade: code outside `compiler/search/` imports search from here and
never from a room inside it (`tests/test_import_graph.py`; the Ray engine alone is let in,
as it runs the index stage's own steps on other processes). Importing it is cheap: each
name below imports its module on first use (`compiler/lazy.py`), so no Whoosh, numpy or
torch until a function needs them. Type checkers see the real, typed definitions.

- the write side: `build_indexes(root, docs)` (a full build, diffing against the current
  index), `update_indexes(root, changed, removed)`, `rebuild_indexes` (afresh, after an
  index was found unreadable), `purge(root)` (drop deleted text everywhere), the build's
  stages `run_index_stage` / `run_embed_stage`, `warm_or_rebuild_vectors`, `start_filler`
  (vectors embedded behind a running server), `BackgroundMerger`
- the read side: `open_engine(root)` / `existing_engine(root)` and `SearchEngine.search`,
  the engine's request (`SearchRequest`, `Scope`, `make_scope`, `iso_date`, `MODES`,
  `InvalidRequest`), `IndexNotReady`; around an index update in this process,
  `hold_engine(root)` and `prepare_engine_switch(root)`; `make_snippet`, `audit_kind`
- status and recovery: `index_status` / `format_status`, `index_counts`, `index_root`,
  `unreadable` / `recovered`, `UnreadableSchema` (an index another version wrote)
- embedding model refs: `resolve_model`, `default_model_name`, `ModelRef`, `ENCODE_BATCH`
- text: `term_counts`, `unique_terms` (index terms), `inline_plain` (what a reader sees)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .embedding.base import ENCODE_BATCH, ModelRef, default_model_name, resolve_model
    from .index.bm25_merge import BackgroundMerger
    from .index.fill import start_filler
    from .index.purge import purge
    from .index.stage import (
        IndexNeedsRebuild, build_indexes, rebuild_indexes, run_embed_stage, run_index_stage, update_indexes,
        warm_or_rebuild_vectors,
    )
    from .plaintext import inline_plain
    from .read.audit import EVIDENCE_PREFIX, REPORT_PREFIXES, audit_kind
    from .read.engine import IndexNotReady, SearchEngine, existing_engine, open_engine
    from .read.notes import NO_SESSIONS
    from .read.switch import hold_engine, prepare_engine_switch
    from .read.query import MODES, InvalidRequest, Scope, SearchRequest, iso_date, make_scope
    from .read.snippet import make_snippet
    from .status import format_status, index_counts, index_status
    from .store.disk import index_root
    from .store.recover import UnreadableSchema, recovered, unreadable
    from .text import term_counts, unique_terms

_EXPORTS = {
    # the write side
    "build_indexes": "index.stage", "update_indexes": "index.stage", "rebuild_indexes": "index.stage",
    "run_index_stage": "index.stage", "run_embed_stage": "index.stage", "warm_or_rebuild_vectors": "index.stage",
    "IndexNeedsRebuild": "index.stage", "purge": "index.purge", "start_filler": "index.fill",
    "BackgroundMerger": "index.bm25_merge",
    # the read side
    "open_engine": "read.engine", "existing_engine": "read.engine", "SearchEngine": "read.engine",
    "IndexNotReady": "read.engine", "hold_engine": "read.switch", "prepare_engine_switch": "read.switch",
    "SearchRequest": "read.query", "Scope": "read.query", "make_scope": "read.query", "iso_date": "read.query",
    "MODES": "read.query", "InvalidRequest": "read.query", "make_snippet": "read.snippet",
    "audit_kind": "read.audit", "EVIDENCE_PREFIX": "read.audit", "REPORT_PREFIXES": "read.audit",
    "NO_SESSIONS": "read.notes",
    # status and recovery
    "index_status": "status", "format_status": "status", "index_counts": "status", "index_root": "store.disk",
    "unreadable": "store.recover", "recovered": "store.recover", "UnreadableSchema": "store.recover",
    # embedding model refs
    "resolve_model": "embedding.base", "default_model_name": "embedding.base", "ModelRef": "embedding.base",
    "ENCODE_BATCH": "embedding.base",
    # text
    "term_counts": "text", "unique_terms": "text", "inline_plain": "plaintext",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
