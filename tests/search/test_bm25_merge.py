"""Merging BM25 segments off the write path (`bm25_merge`): plan, build without the lock,
publish on whatever generation is live by then.

What must hold: searches answer the same before and after a merge (paths and scores),
even when updates edited or removed documents of the merged segments while it was being
built; a merge whose segments were rewritten meanwhile is dropped, never published; and a
live corpus's writes never wait for one.
"""

from __future__ import annotations

import os
from pathlib import Path

from whoosh import index as wix

from commonplace.compiler.build.pipeline import load_corpus
from commonplace.compiler.search.index import bm25_merge
from commonplace.compiler.search.index.bm25_write import MERGE_FANOUT
from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.index.stage import build_indexes, update_indexes
from commonplace.compiler.search.store.disk import IndexStore

from searchkit import doc


def _segments(store: IndexStore) -> int:
    ix = wix.open_dir(str(store.current() / "whoosh"))
    try:
        return len(ix._segments())
    finally:
        ix.close()


def _edit(root: Path, i: int, body: str) -> None:
    (root / f"n{i:02d}.md").write_text(doc(f"N {i}", body))
    docs = {d.path: d for d in load_corpus(root).docs}
    update_indexes(root, [docs[f"n{i:02d}.md"]], embed=False, defer_merge=True)


def _small_segments(indexed) -> tuple[Path, IndexStore]:
    """16 notes indexed, then more edits than MERGE_FANOUT, each its own small segment."""
    files = {f"n{i:02d}.md": doc(f"N {i}", f"words {i} common\n") for i in range(16)}
    root, _ = indexed(files, embed_=False)
    for i in range(MERGE_FANOUT + 2):
        _edit(root, i, f"words {i} common edited{i}\n")
    return root, IndexStore(root)


def _answers(root: Path, fake_embedder, queries: list[str]) -> list:
    engine = SearchEngine(root, embedder=fake_embedder)  # fresh: nothing carried over
    try:
        return [[(r["path"], r["score"]) for r in engine.search({"query": q, "mode": "bm25", "k": 30})["results"]]
                for q in queries]
    finally:
        engine.close()


def test_merge_built_while_updates_run_publishes_their_deletions(indexed, fake_embedder):
    files = {f"n{i:02d}.md": doc(f"N {i}", f"words {i} common alpha{i}\n") for i in range(24)}
    root, _ = indexed(files, embed_=False)
    store = IndexStore(root)
    for i in range(MERGE_FANOUT + 3):  # one small segment each
        _edit(root, i, f"words {i} common edited{i} beta\n")
    assert _segments(store) > MERGE_FANOUT + 1

    with store.write_lock():
        plan = bm25_merge.plan(store)
    assert plan is not None and len(plan.segids) > MERGE_FANOUT
    # While the merge builds: edit two documents whose chunks are in planned segments,
    # remove a third, add a new one.
    _edit(root, 2, "words 2 common rewritten gamma\n")
    _edit(root, 5, "words 5 common rewritten gamma\n")
    (root / "n07.md").unlink()
    update_indexes(root, [], ["n07.md"], embed=False, defer_merge=True)
    (root / "n99.md").write_text(doc("N 99", "words 99 common gamma\n"))
    docs = {d.path: d for d in load_corpus(root).docs}
    update_indexes(root, [docs["n99.md"]], embed=False, defer_merge=True)

    queries = ["common", "beta", "edited2", "edited5", "edited7", "gamma", "rewritten", "words 3"]
    before = _answers(root, fake_embedder, queries)
    live_toc = bm25_merge._read_toc(store.current() / "whoosh")
    others = [x for x in live_toc.segments if x.segid not in set(plan.segids)]
    bm25_merge.build(plan.scratch)
    with store.write_lock():
        gen = bm25_merge.publish(store, plan)
    bm25_merge.discard(plan)
    assert gen is not None and store.current().name == gen
    assert _segments(store) == len(others) + 1  # the planned ones (still listed or not) are one
    after = _answers(root, fake_embedder, queries)
    assert after == before
    found = dict(zip(queries, after))
    assert found["edited2"] == [] and found["edited7"] == []  # old text stays gone
    assert {"n02.md", "n05.md", "n99.md"} <= {p for p, _ in found["gamma"]}
    # And the same as an index built whole from the files.
    fresh = root.parent / "whole"
    fresh.mkdir()
    for p in root.glob("*.md"):
        (fresh / p.name).write_text(p.read_text())
    build_indexes(fresh, load_corpus(fresh).docs, embed=False)
    assert _answers(fresh, fake_embedder, queries) == after


def test_merge_is_dropped_when_its_segments_were_rewritten(indexed, fake_embedder):
    from commonplace.compiler.search.index.purge import purge

    root, store = _small_segments(indexed)
    with store.write_lock():
        plan = bm25_merge.plan(store)
    assert plan is not None
    purge(root)  # rewrites every segment (forgotten text must leave them)
    current = store.current().name
    bm25_merge.build(plan.scratch)
    with store.write_lock():
        assert bm25_merge.publish(store, plan) is None
    bm25_merge.discard(plan)
    assert store.current().name == current
    assert not [n for n in os.listdir(store.dir) if n.startswith(bm25_merge.SCRATCH_PREFIX)]


def test_merge_in_a_child_process(indexed, fake_embedder):
    root, store = _small_segments(indexed)
    before = _answers(root, fake_embedder, ["common", "edited4"])
    out = bm25_merge.merge(root, child=True)
    assert out["generation"] == store.current().name and out["segments"] > MERGE_FANOUT
    assert _segments(store) <= 2
    assert _answers(root, fake_embedder, ["common", "edited4"]) == before


def test_live_writes_do_not_wait_for_a_background_merge(tmp_path, monkeypatch, fake_embedder):
    import threading

    from commonplace.compiler.live import corpus as live_mod
    from commonplace.compiler.live.corpus import LiveCorpus

    root = tmp_path / "corpus"
    root.mkdir()
    for i in range(20):
        (root / f"n{i:02d}.md").write_text(doc(f"N {i}", f"words {i} common\n"))
    monkeypatch.setattr(live_mod, "MERGE_IN_CHILD", False)
    started, release = threading.Event(), threading.Event()
    real_build = bm25_merge.build

    def slow_build(scratch: Path) -> None:
        started.set()
        assert release.wait(30)
        real_build(scratch)

    monkeypatch.setattr(bm25_merge, "build", slow_build)
    live = LiveCorpus(root, tmp_path / "site", embed=False)
    live.open()
    store = IndexStore(root)
    try:
        for i in range(MERGE_FANOUT + 2):
            (root / f"n{i:02d}.md").write_text(doc(f"N {i}", f"words {i} common edited{i}\n"))
            assert live.refresh([f"n{i:02d}.md"]).indexed
        assert started.wait(30)  # a merge is being built now, and holds no lock
        for i in range(MERGE_FANOUT + 2, 20):
            (root / f"n{i:02d}.md").write_text(doc(f"N {i}", f"words {i} common later{i}\n"))
            assert live.refresh([f"n{i:02d}.md"]).indexed
            hits = live.search({"query": f"later{i}", "mode": "bm25"})["results"]
            assert [h["path"] for h in hits] == [f"n{i:02d}.md"]
        before = _answers(root, fake_embedder, ["common", "edited3", "later15"])
        release.set()
        assert live._merger.wait_idle(30)
        assert live._merger.merges >= 1
        assert _segments(store) <= MERGE_FANOUT
        assert _answers(root, fake_embedder, ["common", "edited3", "later15"]) == before
    finally:
        release.set()
        live.close()
