"""The build's index stage: documents -> a new index generation (BM25 + vectors + table).

Seams:

- `build_indexes(root, docs, embed=True)`: the full build. Diffs `docs` against the live
  generation by content hash and applies only the difference (a rebuild of an unchanged
  corpus writes nothing and embeds nothing).
- `update_indexes(root, changed_docs, removed_paths, embed=True)`: incremental: drop the
  chunks of changed and removed documents, add the changed documents' new chunks. Only
  chunks whose text hash is new are embedded (the embedding cache and the old vectors
  cover the rest). Raises `IndexNeedsRebuild` when there is no compatible generation.
- `purge(root)` (`index_purge`): after deletions that must not linger (a claims `forget`),
  deleted text physically disappears from every index artifact.

Embedding never fails a build: when the model cannot load or encode, the chunks stay in
the BM25 index, are recorded as pending (`has_vector = 0`, `docs.pending`, the meta's
`pending_documents`) and the next build or update embeds them.

Writing a generation (`_write_generation`) takes six steps, each in a module of its own:
1. drop the changed and removed documents' rows (`index_counts.drop_documents`);
2. open the vectors: old HNSW index, cache, pending chunks (`index_vectors.VectorUpdate`);
3. chunk and insert the changed documents, feeding BM25 and vectors (`index_chunks`);
4. commit the BM25 segments (`bm25_write.BM25Writer`);
5. finish the vectors: embed, update and save the HNSW file (`index_vectors`);
6. counts and pending documents (`index_counts`).
Row contents and ranking signals are in `index_rows`; the report type in `index_report`.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from ...model import Document
from .chunk import ChunkConfig, token_counter
from .chunks import add_documents
from .counts import carry_counts, count_generation, drop_documents
from .purge import purge
from .report import IndexNeedsRebuild, IndexReport
from .vectors import VectorUpdate
from ..store.disk import INDEX_FORMAT, IndexStore, Meta, open_table

__all__ = [
    "IndexNeedsRebuild", "IndexReport", "build_indexes", "fill_from_cache", "merge_segments", "purge",
    "run_embed_stage", "run_index_stage", "update_indexes", "warm_or_rebuild_vectors", "warm_vectors",
]

log = logging.getLogger("commonplace.search")

SMALL_UPDATE = 200  # documents: up to this many changed, a generation shares its base's files
PENDING_IN_DELTA = 1000  # chunks: more pending vectors than this and the table is copied


# --------------------------------------------------------------------------- core


def _with_text(root: Path, doc: Document) -> Document:
    """Documents restored from a build manifest carry no text: parse the file again."""
    if doc.text:
        return doc
    from ...markdown.parse import SkipFile, parse

    try:
        fresh, _ = parse(doc.path, (root / doc.path).read_bytes())
    except (OSError, SkipFile):
        return doc
    return fresh


def _compatible(meta: Meta | None, model_id: str, chunker: str) -> bool:
    return meta is not None and meta.format == INDEX_FORMAT and meta.chunker == chunker and meta.model in (None, model_id)


def build_indexes(root: Path, docs: Sequence[Document], *, embed: bool = True, model: str | None = None,
                  cfg: ChunkConfig = ChunkConfig(), progress: bool = False) -> IndexReport:
    """Full build: bring the index in line with exactly `docs` (diffing by content hash).
    An index that cannot be read is rebuilt from nothing, with a warning (`recover`)."""
    from ..store.recover import record, unreadable

    try:
        return _apply(Path(root), list(docs), [], full=True, embed=embed, model=model, cfg=cfg, progress=progress)
    except Exception as exc:
        if not unreadable(exc):
            raise
        record("the search index", exc)
    return _apply(Path(root), list(docs), [], full=True, embed=embed, model=model, cfg=cfg, progress=progress,
                  fresh=True)


def rebuild_indexes(root: Path, docs: Sequence[Document], why: BaseException, *, embed: bool = True) -> IndexReport:
    """The index built afresh into a new generation, after `why` showed the live one cannot
    be read (a search over a truncated segment or HNSW file)."""
    from ..store.recover import record

    record("the search index", why)
    return _apply(Path(root), list(docs), [], full=True, embed=embed, model=None, cfg=ChunkConfig(), progress=False,
                  fresh=True)


def fill_from_cache(root: Path, model: str | None = None) -> IndexReport:
    """Give the live generation's pending chunks the vectors the embedding cache now holds
    (a `index_fill.VectorFiller` embeds them into the cache first, outside the lock); embeds
    nothing itself, so the index lock is held for the table and HNSW writes only."""
    return _apply(Path(root), [], [], full=False, embed=True, model=model, cfg=ChunkConfig(), progress=False,
                  pending="cache")


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
    from ..store.vectors import VectorIndex

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


def warm_or_rebuild_vectors(root: Path, docs: Sequence[Document], *, embed: bool) -> bool:
    """`warm_vectors`, and when the HNSW file (or its delta) cannot be read, the index built
    afresh with a warning (`recover`): vectors come back from the embedding cache, and with
    `embed` False the chunks it lacks stay pending for a `index_fill.VectorFiller`."""
    from ..store.recover import unreadable

    try:
        return warm_vectors(root)
    except Exception as exc:
        if not unreadable(exc):
            raise
        rebuild_indexes(root, docs, exc, embed=embed)
    return warm_vectors(root)


def _gc_quietly(store: IndexStore) -> None:
    try:
        store.gc(older_only=True)
    except OSError as exc:  # the next update collects them
        log.debug("collecting old index generations: %s", exc)


def merge_segments(root: Path) -> str | None:
    """Merge the small BM25 segments that incremental updates left (`bm25_write.tiered_merge`'s
    tiers) into a new generation, if there are enough of them; the generation's name, or
    None. Old generations are collected either way. See `bm25_merge` (a live process runs
    it in the background: `bm25_merge.BackgroundMerger`)."""
    from .bm25_merge import merge

    return merge(root)["generation"]


def _apply(root: Path, docs: list[Document], removed_in: list[str], *, full: bool, embed: bool,
           model: str | None, cfg: ChunkConfig, progress: bool, defer_merge: bool = False,
           pending: str = "embed", fresh: bool = False) -> IndexReport:
    """`pending`: what to do with chunks earlier runs left without a vector: "embed" them,
    take them from the "cache" only, or "skip" them. While a `VectorFiller` works on this
    corpus, "embed" means "skip": a write must not wait for the whole backlog. `fresh`:
    ignore the live generation (it cannot be read) and build a new one from nothing."""
    from ..embedding.base import resolve_model
    from .filling import filling

    t0 = time.perf_counter()
    root = root.resolve()
    report = IndexReport()
    ref = resolve_model(model)
    counter = token_counter(model)
    chunker = cfg.identity(counter)
    store = IndexStore(root)
    if pending == "embed" and filling(root):
        pending = "skip"
    with store.write_lock():
        base = None if fresh else store.current()  # fresh: the live generation is unreadable
        meta = Meta.load(base) if base is not None else None
        if fresh or not _compatible(meta, ref.model_id, chunker):
            if not full:
                raise IndexNeedsRebuild("no compatible search index; run a full `commonplace build`")
            base, meta = None, None
            report.rebuilt = True
        existing: dict[str, str] = {}
        pending_chunks = 0
        if base is not None:
            assert meta is not None
            pending_chunks = meta.chunks - meta.vectors  # chunks without a vector
            if full and (base / "whoosh").is_dir():
                # A build with nothing to change opens no Whoosh file: check here that the
                # schema loads (an index another version wrote), so it is rebuilt (`recover`).
                from ..store.bm25 import open_index

                open_index(base / "whoosh").close()
            if full or removed_in:  # an update that removes nothing need not open the table (8 ms)
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
        if base is not None and not changed and not removed and not (embed and pending_chunks and pending != "skip"):
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
        # Vectors for many pending chunks rewrite those rows: a table copy, not a delta.
        backlog = embed and pending != "skip" and pending_chunks > PENDING_IN_DELTA
        t = time.perf_counter()
        gen = store.new_generation(base, share_table=small and not backlog and not store.delta_too_big(base))
        report.timings["clone"] = time.perf_counter() - t
        try:
            meta = _write_generation(root, gen, base, meta, changed, removed, embed=embed, model=model, ref=ref,
                                     counter=counter, cfg=cfg, chunker=chunker, report=report, progress=progress,
                                     small=small, defer_merge=defer_merge, pending=pending)
            t = time.perf_counter()
            store.commit(gen, collect=False)
            report.timings["publish"] = time.perf_counter() - t  # fsync the new files, switch CURRENT
        except BaseException:
            store.discard(gen)
            raise
        t = time.perf_counter()
        if defer_merge:  # off the latency path: removing a generation's files takes a while
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
                      small: bool = False, defer_merge: bool = False, pending: str = "embed") -> Meta:
    from .bm25_write import BM25Writer

    new_meta = Meta(generation=gen.name, model=ref.model_id, model_location=ref.loads_as, chunker=chunker)
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

    # 1. Drop the old chunks of changed and removed documents (remember their vectors).
    dropped = drop_documents(db, out_paths)

    t = time.perf_counter()
    # 2. Vectors: open the old index and the cache; start embedding workers for a big job.
    vectors = VectorUpdate(root, gen, db, new_meta, dropped.vector_ids, dropped.old_vectors, embed=embed,
                           model=model, ref=ref, report=report, progress=progress, pending=pending)
    vectors.first_new_id = new_meta.next_id
    try:
        vectors.open(expected_new_chunks=6 * len(changed))
    except BaseException:
        vectors.abort()
        raise
    report.timings["lookup"] = time.perf_counter() - t
    t = time.perf_counter()

    # 3. Chunk the changed documents, insert them, feed the BM25 writer and the vectors.
    writer = BM25Writer(gen / "whoosh", create=base is None, bulk=len(changed) > 200, compound=small)
    try:
        if base is not None:
            writer.delete_paths(out_paths)
        new_meta.next_id, t_bm25 = add_documents(root, db, writer, vectors, changed, counter, cfg,
                                                 new_meta.next_id, report, progress)
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
        carry_counts(db, meta, new_meta, changed, removed, dropped, report)
    else:
        count_generation(db, new_meta, changed, report)
    db.commit()
    db.close()
    new_meta.built_at = time.time()
    new_meta.save(gen, durable=False)
    return new_meta


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


def run_embed_stage(root: Path, *, progress: bool = False, stages: dict[str, float] | None = None) -> dict[str, Any]:
    """What `build()` calls once the site and BM25 are complete: embed the chunks the live
    generation holds without a vector (cache first) and publish them. Interrupted, it
    leaves that generation as it was; the cache keeps every group already embedded."""
    report = _apply(Path(root), [], [], full=False, embed=True, model=None, cfg=ChunkConfig(), progress=progress)
    if stages is not None:
        stages.update({f"index.{k}": v for k, v in report.timings.items() if k in ("embed", "encode", "hnsw")})
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    extra = report.as_extra()
    extra["chunks_embedded"] = report.chunks_embedded
    return extra


def report_json(report: IndexReport) -> str:
    return json.dumps(report.__dict__, indent=2, sort_keys=True)
