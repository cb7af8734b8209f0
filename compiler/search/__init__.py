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

Importing this package is cheap: no Whoosh, numpy or torch until a function needs them.
Entry points other parts of commonplace call:

- `build_indexes(root, docs, embed=True)`         full build (diffs against the current index)
- `update_indexes(root, changed_docs, removed)`    incremental update of some documents
- `purge(root)`                                    physically drop deleted text everywhere
- `open_engine(root)` / `SearchEngine.search(req)` queries (one engine per corpus per process)
- `index_status(root)`                             counts, model, pending, freshness
"""

from __future__ import annotations

from ..lazy import lazy_exports

__all__ = ["build_indexes", "update_indexes", "purge", "open_engine", "index_status"]
__getattr__ = lazy_exports(__name__, {
    "build_indexes": "index.stage", "update_indexes": "index.stage", "purge": "index.purge",
    "open_engine": "read.engine", "index_status": "status",
})
