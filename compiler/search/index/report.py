"""What an index run reports (`IndexReport`), the error that asks for a full build, and
the progress bars the index steps draw on a terminal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


def progress_bar(total: int, label: str, enabled: bool, min_items: int = 200) -> Any:
    """A bar on a terminal when the command line asked for progress (`progress.bar`);
    otherwise one that draws nothing."""
    from ... import progress

    return progress.bar(label, total if enabled else 0, min_items)
