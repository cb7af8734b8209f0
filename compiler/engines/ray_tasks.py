"""What runs on the Ray cluster: plain functions and a class, made remote by the driver
(`ray.remote(fn)`), so importing this module needs no Ray.

- `parse_shard`: parse a shard of files the driver read (`stages.parse_page`, the local
  build's own per-document step) and, on a first parse, chunk them for the index. Its
  first result (light documents, chunks) goes to the driver; its second, the documents
  with their drafts, stays in the cluster's object store for `render_shard`, as a local
  worker keeps what it parsed (see `workers`).
- `render_shard`: fill the drafts' links with the driver's resolutions and render each
  page (`stages.page_bytes`). Page metadata goes to the driver at once; the pages' bytes
  stay in the object store until the driver writes them.
- `Embedder`: an actor holding the embedding model, loaded once.

Tasks are pure functions of their arguments, so Ray can retry them on another worker
(or rebuild a lost result from its lineage) and get the same bytes.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from ..build import stages
from ..model import Document, Warning_
from ..corpus.scan import SourceFile
from ..build.workers import Rendered, _light

Parsed = list[tuple[Document | None, list[Warning_]]]


class FileBytes:
    """Stands in for a file's path in a `SourceFile`: `stages.parse_file` reads
    `abspath.read_bytes()`, and here those bytes came from the driver (or the error it
    met reading them, raised again so the warning reads as in a local build)."""

    def __init__(self, data: bytes | None, error: tuple[int, str] | None = None):
        self.data, self.error = data, error

    def read_bytes(self) -> bytes:
        if self.data is None:
            code, message = self.error or (errno.EIO, "unreadable")
            raise OSError(code, message)
        return self.data


def parse_shard(items: list[tuple[str, bytes | None, tuple[int, str] | None]],
                chunking: tuple[str | None, str] | None, titles: str = "heading") -> tuple[tuple[Parsed, dict[str, list[Any]] | None], dict]:
    """Parse (path, bytes, read error) items. Returns ((light documents with warnings,
    chunks by path or None), the full documents by path). `chunking` is (model name,
    chunker identity): the identity this worker's tokenizer gives must be the driver's.
    `titles`: the corpus's `site.titles` rule, read by the driver (a node may not see the
    corpus's settings)."""
    held: dict[str, Document] = {}
    out: Parsed = []
    for path, data, error in items:
        doc, warnings = stages.parse_page(SourceFile(path, FileBytes(data, error)), titles)  # type: ignore[arg-type]
        if doc is None:
            out.append((None, warnings))
            continue
        held[doc.path] = doc
        out.append((_light(doc), warnings))
    chunks = None
    if chunking is not None and held:
        from ..search.index.chunk import ChunkConfig, chunk_documents, token_counter

        model, identity = chunking
        counter = token_counter(model)
        cfg = ChunkConfig()
        if cfg.identity(counter) != identity:
            raise RuntimeError(f"this node chunks as {cfg.identity(counter)}, the driver as {identity}: "
                               "install the same embedding model on every node")
        chunks = {d.path: ch for d, ch in chunk_documents(list(held.values()), counter, cfg)}
    return (out, chunks), held


_CONTEXT: tuple[str, Any] | None = None  # (object id, the site context): fetched once per worker


def _site_context(box: list[Any]) -> Any:
    """The render context is the same for every shard of a build (resolver, graph,
    titles: ~0.1 s to unpickle at 10,000 documents); it comes as an object reference in a
    list, so Ray does not fetch it for every task, and is kept between tasks."""
    global _CONTEXT
    ref = box[0]
    if _CONTEXT is None or _CONTEXT[0] != ref.hex():
        import ray

        _CONTEXT = (ref.hex(), ray.get(ref))
    return _CONTEXT[1]


def render_shard(held: dict[str, Document], jobs: list[tuple[str, list[tuple[str | None, tuple[str, ...]]]]],
                 box: list[Any]) -> tuple[list[Rendered], list[bytes]]:
    """Render `jobs` (path, the resolution of each of its links) from a parse shard."""
    site = _site_context(box)
    metas: list[Rendered] = []
    pages: list[bytes] = []
    for path, resolutions in jobs:
        d = held[path]
        for link, (resolved, candidates) in zip(d.links, resolutions, strict=True):
            link.resolved, link.candidates = resolved, candidates
        rendered, data = stages.page_bytes(site, d)
        metas.append(rendered)
        pages.append(data)
    return metas, pages


class Embedder:
    """The embedding model in a Ray actor: loaded once, then fed batches of texts.

    The model is prepared as the local pool prepares it (`pool._export_once`: the
    OpenVINO export, and the int8 variant for a big job on a CPU with VNNI), so a node
    embeds with the precision this machine would choose for the same job."""

    def __init__(self, model: str | None, precision: str, expected: int):
        os.environ.update({"OMP_NUM_THREADS": "1", "COMMONPLACE_EMBED_THREADS": "1"})
        from ..search.embedding.base import resolve_model
        from ..search.embedding.pool import _export_once
        from ..search.embedding.registry import make_embedder

        _export_once(model, expected)
        self.embedder = make_embedder(resolve_model(model), precision)

    def ready(self) -> str | None:
        """Load the model now (the first batch would otherwise wait for it); its precision."""
        from ..search.embedding.base import precision_label

        self.embedder.encode(["warm up"])
        return precision_label(self.embedder)

    def embed(self, texts: list[str]) -> tuple[Any, str | None]:
        import numpy as np

        from ..search.embedding.base import precision_label

        vecs = np.ascontiguousarray(self.embedder.encode(texts), dtype=np.float32)
        return vecs, precision_label(self.embedder)
