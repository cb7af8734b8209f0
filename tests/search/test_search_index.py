"""Index builds: diffing, no re-embedding, pending embeddings, generations, purge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from searchkit import FakeEmbedder, doc, reindex

from commonplace.compiler.build.pipeline import load_corpus
from commonplace.compiler.search import embedding
from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.index.stage import IndexNeedsRebuild, purge, update_indexes
from commonplace.compiler.search.store.disk import IndexStore, Meta, open_table

FILES = {
    "notes/alpha.md": doc("Alpha", "## One\n\n" + "The replica fell behind during the vacuum job. " * 8
                          + "\n\n## Two\n\n" + "Kafka lag alerts fire at two minutes. " * 8 + "\n"),
    "notes/beta.md": doc("Beta", "Beta talks about svc-auth-v2 token rotation.\n"),
    "people/cara.md": doc("Cara", "Cara owns the billing pipeline.\n"),
    "logs/sessions/2024/01/s.md": doc("Session", "A raw transcript mentioning the billing pipeline.\n"),
}


def _docs(root: Path):
    return load_corpus(root).docs


def test_rebuilding_an_unchanged_corpus_embeds_nothing(indexed, fake_embedder):
    root, _ = indexed(FILES)
    first_calls = fake_embedder.calls
    assert first_calls > 0
    report = reindex(root)
    assert fake_embedder.calls == first_calls  # the encoder was not called at all
    assert report.chunks_embedded == 0 and not report.written
    # also after the process "restarts" (a new embedder, cache and index on disk only)
    fresh = FakeEmbedder()
    embedding.set_embedder_factory(lambda ref: fresh)
    reindex(root)
    assert fresh.calls == 0


def test_editing_one_section_embeds_only_that_chunk(indexed, fake_embedder):
    root, _ = indexed(FILES)
    fake_embedder.texts.clear()
    p = root / "notes/alpha.md"
    p.write_text(p.read_text().replace("two minutes", "five minutes"))
    report = reindex(root)
    assert report.changed == 1 and report.written
    assert report.chunks_embedded == 1
    assert len(fake_embedder.texts) == 1 and "five minutes" in fake_embedder.texts[0]
    assert report.chunks_reused >= 1


def test_cache_survives_deleting_the_index(indexed, fake_embedder):
    root, _ = indexed(FILES)
    calls = fake_embedder.calls
    import shutil

    shutil.rmtree(root / ".commonplace" / "index")
    report = reindex(root)
    assert report.written and report.chunks_embedded == 0 and fake_embedder.calls == calls


def test_removed_documents_leave_both_indexes(indexed, fake_embedder):
    root, engine = indexed(FILES)
    assert engine.search({"query": "svc-auth-v2", "mode": "bm25"})["count"] == 1
    (root / "notes/beta.md").unlink()
    report = reindex(root)
    assert report.removed == 1
    for mode in ("bm25", "vector", "hybrid", "exact"):
        res = engine.search({"query": "svc-auth-v2 token rotation", "mode": mode})
        assert all(r["path"] != "notes/beta.md" for r in res["results"]), mode


def test_no_embed_build_marks_pending_and_a_later_build_embeds(indexed, fake_embedder):
    root, engine = indexed(FILES, embed_=False)
    assert fake_embedder.calls == 0
    meta = Meta.load(IndexStore(root).current())
    assert meta.vectors == 0 and len(meta.pending_documents) == len(FILES)
    res = engine.search({"query": "billing pipeline", "mode": "hybrid"})
    assert res["count"] >= 1 and any("bm25 only" in w for w in res["warnings"])
    report = reindex(root)
    assert report.written and report.chunks_embedded == report.chunks and report.embeddings_pending == 0
    res = engine.search({"query": "billing pipeline", "mode": "vector"})
    assert res["count"] >= 1 and not res["warnings"]


def test_embedding_failure_never_fails_the_build(write_corpus):
    failing = FakeEmbedder(fail_after=0)
    embedding.set_embedder_factory(lambda ref: failing)
    try:
        root = write_corpus(FILES)
        report = reindex(root)
        assert report.written and report.vectors == 0
        assert report.embeddings_pending == report.chunks and report.warnings
        assert sorted(report.pending_documents) == sorted(FILES)
        engine = SearchEngine(root, embedder=failing)
        assert engine.search({"query": "svc-auth-v2", "mode": "bm25"})["count"] == 1
        # the next build (model works again) embeds the pending chunks
        working = FakeEmbedder()
        embedding.set_embedder_factory(lambda ref: working)
        report = reindex(root)
        assert report.chunks_embedded == report.chunks and report.embeddings_pending == 0
        assert report.pending_documents == []
    finally:
        embedding.set_embedder_factory(None)


def test_generations_switch_atomically_and_old_ones_are_collected(indexed):
    root, engine = indexed(FILES)
    store = IndexStore(root)
    g1 = store.current_name()
    for i in range(4):
        p = root / "notes/beta.md"
        p.write_text(p.read_text() + f"\nedit {i}\n")
        reindex(root)
    gens = store.generations()
    assert store.current_name() != g1
    assert len(gens) <= 2 and store.current_name() in gens
    # the engine follows CURRENT
    assert engine.search({"query": "edit", "mode": "bm25"})["count"] == 1


def test_update_indexes_incremental_seam(indexed, fake_embedder):
    root, engine = indexed(FILES)
    (root / "notes/gamma.md").write_text(doc("Gamma", "Gamma mentions zeppelin maintenance.\n"))
    (root / "people/cara.md").unlink()
    docs = {d.path: d for d in _docs(root)}
    report = update_indexes(root, [docs["notes/gamma.md"]], ["people/cara.md"])
    assert report.changed == 1 and report.removed == 1 and report.chunks_embedded == 1
    assert engine.search({"query": "zeppelin", "mode": "bm25"})["results"][0]["path"] == "notes/gamma.md"
    assert engine.search({"query": "Cara", "mode": "exact"})["count"] == 0
    # a full build afterwards finds nothing left to do
    assert not reindex(root).written


def test_update_without_an_index_asks_for_a_full_build(write_corpus, fake_embedder):
    root = write_corpus(FILES)
    with pytest.raises(IndexNeedsRebuild):
        update_indexes(root, _docs(root)[:1], [])


def test_hnsw_compacts_when_deletions_pass_the_threshold(indexed, fake_embedder):
    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"Note {i} text about topic{i}.\n") for i in range(20)}
    root, engine = indexed(files)
    for i in range(8):
        p = root / f"notes/n{i:02d}.md"
        p.write_text(p.read_text() + "changed\n")
    reindex(root)
    meta = Meta.load(IndexStore(root).current())
    assert meta.deleted_vectors == 0  # 8/28 deleted > 20%: rebuilt from live vectors
    assert meta.vectors == 20
    res = engine.search({"query": "topic3 changed", "mode": "vector", "k": 20})
    assert res["count"] == 20


def test_purge_makes_deleted_text_vanish_from_every_index_file(indexed, fake_embedder):
    files = dict(FILES)
    files["notes/secret.md"] = doc("Secret", "The passphrase is xylophonequartz42 and must be forgotten.\n")
    root, engine = indexed(files)
    assert engine.search({"query": "xylophonequartz42", "mode": "bm25"})["count"] == 1
    (root / "notes/secret.md").unlink()
    reindex(root)
    out = purge(root)
    assert out["generation"] and out["cache_entries_removed"] >= 1
    state = root / ".commonplace"
    for f in state.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert b"xylophonequartz42" not in data, f
            assert b"passphrase" not in data, f
    assert IndexStore(root).generations() == [IndexStore(root).current_name()]
    res = engine.search({"query": "xylophonequartz42 passphrase", "mode": "hybrid"})
    assert all(r["path"] != "notes/secret.md" for r in res["results"])
    assert engine.search({"query": "svc-auth-v2", "mode": "bm25"})["count"] == 1


def test_table_records_documents_and_chunks(indexed):
    root, _ = indexed(FILES)
    db = open_table(IndexStore(root).current(), readonly=True)
    rows = {r["path"]: r for r in db.execute("SELECT * FROM docs")}
    assert rows["people/cara.md"]["evidence_class"] == "curated"
    assert rows["logs/sessions/2024/01/s.md"]["is_session"] == 1
    assert json.loads(rows["notes/alpha.md"]["tags"]) == []
    n = db.execute("SELECT count(*) FROM chunks WHERE path = 'notes/alpha.md'").fetchone()[0]
    assert n >= 1


def test_manifest_documents_without_text_are_read_again(indexed, fake_embedder):
    """The incremental build keeps documents without their text; the stage re-reads them."""
    from dataclasses import replace

    from commonplace.compiler.search.index.stage import build_indexes

    root, engine = indexed({"notes/a.md": doc("A", "alpha text\n")})
    (root / "notes/b.md").write_text(doc("B", "bravo zulu text\n"))
    docs = [replace(d, text="", body="") for d in _docs(root)]
    report = build_indexes(root, docs)
    assert report.changed == 1
    assert engine.search({"query": "zulu", "mode": "bm25"})["results"][0]["path"] == "notes/b.md"


def test_readers_never_see_a_half_written_generation(indexed, fake_embedder):
    """Searches running while updates commit always get a complete, consistent answer."""
    import threading

    root, _ = indexed(FILES)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        engine = SearchEngine(root, embedder=fake_embedder)
        while not stop.is_set():
            try:
                for mode, q in (("bm25", "replica svc-auth-v2 billing"), ("hybrid", "replica billing"),
                                ("exact", "svc-auth-v2")):
                    res = engine.search({"query": q, "mode": mode})
                    assert res["count"] >= 1 and all(r["title"] for r in res["results"])
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
                return

    t = threading.Thread(target=reader)
    t.start()
    try:
        p = root / "notes/beta.md"
        for i in range(12):
            p.write_text(p.read_text() + f"\nround {i}\n")
            docs = {d.path: d for d in _docs(root)}
            update_indexes(root, [docs["notes/beta.md"]], [])
    finally:
        stop.set()
        t.join()
    assert not errors, errors[0]


def test_incremental_index_ranks_like_a_clean_build(write_corpus, fake_embedder, tmp_path):
    """Deleted-but-unmerged chunks do not count in BM25 statistics: after edits and
    deletions, an updated index answers exactly like one built from scratch."""
    import shutil

    from commonplace.compiler.search.index.stage import build_indexes

    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"## Part\n\nbilling pipeline run {i % 5} "
                                       + "invoice " * (i % 3) + f"shared words here {i % 2}\n") for i in range(30)}
    root = write_corpus(files)
    build_indexes(root, _docs(root))
    for i in range(0, 30, 3):
        p = root / f"notes/n{i:02d}.md"
        if i % 2:
            p.unlink()
        else:
            p.write_text(p.read_text() + "\nbilling addendum shared\n")
        reindex(root)
    clean = tmp_path / "clean"
    shutil.copytree(root, clean, ignore=shutil.ignore_patterns(".commonplace"))
    build_indexes(clean, _docs(clean))
    inc_engine, clean_engine = SearchEngine(root, embedder=fake_embedder), SearchEngine(clean, embedder=fake_embedder)
    inc_engine.search("x")
    assert inc_engine._bm25.fast().deleted is not None  # the updated index does hold deleted chunks
    for q in ["billing pipeline", "invoice", "shared words", "run 3 addendum", "title:Note billing", "bill*"]:
        for mode in ("bm25", "exact", "hybrid"):
            a = inc_engine.search({"query": q, "mode": mode, "k": 20, "corpus": "all"})["results"]
            b = clean_engine.search({"query": q, "mode": mode, "k": 20, "corpus": "all"})["results"]
            assert [(r["path"], r["lines"], r["snippet"]) for r in a] == \
                [(r["path"], r["lines"], r["snippet"]) for r in b], (q, mode)
            if mode == "bm25":
                assert [round(r["score"], 4) for r in a] == [round(r["score"], 4) for r in b], q


def test_a_small_update_embeds_while_the_bm25_index_commits(indexed, fake_embedder, monkeypatch):
    """The changed chunk is embedded in a thread of its own, started when it is queued:
    the encoder is already running when the BM25 commit starts, and the update waits for it."""
    import threading

    from commonplace.compiler.search.index import bm25_write

    root, engine = indexed(FILES)
    seen: dict[str, object] = {}
    started = threading.Event()
    encode = fake_embedder.encode

    def slow_encode(texts):
        seen["thread"] = threading.current_thread().name
        started.set()
        return encode(texts)

    commit = bm25_write.BM25Writer.commit

    def commit_after_encoding_started(self, *a, **k):
        seen["encoding_when_committing"] = started.wait(5)
        return commit(self, *a, **k)

    monkeypatch.setattr(fake_embedder, "encode", slow_encode)
    monkeypatch.setattr(bm25_write.BM25Writer, "commit", commit_after_encoding_started)
    p = root / "notes/alpha.md"
    p.write_text(p.read_text().replace("two minutes", "ninety seconds"))
    report = update_indexes(root, [d for d in _docs(root) if d.path == "notes/alpha.md"], [])
    assert seen == {"thread": "embed-early", "encoding_when_committing": True}
    assert report.chunks_embedded == 1 and report.embeddings_pending == 0
    hits = engine.search({"query": "ninety seconds", "mode": "vector"})["results"]
    assert hits and hits[0]["path"] == "notes/alpha.md"


def test_a_failed_early_embedding_leaves_the_chunk_pending(indexed, fake_embedder, monkeypatch):
    root, engine = indexed(FILES)
    fake_embedder.fail_after = fake_embedder.calls  # the next call raises
    p = root / "notes/alpha.md"
    p.write_text(p.read_text().replace("two minutes", "ninety seconds"))
    report = update_indexes(root, [d for d in _docs(root) if d.path == "notes/alpha.md"], [])
    assert report.chunks_embedded == 0 and report.embeddings_pending == 1
    assert "notes/alpha.md" in report.pending_documents
    assert any("embedding failed" in w for w in report.warnings)
    assert engine.search({"query": "ninety seconds", "mode": "bm25"})["results"][0]["path"] == "notes/alpha.md"
    fake_embedder.fail_after = None  # the next update embeds what was left
    report = reindex(root)
    assert report.embeddings_pending == 0
