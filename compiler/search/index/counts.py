"""Steps 1 and 6 of writing a generation: the table's bookkeeping around the new chunks.

Step 1 (`drop_documents`) deletes the rows of changed and removed documents, remembering
their vectors for reuse and what they counted. Step 6 sets the generation's counts and
pending documents: counted over the table (`count_generation`), or, for a small update,
carried forward from the base and adjusted by what steps 1-5 did (`carry_counts`, the
same numbers without scanning a table and its delta).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from ...model import Document
from .report import IndexReport
from ..store.disk import MAX_PENDING_LISTED, Meta


@dataclass
class Dropped:
    """What step 1 removed."""

    docs: int = 0
    chunks: int = 0
    pending: int = 0  # chunks without a vector
    was_pending: set[str] = field(default_factory=set)  # documents that were pending
    vector_ids: list[int] = field(default_factory=list)  # chunk ids whose vectors go
    old_vectors: dict[str, int] = field(default_factory=dict)  # text hash -> a chunk id whose vector can be reused


def drop_documents(db: Any, out_paths: list[str]) -> Dropped:
    """Step 1: drop the old chunks and rows of changed and removed documents."""
    dropped = Dropped()
    old_vectors = dropped.old_vectors
    for i in range(0, len(out_paths), 500):
        batch = out_paths[i : i + 500]
        marks = ",".join("?" * len(batch))
        for r in db.execute(f"SELECT id, text_hash, has_vector FROM chunks WHERE path IN ({marks})", batch):
            dropped.chunks += 1
            if r["has_vector"]:
                dropped.vector_ids.append(r["id"])
                old_vectors.setdefault(r["text_hash"], r["id"])
            else:
                dropped.pending += 1
        for r in db.execute(f"SELECT path, pending FROM docs WHERE path IN ({marks})", batch):
            dropped.docs += 1
            if r["pending"]:
                dropped.was_pending.add(r["path"])
        db.execute(f"DELETE FROM chunks WHERE path IN ({marks})", batch)
        db.execute(f"DELETE FROM docs WHERE path IN ({marks})", batch)
    return dropped


def count_generation(db: Any, new_meta: Meta, changed: list[Document], report: IndexReport) -> None:
    """Step 6, counted: documents, chunks, vectors and pending documents from the table."""
    new_meta.documents = db.execute("SELECT count(*) FROM docs").fetchone()[0]
    new_meta.chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    pending_paths = {r[0] for r in db.execute("SELECT DISTINCT path FROM chunks WHERE has_vector = 0")}
    new_meta.vectors = new_meta.chunks - db.execute("SELECT count(*) FROM chunks WHERE has_vector = 0").fetchone()[0]
    was_pending = {r[0] for r in db.execute("SELECT path FROM docs WHERE pending = 1")}
    for flag, paths in ((0, sorted(was_pending - pending_paths)), (1, sorted(pending_paths - was_pending))):
        for i in range(0, len(paths), 500):
            batch = paths[i : i + 500]
            db.execute(f"UPDATE docs SET pending = {flag} WHERE path IN ({','.join('?' * len(batch))})", batch)
    new_meta.pending_count = len(pending_paths)
    new_meta.pending_documents = [r[0] for r in db.execute(
        f"SELECT path FROM docs WHERE pending = 1 ORDER BY path LIMIT {MAX_PENDING_LISTED}")]
    # The report lists every changed document left pending (callers check their own).
    changed_pending = set()
    changed_paths = [d.path for d in changed]
    for i in range(0, len(changed_paths), 500):
        batch = changed_paths[i : i + 500]
        changed_pending.update(r[0] for r in db.execute(
            f"SELECT path FROM docs WHERE pending = 1 AND path IN ({','.join('?' * len(batch))})", batch))
    report.pending_documents = sorted(changed_pending | set(new_meta.pending_documents))
    report.embeddings_pending = new_meta.chunks - new_meta.vectors


def _in_batches(db: Any, sql: str, values: list[str]) -> Iterator[Any]:
    """Rows of `sql` (with one `{marks}` placeholder list) over `values` in batches."""
    for i in range(0, len(values), 500):
        batch = values[i : i + 500]
        yield from db.execute(sql.format(marks=",".join("?" * len(batch))), batch)


def carry_counts(db: Any, meta: Meta, new_meta: Meta, changed: list[Document], removed: list[str],
                 dropped: Dropped, report: IndexReport) -> None:
    """Step 6 of a small update: the base's counts and pending list, adjusted by what
    this update dropped and added (the same numbers a full count gives)."""
    paths = sorted(d.path for d in changed)
    added_docs = sum(1 for _ in _in_batches(db, "SELECT path FROM docs WHERE path IN ({marks})", paths))
    added_chunks = 0
    added_pending = 0
    pending_now: set[str] = set()
    for r in _in_batches(db, "SELECT path, has_vector FROM chunks WHERE path IN ({marks})", paths):
        added_chunks += 1
        if not r[1]:
            added_pending += 1
            pending_now.add(r[0])
    new_pending = sorted(pending_now)
    for i in range(0, len(new_pending), 500):
        batch = new_pending[i : i + 500]
        db.execute(f"UPDATE docs SET pending = 1 WHERE path IN ({','.join('?' * len(batch))})", batch)
    new_meta.documents = meta.documents - dropped.docs + added_docs
    new_meta.chunks = meta.chunks - dropped.chunks + added_chunks
    pending_chunks = (meta.chunks - meta.vectors) - dropped.pending + added_pending
    new_meta.vectors = new_meta.chunks - pending_chunks
    new_meta.pending_count = meta.pending_count - len(dropped.was_pending) + len(pending_now)
    listed = set(meta.pending_documents)
    if len(listed) >= MAX_PENDING_LISTED and listed & (dropped.was_pending - pending_now):
        # one of the listed ones left and the list was full: the next one is unknown
        new_meta.pending_documents = [r[0] for r in db.execute(
            f"SELECT path FROM docs WHERE pending = 1 ORDER BY path LIMIT {MAX_PENDING_LISTED}")]
    else:
        listed = (listed - set(removed) - {d.path for d in changed}) | pending_now
        new_meta.pending_documents = sorted(listed)[:MAX_PENDING_LISTED]
    report.pending_documents = sorted(pending_now | set(new_meta.pending_documents))
    report.embeddings_pending = pending_chunks
