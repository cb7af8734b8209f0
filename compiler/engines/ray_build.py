"""One build on a Ray cluster: what `build.py` asks of an engine.

`RayEngine.open` connects (failing before anything is written); `runner_factory` gives
`SiteState.update` a `ray_site.RayRunner`; `index_hooks()` wraps the index stage so it
takes the chunks the cluster made and, for any chunk the cache still lacks, embeds on
the cluster's actors; `close` disconnects. Everything else a local build does, and in
the same order, happens in this process: scanning, links, the generated pages, the
manifest, the BM25 index, the HNSW file and the index generation.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from . import EngineError, ray_guard
from .ray_cluster import Cluster, connect
from .ray_embed import RayEmbedding, RayPool


class RayEngine:
    name = "ray"

    def __init__(self, cluster: Cluster, root: Path, embed: bool):
        self.cluster = cluster
        self.root = root
        self.timings: dict[str, float] = {}  # seconds this process spent on the engine's steps
        self.chunks: dict[str, tuple[str, list[Any]]] = {}  # path -> (document hash, its chunks)
        self.chunking: tuple[str | None, str] | None = None
        self.embedding: RayEmbedding | None = None
        if embed:
            from ..search.index.chunk import ChunkConfig, token_counter
            from ..search.embedding.base import default_model_name

            model = default_model_name()
            self.chunking = (model, ChunkConfig().identity(token_counter(model)))
            self.embedding = RayEmbedding(root, cluster.cpus, model)

    @classmethod
    def open(cls, address: str | None, root: Path, *, embed: bool = True, progress: bool = False) -> "RayEngine":
        from .. import progress as progress_mod

        t0 = time.perf_counter()
        ray_guard.mark("live")  # from here Ray may end this process (see ray_guard)
        try:
            cluster = connect(address, verbose=progress_mod.verbose())
        except BaseException:
            ray_guard.mark("closed")  # the error is this process's to report
            raise
        engine = cls(cluster, root, embed)
        engine.timings["connect"] = time.perf_counter() - t0
        return engine

    # -- what build.py uses
    def runner_factory(self, n_docs: int) -> Any:
        from .ray_site import RayRunner

        return RayRunner(self)

    @contextmanager
    def index_hooks(self) -> Iterator[None]:
        """The index stage takes the cluster's chunks and embeds any leftovers there."""
        from ..search.index import chunks as index_chunks, vectors as index_vectors

        def made(path: str, doc_hash: str, identity: str) -> list[Any] | None:
            got = self.chunks.get(path)
            if got is None or self.chunking is None or identity != self.chunking[1] or got[0] != doc_hash:
                return None
            return got[1]

        index_chunks.chunks_made, index_vectors.embedding_pool = made, _PoolFactory(self)
        ray_guard.mark("indexing")
        t0 = time.perf_counter()
        try:
            yield
            ray_guard.mark("done")
        finally:
            index_chunks.chunks_made = index_vectors.embedding_pool = None
            self.timings["index_stage"] = time.perf_counter() - t0

    def finish(self, extra: dict[str, Any]) -> None:
        """Complete the build's counters: chunks embedded on the cluster are embedded, not
        reused (the index stage found them in the cache), and `extra["engine"]` tells
        where the work ran and what this process spent (the benchmark reads it)."""
        e = self.embedding
        if e is not None and e.embedded and "chunks_embedded" in extra:
            moved = min(e.embedded, extra.get("chunks_reused", 0))
            extra["chunks_embedded"] += moved
            extra["chunks_reused"] -= moved
        extra["engine"] = self.report()

    def report(self) -> dict[str, Any]:
        e = self.embedding
        out: dict[str, Any] = {"name": self.name, "address": self.cluster.address, "nodes": self.cluster.nodes,
                               "cpus": self.cluster.cpus, "driver_seconds": {k: round(v, 3) for k, v in self.timings.items()}}
        if e is not None:
            out.update(chunks_offered=e.looked_up, chunks_cached=e.cached, chunks_embedded=e.embedded,
                       embed_seconds=round(e.seconds, 3), precision=e.precision)
        return out

    def close(self, error: BaseException | None = None) -> None:
        """Disconnect. `error`, the build's failure, is told to the supervisor first:
        disconnecting from a lost cluster is when Ray may end this process."""
        if error is not None:
            ray_guard.say(error)
        try:
            if self.embedding is not None:
                self.embedding.close()
            self.cluster.close()
        finally:
            ray_guard.mark("closed")

    # -- what the runner uses
    def take_chunks(self, parsed: list[tuple[Any, list[Any]]], chunks: dict[str, list[Any]]) -> None:
        t0 = time.perf_counter()
        for doc, _ in parsed:
            if doc is not None and doc.path in chunks:
                self.chunks[doc.path] = (doc.hash, chunks[doc.path])
                if self.embedding is not None:
                    self.embedding.offer(chunks[doc.path])
        self.timings["cache_lookup"] = self.timings.get("cache_lookup", 0.0) + time.perf_counter() - t0

    def embedding_start(self) -> None:
        if self.embedding is not None and self.chunking is not None:
            t0 = time.perf_counter()
            self.embedding.offer_pending(self.chunking[1])
            self.timings["cache_lookup"] = self.timings.get("cache_lookup", 0.0) + time.perf_counter() - t0
            self.embedding.start()

    def embedding_wait(self, progress: Callable[[str, int], Callable[[int], None]]) -> None:
        e = self.embedding
        if e is None or not e.misses:
            return
        tick = progress("Embedding", len(e.misses))
        t0 = time.perf_counter()
        e.wait(tick)
        self.timings["embed_wait"] = time.perf_counter() - t0

    def wait(self, refs: list[Any], what: str) -> tuple[list[Any], list[Any]]:
        """`ray.wait` for at least one of `refs`; the cluster's failures as `EngineError`."""
        import ray

        t0 = time.perf_counter()
        try:
            return ray.wait(refs, num_returns=1, timeout=None)
        except ray.exceptions.RayError as exc:
            raise _lost(exc, what) from None
        finally:
            self.timings["task_wait"] = self.timings.get("task_wait", 0.0) + time.perf_counter() - t0

    def fetch(self, refs: list[Any], what: str) -> None:
        """Bring `refs` into this node's object store (not into this process)."""
        import ray

        t0 = time.perf_counter()
        try:
            ray.wait(refs, num_returns=len(refs), timeout=None, fetch_local=True)
        except ray.exceptions.RayError as exc:
            raise _lost(exc, what) from None
        self.timings["fetch_pages"] = time.perf_counter() - t0

    def get(self, ref: Any, what: str) -> Any:
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise _lost(exc, what) from None


class _PoolFactory:
    """`index_vectors.embedding_pool` for a Ray build: actors for leftovers; `precision`
    is how the cluster embedded the build's chunks."""

    def __init__(self, engine: RayEngine):
        self.engine = engine

    @property
    def precision(self) -> str | None:
        return self.engine.embedding.precision if self.engine.embedding is not None else None

    def __call__(self, model: str | None, expected: int) -> RayPool:
        return RayPool(self.engine.cluster.cpus, model, expected)


def _lost(exc: BaseException, what: str) -> EngineError:
    text = str(exc).strip()
    line = text.splitlines()[-1][:300] if text else type(exc).__name__
    return EngineError(f"the Ray build failed while {what} ({line}); the site and the indexes were not touched")
