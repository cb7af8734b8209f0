"""The build's index stage: documents -> a new index generation (BM25 + vectors + table).

Seams:

- `build_indexes(root, docs, embed=True)`: the full build. Diffs `docs` against the live
  generation by content hash and applies only the difference (a rebuild of an unchanged
  corpus writes nothing and embeds nothing).
- `update_indexes(root, changed_docs, removed_paths, embed=True)`: incremental: drop the
  chunks of changed and removed documents, add the changed documents' new chunks. Only
  chunks whose text hash is new are embedded (the embedding cache and the old vectors
  cover the rest). Raises `IndexNeedsRebuild` when there is no compatible generation.
- `purge(root)`: after deletions that must not linger (a claims `forget`): merges the
  Whoosh segments (deleted postings gone), rebuilds the HNSW file from live vectors,
  vacuums the table, drops unreferenced cache entries and removes every old generation.

Embedding never fails a build: when the model cannot load or encode, the chunks stay in
the BM25 index, are recorded as pending (`has_vector = 0`, `docs.pending`, the meta's
`pending_documents`) and the next build or update embeds them.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..model import Document
from .chunk import Chunk, ChunkConfig, chunk_documents, compose_embed_text, token_counter
from .store import INDEX_FORMAT, MAX_PENDING_LISTED, IndexStore, Meta, cache_path, dumps, open_table

log = logging.getLogger("commonplace.search")

EMBED_GROUP = 256  # chunks per encode call (cache is written after each)
EARLY_MAX = 64  # chunks: a job this small starts embedding as soon as it is queued
SMALL_UPDATE = 200  # documents: up to this many changed, a generation shares its base's files


class IndexNeedsRebuild(RuntimeError):
    """No live generation compatible with the current model/chunker: run a full build."""


@dataclass
class IndexReport:
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    changed: int = 0
    removed: int = 0
    chunks_added: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    embeddings_pending: int = 0  # chunks still without a vector
    pending_count: int = 0  # documents with chunks still without a vector
    pending_documents: list[str] = field(default_factory=list)  # changed ones + the first 100
    generation: str | None = None
    model: str | None = None
    precision: str | None = None
    rebuilt: bool = False  # started from an empty generation
    written: bool = False  # a new generation was committed
    seconds: float = 0.0
    # seconds: chunk, lookup (cache), bm25, embed (wall; overlaps bm25 with worker processes), hnsw
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def as_extra(self) -> dict[str, Any]:
        """The counters the build reports in `BuildResult.extra`."""
        out: dict[str, Any] = {
            "chunks": self.chunks,
            "chunks_embedded": self.chunks_embedded,
            "chunks_reused": self.chunks_reused,
            "vectors": self.vectors,
            "embeddings_pending": self.embeddings_pending,
        }
        if self.precision:
            out["embedding_precision"] = self.precision
        if self.warnings:
            out["index_warnings"] = list(self.warnings)
        return out


# --------------------------------------------------------------------------- doc signals

_CURATED = {"core", "person", "project", "concept", "decision", "wiki"}
_CONF_LEVELS = ("high", "medium", "low")


def evidence_class(doc: Document) -> str:
    if doc.is_session:
        return "session"
    if doc.type == "capture" or doc.path.startswith("inbox/"):
        return "capture"
    if doc.status == "superseded" or doc.frontmatter.get("superseded_by"):
        return "superseded"
    if doc.canonical:
        return "canonical"
    if doc.type in {"source", "reference"}:
        return "source"
    if doc.type == "daily":
        return "log"
    if doc.type in _CURATED:
        return "curated"
    return "note"


def confidence(doc: Document, cls: str) -> str:
    v = doc.frontmatter.get("confidence")
    if isinstance(v, str) and v.strip().lower() in _CONF_LEVELS:
        return v.strip().lower()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        x = float(v) / (100.0 if v > 1 else 1.0)
        return "high" if x >= 0.8 else "medium" if x >= 0.5 else "low"
    return {"canonical": "high", "capture": "low", "session": "low", "superseded": "low"}.get(cls, "medium")


def _generated(doc: Document) -> bool:
    fm = doc.frontmatter
    return bool(fm.get("generated")) or str(fm.get("source_kind", "")).lower() in {"generated", "compiled"}


def prior(doc: Document) -> float:
    """Small hybrid-ranking nudges (multiplier - 1).

    Adjacent RRF ranks near the top differ by about 1.6%, so these reorder near-ties
    only: canonical +1%, current (active or core) +0.5%, inbox captures and generated
    pages -2%, superseded -4%.
    """
    p = 0.0
    if doc.canonical:
        p += 0.01
    if doc.status == "active" or doc.type == "core":
        p += 0.005
    if doc.type == "capture" or doc.path.startswith("inbox/"):
        p -= 0.02
    if _generated(doc):
        p -= 0.02
    if doc.status == "superseded" or doc.frontmatter.get("superseded_by"):
        p -= 0.04
    return round(p, 4)


def _doc_row(root: Path, doc: Document) -> tuple:
    cls = evidence_class(doc)
    try:
        st = os.stat(root / doc.path)
        mtime, size = st.st_mtime_ns, st.st_size
    except OSError:
        mtime, size = None, None
    sup = doc.frontmatter.get("superseded_by")
    return (
        doc.path, doc.hash, doc.title, doc.type, doc.status, dumps(doc.tags), doc.sort_date,
        int(doc.canonical), int(doc.is_session), cls, confidence(doc, cls), prior(doc),
        str(sup) if sup else None, dumps(doc.frontmatter), mtime, size, 0,
    )


def _bm25_doc(doc: Document, ch: Chunk, cid: int, first: bool = True) -> Any:
    from .bm25 import ChunkDoc

    words = doc.path[:-3] if doc.path.endswith(".md") else doc.path
    return ChunkDoc(
        cid=cid, path=doc.path, kind="session" if doc.is_session else "durable", type=doc.type,
        status=doc.status or "", tags=doc.tags, date=doc.sort_date or "",
        title=" ; ".join([doc.title, *doc.aliases]), headings=ch.heading, body=ch.text,
        meta=" ".join([words, *doc.tags]), first=first,
    )


# --------------------------------------------------------------------------- progress


def _progress(total: int, label: str, enabled: bool) -> Any:
    class _Null:
        def update(self, n: int) -> None:
            pass

        def __enter__(self) -> "_Null":
            return self

        def __exit__(self, *a: Any) -> None:
            pass

    if not enabled or total <= 0 or not sys.stderr.isatty():
        return _Null()
    import click

    return click.progressbar(length=total, label=label, file=sys.stderr)


# --------------------------------------------------------------------------- core


def _with_text(root: Path, doc: Document) -> Document:
    """Documents restored from a build manifest carry no text: parse the file again."""
    if doc.text:
        return doc
    from ..parse import SkipFile, parse

    try:
        fresh, _ = parse(doc.path, (root / doc.path).read_bytes())
    except (OSError, SkipFile):
        return doc
    return fresh


def _compatible(meta: Meta | None, model_id: str, chunker: str) -> bool:
    return meta is not None and meta.format == INDEX_FORMAT and meta.chunker == chunker and meta.model in (None, model_id)


def build_indexes(root: Path, docs: Sequence[Document], *, embed: bool = True, model: str | None = None,
                  cfg: ChunkConfig = ChunkConfig(), progress: bool = False) -> IndexReport:
    """Full build: bring the index in line with exactly `docs` (diffing by content hash)."""
    return _apply(Path(root), list(docs), [], full=True, embed=embed, model=model, cfg=cfg, progress=progress)


def update_indexes(root: Path, changed: Sequence[Document], removed: Iterable[str] = (), *, embed: bool = True,
                   model: str | None = None, cfg: ChunkConfig = ChunkConfig(), progress: bool = False,
                   defer_merge: bool = False) -> IndexReport:
    """Incremental: re-index `changed` documents (new or edited), drop `removed` paths.

    `defer_merge`: leave merging small BM25 segments to a later `merge_segments()` (a
    live process calls it once the edits pause) unless they pile up, and remove old
    generations in a background thread."""
    return _apply(Path(root), list(changed), list(removed), full=False, embed=embed, model=model, cfg=cfg,
                  progress=progress, defer_merge=defer_merge)


def warm_vectors(root: Path) -> bool:
    """Load the live generation's HNSW index for writing and keep it in memory, so a
    long-running process's first update does not read it (seconds at 10k documents)."""
    from .vectors import VectorIndex

    store = IndexStore(Path(root).resolve())
    with store.write_lock():
        gen = store.current()
        if gen is None:
            return False
        meta = Meta.load(gen)
        path = gen / "vectors.hnsw"
        if not meta.dim or not path.exists():
            return False
        VectorIndex.load(path, meta.dim, deleted=meta.deleted_vectors, writable=True).remember(path)
        return True


def _gc_quietly(store: IndexStore) -> None:
    try:
        store.gc(older_only=True)
    except OSError as exc:  # the next update collects them
        log.debug("collecting old index generations: %s", exc)


def merge_segments(root: Path) -> str | None:
    """Merge the small BM25 segments that incremental updates left (`bm25.tiered_merge`)
    into a new generation, if there are enough of them; the generation's name, or None.
    Old generations are collected either way."""
    from .bm25 import BM25Writer, needs_merge

    store = IndexStore(Path(root).resolve())
    with store.write_lock():
        base = store.current()
        if base is None or not needs_merge(base / "whoosh"):
            store.gc()
            return None
        meta = Meta.load(base)
        gen = store.new_generation(base, share_table=True)
        try:
            BM25Writer(gen / "whoosh", create=False, compound=True).commit(incremental=True)
            meta.generation = gen.name
            meta.save(gen, durable=False)
            store.commit(gen)
        except BaseException:
            store.discard(gen)
            raise
        return gen.name


def _apply(root: Path, docs: list[Document], removed_in: list[str], *, full: bool, embed: bool,
           model: str | None, cfg: ChunkConfig, progress: bool, defer_merge: bool = False) -> IndexReport:
    from .embed import resolve_model

    t0 = time.perf_counter()
    root = root.resolve()
    report = IndexReport()
    ref = resolve_model(model)
    counter = token_counter(model)
    chunker = cfg.identity(counter)
    store = IndexStore(root)
    with store.write_lock():
        base = store.current()
        meta = Meta.load(base) if base is not None else None
        if not _compatible(meta, ref.model_id, chunker):
            if not full:
                raise IndexNeedsRebuild("no compatible search index; run a full `commonplace build`")
            base, meta = None, None
            report.rebuilt = True
        existing: dict[str, str] = {}
        pending_chunks = 0
        if base is not None:
            assert meta is not None
            pending_chunks = meta.chunks - meta.vectors  # chunks without a vector
            db0 = open_table(base, readonly=True)
            if full:
                existing = {r["path"]: r["hash"] for r in db0.execute("SELECT path, hash FROM docs")}
            else:  # only whether the removed paths are indexed matters
                gone = sorted(set(removed_in))
                for i in range(0, len(gone), 500):
                    batch = gone[i : i + 500]
                    existing.update((r["path"], r["hash"]) for r in db0.execute(
                        f"SELECT path, hash FROM docs WHERE path IN ({','.join('?' * len(batch))})", batch))
            db0.close()
        if full:
            wanted = {d.path for d in docs}
            changed = [d for d in docs if existing.get(d.path) != d.hash]
            removed = sorted(p for p in existing if p not in wanted)
        else:
            changed = docs
            changed_paths = {d.path for d in docs}
            removed = sorted({p for p in removed_in if p in existing and p not in changed_paths})
        changed = [_with_text(root, d) for d in changed]
        report.changed, report.removed = len(changed), len(removed)
        if base is not None and not changed and not removed and not (embed and pending_chunks):
            # Nothing to do: report the live generation as it is.
            assert meta is not None
            report.generation = meta.generation
            report.documents, report.chunks, report.vectors = meta.documents, meta.chunks, meta.vectors
            report.embeddings_pending = pending_chunks
            report.pending_documents = list(meta.pending_documents)
            report.pending_count = meta.pending_count
            report.model, report.precision = meta.model, meta.precision
            report.seconds = time.perf_counter() - t0
            return report

        # A small update shares the table, the Whoosh segments and the HNSW file with the
        # base generation and writes deltas (see store.py); a big one rewrites them.
        small = base is not None and len(changed) + len(removed) <= SMALL_UPDATE
        t = time.perf_counter()
        gen = store.new_generation(base, share_table=small and not store.delta_too_big(base))
        report.timings["clone"] = time.perf_counter() - t
        try:
            meta = _write_generation(root, gen, base, meta, changed, removed, embed=embed, model=model, ref=ref,
                                     counter=counter, cfg=cfg, chunker=chunker, report=report, progress=progress,
                                     small=small, defer_merge=defer_merge)
            t = time.perf_counter()
            store.commit(gen, collect=False)
            report.timings["publish"] = time.perf_counter() - t  # fsync the new files, switch CURRENT
        except BaseException:
            store.discard(gen)
            raise
        t = time.perf_counter()
        if defer_merge:  # off the latency path: removing a generation's files takes a while
            import threading

            threading.Thread(target=_gc_quietly, args=(store,), name="commonplace-index-gc", daemon=True).start()
        else:
            store.gc()
        report.timings["gc"] = time.perf_counter() - t
        report.written = True
        report.generation = meta.generation
        report.documents, report.chunks, report.vectors = meta.documents, meta.chunks, meta.vectors
        report.pending_count = meta.pending_count
        report.model = meta.model
        report.precision = report.precision or meta.precision
    report.seconds = time.perf_counter() - t0
    return report


def _write_generation(root: Path, gen: Path, base: Path | None, meta: Meta | None, changed: list[Document],
                      removed: list[str], *, embed: bool, model: str | None, ref: Any, counter: Any,
                      cfg: ChunkConfig, chunker: str, report: IndexReport, progress: bool,
                      small: bool = False, defer_merge: bool = False) -> Meta:
    from .bm25 import BM25Writer

    new_meta = Meta(generation=gen.name, model=ref.model_id, model_location=ref.location, chunker=chunker)
    if meta is not None:
        new_meta.dim, new_meta.precision = meta.dim, meta.precision
        new_meta.next_id = meta.next_id
        new_meta.deleted_vectors = meta.deleted_vectors
        new_meta.hnsw = dict(meta.hnsw)
    db = open_table(gen)
    db.execute("PRAGMA secure_delete = ON")  # deleted text is overwritten, not left in free pages
    # A generation's files are fsynced by `IndexStore.commit`, and an uncommitted one is
    # never read: SQLite's own journal and syncs would only repeat that work.
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    out_paths = sorted(set(removed) | {d.path for d in changed})
    # Counts are carried forward for a small update (counting rows over a table and its
    # delta means scanning both); with chunks left pending by an earlier run and
    # embeddings on, which of them get embedded now is not tracked here: count.
    counted = small and meta is not None and not (embed and meta.chunks > meta.vectors)
    dropped_docs = dropped_chunks = dropped_pending = 0
    was_pending: set[str] = set()

    # 1. Drop the old chunks of changed and removed documents (remember their vectors).
    old_vectors: dict[str, int] = {}  # text hash -> chunk id whose vector can be reused
    dropped_ids: list[int] = []
    for i in range(0, len(out_paths), 500):
        batch = out_paths[i : i + 500]
        marks = ",".join("?" * len(batch))
        for r in db.execute(f"SELECT id, text_hash, has_vector FROM chunks WHERE path IN ({marks})", batch):
            dropped_chunks += 1
            if r["has_vector"]:
                dropped_ids.append(r["id"])
                old_vectors.setdefault(r["text_hash"], r["id"])
            else:
                dropped_pending += 1
        for r in db.execute(f"SELECT path, pending FROM docs WHERE path IN ({marks})", batch):
            dropped_docs += 1
            if r["pending"]:
                was_pending.add(r["path"])
        db.execute(f"DELETE FROM chunks WHERE path IN ({marks})", batch)
        db.execute(f"DELETE FROM docs WHERE path IN ({marks})", batch)

    t = time.perf_counter()
    # 2. Vectors: open the old index and the cache; start embedding workers for a big job.
    vectors = _Vectors(root, gen, db, new_meta, dropped_ids, old_vectors, embed=embed, model=model, ref=ref,
                       report=report, progress=progress)
    vectors.first_new_id = new_meta.next_id
    try:
        vectors.open(expected_new_chunks=6 * len(changed))
    except BaseException:
        vectors.abort()
        raise
    report.timings["lookup"] = time.perf_counter() - t
    t = time.perf_counter()

    # 3. Chunk the changed documents, insert them, and hand their chunks to the BM25 writer
    #    and the vectors as they come (no whole-corpus lists in memory).
    writer = BM25Writer(gen / "whoosh", create=base is None, bulk=len(changed) > 200, compound=small)
    next_id = new_meta.next_id
    pending_rows: list[tuple[int, str, str, str]] = []
    t_bm25 = 0.0
    try:
        if base is not None:
            writer.delete_paths(out_paths)
        with _progress(len(changed), "Indexing", progress) as bar:
            for d, chunks in chunk_documents(changed, counter, cfg):
                db.execute("INSERT INTO docs VALUES (" + ",".join("?" * 17) + ")", _doc_row(root, d))
                rows = []
                bm25_docs = []
                for ch in chunks:
                    cid = next_id
                    next_id += 1
                    rows.append((cid, d.path, ch.ordinal, ch.start_line, ch.end_line, ch.heading, ch.text,
                                 ch.text_hash, ch.prefix, 0))
                    bm25_docs.append(_bm25_doc(d, ch, cid, first=ch.ordinal == 0))
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
        new_meta.next_id = next_id
        report.timings["chunk"] = time.perf_counter() - t - t_bm25
        t = time.perf_counter()
        # 4. BM25: commit (segments are written now).
        writer.commit(incremental=small, defer_merge=defer_merge)
    except BaseException:
        writer.cancel()
        vectors.abort()
        raise
    t = t - t_bm25
    report.timings["bm25"] = time.perf_counter() - t
    # 5. Vectors, second phase: finish embedding, update and save the HNSW index.
    try:
        vectors.finish()
    except BaseException:
        vectors.abort()
        raise

    # 6. Counts and pending documents.
    if counted:
        assert meta is not None
        _carry_counts(db, meta, new_meta, changed, removed, dropped_docs, dropped_chunks, dropped_pending,
                      was_pending, report)
        db.commit()
        db.close()
        new_meta.built_at = time.time()
        new_meta.save(gen, durable=False)
        return new_meta
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
    db.commit()
    db.close()
    new_meta.built_at = time.time()
    new_meta.save(gen, durable=False)
    return new_meta


def _in_batches(db: Any, sql: str, values: list[str]) -> Iterator[Any]:
    """Rows of `sql` (with one `{marks}` placeholder list) over `values` in batches."""
    for i in range(0, len(values), 500):
        batch = values[i : i + 500]
        yield from db.execute(sql.format(marks=",".join("?" * len(batch))), batch)


def _carry_counts(db: Any, meta: Meta, new_meta: Meta, changed: list[Document], removed: list[str],
                  dropped_docs: int, dropped_chunks: int, dropped_pending: int, was_pending: set[str],
                  report: IndexReport) -> None:
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
    new_meta.documents = meta.documents - dropped_docs + added_docs
    new_meta.chunks = meta.chunks - dropped_chunks + added_chunks
    pending_chunks = (meta.chunks - meta.vectors) - dropped_pending + added_pending
    new_meta.vectors = new_meta.chunks - pending_chunks
    new_meta.pending_count = meta.pending_count - len(was_pending) + len(pending_now)
    listed = set(meta.pending_documents)
    if len(listed) >= MAX_PENDING_LISTED and listed & (was_pending - pending_now):
        # one of the listed ones left and the list was full: the next one is unknown
        new_meta.pending_documents = [r[0] for r in db.execute(
            f"SELECT path FROM docs WHERE pending = 1 ORDER BY path LIMIT {MAX_PENDING_LISTED}")]
    else:
        listed = (listed - set(removed) - {d.path for d in changed}) | pending_now
        new_meta.pending_documents = sorted(listed)[:MAX_PENDING_LISTED]
    report.pending_documents = sorted(pending_now | set(new_meta.pending_documents))
    report.embeddings_pending = pending_chunks


def _embed_texts(db: Any, ids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        batch = ids[i : i + 500]
        q = f"SELECT id, prefix, text FROM chunks WHERE id IN ({','.join('?' * len(batch))})"
        for r in db.execute(q, batch):
            out[r["id"]] = compose_embed_text(r["prefix"], r["text"])
    return out


class _Vectors:
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
                 report: IndexReport, progress: bool):
        import threading

        self.root, self.gen, self.db, self.meta = root, gen, db, meta
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
        from .embed import EmbeddingCache
        from .vectors import VectorIndex

        vec_path = self.gen / "vectors.hnsw"
        if self.meta.dim and vec_path.exists():
            self.index = VectorIndex.load(vec_path, self.meta.dim, deleted=self.meta.deleted_vectors, writable=True)
        self.cache = EmbeddingCache(cache_path(self.root))
        self.expected = expected_new_chunks
        if self.embed:  # chunks earlier runs could not embed (failures, --no-embed builds)
            rows = [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
                "SELECT id, text_hash, prefix, text FROM chunks WHERE has_vector = 0 AND id < ?",
                [self.first_new_id])]
            self.expected += len(rows)
            for i in range(0, len(rows), 2000):
                self.add(rows[i : i + 2000])

    def _maybe_start_workers(self) -> None:
        """Worker processes for a big job, started once real work shows up (a rebuild
        served from the cache never starts them); they load the model while chunking and
        the BM25 index proceed, then embed groups as they are queued."""
        from .embed import EmbeddingPool, pool_allowed

        expected = max(self.expected, len(self.queued))
        if self._pool_tried or len(self.queued) < 200 or not pool_allowed(expected):
            return
        self._pool_tried = True
        try:
            self._pool = EmbeddingPool(self.model, expected=expected)
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
        from .embed import get_embedder, precision_label

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

        from .embed import EmbeddingError

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
        finally:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            if self.cache is not None:
                self.cache.close()
                self.cache = None
        self._write_index()

    def _embed_rest(self) -> None:
        from .embed import get_embedder, precision_label

        report = self.report
        with _progress(len(self.queued), "Embedding", self.progress) as bar:
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

        from .vectors import VectorIndex

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
                index = _compact(index, db)
            index.save(self.gen / "vectors.hnsw")
            meta.deleted_vectors = index.deleted
            meta.hnsw = {"M": int(index.index.M), "ef_construction": int(index.index.ef_construction), "max_elements": int(index.index.max_elements)}
        self.report.timings["hnsw"] = time.perf_counter() - t0


def _compact(index: Any, db: Any) -> Any:
    from .vectors import VectorIndex

    live = [r[0] for r in db.execute("SELECT id FROM chunks WHERE has_vector = 1 ORDER BY id")]
    fresh = VectorIndex(index.dim)
    if live:
        fresh.index.resize_index(max(1024, len(live) + len(live) // 2))
        for i in range(0, len(live), 4096):
            batch = live[i : i + 4096]
            fresh.add(batch, index.get(batch))
    return fresh


def purge(root: Path, model: str | None = None) -> dict[str, Any]:
    """Make deleted text physically disappear from every index artifact (see module doc)."""
    from .bm25 import BM25Writer
    from .embed import EmbeddingCache
    from .vectors import VectorIndex

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
                fresh = _compact(old, db)
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


purge_indexes = purge  # `run_index_stage` has a `purge` flag


def run_index_stage(root: Path, docs: Sequence[Document], *, embed: bool = True, progress: bool = False,
                    purge: bool = False, stages: dict[str, float] | None = None) -> dict[str, Any]:
    """What `build()` calls: full build of the indexes, counters for `BuildResult.extra`.

    `purge=True` (the claims stage saw newly forgotten claims) also runs `purge()`, so
    the forgotten text leaves the Whoosh segments, the HNSW file, the table and the cache.
    `stages` (the build's stage timings) receives `index.chunk`, `index.lookup`, `index.bm25`,
    `index.embed` (wall time; with worker processes it overlaps `index.bm25`) and `index.hnsw`.
    """
    report = build_indexes(root, docs, embed=embed, progress=progress)
    if stages is not None:
        stages.update({f"index.{k}": v for k, v in report.timings.items()})
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    extra = report.as_extra()
    if purge:
        extra["index_purged"] = bool(purge_indexes(root)["generation"])
    return extra


def report_json(report: IndexReport) -> str:
    return json.dumps(report.__dict__, indent=2, sort_keys=True)
