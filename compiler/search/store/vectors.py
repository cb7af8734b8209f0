"""The vector index: hnswlib, cosine space, labels = chunk ids (the id map is the table).

- grows with `resize_index` (by half again) before it fills up;
- deletes with `mark_deleted`; when deleted entries pass `COMPACT_RATIO` of the stored
  ones (or on `compact()`), it is rebuilt from the live vectors only, so deleted vectors
  are physically gone from the file;
- queries load the saved file and never write it.

Saving a small change does not rewrite the HNSW file (about 120 MB for 70,000 chunks):
an index loaded from `vectors.hnsw` and changed a little is saved as that file (which a
new generation shares with its base by hard link) plus `vectors.delta`, the vectors added
and the labels removed since the file was written; loading applies the delta. Once the
delta passes `DELTA_MAX` vectors (or a share of the index) the next save writes the file
whole again. A writable index just saved is kept in memory (`_LIVE`), so the next update
in the same process (a server or watcher) starts from it instead of reading the files;
a reader (`refresh`) applies only what changed between two deltas of the same file.

Build settings M=32, ef_construction=400 and query-time ef 400. On the 10,000-document
benchmark corpus (69,600 chunks of templated text, so many near-equal neighbours),
recall@10 against exact search for 200 queries, with insert time on 2 cores (one
insertion order; hnswlib's threaded inserts vary the graph, so recall varies by about
0.005 between builds: 24/300 at ef 400 measured 0.9855 in a full build):

| M / ef_construction | insert | ef 256 | ef 400 | ef 600 |
|---|---:|---:|---:|---:|
| 32 / 400 | 32.3 s | 0.9910 (0.9 ms) | 0.9935 (1.3 ms) | 0.9955 (1.9 ms) |
| 24 / 300 | 20.4 s | 0.9900 (1.0 ms) | 0.9925 (1.4 ms) | 0.9940 (2.3 ms) |
| 32 / 200 | 13.2 s | 0.9780 | 0.9885 | 0.9900 |
| 48 / 150 | 10.1 s | 0.9710 | 0.9780 | 0.9835 |

(M=16/200 with ef 128 gave 0.949.) Query-time ef is cheap (half a millisecond), so it
is set for margin above 0.99; a smaller graph is not worth the recall it risks.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import hnswlib
import numpy as np

M = 32
EF_CONSTRUCTION = 400
EF_SEARCH = 400
COMPACT_RATIO = 0.2
SEED = 100
DELTA_NAME = "vectors.delta"
# Vectors in a delta before the HNSW file is written whole again. Loading replays the
# delta (about 2 ms per vector into a 70,000-vector graph, on one core), so this bounds
# what a fresh reader pays; rewriting the file costs the live writer about a second at
# 10,000 documents, once per ~140 edits (an edit re-adds its document's chunks).
DELTA_MAX = 1000
DELTA_SHARE = 0.25  # ... or this share of the stored ones

_LIVE: dict[tuple, "VectorIndex"] = {}  # file identities -> the writable index saved as them
_LIVE_LOCK = threading.Lock()


def delta_path(path: Path) -> Path:
    return path.with_name(DELTA_NAME)


def _identity(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_delta(path: Path, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            ids = np.asarray(z["ids"], dtype=np.int64)
            vecs = np.asarray(z["vecs"], dtype=np.float32).reshape(len(ids), dim)
            removed = np.asarray(z["removed"], dtype=np.int64)
    except FileNotFoundError:
        return None
    return ids, vecs, removed


class VectorIndex:
    def __init__(self, dim: int, index: Any = None, deleted: int = 0):
        self.dim = dim
        self.deleted = deleted
        if index is None:
            index = hnswlib.Index(space="cosine", dim=dim)
            index.init_index(max_elements=1024, ef_construction=EF_CONSTRUCTION, M=M, random_seed=SEED)
        self.index = index
        self.index.set_ef(EF_SEARCH)
        # Changes since the HNSW file `_base` (its identity) was written or read.
        self._base: tuple | None = None
        self._added: dict[int, np.ndarray] = {}
        self._removed: set[int] = set()

    # -- persistence
    @classmethod
    def load(cls, path: Path, dim: int, deleted: int = 0, writable: bool = False) -> "VectorIndex":
        path = Path(path)
        if writable:
            key = (_identity(path), _identity(delta_path(path)))
            with _LIVE_LOCK:
                v = _LIVE.pop(key, None)
            if v is not None and v.dim == dim and v.deleted == deleted:
                return v  # checked out: a failed update never saves it back
        ident = _identity(path)
        index = hnswlib.Index(space="cosine", dim=dim)
        index.load_index(str(path), max_elements=0)
        v = cls(dim, index, deleted)
        v._base = ident
        delta = _read_delta(delta_path(path), dim)
        if delta is not None:
            ids, vecs, removed = delta
            v._apply(ids, vecs, removed, threads=-1)
        v.deleted = deleted
        if not writable:
            v.index.set_num_threads(1)
        return v

    def _apply(self, ids: np.ndarray, vecs: np.ndarray, removed: np.ndarray, threads: int = 1) -> None:
        """Apply (part of) a delta: add these vectors, then mark these labels deleted."""
        if len(ids):
            self._ensure_room(len(ids))
            self.index.add_items(vecs, ids, num_threads=threads)
            for i, vec in zip(ids.tolist(), vecs):
                self._added[i] = vec
        for i in removed.tolist():
            try:
                self.index.mark_deleted(int(i))
            except RuntimeError:
                pass
            self._removed.add(int(i))

    def refresh(self, path: Path, deleted: int) -> bool:
        """Bring this (read-only) index to the state saved at `path`, when that is its own
        HNSW file plus a delta that extends the one applied: True if done in place."""
        path = Path(path)
        if self._base is None or _identity(path) != self._base:
            return False
        delta = _read_delta(delta_path(path), self.dim)
        ids, vecs, removed = delta if delta is not None else (
            np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32), np.zeros(0, np.int64))
        if not self._removed <= set(removed.tolist()) or not set(self._added) <= set(ids.tolist()):
            return False  # not an extension of what is applied (cannot undo): reload
        new = np.fromiter((i not in self._added for i in ids.tolist()), dtype=bool, count=len(ids))
        gone = np.asarray([i for i in removed.tolist() if i not in self._removed], dtype=np.int64)
        self._apply(ids[new], vecs[new], gone)
        self.deleted = deleted
        return True

    def save(self, path: Path) -> None:
        """Write the index as `path` (see the module doc: a small change since `path` was
        loaded writes only the delta beside it). A writable index stays in memory."""
        path = Path(path)
        small = len(self._added) <= min(DELTA_MAX, max(256, DELTA_SHARE * self.stored))
        if self._base is not None and _identity(path) == self._base and small:
            ids = np.fromiter(self._added, dtype=np.int64, count=len(self._added))
            vecs = (np.stack([self._added[i] for i in ids.tolist()]) if len(ids)
                    else np.zeros((0, self.dim), np.float32))
            removed = np.fromiter(sorted(self._removed), dtype=np.int64, count=len(self._removed))
            tmp = path.with_name(f".{DELTA_NAME}.tmp")
            with open(tmp, "wb") as f:
                np.savez(f, ids=ids, vecs=vecs.astype(np.float32), removed=removed)
            os.replace(tmp, delta_path(path))
        else:
            tmp = path.with_name(path.name + ".tmp")
            self.index.save_index(str(tmp))
            tmp.replace(path)
            try:
                delta_path(path).unlink()  # a hard link to the base generation's delta
            except FileNotFoundError:
                pass
            self._base = _identity(path)
            self._added, self._removed = {}, set()
        self.remember(path)

    def remember(self, path: Path) -> None:
        """Keep this writable index in memory as the state saved at `path` (the next
        `load(path, writable=True)` in this process returns it)."""
        key = (_identity(path), _identity(delta_path(path)))
        with _LIVE_LOCK:
            _LIVE.clear()  # one live index per process is plenty
            _LIVE[key] = self

    # -- size
    @property
    def stored(self) -> int:
        return int(self.index.element_count)

    @property
    def live(self) -> int:
        return self.stored - self.deleted

    def _ensure_room(self, extra: int) -> None:
        need = self.stored + extra
        cap = int(self.index.max_elements)
        if need > cap:
            self.index.resize_index(max(need, int(cap * 1.5) + 1))

    # -- changes
    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        if len(ids) == 0:
            return
        self._ensure_room(len(ids))
        vecs = np.asarray(vectors, dtype=np.float32)
        self.index.add_items(vecs, np.asarray(ids, dtype=np.int64), num_threads=-1)
        if self._base is not None:
            for i, vec in zip(ids, vecs):
                self._added[int(i)] = vec

    def remove(self, ids: Sequence[int]) -> int:
        n = 0
        for i in ids:
            try:
                self.index.mark_deleted(int(i))
                n += 1
            except RuntimeError:
                continue  # not present (never embedded) or already deleted
            if self._base is not None:
                self._removed.add(int(i))
        self.deleted += n
        return n

    def needs_compaction(self) -> bool:
        return self.deleted > 0 and self.deleted > COMPACT_RATIO * max(1, self.stored)

    def live_ids(self) -> list[int]:
        ids = self.index.get_ids_list()
        if not self.deleted:
            return sorted(ids)
        out = []
        for i in sorted(ids):
            try:
                self.index.get_items([i])
            except RuntimeError:
                continue  # marked deleted
            out.append(i)
        return out

    def compact(self) -> "VectorIndex":
        """A new index holding only live vectors (deleted ones are physically dropped)."""
        ids = self.live_ids()
        fresh = VectorIndex(self.dim)
        if ids:
            vecs = np.asarray(self.index.get_items(ids, return_type="numpy"), dtype=np.float32)
            fresh.index.resize_index(max(1024, len(ids) + len(ids) // 2))
            fresh.add(ids, vecs)
        return fresh

    def get(self, ids: Sequence[int]) -> np.ndarray:
        return np.asarray(self.index.get_items(list(ids), return_type="numpy"), dtype=np.float32)

    # -- queries
    def knn(self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None) -> list[tuple[int, float]]:
        """[(id, cosine similarity)] best first; `allowed` filters labels."""
        live = self.live
        if live <= 0 or k <= 0:
            return []
        k = min(k, live)
        self.index.set_ef(max(EF_SEARCH, k))
        try:
            labels, dists = self.index.knn_query(np.asarray(vector, dtype=np.float32).reshape(1, -1), k=k,
                                                 filter=allowed)
        except RuntimeError:
            # hnswlib raises when fewer than k allowed items exist: ask for what it has
            return self._knn_small(vector, k, allowed)
        return [(int(i), 1.0 - float(d)) for i, d in zip(labels[0], dists[0])]

    def _knn_small(self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None) -> list[tuple[int, float]]:
        ids = [i for i in self.live_ids() if allowed is None or allowed(i)]
        if not ids:
            return []
        return exact_knn(self.get(ids), ids, vector, k)


def load_readable(path: Path, dim: int, deleted: int = 0) -> VectorIndex | None:
    """A reader's `VectorIndex.load`, or None when the file (or its delta) cannot be read,
    said once (`recover`): searches answer from BM25 until a rebuild replaces it, which a
    server does when it opens (`index_stage.warm_or_rebuild_vectors`)."""
    from .recover import record, unreadable

    try:
        return VectorIndex.load(path, dim, deleted=deleted)
    except Exception as exc:
        if not unreadable(exc):
            raise
        record("the vector index", exc, "searches use bm25 until `commonplace build` rebuilds it")
        return None


def exact_knn(matrix: np.ndarray, ids: Sequence[int], vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Brute-force cosine over unit vectors (small filtered sets, and recall checks)."""
    sims = matrix @ np.asarray(vector, dtype=np.float32).reshape(-1)
    k = min(k, len(ids))
    top = np.argpartition(-sims, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(ids[i]), float(sims[i])) for i in top]
