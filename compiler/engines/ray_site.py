"""The runner `SiteState.update` drives in a Ray build: the same `parse` and `render` as
`workers.Pool`, with Ray tasks over shards of the corpus instead of forked workers.

- `parse(files)`: this process reads the files (the cluster need not see the corpus) and
  sends them in shards to `ray_tasks.parse_shard`. Light documents come back; the
  documents with their drafts stay in the object store, where `render` finds them. The
  first parse of a build also chunks the documents there, and the chunks go to the
  embedding (`ray_embed`, cache first) and to the index stage (`ray_build`).
- `render(ctx, docs, meanwhile)`: one `render_shard` task per parse shard holding pages to
  render; then the embedding actors start (once the render tasks are done: an actor holds
  its CPU to the end, and a render task waiting for one would wait forever). Only once every page is rendered and every new chunk embedded does
  anything get written: `meanwhile` (the generated pages), then the pages, shard by shard
  from the object store. Until then a failure, or Ctrl-C, leaves the previous site and
  indexes as they were.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from . import EngineError, ray_guard
from ..model import Document, Warning_
from ..corpus.scan import SourceFile
from ..site.model import title_rule
from ..build.stages import write_page
from ..build.workers import Rendered, _restore

PARSE_SHARD_MAX = 500  # files per parse task at most (a shard is ~1 MB of files and ~0.5 s of work)
PARSE_SHARD_MIN = 16
SHARDS_PER_CPU = 4  # several per CPU, so fast nodes take more shards and all finish together
TASK_RETRIES = 3  # a task whose worker dies runs again, on any node


def _no_progress(label: str, total: int) -> Callable[[int], None]:
    return lambda n: None


def shard_size(n_files: int, cpus: int) -> int:
    return max(PARSE_SHARD_MIN, min(PARSE_SHARD_MAX, -(-n_files // max(1, cpus * SHARDS_PER_CPU))))


def _read(f: SourceFile) -> tuple[str, bytes | None, tuple[int, str] | None]:
    try:
        return f.path, f.abspath.read_bytes(), None
    except OSError as exc:
        return f.path, None, (exc.errno or 5, exc.strerror or str(exc))


class RayRunner:
    progress: Callable[[str, int], Callable[[int], None]] = staticmethod(_no_progress)

    def __init__(self, engine: Any):
        import ray

        from .ray_tasks import parse_shard, render_shard

        self.engine = engine
        self.n = engine.cluster.cpus
        opts = {"max_retries": TASK_RETRIES, "num_returns": 2, "scheduling_strategy": "SPREAD"}
        self._parse = ray.remote(parse_shard).options(**opts)
        self._render = ray.remote(render_shard).options(**opts)
        self.owner: dict[str, Any] = {}  # document path -> object ref of the shard holding it
        self.parses = 0

    def __enter__(self) -> "RayRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.owner.clear()  # the held documents leave the object store

    # -- parsing
    def parse(self, files: list[SourceFile]) -> list[tuple[Document | None, list[Warning_]]]:
        import ray

        engine = self.engine
        chunking = engine.chunking if self.parses == 0 else None  # re-parsed pages are unchanged
        self.parses += 1
        if not files:
            return []
        tick = self.progress("Parsing", len(files))
        size = shard_size(len(files), self.n)
        shards = [files[i:i + size] for i in range(0, len(files), size)]
        t0 = time.perf_counter()
        titles = title_rule(engine.root, fresh=True)  # the nodes get the rule, not the settings
        refs = []
        for shard in shards:
            refs.append(self._parse.remote([_read(f) for f in shard], chunking, titles))
        engine.timings["read_submit"] = engine.timings.get("read_submit", 0.0) + time.perf_counter() - t0
        index = {r[0]: i for i, r in enumerate(refs)}
        parts: list[Any] = [None] * len(shards)
        pending = [r[0] for r in refs]
        while pending:
            done, pending = engine.wait(pending, "parsing")
            for ref in done:
                i = index[ref]
                out, chunks = engine.get(ref, "parsing")
                t = time.perf_counter()
                for doc, _ in out:
                    if doc is not None:
                        _restore(doc)
                        self.owner[doc.path] = refs[i][1]
                if chunks is not None:
                    engine.take_chunks(out, chunks)
                engine.timings["gather"] = engine.timings.get("gather", 0.0) + time.perf_counter() - t
                parts[i] = out
                tick(len(out))
        return [item for part in parts for item in part]

    # -- rendering
    def render(self, ctx: Any, docs: list[Document], meanwhile: Callable[[], None] | None = None,
               take: Callable[[list[Rendered]], None] | None = None) -> list[Rendered]:
        """As `workers.Pool.render`; `take` gets every page at once, after they are written."""
        import ray

        engine = self.engine
        jobs: dict[Any, list[tuple[str, list[tuple[str | None, tuple[str, ...]]]]]] = {}
        for d in docs:
            held = self.owner.pop(d.path)
            jobs.setdefault(held, []).append((d.path, [(l.resolved, l.candidates) for l in d.links]))
        tick = self.progress("Rendering", len(docs))
        box = [ray.put(ctx.site)] if jobs else []
        refs = [self._render.remote(held, j, box) for held, j in jobs.items()]
        metas: dict[Any, list[Rendered]] = {}
        pending = [r[0] for r in refs]
        while pending:
            done, pending = engine.wait(pending, "rendering")
            for ref in done:
                metas[ref] = engine.get(ref, "rendering")
                tick(len(metas[ref]))
        # The actors start only now: each holds a CPU until the last vector, and a render
        # task waiting for a CPU while this process waits for the render would never end.
        engine.embedding_start()
        engine.embedding_wait(self.progress)
        # The pages' bytes come to this node's object store before the first write, so
        # another node lost from here on cannot leave the site half written. This node's
        # own loss still can (Ray ends this process): ray_guard says so.
        if refs:
            engine.fetch([r[1] for r in refs], "fetching pages")
        # Every page is rendered and every new chunk embedded: only now is anything written.
        ray_guard.mark("writing")
        if meanwhile is not None:
            meanwhile()
        t0 = time.perf_counter()
        out: dict[str, Rendered] = {}
        root = Path(ctx.out)
        for meta_ref, page_ref in refs:
            pages = engine.get(page_ref, "fetching pages")
            for r, data in zip(metas[meta_ref], pages, strict=True):
                r.written = write_page(ctx.site, root, r, data)
                out[r.path] = r
        engine.timings["write_pages"] = time.perf_counter() - t0
        ray_guard.mark("written")
        if len(out) != len(docs):
            raise EngineError("the cluster returned fewer pages than were sent")  # never silently short
        result = [out[d.path] for d in docs]
        if take is not None:
            take(result)
        return result
