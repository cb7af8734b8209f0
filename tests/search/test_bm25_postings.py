"""The grouped posting writer writes the bytes Whoosh's own pipeline writes.

Two indexes get the same chunks, one through Whoosh's PostingPool and add_postings,
one through `bm25_postings`; their posting and term files must be identical (segment
names are random, so files are matched by extension), and searches must agree.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonplace.compiler.search.store import bm25
from commonplace.compiler.search.index import bm25_postings, bm25_write

WORDS = ("auth token rotation svc-auth-v2 deploy canary rollback latency p99 C++ foo_bar "
         "vector index hnsw recall cosine whoosh stemming running runs ran queue backlog").split()


def _chunk(i: int, rng: random.Random, body_words: int) -> bm25.ChunkDoc:
    body = " ".join(rng.choice(WORDS) for _ in range(body_words))
    return bm25.ChunkDoc(
        cid=i, path=f"notes/n{i // 3}.md", kind="durable", type=rng.choice(["note", "decision"]),
        status=rng.choice(["", "current", "draft"]), tags=rng.sample(["ops", "auth", "search"], rng.randint(0, 2)),
        date="2026-01-%02d" % (1 + i % 28), title=f"Note {i // 3} {rng.choice(WORDS)}",
        headings=" > ".join(rng.sample(WORDS, 2)), body=body, meta=f"notes n{i // 3} ops", first=i % 3 == 0,
    )


def _files(directory: Path) -> dict[str, bytes]:
    """Segment files keyed by what follows the segment's random name (`pst`, `trm`, columns)."""
    out: dict[str, bytes] = {}
    for f in sorted(directory.iterdir()):
        if f.name.startswith("MAIN_") and "." in f.name and not f.name.endswith((".toc", "WRITELOCK")):
            key = f.name.split(".", 1)[1]
            assert key not in out, f"expected one segment, found a second {key}"
            out[key] = f.read_bytes()
    return out


def _build(directory: Path, batches: list[list[bm25.ChunkDoc]], grouped: bool, monkeypatch) -> None:
    installed = []
    real = bm25_postings.install
    monkeypatch.setattr(bm25_postings, "install",
                        lambda writer: installed.append(grouped and real(writer)) or installed[-1])
    for n, batch in enumerate(batches):
        w = bm25_write.BM25Writer(directory, create=n == 0)
        w.delete_paths(sorted({d.path for d in batch}))
        w.add(batch)
        w.commit(optimize=n == len(batches) - 1)  # the last commit merges everything into one segment
    monkeypatch.undo()
    assert installed == [grouped] * len(batches)


def _compare(tmp_path: Path, batches: list[list[bm25.ChunkDoc]], monkeypatch, probe: str | None = "auth") -> None:
    a, b = tmp_path / "whoosh", tmp_path / "grouped"
    _build(a, batches, grouped=False, monkeypatch=monkeypatch)
    _build(b, batches, grouped=True, monkeypatch=monkeypatch)
    fa, fb = _files(a), _files(b)
    assert set(fa) >= {"pst", "trm"}
    assert fa.keys() == fb.keys()
    for ext in fa:
        assert fa[ext] == fb[ext], f"{ext} differs"
    if probe is None:
        return
    ix = bm25.open_index(b)
    try:
        with ix.reader() as r:
            assert r.doc_frequency("text", probe) > 0  # the grouped index is a working index
    finally:
        ix.close()


def test_one_commit_writes_whooshs_bytes(tmp_path, monkeypatch):
    rng = random.Random(1)
    # Enough postings per common term to fill several 128-posting blocks.
    docs = [_chunk(i, rng, rng.randint(0, 60)) for i in range(700)]
    _compare(tmp_path, [docs], monkeypatch)


def test_updates_and_merges_write_whooshs_bytes(tmp_path, monkeypatch):
    rng = random.Random(2)
    first = [_chunk(i, rng, rng.randint(1, 40)) for i in range(300)]
    # Re-index some paths (deletes plus adds), then a merge of everything.
    second = [_chunk(i, rng, rng.randint(1, 40)) for i in range(150, 420)]
    third = [_chunk(i, rng, rng.randint(1, 40)) for i in range(0, 90)]
    _compare(tmp_path, [first, second, third], monkeypatch)


def test_install_declines_a_writer_it_does_not_know():
    class Other:
        pass

    assert bm25_postings.install(Other()) is False


def test_postings_out_of_order_are_sorted():
    pool = bm25_postings.TermPool()
    for docnum, weight in ((5, 1.0), (2, 2.0), (9, 3.0)):
        pool.add(("text", b"word", docnum, weight, b"\x00\x00\x00\x01"))
    assert [(d, w) for _, _, d, w, _ in pool.iter_postings()] == [(2, 2.0), (5, 1.0), (9, 3.0)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=1, max_size=30))
def test_arbitrary_text_writes_whooshs_bytes(tmp_path_factory, texts):
    tmp = tmp_path_factory.mktemp("arb")
    docs = [bm25.ChunkDoc(cid=i, path=f"p{i}.md", kind="durable", type="note", status="", tags=[], date="",
                          title=t[:20], headings="", body=t, meta="", first=True) for i, t in enumerate(texts)]
    with pytest.MonkeyPatch.context() as mp:
        _compare(tmp, [docs], mp, probe=None)
