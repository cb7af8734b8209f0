"""Step 3 of writing a generation: chunk the changed documents, insert their rows, and
hand their chunks to the BM25 writer and to the vectors as they come (no whole-corpus
lists in memory)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...model import Document
from .chunk import ChunkConfig, chunk_documents
from .report import IndexReport, progress_bar
from .rows import bm25_doc, doc_row
from .vectors import VectorUpdate

# Set by another build engine for the length of a build (`engines.ray_build`): chunks its
# workers already made, `(path, document hash, chunker identity) -> chunks or None`, so
# this process does not chunk those documents again. None: chunk everything here.
chunks_made: Any = None


def add_documents(root: Path, db: Any, writer: Any, vectors: VectorUpdate, changed: list[Document], counter: Any,
                  cfg: ChunkConfig, next_id: int, report: IndexReport, progress: bool) -> tuple[int, float]:
    """Insert `changed` from chunk id `next_id` on; returns the next free chunk id and the
    seconds spent in the BM25 writer."""
    pending_rows: list[tuple[int, str, str, str]] = []
    t_bm25 = 0.0
    with progress_bar(len(changed), "Indexing", progress) as bar:
        for d, chunks in _chunked(changed, counter, cfg):
            db.execute("INSERT INTO docs VALUES (" + ",".join("?" * 17) + ")", doc_row(root, d))
            rows = []
            bm25_docs = []
            for ch in chunks:
                cid = next_id
                next_id += 1
                rows.append((cid, d.path, ch.ordinal, ch.start_line, ch.end_line, ch.heading, ch.text,
                             ch.text_hash, ch.prefix, 0))
                bm25_docs.append(bm25_doc(d, ch, cid, first=ch.ordinal == 0))
                pending_rows.append((cid, ch.text_hash, ch.prefix, ch.text))
            db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            t1 = time.perf_counter()
            writer.add(bm25_docs)
            t_bm25 += time.perf_counter() - t1
            report.chunks_added += len(rows)
            if len(pending_rows) >= 1024:
                vectors.add(pending_rows)
                pending_rows = []
            bar.update(1)
    vectors.add(pending_rows)
    return next_id, t_bm25


def _chunked(docs: list[Document], counter: Any, cfg: ChunkConfig) -> Any:
    """`chunk_documents(docs)`, in the same order, taking what `chunks_made` has."""
    made = chunks_made
    if made is None:
        yield from chunk_documents(docs, counter, cfg)
        return
    identity = cfg.identity(counter)
    known = {d.path: made(d.path, d.hash, identity) for d in docs}
    rest = chunk_documents([d for d in docs if known[d.path] is None], counter, cfg)
    for d in docs:
        got = known[d.path]
        yield (d, got) if got is not None else next(rest)
