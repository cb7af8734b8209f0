"""Search: chunking, embeddings, the Whoosh BM25 index, the HNSW vector index, hybrid queries.

Modules, one responsibility each:

- `chunk`       documents -> chunks (heading sections sized with the model's tokenizer)
- `embedding/`  the embedding model (lazy, batched, bf16 when the CPU supports it), its
                backends and worker processes, and the embedding cache keyed by model +
                chunk text hash
- `text`        text -> index terms, shared by BM25, query parsing and snippets
- `bm25`        the only module that touches Whoosh: analyzer, schema, writes, queries
- `vectors`     the hnswlib cosine index (id map = hnswlib labels = chunk ids)
- `store`       index generations under `.commonplace/index/` (CURRENT pointer, GC, lock)
                and the chunk/document table of a generation
- `query`       query-string parsing that never raises, request normalisation
- `snippet`     snippets with highlighted matches
- `engine`      the query engine (`SearchEngine`), loaded once and reused
- `index_stage` the build stage: full build, incremental update; its steps are the
                `index_*` modules (rows, chunks, vectors, counts, report) and
                `index_purge` drops deleted text everywhere
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
