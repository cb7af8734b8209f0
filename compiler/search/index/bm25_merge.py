"""Merging small BM25 segments off the write path.

Each small update adds one Whoosh segment; `bm25_write.tiered_merge` folds them together
once they pile up. Done inside an update, that merge (~300 ms at 10,000 documents with 30
small segments) landed on one write in thirty; waiting for a quiet second to do it never
happened under steady writes. Here a merge runs in three steps, and only the first and
the last hold the index lock, for milliseconds:

1. `plan`: under the lock, pick the live generation's small segments (the same tiers as
   `tiered_merge`), hard-link their files into a scratch folder with a TOC naming just
   them (and their deletions at that moment);
2. `build`: without the lock (in this process or in a child: `python -m` this module),
   merge the scratch index's segments into one (deleted documents dropped);
3. `publish`: under the lock, on whatever generation is live by then: a new generation
   replaces the planned segments with the merged one. Documents
   deleted from them since the plan (updates that ran meanwhile delete by path; their new
   versions are in newer segments) are deleted from the merged segment by document number:
   the merge keeps the live documents of each planned segment, in order. A planned
   segment no longer listed lost all its documents (deleted, or merged by another
   writer into a segment of its own), so they are deleted from the merged one too; when
   none is listed any more (a purge or full build rewrote the index), the merge is dropped.

Writers never wait for the merge itself, and an answer's `indexed: true` does not depend
on it: the merged generation holds the same documents as the one it replaces.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bm25_write import MERGE_FANOUT, _tiers_to_merge
from ..store.disk import IndexStore, Meta, fsync_paths

INDEX_NAME = "MAIN"  # Whoosh's default index name (every index here uses it)
SCRATCH_PREFIX = ".merge-"


@dataclass
class MergePlan:
    base: str  # the generation the segments were taken from
    scratch: Path
    segids: list[str]
    deleted: dict[str, frozenset[int]]  # per segment, its deletions when planned
    counts: dict[str, int] = field(default_factory=dict)  # per segment, doc_count_all


def _segment_files(whoosh: Path, segid: str) -> list[str]:
    prefix = f"{INDEX_NAME}_{segid}."
    return [n for n in os.listdir(whoosh) if n.startswith(prefix)]


def _read_toc(whoosh: Path) -> Any:
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    from ..store.recover import loading_schema

    with loading_schema(whoosh):
        return TOC.read(FileStorage(str(whoosh)), INDEX_NAME)


def plan(store: IndexStore, fanout: int = MERGE_FANOUT) -> MergePlan | None:
    """Step 1 (call under `store.write_lock()`): the segments to merge, linked into a
    scratch folder; None when there are too few small segments."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    base = store.current()
    if base is None or not (base / "whoosh").is_dir():
        return None
    toc = _read_toc(base / "whoosh")
    small = _tiers_to_merge(list(toc.segments), fanout)
    if not small:
        return None
    clear_scratch(store)
    scratch = store.dir / f"{SCRATCH_PREFIX}{os.getpid()}-{base.name}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for seg in small:
        for name in _segment_files(base / "whoosh", seg.segid):
            os.link(base / "whoosh" / name, scratch / name)
    segs = [copy.deepcopy(s) for s in small]  # deletions are frozen here; the live TOC moves on
    TOC(toc.schema, segs, 1).write(FileStorage(str(scratch)), INDEX_NAME)
    return MergePlan(base=base.name, scratch=scratch, segids=[s.segid for s in small],
                     deleted={s.segid: frozenset(s.deleted_docs()) for s in small},
                     counts={s.segid: s.doc_count_all() for s in small})


def build(scratch: Path) -> None:
    """Step 2 (no lock): merge every segment of the scratch index into one."""
    from whoosh.reading import SegmentReader

    from .bm25_write import BM25Writer

    w = BM25Writer(scratch, create=False, compound=True)

    def merge_all(writer: Any, segments: list[Any]) -> list[Any]:
        for seg in segments:
            if seg.doc_count() > 0:
                reader = SegmentReader(writer.storage, writer.schema, seg)
                writer.add_reader(reader)
                reader.close()
        return []

    try:
        w._w.commit(mergetype=merge_all)
    finally:
        w.ix.close()
    # The merged segment is shared by hard link from the start, so the publishing
    # generation's commit (which fsyncs only files of its own) would skip it: sync it here.
    fsync_paths([str(scratch / n) for n in os.listdir(scratch) if not n.endswith("WRITELOCK")])


def build_in_child(scratch: Path, timeout: float = 300.0) -> None:
    """Step 2 in a child process: the merge's Python work then takes no turns of this
    process's GIL from the searches and writes it serves."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-m", __name__, str(scratch)], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"segment merge failed: {proc.stderr.strip()[-500:]}")


def publish(store: IndexStore, mp: MergePlan) -> str | None:
    """Step 3 (call under `store.write_lock()`): a new generation with the planned segments
    replaced by the merged one; its name, or None when the plan no longer applies."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC, clean_files

    cur = store.current()
    if cur is None:
        return None
    toc = _read_toc(cur / "whoosh")
    by_id = {s.segid: s for s in toc.segments}
    if any(sid in by_id and by_id[sid].doc_count_all() != mp.counts[sid] for sid in mp.segids):
        return None  # not the segment planned (segments never change): leave it
    if not any(sid in by_id for sid in mp.segids):
        return None  # all gone (a purge or full build rewrote them, or every document was replaced)
    merged_toc = _read_toc(mp.scratch)
    merged = list(merged_toc.segments)
    if len(merged) > 1 or any(s.segid in by_id for s in merged):
        return None  # not what `build` makes (or a segment id drawn twice): leave it
    # Deletions since the plan, moved to the merged segment's document numbers. A planned
    # segment no longer listed lost all its documents: every one was deleted (an update
    # drops a segment once it is empty), or another writer merged it into a segment of
    # its own, which now holds them; either way none of them is live in the merged one.
    offset = 0
    late: list[int] = []
    for sid in mp.segids:
        old = mp.deleted[sid]
        now = set(by_id[sid].deleted_docs()) if sid in by_id else set(range(mp.counts[sid]))
        if not old <= now:
            return None  # an undelete: not something updates do
        new = now - old
        if new:
            live_before = [d for d in range(mp.counts[sid]) if d not in old]
            rank = {d: i for i, d in enumerate(live_before)}
            late += [offset + rank[d] for d in sorted(new)]
        offset += mp.counts[sid] - len(old)
    if sum(m.doc_count_all() for m in merged) != offset:
        return None  # the merge did not keep exactly the planned live documents
    for d in late:
        merged[0].delete_document(d)
    # The new segment list: the merged segment where the first planned one was.
    planned = set(mp.segids)
    segments: list[Any] = []
    placed = False
    for s in toc.segments:
        if s.segid in planned:
            if not placed:
                segments += [m for m in merged if m.doc_count() > 0]
                placed = True
        else:
            segments.append(s)
    meta = Meta.load(cur)
    gen = store.new_generation(cur, share_table=True)
    try:
        whoosh = gen / "whoosh"
        for m in merged:
            for name in _segment_files(mp.scratch, m.segid):
                os.link(mp.scratch / name, whoosh / name)
        storage = FileStorage(str(whoosh))
        TOC(toc.schema, segments, toc.generation + 1).write(storage, INDEX_NAME)
        clean_files(storage, INDEX_NAME, toc.generation + 1, segments)  # the replaced segments' links
        meta.generation = gen.name
        meta.save(gen, durable=False)
        store.commit(gen, collect=False)
    except BaseException:
        store.discard(gen)
        raise
    return gen.name


def discard(mp: MergePlan) -> None:
    shutil.rmtree(mp.scratch, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clear_scratch(store: IndexStore) -> None:
    """Scratch folders of processes that died mid-merge (another live process's own
    scratch is left alone; it holds the index lock to plan, as this one does)."""
    try:
        names = os.listdir(store.dir)
    except OSError:
        return
    for name in names:
        if not name.startswith(SCRATCH_PREFIX):
            continue
        pid = name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            shutil.rmtree(store.dir / name, ignore_errors=True)


def merge(root: Path, child: bool = False, fanout: int = MERGE_FANOUT) -> dict[str, Any]:
    """All three steps. Returns {"generation": name or None, "segments": merged count,
    "seconds": {"plan", "build", "publish"}}."""
    store = IndexStore(Path(root).resolve())
    out: dict[str, Any] = {"generation": None, "segments": 0, "seconds": {}}
    t = time.perf_counter()
    with store.write_lock():
        mp = plan(store, fanout)
    out["seconds"]["plan"] = time.perf_counter() - t
    if mp is None:
        store.gc(older_only=True)
        return out
    try:
        t = time.perf_counter()
        if child:
            build_in_child(mp.scratch)
        else:
            build(mp.scratch)
        out["seconds"]["build"] = time.perf_counter() - t
        t = time.perf_counter()
        with store.write_lock():
            out["generation"] = publish(store, mp)
        out["seconds"]["publish"] = time.perf_counter() - t
        out["segments"] = len(mp.segids) if out["generation"] else 0
    finally:
        discard(mp)
        store.gc(older_only=True)  # outside the lock: removing folders takes a while
    return out


if __name__ == "__main__":  # the child of `build_in_child`
    build(Path(sys.argv[1]))


class BackgroundMerger:
    """One thread per live corpus that merges after updates (`poke`), never on a
    writer's thread. Pokes while a merge runs fold into one more pass."""

    def __init__(self, root: Path, child: bool = True):
        import threading

        self.root = Path(root)
        self.child = child
        self.cv = threading.Condition()
        self.wanted = False
        self.stopped = False
        self.busy = False
        self.merges = 0
        self.last: dict[str, Any] = {}
        self.thread: Any = None

    def poke(self) -> None:
        import threading

        with self.cv:
            if self.stopped:
                return
            self.wanted = True
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="commonplace-bm25-merge", daemon=True)
                self.thread.start()
            self.cv.notify_all()

    def _loop(self) -> None:
        import logging

        while True:
            with self.cv:
                while not self.wanted and not self.stopped:
                    self.cv.wait()
                if self.stopped:
                    return
                self.wanted, self.busy = False, True
            try:
                try:
                    self.last = merge(self.root, child=self.child)
                except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                    if not self.child:
                        raise
                    logging.getLogger("commonplace").info("merging in a child failed (%s); merging here", exc)
                    self.last = merge(self.root, child=False)
                if self.last.get("generation"):
                    self.merges += 1
            except Exception as exc:  # noqa: BLE001 - the next poke (or full build) merges
                logging.getLogger("commonplace").warning("merging index segments failed: %s", exc)
            finally:
                with self.cv:
                    self.busy = False
                    self.cv.notify_all()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Until no merge is running or wanted (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while self.busy or self.wanted:
                left = deadline - time.monotonic()
                if left <= 0 or self.thread is None:
                    return not (self.busy or self.wanted)
                self.cv.wait(left)
        return True

    def stop(self, timeout: float = 60.0) -> None:
        with self.cv:
            self.stopped = True
            self.cv.notify_all()
            thread = self.thread
        if thread is not None:
            thread.join(timeout)
