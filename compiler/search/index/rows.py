"""The rows a document contributes to a generation: its `docs` table row, with the
ranking signals search reads back (evidence class, confidence, prior), and the BM25
document of each of its chunks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...model import Document
from .chunk import Chunk
from ..store.disk import dumps


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


def doc_row(root: Path, doc: Document) -> tuple:
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


def bm25_doc(doc: Document, ch: Chunk, cid: int, first: bool = True) -> Any:
    from ..store.bm25 import ChunkDoc

    words = doc.path[:-3] if doc.path.endswith(".md") else doc.path
    return ChunkDoc(
        cid=cid, path=doc.path, kind="session" if doc.is_session else "durable", type=doc.type,
        status=doc.status or "", tags=doc.tags, date=doc.sort_date or "",
        title=" ; ".join([doc.title, *doc.aliases]), headings=ch.heading, body=ch.text,
        meta=" ".join([words, *doc.tags]), first=first,
    )
