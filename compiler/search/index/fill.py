"""Vectors behind a running server: the site and the BM25 index answer first, and a
`VectorFiller` thread embeds the chunks the live generation holds without a vector.

It embeds outside the index lock, into the embedding cache (keyed by model and text
hash, so an interruption loses nothing finished), and now and then publishes a
generation that takes the cached vectors (`index_stage.fill_from_cache`, which holds the
lock only for the table and HNSW writes). While it runs, writes leave the backlog to it
(`filling(root)`) and embed only their own new chunks, so a save never waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .filling import claim, filling, release

__all__ = ["VectorFiller", "filling", "pending_texts", "start_filler"]

log = logging.getLogger("commonplace.search")

GROUP = 32  # texts per encode call: a query waiting on the model waits for one group at most
PUBLISH_CHUNKS = 1024  # publish a generation after this many new vectors ...
PUBLISH_SECONDS = 15.0  # ... or this long after the last one
READ_LIMIT = 4096  # distinct pending texts read per round

def pending_texts(root: Path, model_id: str, limit: int = READ_LIMIT) -> list[tuple[str, str]] | None:
    """(text hash, text to embed) of the live generation's chunks without a vector whose
    vector the cache lacks, distinct, at most `limit`; None when nothing is pending."""
    from .chunk import compose_embed_text
    from ..embedding.cache import EmbeddingCache
    from ..store.disk import IndexStore, Meta, cache_path, open_table

    store = IndexStore(Path(root))
    with store.write_lock():  # the generation cannot be collected while it is read
        gen = store.current()
        if gen is None:
            return None
        meta = Meta.load(gen)
        if meta.chunks <= meta.vectors or meta.model not in (None, model_id):
            return None
        db = open_table(gen, readonly=True)
        try:
            rows = {r[0]: (r[1], r[2]) for r in db.execute(
                "SELECT text_hash, prefix, text FROM chunks WHERE has_vector = 0")}
        finally:
            db.close()
    cache = EmbeddingCache(cache_path(Path(root)))
    try:
        cached = cache.get_many(model_id, rows)
    finally:
        cache.close()
    todo = [(h, compose_embed_text(p, t)) for h, (p, t) in rows.items() if h not in cached]
    return todo[:limit]


class VectorFiller:
    """Embeds the live generation's pending chunks in a daemon thread until none is left
    (or `stop()`). `on_publish(report)` is called after each generation it publishes."""

    def __init__(self, root: Path, model: str | None = None, on_publish: Callable[[Any], None] | None = None):
        self.root = Path(root).resolve()
        self.model = model
        self.on_publish = on_publish
        self.embedded = 0
        self.published = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commonplace-vector-fill", daemon=True)

    def start(self) -> "VectorFiller":
        claim(self.root, self)
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._release()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the backlog to be filled; True when the thread has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _release(self) -> None:
        release(self.root, self)

    def _run(self) -> None:
        from ..embedding.base import resolve_model
        from ..embedding.registry import get_embedder
        from .report import IndexNeedsRebuild

        try:
            model_id = resolve_model(self.model).model_id
            while not self._stop.is_set():
                todo = pending_texts(self.root, model_id)
                if todo is None:
                    return
                embedder = get_embedder(self.model)
                new = self._embed(embedder, model_id, todo)
                try:
                    report = self._publish()
                except IndexNeedsRebuild:  # the index was rebuilt for another model meanwhile
                    return
                if not new and not report.written:
                    return  # nothing left that this model can fill (failures are logged)
        except Exception as exc:  # noqa: BLE001 - the chunks stay pending; the next build embeds them
            self.error = exc
            log.warning("embedding behind the server stopped (%s); the next build embeds the rest", exc)
        finally:
            self._release()

    def _embed(self, embedder: Any, model_id: str, todo: list[tuple[str, str]]) -> int:
        """Encode `todo` into the cache group by group; publish as vectors pile up."""
        import numpy as np

        from ..embedding.cache import EmbeddingCache
        from ..store.disk import cache_path

        cache = EmbeddingCache(cache_path(self.root))
        done = since = 0
        last = time.monotonic()
        try:
            for i in range(0, len(todo), GROUP):
                if self._stop.is_set():
                    break
                group = todo[i : i + GROUP]
                vecs = np.asarray(embedder.encode([t for _, t in group]), dtype=np.float32)
                cache.put_many(model_id, ((h, v) for (h, _), v in zip(group, vecs)))
                done += len(group)
                since += len(group)
                self.embedded += len(group)
                if since >= PUBLISH_CHUNKS or time.monotonic() - last >= PUBLISH_SECONDS:
                    self._publish()
                    since, last = 0, time.monotonic()
        finally:
            cache.close()
        return done

    def _publish(self) -> Any:
        from .stage import fill_from_cache

        report = fill_from_cache(self.root, self.model)
        if report.written:
            self.published += 1
            if self.on_publish is not None:
                self.on_publish(report)
        return report


def start_filler(root: Path, model: str | None = None, **kw: Any) -> VectorFiller | None:
    """A running filler for `root`, or None when nothing waits for a vector."""
    from ..embedding.base import resolve_model

    if pending_texts(root, resolve_model(model).model_id, limit=1) is None:
        return None
    return VectorFiller(root, model, **kw).start()
