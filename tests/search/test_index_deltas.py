"""Small updates share their base generation's files and write deltas (store.py, vectors.py).

What must hold: every generation reads exactly like one written whole (same rows, same
counts, same vectors), files shared by hard link are never written through, and a big
enough delta is folded back into whole files.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

from commonplace.compiler.search.store import vectors as vmod
from commonplace.compiler.search.store.disk import IndexStore, Meta, open_table
from commonplace.compiler.search.store.vectors import VectorIndex

from searchkit import doc, reindex


def _rows(gen: Path) -> tuple[list, list]:
    db = open_table(gen, readonly=True)
    try:
        docs = [tuple(r) for r in db.execute("SELECT * FROM docs ORDER BY path")]
        chunks = [tuple(r) for r in db.execute("SELECT * FROM chunks ORDER BY id")]
    finally:
        db.close()
    return docs, chunks


def _counts(gen: Path) -> dict:
    db = open_table(gen, readonly=True)
    try:
        pending_docs = [r[0] for r in db.execute("SELECT path FROM docs WHERE pending = 1 ORDER BY path")]
        return {
            "documents": db.execute("SELECT count(*) FROM docs").fetchone()[0],
            "chunks": db.execute("SELECT count(*) FROM chunks").fetchone()[0],
            "vectors": db.execute("SELECT count(*) FROM chunks WHERE has_vector = 1").fetchone()[0],
            "pending_count": len(pending_docs),
            "pending_documents": pending_docs[:100],
        }
    finally:
        db.close()


@pytest.mark.parametrize("embed_", [True, False])
def test_small_updates_write_a_table_delta_that_reads_like_a_whole_table(indexed, embed_):
    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"Body {i} about billing.\n\n## Part\n\nMore {i}.\n")
             for i in range(30)}
    root, engine = indexed(files, embed_=embed_)
    store = IndexStore(root)
    table_inode = os.stat(store.current() / "table.sqlite").st_ino
    rng = random.Random(5)
    for step in range(8):
        victim = root / f"notes/n{rng.randrange(30):02d}.md"
        if step % 4 == 3 and victim.exists():
            victim.unlink()
        else:
            (root / f"notes/new{step}.md").write_text(doc(f"New {step}", f"fresh words {step}\n"))
            if victim.exists():
                victim.write_text(victim.read_text() + f"\nedit {step} zebra\n")
        reindex(root, embed_=embed_)
        gen = store.current()
        assert (gen / "delta.sqlite").exists()
        assert os.stat(gen / "table.sqlite").st_ino == table_inode  # shared, never written
        meta = Meta.load(gen)
        got = _counts(gen)
        assert {k: getattr(meta, k) for k in got} == got
        if embed_:
            assert meta.vectors == meta.chunks
    # The same rows as a generation written whole (the delta folded into a copy).
    inc = _rows(store.current())
    base = store.current()
    folded = store.new_generation(base, share_table=False)
    try:
        assert not (folded / "delta.sqlite").exists()
        assert _rows(folded) == inc
    finally:
        store.discard(folded)
    hits = engine.search({"query": "zebra", "mode": "bm25", "k": 50})["results"]
    assert hits and all("zebra" in h["snippet"] for h in hits)


def test_a_big_delta_is_folded(indexed, monkeypatch):
    from commonplace.compiler.search.store import disk as smod

    files = {f"n{i}.md": doc(f"N {i}", f"words {i}\n") for i in range(10)}
    root, _ = indexed(files, embed_=False)
    (root / "n1.md").write_text(doc("N 1", "changed\n"))
    reindex(root, embed_=False)
    store = IndexStore(root)
    assert (store.current() / "delta.sqlite").exists()
    monkeypatch.setattr(smod, "DELTA_FOLD_BYTES", 0)
    (root / "n2.md").write_text(doc("N 2", "changed too\n"))
    reindex(root, embed_=False)
    gen = store.current()
    assert not (gen / "delta.sqlite").exists()
    assert _counts(gen)["documents"] == 10


def _vecs(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _state(v: VectorIndex) -> dict[int, np.ndarray]:
    ids = v.live_ids()
    return {i: x for i, x in zip(ids, v.get(ids))} if ids else {}


def _link_gen(src: Path, dst: Path) -> None:
    dst.mkdir()
    for f in src.iterdir():
        os.link(f, dst / f.name)


def test_hnsw_small_changes_are_saved_as_a_delta(tmp_path):
    dim = 16
    g1 = tmp_path / "g1"
    g1.mkdir()
    v = VectorIndex(dim)
    v.add(list(range(100)), _vecs(100, dim, 0))
    v.save(g1 / "vectors.hnsw")
    assert not (g1 / vmod.DELTA_NAME).exists()
    reader = VectorIndex.load(g1 / "vectors.hnsw", dim)
    for step in range(2, 6):
        prev, gen = tmp_path / f"g{step - 1}", tmp_path / f"g{step}"
        _link_gen(prev, gen)
        w = VectorIndex.load(gen / "vectors.hnsw", dim, deleted=v.deleted, writable=True)
        assert w is v  # kept in memory by the process that saved it
        w.remove([step * 3, 100 + step * 10])
        w.add(list(range(100 + step * 10, 105 + step * 10)), _vecs(5, dim, step))
        w.save(gen / "vectors.hnsw")
        # The HNSW file is shared with the first generation, never written through.
        assert os.stat(gen / "vectors.hnsw").st_ino == os.stat(g1 / "vectors.hnsw").st_ino
        assert (gen / vmod.DELTA_NAME).exists()
        fresh = VectorIndex.load(gen / "vectors.hnsw", dim, deleted=w.deleted)
        assert _state(fresh).keys() == _state(w).keys()
        for i, x in _state(fresh).items():
            assert np.allclose(x, _state(w)[i], atol=1e-6)
        assert reader.refresh(gen / "vectors.hnsw", w.deleted)
        assert _state(reader).keys() == _state(w).keys()
        assert reader.live == w.live
        q = _vecs(1, dim, 99)[0]
        assert [i for i, _ in reader.knn(q, 5)] == [i for i, _ in fresh.knn(q, 5)]
        # Earlier generations still read as they were.
        old = VectorIndex.load(prev / "vectors.hnsw", dim)
        assert 100 + step * 10 not in old.index.get_ids_list()


def test_hnsw_big_delta_rewrites_the_file(tmp_path, monkeypatch):
    dim = 8
    g1, g2 = tmp_path / "g1", tmp_path / "g2"
    g1.mkdir()
    v = VectorIndex(dim)
    v.add(list(range(50)), _vecs(50, dim, 0))
    v.save(g1 / "vectors.hnsw")
    reader = VectorIndex.load(g1 / "vectors.hnsw", dim)
    _link_gen(g1, g2)
    monkeypatch.setattr(vmod, "DELTA_MAX", 3)
    w = VectorIndex.load(g2 / "vectors.hnsw", dim, writable=True)
    w.add(list(range(50, 60)), _vecs(10, dim, 1))
    w.save(g2 / "vectors.hnsw")
    assert os.stat(g2 / "vectors.hnsw").st_ino != os.stat(g1 / "vectors.hnsw").st_ino
    assert not (g2 / vmod.DELTA_NAME).exists()
    assert not reader.refresh(g2 / "vectors.hnsw", 0)  # another file: the engine reloads
    assert len(VectorIndex.load(g2 / "vectors.hnsw", dim).live_ids()) == 60


def test_engine_follows_small_updates_with_vectors(indexed, fake_embedder):
    files = {f"n{i}.md": doc(f"N {i}", f"plain words number {i}\n") for i in range(12)}
    root, engine = indexed(files)
    engine.search({"query": "plain words", "mode": "vector"})
    first = engine._vectors
    assert first is not None
    for step in range(3):
        (root / f"n{step}.md").write_text(doc(f"N {step}", f"quasar nebula galaxy {step}\n"))
        reindex(root)
        gen = IndexStore(root).current()
        assert (gen / vmod.DELTA_NAME).exists()
        res = engine.search({"query": "quasar nebula galaxy", "mode": "vector", "k": 3})["results"]
        assert {r["path"] for r in res} == {f"n{i}.md" for i in range(step + 1)} or len(res) == 3
        assert engine._vectors is first  # refreshed in place, not reloaded
        fresh = VectorIndex.load(gen / "vectors.hnsw", first.dim, deleted=Meta.load(gen).deleted_vectors)
        assert sorted(first.live_ids()) == sorted(fresh.live_ids())


def test_deferred_merges_leave_segments_for_merge_segments(indexed):
    from whoosh import index as wix

    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.bm25_write import MERGE_FANOUT
    from commonplace.compiler.search.index.stage import merge_segments, update_indexes

    files = {f"n{i:02d}.md": doc(f"N {i}", f"words {i} common\n") for i in range(20)}
    root, engine = indexed(files, embed_=False)
    store = IndexStore(root)

    def segments() -> int:
        ix = wix.open_dir(str(store.current() / "whoosh"))
        try:
            return len(ix._segments())
        finally:
            ix.close()

    assert merge_segments(root) is None  # nothing to merge
    for i in range(MERGE_FANOUT + 3):
        (root / f"n{i:02d}.md").write_text(doc(f"N {i}", f"words {i} common edited{i}\n"))
        docs = {d.path: d for d in load_corpus(root).docs}
        update_indexes(root, [docs[f"n{i:02d}.md"]], embed=False, defer_merge=True)
    assert segments() > MERGE_FANOUT + 1
    before = engine.search({"query": "common edited3", "mode": "bm25", "k": 20})["results"]
    gen = merge_segments(root)
    assert gen is not None and store.current().name == gen
    assert segments() <= 2
    after = engine.search({"query": "common edited3", "mode": "bm25", "k": 20})["results"]
    assert [(r["path"], r["score"]) for r in after] == [(r["path"], r["score"]) for r in before]


def test_warm_vectors_keeps_the_writable_index_for_the_next_update(indexed, fake_embedder):
    from commonplace.compiler.search.index.stage import warm_vectors

    files = {f"n{i}.md": doc(f"N {i}", f"plain words number {i}\n") for i in range(5)}
    root, _ = indexed(files)
    vmod._LIVE.clear()
    assert warm_vectors(root)
    (live,) = vmod._LIVE.values()
    (root / "n1.md").write_text(doc("N 1", "other words\n"))
    reindex(root)
    (again,) = vmod._LIVE.values()
    assert again is live  # the update started from it (and saved it back)
