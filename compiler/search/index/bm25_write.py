"""Writing the BM25 index: `BM25Writer` applies one batch of changes to a Whoosh index
directory and commits, with a log-structured merge policy for incremental updates
(`tiered_merge`) and `bm25_postings` writing the postings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from whoosh import index

from . import bm25_postings
from ..store.bm25 import ChunkDoc, make_schema, open_index


MERGE_TIERS = (400, 4000, 40000)  # segments below a tier's size count as that tier's
MERGE_FANOUT = 10  # merge a tier's segments once there are more than this many
MERGE_FANOUT_DEFERRED = 30  # ... when merges are normally left to `merge_segments`


def _tiers_to_merge(segments: list[Any], fanout: int) -> list[Any]:
    segments = [s for s in segments if s.doc_count() > 0]
    largest = max(segments, key=lambda s: s.doc_count_all(), default=None)  # never merged here
    for limit in MERGE_TIERS:
        small = [s for s in segments if s.doc_count_all() < limit and s is not largest]
        if len(small) > fanout:
            return small
    return []


def needs_merge(directory: Path) -> bool:
    """Whether `tiered_merge` would merge anything in this index (reads the TOC only)."""
    ix = open_index(directory)
    try:
        return bool(_tiers_to_merge(list(ix._segments()), MERGE_FANOUT))
    finally:
        ix.close()


def tiered_merge(writer: Any, segments: list[Any], fanout: int = MERGE_FANOUT) -> list[Any]:
    """Whoosh merge policy for incremental commits: a log-structured merge.

    Each update adds one small segment. Once more than `MERGE_FANOUT` segments are
    smaller than the lowest tier size, those (only) are merged into one; likewise for
    the next tiers. An edit therefore rewrites at most a few hundred chunks' postings,
    and the segment count stays below about `MERGE_FANOUT` per tier. Segments whose
    documents are all deleted are dropped. (Whoosh's MERGE_SMALL instead merges up to a
    Fibonacci-sized bound that regularly includes the big segments: second-long commits.)
    """
    from whoosh.reading import SegmentReader

    segments = [s for s in segments if s.doc_count() > 0]
    small = _tiers_to_merge(segments, fanout)
    for seg in small:
        reader = SegmentReader(writer.storage, writer.schema, seg)
        writer.add_reader(reader)
        reader.close()
    merged = {id(s) for s in small}
    return [s for s in segments if id(s) not in merged]


class _CachedLengths:
    """A segment's per-document reader whose field lengths are read once per field.

    Writing a segment, Whoosh asks for the document's field length at every posting
    (for block statistics), each a seek and read in the lengths column: 5.8 of 25 s of
    BM25 indexing for 1,500 documents (profiled). Same values, read once."""

    def __init__(self, pdr: Any):
        self._pdr = pdr
        self._lengths: dict[str, list[int]] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int:
        lengths = self._lengths.get(fieldname)
        if lengths is None:
            if default != 0:
                return self._pdr.doc_field_length(docnum, fieldname, default)
            dfl = self._pdr.doc_field_length
            lengths = [dfl(d, fieldname, 0) for d in range(self._pdr.doc_count_all())]
            self._lengths[fieldname] = lengths
        return lengths[docnum]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pdr, name)


def _cache_field_lengths(writer: Any) -> None:
    make = getattr(writer, "per_document_reader", None)
    if make is not None:
        writer.per_document_reader = lambda: _CachedLengths(make())


class BM25Writer:
    """Applies one batch of changes to a Whoosh index directory, then commits."""

    def __init__(self, directory: Path, create: bool, bulk: bool = False, compound: bool = False):
        directory.mkdir(parents=True, exist_ok=True)
        if create or not index.exists_in(str(directory)):
            self.ix = index.create_in(str(directory), make_schema())
        else:
            self.ix = open_index(directory)
        # Big segments as plain files, not one compound file: opening a reader on a
        # compound segment copies each of its parts into memory (Whoosh's BufferFile wraps
        # the mmap in a BytesIO), about 40 ms per reader for the main segment of a
        # 10,000-document corpus, paid by every update (to find the chunks to delete) and
        # every reopen. The small segments of incremental updates are compound (`compound`):
        # one file each to share by hard link and to fsync, and cheap to copy.
        self._w = self.ix.writer(limitmb=256 if bulk else 64, compound=compound)
        if not bm25_postings.install(self._w):  # its flush reads each field's lengths once itself
            _cache_field_lengths(self._w)

    def delete_paths(self, paths: Iterable[str]) -> None:
        for p in paths:
            self._w.delete_by_term("path", p)

    def add(self, docs: Iterable[ChunkDoc]) -> None:
        for d in docs:
            self._w.add_document(**d.fields())

    def commit(self, optimize: bool = False, incremental: bool = False, defer_merge: bool = False) -> None:
        """`incremental`: a small update. Its documents become one new segment and the
        existing segments stay as they are (their files are shared with the previous
        generation), except that tiny segments are merged tier by tier (`tiered_merge`);
        with `defer_merge` only once there are `MERGE_FANOUT_DEFERRED` of them (the
        caller merges later, off the latency path: `index_stage.merge_segments`).
        Otherwise Whoosh's default policy (merge small segments) applies."""
        if incremental and not optimize:
            fanout = MERGE_FANOUT_DEFERRED if defer_merge else MERGE_FANOUT
            self._w.commit(mergetype=lambda w, segs: tiered_merge(w, segs, fanout))
        else:
            self._w.commit(optimize=optimize)
        self.ix.close()

    def cancel(self) -> None:
        try:
            self._w.cancel()
        finally:
            self.ix.close()
