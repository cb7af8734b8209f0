"""Decoded postings and field lengths per Whoosh segment, shared by every searcher in the
process (`bm25._FastScorer` reads through it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

# Decoded postings and field lengths per Whoosh segment, shared by every searcher in the
# process. Segments never change once written and a small update adds a segment beside the
# old ones, so after a write a new generation's searcher finds the big segment's arrays
# here instead of decoding them again (each write used to leave every reader cold).
_SEGMENT_CACHE: dict[tuple, Any] = {}
_SEGMENT_CACHE_MAX = 16384  # entries (terms x segments); cleared whole when full
_SEGMENT_CACHE_MAX_BYTES = 96 << 20  # ... or when its arrays pass this (part of the serve memory budget)
_cached_bytes = 0


def _nbytes(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(getattr(v, "nbytes", 0) for v in value)
    return getattr(value, "nbytes", 0)


def segment_identity(directory: Path | None, seg: Any) -> tuple | None:
    """A segment's identity on disk: its file's device, inode, size and mtime (a generation
    shares the file by hard link, so the identity carries over). Not the segment id alone:
    Whoosh draws it from `random`, which a seeded process repeats."""
    if directory is None:
        return None
    base = directory / f"{seg.indexname}_{seg.segid}"
    for suffix in (".seg", ".trm"):  # compound segment, else its terms file
        try:
            st = os.stat(f"{base}{suffix}")
        except OSError:
            continue
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, seg.segid)
    return None


def segment_cached(key: tuple, make: Callable[[], Any]) -> Any:
    if key[0] is None:  # no identity on disk: not shared
        return make()
    global _cached_bytes
    got = _SEGMENT_CACHE.get(key)
    if got is None:
        got = make()
        size = _nbytes(got)
        if len(_SEGMENT_CACHE) >= _SEGMENT_CACHE_MAX or _cached_bytes + size > _SEGMENT_CACHE_MAX_BYTES:
            _SEGMENT_CACHE.clear()
            _cached_bytes = 0
        _SEGMENT_CACHE[key] = got
        _cached_bytes += size
    return got
