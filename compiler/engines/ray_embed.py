"""Embedding on a Ray cluster: a pool of actors that each load the model once.

`RayEmbedding.offer` takes a build's new chunks as parsing returns them and looks each
text hash up in the embedding cache on this machine first, so only texts the cache has
never seen travel to the cluster. `start` creates the actors and hands them the misses
sorted by length (similar lengths pad little), in groups, at most two in flight per
actor; vectors go into the cache as they come back, so an interrupted build keeps them.
`wait` returns once every vector is in the cache.

Why actors and not Ray Data's `map_batches` with an actor pool: measured on this
machine, see docs/decisions/2026-11-23-ray-engine.md.

Failures: an actor that dies is restarted by Ray and its calls retried
(`max_restarts`, `max_task_retries`); a cluster that goes away or an actor that keeps
dying raises `EngineError`; a model that fails to encode is reported like a local
embedding failure (a warning, the chunks left pending for the next build).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable

from . import EngineError

log = logging.getLogger("commonplace.engine")

GROUP = 256  # texts per actor call, as the local pool (`index_vectors.EMBED_GROUP`)
IN_FLIGHT = 2  # calls queued per actor, so none waits for its next group
RESTARTS = 3  # an actor that dies is restarted (and its calls retried) this many times


class _Dispatch:
    """Feeds (key, texts) jobs to actors from a thread: `on_result(key, vectors, precision)`
    runs in that thread. `error` is set on the first failure; nothing more is sent then."""

    def __init__(self, actors: list[Any], on_result: Callable[[Any, Any, str | None], None]):
        self.actors, self.on_result = actors, on_result
        self.jobs: deque[tuple[Any, list[str]]] = deque()
        self.error: BaseException | None = None
        self.cluster_failed = False  # the error is the cluster's, not the model's
        self.submitted = 0
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ray-embed", daemon=True)
        self._thread.start()

    def submit(self, key: Any, texts: list[str]) -> None:
        with self._lock:
            self.submitted += 1
            self.jobs.append((key, texts))

    def close(self) -> None:
        """No more jobs: the thread ends once the queue is drained."""
        self._closed = True

    def finished(self) -> bool:
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - ray.wait itself failed: the cluster is gone
            self._fail(exc, cluster=True)

    def _loop(self) -> None:
        import ray
        from ray.exceptions import RayActorError, RayError, RayTaskError

        flying: dict[Any, tuple[int, Any]] = {}  # object ref -> (actor index, key)
        load = [0] * len(self.actors)
        while True:
            with self._lock:
                while self.jobs and self.error is None:
                    a = min(range(len(load)), key=load.__getitem__)
                    if load[a] >= IN_FLIGHT:
                        break
                    key, texts = self.jobs.popleft()
                    flying[self.actors[a].embed.remote(texts)] = (a, key)
                    load[a] += 1
                idle = not self.jobs
            if not flying:
                if (self._closed and idle) or self.error is not None:
                    return
                time.sleep(0.05)
                continue
            done, _ = ray.wait(list(flying), num_returns=1, timeout=0.5)
            for ref in done:
                a, key = flying.pop(ref)
                load[a] -= 1
                try:
                    vecs, precision = ray.get(ref)
                    self.on_result(key, vecs, precision)
                except RayTaskError as exc:  # the model's own failure, raised in the actor
                    self._fail(exc.cause if getattr(exc, "cause", None) is not None else exc, cluster=False)
                except (RayActorError, RayError) as exc:
                    self._fail(exc, cluster=True)
                except BaseException as exc:  # noqa: BLE001 - e.g. the cache failed; reported
                    self._fail(exc, cluster=False)
            if self.error is not None:
                for ref in flying:
                    ray.cancel(ref, force=False)
                return

    def _fail(self, exc: BaseException, cluster: bool) -> None:
        if self.error is None:
            self.error, self.cluster_failed = exc, cluster


def _actor_class() -> Any:
    import ray

    from .ray_tasks import Embedder

    return ray.remote(Embedder)


def start_actors(n: int, model: str | None, expected: int) -> list[Any]:
    """`n` embedding actors, spread over the nodes, each holding one CPU."""
    from ..search.embedding.base import precision_setting

    cls = _actor_class().options(num_cpus=1, max_restarts=RESTARTS, max_task_retries=RESTARTS,
                                 scheduling_strategy="SPREAD")
    return [cls.remote(model, precision_setting(), expected) for _ in range(max(1, n))]


def stop_actors(actors: list[Any]) -> None:
    import ray

    for a in actors:
        try:
            ray.kill(a, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass


class RayEmbedding:
    """One build's embeddings on the cluster (see the module docstring)."""

    def __init__(self, root: Path, cpus: int, model: str | None = None):
        from ..search.embedding.base import resolve_model

        self.root, self.cpus, self.model = root, cpus, model
        self.model_id = resolve_model(model).model_id
        self.misses: dict[str, str] = {}  # text hash -> embed text, not in the cache
        self.seen: set[str] = set()
        self.looked_up = 0  # chunks offered
        self.cached = 0  # of them, found in the cache
        self.embedded = 0
        self.precision: str | None = None
        self.error: BaseException | None = None
        self.seconds = 0.0  # wall time from start() to the last vector
        self.actors: list[Any] = []
        self._cache: Any = None
        self._dispatch: _Dispatch | None = None
        self._t0 = 0.0
        self._lock = threading.Lock()

    def _open_cache(self) -> Any:
        if self._cache is None:
            from ..search.embedding.cache import EmbeddingCache
            from ..search.store.disk import cache_path

            self._cache = EmbeddingCache(cache_path(self.root))
        return self._cache

    def offer(self, chunks: Iterable[Any]) -> None:
        """New chunks from a parse shard: remember the texts the cache lacks."""
        fresh = {}
        for ch in chunks:
            self.looked_up += 1
            if ch.text_hash not in self.seen:
                self.seen.add(ch.text_hash)
                fresh[ch.text_hash] = ch.embed_text
        if not fresh:
            return
        hits = self._open_cache().get_many(self.model_id, fresh)
        self.cached += len(hits)
        for h, text in fresh.items():
            if h not in hits:
                self.misses[h] = text

    def offer_pending(self, chunker: str) -> None:
        """Chunks the live index generation holds without a vector (an earlier `--no-embed`
        build, an embedding failure): embedded with this build's, before anything is written."""
        from ..search.index.chunk import compose_embed_text
        from ..search.store.disk import INDEX_FORMAT, IndexStore, Meta, open_table

        gen = IndexStore(self.root).current()
        if gen is None:
            return
        meta = Meta.load(gen)
        if (meta.format != INDEX_FORMAT or meta.chunker != chunker or meta.model not in (None, self.model_id)
                or meta.chunks <= meta.vectors):
            return
        db = open_table(gen, readonly=True)
        try:
            rows = db.execute("SELECT text_hash, prefix, text FROM chunks WHERE has_vector = 0").fetchall()
        finally:
            db.close()
        self.offer(_Pending(h, compose_embed_text(p, t)) for h, p, t in rows)

    def start(self) -> None:
        """Create the actors and send them every miss, in groups of similar length."""
        if not self.misses or self._dispatch is not None:
            return
        self._t0 = time.perf_counter()
        order = sorted(self.misses, key=lambda h: len(self.misses[h]))
        groups = [order[i:i + GROUP] for i in range(0, len(order), GROUP)]
        self.actors = start_actors(min(self.cpus, len(groups)), self.model, expected=len(order))
        self._dispatch = _Dispatch(self.actors, self._accept)
        for g in groups:
            self._dispatch.submit(g, [self.misses[h] for h in g])
        self._dispatch.close()
        log.info("embedding %d chunks on %d Ray actors (%d of %d found in the cache)",
                 len(order), len(self.actors), self.cached, self.looked_up)

    def _accept(self, hashes: list[str], vecs: Any, precision: str | None) -> None:
        if len(vecs) != len(hashes):
            raise RuntimeError(f"an embedding actor returned {len(vecs)} vectors for {len(hashes)} texts")
        self._open_cache().put_many(self.model_id, zip(hashes, vecs))
        with self._lock:
            self.embedded += len(hashes)
            self.precision = precision

    def wait(self, tick: Callable[[int], None] = lambda n: None) -> None:
        """Until every miss is embedded (and cached). The cluster's failure raises
        `EngineError`; the model's leaves those chunks to the index stage (pending)."""
        d = self._dispatch
        if d is None:
            return
        shown = 0
        while not d.finished():
            d.join(0.25)
            tick(self.embedded - shown)
            shown = self.embedded
        tick(self.embedded - shown)
        self.seconds = time.perf_counter() - self._t0
        self._dispatch = None
        stop_actors(self.actors)
        self.actors = []
        if d.error is None and self.embedded < len(self.misses):  # never silently short
            d._fail(RuntimeError(f"{self.embedded} of {len(self.misses)} texts came back"), cluster=True)
        if d.error is not None:
            if d.cluster_failed:
                raise EngineError(f"the Ray cluster failed while embedding ({_first_line(d.error)}); "
                                  "the site and the indexes were not touched, and the vectors already "
                                  "made are kept in the embedding cache for the next build")
            self.error = d.error
            log.warning("embedding on the cluster failed (%s); the index stage retries the rest",
                        _first_line(d.error))

    def close(self) -> None:
        if self._dispatch is not None:
            self._dispatch.error = self._dispatch.error or EngineError("build ended")
        stop_actors(self.actors)
        self.actors = []
        if self._cache is not None:
            self._cache.close()
            self._cache = None


class _Pending:
    __slots__ = ("text_hash", "embed_text")

    def __init__(self, text_hash: str, embed_text: str):
        self.text_hash, self.embed_text = text_hash, embed_text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1][:300] if text else type(exc).__name__


class RayPool:
    """The local `EmbeddingPool`'s interface on Ray actors, for the index stage
    (`index_vectors.embedding_pool`): chunks the build's own embedding did not cover,
    such as those an earlier `--no-embed` build left pending."""

    def __init__(self, cpus: int, model: str | None, expected: int):
        self.workers = max(1, min(cpus, -(-expected // GROUP)))
        self.actors = start_actors(self.workers, model, expected)
        self._dispatch: _Dispatch | None = None

    def stream(self, on_result: Callable[[Any, Any, str | None], None]) -> Any:
        self._dispatch = _Dispatch(self.actors, on_result)
        return _Stream(self._dispatch)

    def close(self) -> None:
        if self._dispatch is not None:
            self._dispatch.close()
            self._dispatch.join()
        stop_actors(self.actors)

    def terminate(self) -> None:
        if self._dispatch is not None:
            self._dispatch.error = self._dispatch.error or RuntimeError("terminated")
        stop_actors(self.actors)


class _Stream:
    """`EmbeddingStream`'s surface over a `_Dispatch`; `error` as the index stage expects
    it (an `EmbeddingError`: the chunks stay pending, the build goes on)."""

    def __init__(self, d: _Dispatch):
        self._d = d
        self.submit, self.close, self.finished, self.join = d.submit, d.close, d.finished, d.join

    @property
    def error(self) -> BaseException | None:
        """The model's failure, as the index stage expects it (an `EmbeddingError`: the
        chunks stay pending). The cluster's failure raises `EngineError` instead, so the
        stage discards its generation and the previous indexes stay live."""
        if self._d.error is None:
            return None
        if self._d.cluster_failed:
            raise EngineError(f"the Ray cluster failed while embedding ({_first_line(self._d.error)}); "
                              "the indexes were not touched")
        from ..search.embedding.base import EmbeddingError

        return EmbeddingError(f"Ray: {_first_line(self._d.error)}")

    @property
    def submitted(self) -> int:
        return self._d.submitted
