"""`purge(root)`: after deletions that must not linger (a claims `forget`), make deleted
text physically disappear from every index artifact: merge the Whoosh segments (deleted
postings gone), rebuild the HNSW file from live vectors, vacuum the table, drop
unreferenced cache entries and remove every old generation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .vectors import compact
from ..store.disk import IndexStore, Meta, cache_path, open_table


def purge(root: Path, model: str | None = None) -> dict[str, Any]:
    """Make deleted text physically disappear from every index artifact (see module doc)."""
    from .bm25_write import BM25Writer
    from ..embedding.cache import EmbeddingCache
    from ..store.vectors import VectorIndex

    root = Path(root).resolve()
    store = IndexStore(root)
    out: dict[str, Any] = {"generation": None, "cache_entries_removed": 0, "generations_removed": 0}
    with store.write_lock():
        base = store.current()
        if base is None:
            return out
        meta = Meta.load(base)
        gen = store.new_generation(base)
        try:
            w = BM25Writer(gen / "whoosh", create=False)
            w.commit(optimize=True)
            db = open_table(gen)
            if meta.dim and (gen / "vectors.hnsw").exists():
                (gen / "vectors.hnsw").unlink()  # a hard link to the old file: never write through it
                old = VectorIndex.load(base / "vectors.hnsw", meta.dim, deleted=meta.deleted_vectors, writable=True)
                fresh = compact(old, db)
                fresh.save(gen / "vectors.hnsw")
                meta.deleted_vectors = 0
            hashes = {r[0] for r in db.execute("SELECT text_hash FROM chunks")}
            db.commit()
            db.execute("VACUUM")
            db.close()
            meta.generation = gen.name
            meta.built_at = time.time()
            meta.save(gen)
            before = len(store.generations())
            store.commit(gen, keep_previous=False)
            out["generations_removed"] = before - len(store.generations())
        except BaseException:
            store.discard(gen)
            raise
        model_id = meta.model
        if model_id:
            cache = EmbeddingCache(cache_path(root))
            try:
                out["cache_entries_removed"] = cache.retain(model_id, hashes)
            finally:
                cache.close()
        out["generation"] = gen.name
    return out
