"""Steps 2 and 5 of writing a generation: the vectors.

Step 2 (`VectorUpdate.open`) loads the old HNSW index and the embedding cache and queues
what earlier runs left pending; while step 3 chunks, `add` finds each new chunk's vector
(cache, old index) or queues its text, starting worker processes once a big job shows
up; step 5 (`finish`) embeds the rest or waits for the workers, then updates and saves
the HNSW file. Embedding never fails a build: failures leave chunks pending.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from .chunk import compose_embed_text
from .report import IndexReport, progress_bar
from ..store.disk import Meta, cache_path

log = logging.getLogger("commonplace.search")

# Set by another build engine for the length of a build (`engines.ray_build`): makes the
# pool that embeds big jobs, `(model, expected texts) -> EmbeddingPool-like`, instead of
# the local worker processes; its `precision` says how that engine already embedded this
# build's new chunks into the cache. None: the local engine.
embedding_pool: Any = None

EMBED_GROUP = 256  # chunks per encode call (cache is written after each)
EARLY_MAX = 64  # chunks: a job this small starts embedding as soon as it is queued


def embed_texts(db: Any, ids: list[int]) -> dict[int, str]:
    """The texts the model embeds for chunk `ids` (heading prefix and text), from the table."""
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        batch = ids[i : i + 500]
        q = f"SELECT id, prefix, text FROM chunks WHERE id IN ({','.join('?' * len(batch))})"
        for r in db.execute(q, batch):
            out[r["id"]] = compose_embed_text(r["prefix"], r["text"])
    return out


class VectorUpdate:
    """The vector half of a generation update, streamed alongside chunking and BM25.

    `open()` loads the old HNSW index and the embedding cache and queues what earlier runs
    left pending. `add(rows)` takes newly inserted chunks: vectors come from the cache,
    else from the old index (same text hash), else the text is queued for embedding. Once
    a big job shows up, worker processes start and are fed as chunks arrive, so embedding
    runs while this process chunks and writes the BM25 index. `finish()` embeds in-process
    (small jobs) or waits for the workers, then updates and saves the HNSW file.
    Identical texts are embedded once.
    """

    def __init__(self, root: Path, gen: Path, db: Any, meta: Meta, dropped_ids: list[int],
                 old_vectors: dict[str, int], *, embed: bool, model: str | None, ref: Any,
                 report: IndexReport, progress: bool, pending: str = "embed"):
        self.root, self.gen, self.db, self.meta = root, gen, db, meta
        self.pending = pending  # earlier runs' chunks without a vector: "embed", "cache" only, "skip"
        self.dropped_ids, self.old_vectors = dropped_ids, old_vectors
        self.embed, self.model, self.ref, self.report, self.progress = embed, model, ref, report, progress
        self.first_new_id = 0  # ids from here on were added by this update
        self.found: dict[int, Any] = {}
        self.index: Any = None
        self.cache: Any = None
        self.queued: list[int] = []  # chunk ids to embed (one per distinct text)
        self.texts: dict[int, str] = {}
        self.hashes: dict[int, str] = {}
        self.by_hash: dict[str, int] = {}  # text hash -> the chunk id embedded for it
        self.done = 0
        self.error: BaseException | None = None
        self.precision: str | None = None
        self._lock = threading.Lock()
        self._pool: Any = None
        self._stream: Any = None
        self._pool_tried = False
        self.expected = 0
        self.reused = 0
        self._t_embed: float | None = None
        self._early: Any = None  # thread embedding a small job while the BM25 index commits

    # -- setup
    def open(self, expected_new_chunks: int) -> None:
        """Load the old index and the cache; queue what earlier runs left pending."""
        from ..embedding.cache import EmbeddingCache
        from ..store.vectors import VectorIndex

        vec_path = self.gen / "vectors.hnsw"
        if self.meta.dim and vec_path.exists():
            self.index = VectorIndex.load(vec_path, self.meta.dim, deleted=self.meta.deleted_vectors, writable=True)
        self.cache = EmbeddingCache(cache_path(self.root))
        self.expected = expected_new_chunks
        if self.embed and self.pending != "skip":  # chunks earlier runs did not embed (failures, --no-embed)
            rows = [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
                "SELECT id, text_hash, prefix, text FROM chunks WHERE has_vector = 0 AND id < ?",
                [self.first_new_id])]
            if self.pending == "cache":  # only those whose vectors are cached; the rest wait
                hits = self.cache.get_many(self.ref.model_id, (r[1] for r in rows))
                rows = [r for r in rows if r[1] in hits]
            self.expected += len(rows)
            for i in range(0, len(rows), 2000):
                self.add(rows[i : i + 2000])

    def _maybe_start_workers(self) -> None:
        """Worker processes for a big job, started once real work shows up (a rebuild
        served from the cache never starts them); they load the model while chunking and
        the BM25 index proceed, then embed groups as they are queued."""
        from ..embedding.pool import EmbeddingPool, pool_allowed

        expected = max(self.expected, len(self.queued))
        remote = embedding_pool
        if self._pool_tried or len(self.queued) < 200 or (remote is None and not pool_allowed(expected, self.model)):
            return
        self._pool_tried = True
        try:
            self._pool = remote(self.model, expected) if remote is not None else EmbeddingPool(self.model, expected=expected)
            self._stream = self._pool.stream(self._on_result)
        except Exception as exc:  # noqa: BLE001 - no processes here: embed in-process instead
            log.warning("embedding workers unavailable (%s); embedding in-process", exc)
            self._pool = self._stream = None
            return
        self._submit(self.queued)

    def abort(self) -> None:
        if self._early is not None:
            self._early.join()
        if self._pool is not None:
            self._pool.terminate()
            self._pool.close()
            self._pool = None
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    # -- feeding
    def add(self, rows: list[tuple[int, str, str, str]]) -> None:
        """Chunks just inserted: (id, text hash, prefix, text)."""
        with self._lock:  # feeder threads write the cache and `found` concurrently
            hits = self.cache.get_many(self.ref.model_id, (h for _, h, _, _ in rows)) if rows else {}
            self._add_locked(rows, hits)

    def _add_locked(self, rows: list[tuple[int, str, str, str]], hits: dict[str, Any]) -> None:
        meta = self.meta
        reuse: list[tuple[int, str, int]] = []
        todo: list[int] = []
        for cid, h, prefix, text in rows:
            self.hashes[cid] = h
            v = hits.get(h)
            if v is not None and (meta.dim is None or v.shape[0] == meta.dim):
                self.found[cid] = v
                self.reused += 1
            elif self.index is not None and h in self.old_vectors:
                reuse.append((cid, h, self.old_vectors[h]))
            elif self.embed:
                if h not in self.by_hash:
                    self.by_hash[h] = cid
                    self.texts[cid] = compose_embed_text(prefix, text)
                    todo.append(cid)
        if reuse:  # the cache was cleared: vectors of unchanged texts come from the old index
            got = self.index.get([old for _, _, old in reuse])
            for (cid, _, _), v in zip(reuse, got):
                self.found[cid] = v
            self.reused += len(reuse)
            self.cache.put_many(self.ref.model_id, ((h, self.found[cid]) for cid, h, _ in reuse))
        self.report.chunks_reused = self.reused
        if not todo:
            return
        if self._t_embed is None:
            self._t_embed = time.perf_counter()
        self.queued.extend(todo)
        if self._stream is not None:
            self._submit(todo)
        else:
            self._maybe_start_workers()
            if self._stream is None and self._early is None and len(self.queued) <= EARLY_MAX:
                self._early = threading.Thread(target=self._embed_early, args=(list(self.queued),),
                                               daemon=True, name="embed-early")
                self._early.start()

    def _embed_early(self, ids: list[int]) -> None:
        """A save's few changed chunks are embedded while the caller commits the BM25
        index: the model runs outside the GIL (OpenVINO and torch both release it)."""
        from ..embedding.base import precision_label
        from ..embedding.registry import get_embedder

        t0 = time.perf_counter()
        try:
            embedder = get_embedder(self.model)
            self._accept(ids, embedder.encode([self.texts[c] for c in ids]))
            self.precision = precision_label(embedder)
            self.report.timings["encode"] = time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - reported like any embedding failure
            self.error = exc

    def _submit(self, ids: list[int]) -> None:
        ids = sorted(ids, key=lambda c: len(self.texts[c]))  # similar lengths batch with little padding
        for i in range(0, len(ids), EMBED_GROUP):
            group = ids[i : i + EMBED_GROUP]
            self._stream.submit(group, [self.texts[c] for c in group])

    def _accept(self, group: list[int], vecs: Any) -> None:
        import numpy as np

        from ..embedding.base import EmbeddingError

        vecs = np.asarray(vecs, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(group):
            raise EmbeddingError(f"encoder returned shape {vecs.shape} for {len(group)} texts")
        with self._lock:
            if self.meta.dim is not None and vecs.shape[1] != self.meta.dim:
                raise EmbeddingError(f"encoder dimension {vecs.shape[1]} != index dimension {self.meta.dim}")
            self.meta.dim = int(vecs.shape[1])
            for c, v in zip(group, vecs):
                self.found[c] = v
            self.cache.put_many(self.ref.model_id, ((self.hashes[c], self.found[c]) for c in group))
            self.done += len(group)

    def _on_result(self, group: list[int], vecs: Any, precision: str) -> None:
        self._accept(group, vecs)
        self.precision = precision

    # -- the end
    def finish(self) -> None:
        if self.index is not None and self.dropped_ids:
            self.index.remove(self.dropped_ids)
        try:
            if self.queued:
                self._embed_rest()
        except BaseException:
            # Ctrl-C or SIGTERM mid-embedding: stop the workers now. A graceful close waits
            # for each one's batch in flight (up to 30 s each), which a user who pressed
            # Ctrl-C is not waiting for.
            if self._pool is not None:
                self._pool.terminate()
            raise
        finally:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            if self.cache is not None:
                self.cache.close()
                self.cache = None
        remote = getattr(embedding_pool, "precision", None)
        if remote and not self.done:  # embedded before this stage, by another engine
            self.meta.precision = self.report.precision = remote
        self._write_index()

    def _embed_rest(self) -> None:
        from ..embedding.base import precision_label
        from ..embedding.registry import get_embedder

        report = self.report
        with progress_bar(len(self.queued), "Embedding", self.progress, min_items=64) as bar:
            if self._stream is not None:
                self._stream.close()
                shown = 0
                while not self._stream.finished():
                    self._stream.join(0.25)
                    bar.update(self.done - shown)
                    shown = self.done
                bar.update(self.done - shown)
                self.error = self._stream.error
            else:
                if self._early is not None:
                    self._early.join()
                    bar.update(self.done)
                embedder = get_embedder(self.model)
                order = sorted((c for c in self.queued if c not in self.found), key=lambda c: len(self.texts[c]))
                if self.error is not None:
                    order = []
                try:
                    for i in range(0, len(order), EMBED_GROUP):
                        group = order[i : i + EMBED_GROUP]
                        self._accept(group, embedder.encode([self.texts[c] for c in group]))
                        bar.update(len(group))
                except Exception as exc:  # noqa: BLE001
                    self.error = exc
                if getattr(embedder, "precision", None) != "unloaded":
                    self.precision = precision_label(embedder)
        if self.error is not None:  # never fail a build over embeddings
            msg = f"embedding failed ({self.error}); {len(self.queued) - self.done} chunks left pending"
            log.warning(msg)
            report.warnings.append(msg)
        # Chunks with the same text as an embedded one share its vector.
        for c, h in self.hashes.items():
            if c not in self.found:
                src = self.by_hash.get(h)
                if src is not None and src in self.found:
                    self.found[c] = self.found[src]
        report.chunks_embedded = self.done
        report.timings["embed"] = time.perf_counter() - (self._t_embed or time.perf_counter())
        report.precision = self.precision
        if self.done:
            self.meta.precision = self.precision

    def _write_index(self) -> None:
        import numpy as np

        from ..store.vectors import VectorIndex

        t0 = time.perf_counter()
        meta, db, index = self.meta, self.db, self.index
        if self.found:
            ids = sorted(self.found)
            mat = np.stack([np.asarray(self.found[c], dtype=np.float32) for c in ids])
            if meta.dim is None:
                meta.dim = int(mat.shape[1])
            if index is None:
                index = VectorIndex(meta.dim)
            index.add(ids, mat)
            for i in range(0, len(ids), 500):
                batch = ids[i : i + 500]
                db.execute(f"UPDATE chunks SET has_vector = 1 WHERE id IN ({','.join('?' * len(batch))})", batch)
        if index is not None:
            if index.needs_compaction():
                index = compact(index, db)
            index.save(self.gen / "vectors.hnsw")
            meta.deleted_vectors = index.deleted
            meta.hnsw = {"M": int(index.index.M), "ef_construction": int(index.index.ef_construction), "max_elements": int(index.index.max_elements)}
        self.report.timings["hnsw"] = time.perf_counter() - t0


def compact(index: Any, db: Any) -> Any:
    """A fresh HNSW index holding only the live vectors (deleted labels gone for good)."""
    from ..store.vectors import VectorIndex

    live = [r[0] for r in db.execute("SELECT id FROM chunks WHERE has_vector = 1 ORDER BY id")]
    fresh = VectorIndex(index.dim)
    if live:
        fresh.index.resize_index(max(1024, len(live) + len(live) // 2))
        for i in range(0, len(live), 4096):
            batch = live[i : i + 4096]
            fresh.add(batch, index.get(batch))
    return fresh
