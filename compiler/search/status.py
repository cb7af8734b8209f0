"""What `commonplace status` reports about a corpus's search indexes (never imports torch).

Freshness compares the corpus on disk with the indexed documents: a file counts as
changed when its size or mtime differ *and* its content hash differs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path
from typing import Any

from .embedding.base import backend_setting, cpu_has_bf16, cpu_has_vnni, precision_setting, resolve_model
from .read.audit import EVIDENCE_PREFIX
from .store.disk import IndexStore, Meta, cache_path, dir_size, open_table


def _machine_precision() -> str:
    """What this machine would embed with, without loading anything (same label as builds)."""
    from .embedding import openvino_backend

    setting = precision_setting()
    precision = setting if setting != "auto" else ("bf16" if cpu_has_bf16() else "fp32")
    backend = "openvino" if backend_setting() != "torch" and openvino_backend.available() else "torch"
    if backend == "openvino" and setting in ("auto", "int8") and cpu_has_vnni():
        ref = resolve_model(None)
        q8 = openvino_backend.quantized_dir(openvino_backend.export_dir(ref.location, ref.model_id))
        if setting == "int8" or (q8 / "model.xml").is_file():
            precision = "int8+" + ("bf16" if cpu_has_bf16() else "fp32")
    elif setting == "int8":
        precision = "bf16" if cpu_has_bf16() else "fp32"
    return f"{precision} ({backend})"


def freshness(root: Path, db: Any, out: Path | None = None) -> dict[str, Any]:
    from ..corpus.scan import scan

    files, _ = scan(root, out)
    indexed = {r["path"]: (r["hash"], r["mtime_ns"], r["size"]) for r in db.execute("SELECT path, hash, mtime_ns, size FROM docs")}
    on_disk = {f.path: f.abspath for f in files}
    changed, added = [], []
    for path, abspath in on_disk.items():
        known = indexed.get(path)
        if known is None:
            added.append(path)
            continue
        try:
            st = os.stat(abspath)
        except OSError:
            continue
        if st.st_mtime_ns == known[1] and st.st_size == known[2]:
            continue
        try:
            h = "sha256:" + hashlib.sha256(abspath.read_bytes()).hexdigest()
        except OSError:
            continue
        if h != known[0]:
            changed.append(path)
    removed = sorted(p for p in indexed if p not in on_disk)
    return {
        "fresh": not (changed or added or removed),
        "changed": len(changed),
        "added": len(added),
        "removed": len(removed),
        "examples": sorted(changed)[:5] + sorted(added)[:5] + removed[:5],
    }


def index_status(root: Path, out: Path | None = None, check_freshness: bool = True) -> dict[str, Any]:
    root = Path(root).resolve()
    store = IndexStore(root)
    gen = store.current()
    machine = _machine_precision()
    info: dict[str, Any] = {
        "corpus": str(root),
        "index": gen is not None,
        "embedding": {"configured_model": resolve_model(None).model_id, "machine_precision": machine},
    }
    if gen is None:
        info["message"] = "no search index yet: run `commonplace build`"
        return info
    meta = Meta.load(gen)
    db = open_table(gen, readonly=True)
    try:
        pending_chunks = db.execute("SELECT count(*) FROM chunks WHERE has_vector = 0").fetchone()[0]
        info.update({
            "generation": meta.generation,
            "built_at": dt.datetime.fromtimestamp(meta.built_at, dt.timezone.utc).isoformat(timespec="seconds"),
            "documents": meta.documents,
            "chunks": meta.chunks,
            "vectors": meta.vectors,
            "deleted_vectors": meta.deleted_vectors,
            "pending": {
                "documents": meta.pending_count,
                "chunks": pending_chunks,
                "paths": meta.pending_documents[:20],
            },
            "sizes": {
                "whoosh_bytes": dir_size(gen / "whoosh"),
                "vectors_bytes": (gen / "vectors.hnsw").stat().st_size if (gen / "vectors.hnsw").exists() else 0,
                "table_bytes": (gen / "table.sqlite").stat().st_size,
                "embedding_cache_bytes": cache_path(root).stat().st_size if cache_path(root).exists() else 0,
            },
        })
        info["embedding"].update({
            "model": meta.model,
            "dimensions": meta.dim,
            "precision": meta.precision,  # of the most recent embedding run
            "chunker": meta.chunker,
        })
        if check_freshness:
            info["freshness"] = freshness(root, db, out)
    finally:
        db.close()
    return info


def format_status(info: dict[str, Any]) -> str:
    lines = [f"Corpus: {info['corpus']}"]
    emb = info["embedding"]
    if not info["index"]:
        lines.append(info.get("message", "no index"))
        lines.append(f"Embedding model: {emb['configured_model']} (this machine would embed in "
                     f"{emb['machine_precision']})")
        return "\n".join(lines)
    lines.append(f"Index: generation {info['generation']}, built {info['built_at']}")
    lines.append(f"Documents: {info['documents']}  Chunks: {info['chunks']}  Vectors: {info['vectors']}")
    prec = emb.get("precision") or "-"
    lines.append(f"Embedding model: {emb.get('model')} ({emb.get('dimensions') or '?'} dimensions), "
                 f"precision {prec}; this machine: {emb['machine_precision']}")
    p = info["pending"]
    lines.append(f"Pending embeddings: {p['chunks']} chunks in {p['documents']} documents"
                 + (" (run `commonplace build` to embed them)" if p["chunks"] else ""))
    f = info.get("freshness")
    if f is not None:
        if f["fresh"]:
            lines.append("Freshness: up to date")
        else:
            lines.append(f"Freshness: stale ({f['changed']} changed, {f['added']} new, {f['removed']} removed "
                         "since the last build)")
    s = info["sizes"]
    lines.append(f"Sizes: whoosh {s['whoosh_bytes'] / 1e6:.1f} MB, vectors {s['vectors_bytes'] / 1e6:.1f} MB, "
                 f"table {s['table_bytes'] / 1e6:.1f} MB, embedding cache {s['embedding_cache_bytes'] / 1e6:.1f} MB")
    return "\n".join(lines)


_COUNTS: dict[Path, tuple[tuple, dict[str, Any]]] = {}  # root -> (signature of the tables, counts)


def _signature(gen: Path) -> tuple:
    sig: list[Any] = [str(gen)]
    for name in ("table.sqlite", "delta.sqlite", "delta.sqlite-wal", "table.sqlite-wal"):
        try:
            st = os.stat(gen / name)
            sig += [st.st_mtime_ns, st.st_size]
        except OSError:
            sig += [None, None]
    return tuple(sig)


def index_counts(root: Path) -> dict[str, Any]:
    """Durable and session counts from the live index generation ({} without an index).
    Counting 70,000 chunks takes ~50 ms: the answer is kept until the tables change."""
    gen = IndexStore(root).current()
    if gen is None:
        return {}
    sig = _signature(gen)
    cached = _COUNTS.get(root)
    if cached is not None and cached[0] == sig:
        return cached[1]
    counts = _count(gen)
    _COUNTS[root] = (sig, counts)
    return counts


def _count(gen: Path) -> dict[str, Any]:
    db = open_table(gen, readonly=True)
    try:
        docs = dict(db.execute("SELECT is_session, count(*) FROM docs GROUP BY is_session").fetchall())
        chunks = {row[0]: (row[1], row[2] or 0) for row in db.execute(
            "SELECT d.is_session, count(*), sum(c.has_vector) FROM chunks c JOIN docs d ON d.path = c.path "
            "GROUP BY d.is_session")}
        sessions = {r[0]: (r[1], r[2]) for r in db.execute(
            "SELECT path, mtime_ns, size FROM docs WHERE is_session = 1")}
        evidence = db.execute("SELECT count(*) FROM docs WHERE is_session = 0 AND substr(path, 1, ?) = ?",
                              [len(EVIDENCE_PREFIX), EVIDENCE_PREFIX]).fetchone()[0]
    finally:
        db.close()
    return {"files": docs.get(0, 0) - evidence, "chunks": chunks.get(0, (0, 0))[0], "vectors": chunks.get(0, (0, 0))[1],
            "session_docs": docs.get(1, 0), "sessions": sessions}
