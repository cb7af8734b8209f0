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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..model import Document
from .chunk import Chunk, ChunkConfig, chunk_document, clean_inline, token_counter
from .store import INDEX_FORMAT, IndexStore, Meta, cache_path, dumps, open_table

log = logging.getLogger("commonplace.search")

EMBED_GROUP = 256  # chunks per encode call (cache is written after each)


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
    pending_documents: list[str] = field(default_factory=list)
    generation: str | None = None
    model: str | None = None
    precision: str | None = None
    rebuilt: bool = False  # started from an empty generation
    written: bool = False  # a new generation was committed
    seconds: float = 0.0
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


def _bm25_doc(doc: Document, ch: Chunk, cid: int) -> Any:
    from .bm25 import ChunkDoc

    words = doc.path[:-3] if doc.path.endswith(".md") else doc.path
    return ChunkDoc(
        cid=cid, path=doc.path, kind="session" if doc.is_session else "durable", type=doc.type,
        status=doc.status or "", tags=doc.tags, date=doc.sort_date or "",
        title=" ; ".join([doc.title, *doc.aliases]), headings=ch.heading, body=ch.text,
        meta=" ".join([words, *doc.tags]),
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
                   model: str | None = None, cfg: ChunkConfig = ChunkConfig(), progress: bool = False) -> IndexReport:
    """Incremental: re-index `changed` documents (new or edited), drop `removed` paths."""
    return _apply(Path(root), list(changed), list(removed), full=False, embed=embed, model=model, cfg=cfg,
                  progress=progress)


def _apply(root: Path, docs: list[Document], removed_in: list[str], *, full: bool, embed: bool,
           model: str | None, cfg: ChunkConfig, progress: bool) -> IndexReport:
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
            db0 = open_table(base, readonly=True)
            existing = {r["path"]: r["hash"] for r in db0.execute("SELECT path, hash FROM docs")}
            pending_chunks = db0.execute("SELECT count(*) FROM chunks WHERE has_vector = 0").fetchone()[0]
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
            report.model, report.precision = meta.model, meta.precision
            report.seconds = time.perf_counter() - t0
            return report

        gen = store.new_generation(base)
        try:
            meta = _write_generation(root, gen, base, meta, changed, removed, embed=embed, model=model, ref=ref,
                                     counter=counter, cfg=cfg, chunker=chunker, report=report, progress=progress)
            store.commit(gen)
        except BaseException:
            store.discard(gen)
            raise
        report.written = True
        report.generation = meta.generation
        report.documents, report.chunks, report.vectors = meta.documents, meta.chunks, meta.vectors
        report.pending_documents = list(meta.pending_documents)
        report.model = meta.model
        report.precision = report.precision or meta.precision
    report.seconds = time.perf_counter() - t0
    return report


def _write_generation(root: Path, gen: Path, base: Path | None, meta: Meta | None, changed: list[Document],
                      removed: list[str], *, embed: bool, model: str | None, ref: Any, counter: Any,
                      cfg: ChunkConfig, chunker: str, report: IndexReport, progress: bool) -> Meta:
    from .bm25 import BM25Writer

    new_meta = Meta(generation=gen.name, model=ref.model_id, model_location=ref.location, chunker=chunker)
    if meta is not None:
        new_meta.dim, new_meta.precision = meta.dim, meta.precision
        new_meta.next_id = meta.next_id
        new_meta.deleted_vectors = meta.deleted_vectors
        new_meta.hnsw = dict(meta.hnsw)
    db = open_table(gen)
    db.execute("PRAGMA secure_delete = ON")  # deleted text is overwritten, not left in free pages
    out_paths = sorted(set(removed) | {d.path for d in changed})

    # 1. Drop the old chunks of changed and removed documents (remember their vectors).
    old_vectors: dict[str, int] = {}  # text hash -> chunk id whose vector can be reused
    dropped_ids: list[int] = []
    for i in range(0, len(out_paths), 500):
        batch = out_paths[i : i + 500]
        marks = ",".join("?" * len(batch))
        for r in db.execute(f"SELECT id, text_hash, has_vector FROM chunks WHERE path IN ({marks})", batch):
            if r["has_vector"]:
                dropped_ids.append(r["id"])
                old_vectors.setdefault(r["text_hash"], r["id"])
        db.execute(f"DELETE FROM chunks WHERE path IN ({marks})", batch)
        db.execute(f"DELETE FROM docs WHERE path IN ({marks})", batch)

    # 2. Chunk the changed documents and insert them.
    bm25_docs = []
    next_id = new_meta.next_id
    with _progress(len(changed), "Chunking", progress) as bar:
        for d in changed:
            chunks = chunk_document(d, counter, cfg)
            db.execute("INSERT INTO docs VALUES (" + ",".join("?" * 17) + ")", _doc_row(root, d))
            rows = []
            for ch in chunks:
                cid = next_id
                next_id += 1
                prefix = ch.embed_text[: len(ch.embed_text) - len(clean_inline(ch.text))].rstrip("\n")
                rows.append((cid, d.path, ch.ordinal, ch.start_line, ch.end_line, ch.heading, ch.text,
                             ch.text_hash, prefix, 0))
                bm25_docs.append(_bm25_doc(d, ch, cid))
            db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            report.chunks_added += len(rows)
            bar.update(1)
    new_meta.next_id = next_id

    # 3. BM25: delete by path, add the new chunks, commit.
    writer = BM25Writer(gen / "whoosh", create=base is None, bulk=len(bm25_docs) > 1000)
    try:
        if base is not None:
            writer.delete_paths(out_paths)
        with _progress(len(bm25_docs), "Indexing", progress) as bar:
            for i in range(0, len(bm25_docs), 256):
                writer.add(bm25_docs[i : i + 256])
                bar.update(min(256, len(bm25_docs) - i))
        writer.commit()
    except BaseException:
        writer.cancel()
        raise

    # 4. Vectors for every chunk that has none (new chunks and earlier pending ones).
    _update_vectors(root, gen, db, new_meta, dropped_ids, old_vectors, embed=embed, model=model, ref=ref,
                    report=report, progress=progress)

    # 5. Counts and pending documents.
    new_meta.documents = db.execute("SELECT count(*) FROM docs").fetchone()[0]
    new_meta.chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    new_meta.vectors = db.execute("SELECT count(*) FROM chunks WHERE has_vector = 1").fetchone()[0]
    db.execute("UPDATE docs SET pending = 0")
    db.execute("UPDATE docs SET pending = 1 WHERE path IN (SELECT DISTINCT path FROM chunks WHERE has_vector = 0)")
    new_meta.pending_documents = [r[0] for r in db.execute("SELECT path FROM docs WHERE pending = 1 ORDER BY path")]
    report.embeddings_pending = new_meta.chunks - new_meta.vectors
    db.commit()
    db.close()
    new_meta.built_at = time.time()
    new_meta.save(gen)
    return new_meta


def _embed_texts(db: Any, ids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        batch = ids[i : i + 500]
        q = f"SELECT id, prefix, text FROM chunks WHERE id IN ({','.join('?' * len(batch))})"
        for r in db.execute(q, batch):
            body = clean_inline(r["text"])
            out[r["id"]] = f"{r['prefix']}\n{body}" if r["prefix"] and body else (r["prefix"] or body)
    return out


def _update_vectors(root: Path, gen: Path, db: Any, meta: Meta, dropped_ids: list[int],
                    old_vectors: dict[str, int], *, embed: bool, model: str | None, ref: Any,
                    report: IndexReport, progress: bool) -> None:
    import numpy as np

    from .embed import EmbeddingCache, EmbeddingError, get_embedder
    from .vectors import VectorIndex

    todo = [(r["id"], r["text_hash"]) for r in db.execute("SELECT id, text_hash FROM chunks WHERE has_vector = 0 ORDER BY id")]
    vec_path = gen / "vectors.hnsw"
    index: VectorIndex | None = None
    if meta.dim and vec_path.exists():
        index = VectorIndex.load(vec_path, meta.dim, deleted=meta.deleted_vectors, writable=True)

    found: dict[int, Any] = {}
    cache = EmbeddingCache(cache_path(root))
    try:
        hits = cache.get_many(ref.model_id, (h for _, h in todo)) if todo else {}
        for cid, h in todo:
            v = hits.get(h)
            if v is not None and (meta.dim is None or v.shape[0] == meta.dim):
                found[cid] = v
        # Old vectors of identical text (when the cache was cleared) come from the index.
        if index is not None:
            reuse = [(cid, h, old_vectors[h]) for cid, h in todo if cid not in found and h in old_vectors]
            if reuse:
                got = index.get([old for _, _, old in reuse])
                for (cid, _, _), v in zip(reuse, got):
                    found[cid] = v
                cache.put_many(ref.model_id, ((h, found[cid]) for cid, h, _ in reuse))
        if index is not None and dropped_ids:
            index.remove(dropped_ids)  # after reading any vector we reuse from them
        report.chunks_reused = len(found)
        missing = [cid for cid, _ in todo if cid not in found]
        if missing and embed:
            texts = _embed_texts(db, missing)
            hashes = dict(todo)
            order = sorted(missing, key=lambda c: len(texts[c]))  # similar lengths batch with little padding
            embedder = get_embedder(model)
            with _progress(len(order), "Embedding", progress) as bar:
                try:
                    for i in range(0, len(order), EMBED_GROUP):
                        group = order[i : i + EMBED_GROUP]
                        vecs = np.asarray(embedder.encode([texts[c] for c in group]), dtype=np.float32)
                        if vecs.ndim != 2 or vecs.shape[0] != len(group):
                            raise EmbeddingError(f"encoder returned shape {vecs.shape} for {len(group)} texts")
                        if meta.dim is not None and vecs.shape[1] != meta.dim:
                            raise EmbeddingError(f"encoder dimension {vecs.shape[1]} != index dimension {meta.dim}")
                        for c, v in zip(group, vecs):
                            found[c] = v
                        cache.put_many(ref.model_id, ((hashes[c], found[c]) for c in group))
                        report.chunks_embedded += len(group)
                        meta.dim = int(vecs.shape[1])
                        bar.update(len(group))
                except Exception as exc:  # noqa: BLE001 - never fail a build over embeddings
                    msg = f"embedding failed ({exc}); {len(order) - report.chunks_embedded} chunks left pending"
                    log.warning(msg)
                    report.warnings.append(msg)
            report.precision = getattr(embedder, "precision", None)
            if report.chunks_embedded:
                meta.precision = report.precision
    finally:
        cache.close()

    if found:
        ids = sorted(found)
        mat = np.stack([np.asarray(found[c], dtype=np.float32) for c in ids])
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
        index.save(vec_path)
        meta.deleted_vectors = index.deleted
        meta.hnsw = {"M": 16, "ef_construction": 200, "max_elements": int(index.index.max_elements)}


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
                    purge: bool = False) -> dict[str, Any]:
    """What `build()` calls: full build of the indexes, counters for `BuildResult.extra`.

    `purge=True` (the claims stage saw newly forgotten claims) also runs `purge()`, so
    the forgotten text leaves the Whoosh segments, the HNSW file, the table and the cache.
    """
    report = build_indexes(root, docs, embed=embed, progress=progress)
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    extra = report.as_extra()
    if purge:
        extra["index_purged"] = bool(purge_indexes(root)["generation"])
    return extra


def report_json(report: IndexReport) -> str:
    return json.dumps(report.__dict__, indent=2, sort_keys=True)
