"""Calibrated confidence, fusion that keeps the stronger list, and link text (issue 19).

The fast tests use the deterministic bag-of-words stand-in embedder; the slow ones the
real model (all-MiniLM-L6-v2), on the project's own docs/ and on a small generated
conversation corpus from the quality benchmark.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from searchkit import DIM, FakeEmbedder, doc

from commonplace.compiler.search.read import fusion
from commonplace.compiler.search.read.engine import SearchEngine

REPO = Path(__file__).resolve().parents[2]

RANK_FUSION = doc("Rank fusion", "# Rank fusion\n\nWhy rank fusion: hybrid search merges the BM25 list and "
                  "the vector list by rank, not by score, because the two scores are not comparable.\n\n"
                  "## How\n\nEach document scores the sum of 1/(k + rank) over the lists it appears in. "
                  "A document both lists rank well wins.\n\n## Priors\n\nSmall priors break near-ties.\n")
STUB = doc("Stub", "See [[Rank fusion]].\n")
OTHERS = {
    "notes/deploys.md": doc("Deploys", "We deploy on Tuesdays after the release review.\n"),
    "notes/hiring.md": doc("Hiring", "The hiring loop has three interviews and a take-home task.\n"),
    "notes/vectors.md": doc("Vector index", "HNSW graphs answer nearest-neighbour queries quickly.\n"),
}


class Nonsense(FakeEmbedder):
    """The stand-in embedder, except that made-up words embed far from every page (as they
    do with the real model: see the benchmark's nonsense-query rows)."""

    def encode_query(self, text: str) -> np.ndarray:
        if text.strip() in {"xyzzy", "plugh frobozz"}:
            v = np.zeros(DIM, dtype=np.float32)
            v[0] = -1.0  # every page vector has a small positive component here
            return v
        return super().encode_query(text)


def paths(res: dict) -> list[str]:
    return [r["path"] for r in res["results"]]


# --------------------------------------------------------------------------- link text


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_a_stub_linking_to_a_page_ranks_below_it(indexed, mode: str) -> None:
    _root, engine = indexed({"concepts/rank-fusion.md": RANK_FUSION, "notes/stub.md": STUB, **OTHERS})
    order = paths(engine.search({"query": "why rank fusion", "mode": mode}))
    assert order[0] == "concepts/rank-fusion.md", order
    assert "notes/stub.md" not in order or order.index("notes/stub.md") > 0


def test_link_text_still_finds_the_linking_page(indexed) -> None:
    """Outgoing link text weighs less, but is not dropped: a page is found by what it links to."""
    _root, engine = indexed({"concepts/rank-fusion.md": RANK_FUSION, "notes/stub.md": STUB, **OTHERS})
    assert "notes/stub.md" in paths(engine.search({"query": "rank fusion", "mode": "bm25"}))


# --------------------------------------------------------------------------- confidence


def test_every_result_has_a_normalised_score_and_min_score_filters_on_it(indexed) -> None:
    _root, engine = indexed({"concepts/rank-fusion.md": RANK_FUSION, "notes/stub.md": STUB, **OTHERS})
    for mode in ("hybrid", "bm25", "vector", "exact"):
        query = "rank fusion" if mode == "exact" else "rank fusion priors"
        res = engine.search({"query": query, "mode": mode, "k": 20})
        assert res["results"], mode
        norms = [r["score_normalized"] for r in res["results"]]
        assert all(0.0 <= n <= 1.0 for n in norms), (mode, norms)
        cut = sorted(norms)[len(norms) // 2]
        kept = engine.search({"query": query, "mode": mode, "k": 20, "min_score": cut})
        assert [r["score_normalized"] for r in kept["results"]] == [n for n in norms if n >= cut]
    full = engine.search({"query": "rank fusion priors", "mode": "bm25"})["results"][0]
    assert full["path"] == "concepts/rank-fusion.md" and full["score_normalized"] == 1.0  # every word matched


@contextmanager
def built_with(fake: FakeEmbedder, write_corpus) -> Iterator[SearchEngine]:
    """The rank-fusion corpus indexed and searched with `fake` as the model."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.index.stage import build_indexes

    embedding.set_embedder_factory(lambda ref: fake)
    try:
        root = write_corpus({"concepts/rank-fusion.md": RANK_FUSION, "notes/stub.md": STUB, **OTHERS})
        build_indexes(root, load_corpus(root).docs)
        yield SearchEngine(root, embedder=fake)
    finally:
        embedding.set_embedder_factory(None)


def test_nonsense_gets_no_confident_results_and_a_warning(tmp_path, write_corpus) -> None:
    with built_with(Nonsense(), write_corpus) as engine:
        res = engine.search({"query": "xyzzy", "k": 20})
        assert res["count"] == 0
        assert any("nothing matched the query well" in w for w in res["warnings"]), res["warnings"]
        # asking for everything (min_score 0) shows the weak neighbours, still with the warning
        loose = engine.search({"query": "xyzzy", "k": 20, "min_score": 0})
        assert loose["count"] == 5 and all(r["score_normalized"] < fusion.WEAK_VECTOR_ONLY for r in loose["results"])
        assert any("nothing matched the query well" in w for w in loose["warnings"])
        # a real question on the same corpus has no such warning
        good = engine.search({"query": "why rank fusion"})
        assert good["count"] > 0 and not any("nothing matched" in w for w in good["warnings"])


def test_min_score_must_be_a_finite_number(indexed) -> None:
    from commonplace.compiler.search.read.query import InvalidRequest

    _root, engine = indexed({"notes/deploys.md": OTHERS["notes/deploys.md"]})
    for bad in ("high", float("nan"), float("inf"), True):
        with pytest.raises(InvalidRequest):
            engine.search({"query": "deploy", "min_score": bad})


# --------------------------------------------------------------------------- fusion


def _recall(engine: SearchEngine, questions, mode: str) -> float:
    total = 0.0
    for q in questions:
        got = paths(engine.search({"query": q.text, "mode": mode, "k": 10, "corpus": "all", "min_score": 0}))
        total += len(set(got) & set(q.relevant)) / len(q.relevant)
    return total / len(questions)


def _dialogue(root: Path, seeds=(101,)):
    from tests.benchmarks.quality import dialogue

    questions = []
    for seed in seeds:
        questions += dialogue.generate(root / f"conv-{seed}", seed=seed, sessions=8, turns_per_session=16)
    return questions


def test_fusion_keeps_a_strong_lexical_list_on_long_questions() -> None:
    """The issue's case in miniature: long questions give the right short document low
    coverage. The old rule (weight 0 below 34%) dropped it; the chosen one keeps it."""
    bm25 = [("right.md", 0.3)] + [(f"b{i}.md", 0.25) for i in range(9)]
    vector = [(f"v{i}.md", 0.4) for i in range(10)] + [("right.md", 0.3)]
    assert "right.md" not in fusion.fuse_keys(bm25, vector, fusion.LEGACY)[:10]
    assert fusion.fuse_keys(bm25, vector, fusion.DEFAULT).index("right.md") < 3


def test_a_bm25_list_that_covers_little_of_the_query_does_not_reorder_the_vector_list() -> None:
    """A paraphrased question shares no informative word with its answer: BM25's hits are
    chance matches on one word, and the vector order stands."""
    bm25 = [(f"b{i}.md", 0.12) for i in range(10)]
    vector = [(f"v{i}.md", 0.5 - i / 100) for i in range(10)]
    assert fusion.fuse_keys(bm25, vector)[:10] == [p for p, _ in vector]
    assert fusion.fuse_keys(bm25, vector, fusion.PLAIN_RRF)[:10] != [p for p, _ in vector]


def test_a_standout_hit_is_not_weak_even_at_a_low_cosine() -> None:
    flat = [0.2, 0.19, 0.19, 0.18, 0.18, 0.18, 0.17, 0.17, 0.17, 0.16]  # a made-up word
    assert fusion.normalized_score(None, flat[0], fusion.background(flat)) < fusion.WEAK_VECTOR_ONLY
    sharp = [0.31] + flat[1:]  # a paraphrase: low cosine, far above the rest
    assert fusion.normalized_score(None, sharp[0], fusion.background(sharp)) >= fusion.WEAK_VECTOR_ONLY


def test_hybrid_recall_is_at_least_the_better_list_with_the_stand_in(tmp_path, fake_embedder) -> None:
    """On the shipped labelled set (retrieval_corpus.py) with the stand-in embedder."""
    import retrieval_corpus as rc

    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.stage import build_indexes

    root = tmp_path / "corpus"
    rc.write(root)
    build_indexes(root, load_corpus(root).docs)
    engine = SearchEngine(root, embedder=fake_embedder)

    def recall(mode: str) -> float:
        total = 0.0
        for _kind, q, rel in rc.QUESTIONS:
            got = paths(engine.search({"query": q, "mode": mode, "k": 10, "min_score": 0}))
            total += len(set(got) & set(rel)) / len(rel)
        return total / len(rc.QUESTIONS)

    r = {m: recall(m) for m in ("bm25", "vector", "hybrid")}
    assert r["hybrid"] >= max(r["bm25"], r["vector"]), r


@pytest.mark.slow
@pytest.mark.e2e
def test_hybrid_recall_is_at_least_the_better_list_with_the_real_model(tmp_path) -> None:
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.index.stage import build_indexes

    embedding.set_embedder_factory(None)
    questions = _dialogue(tmp_path, seeds=(101, 102))
    for seed in (101, 102):
        root = tmp_path / f"conv-{seed}"
        build_indexes(root, load_corpus(root).docs)
    r = {}
    for m in ("bm25", "vector", "hybrid"):
        r[m] = sum(_recall(SearchEngine(tmp_path / f"conv-{s}"), [q for q in questions if q.corpus == f"conv-{s}"], m)
                   for s in (101, 102)) / 2
    assert r["hybrid"] >= max(r["bm25"], r["vector"]), r


@pytest.mark.slow
@pytest.mark.e2e
def test_nonsense_on_the_docs_corpus_with_the_real_model(tmp_path) -> None:
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.index.stage import build_indexes

    embedding.set_embedder_factory(None)
    root = tmp_path / "docs"
    shutil.copytree(REPO / "docs", root)
    build_indexes(root, load_corpus(root).docs)
    engine = SearchEngine(root)
    res = engine.search({"query": "xyzzy", "k": 20})
    assert res["count"] < 3, paths(res)
    assert any("nothing matched the query well" in w for w in res["warnings"]), res["warnings"]
    good = engine.search({"query": "why rank fusion", "k": 20})
    assert good["count"] >= 5 and not any("nothing matched" in w for w in good["warnings"])
    assert good["results"][0]["score_normalized"] >= 0.5


@pytest.mark.slow
@pytest.mark.e2e
def test_a_new_corpus_of_a_few_notes_does_not_answer_what_it_does_not_hold(tmp_path) -> None:
    """With fewer notes than the background rank, the least related note is no background:
    a question none of them answers used to stand out above it and look answered."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.index.stage import build_indexes

    embedding.set_embedder_factory(None)
    root = tmp_path / "few"
    for rel, text in {"people/dana.md": doc("Dana", "Dana is vegetarian and manages the SRE team.\n"),
                      "projects/atlas.md": doc("Atlas", "The Atlas migration moves billing to Kubernetes; "
                                               "the cutover is planned for 14 December.\n"),
                      "core/identity.md": doc("Identity", "I am the assistant of Ruth, who runs platform "
                                              "engineering.\n"), **OTHERS}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    build_indexes(root, load_corpus(root).docs)
    engine = SearchEngine(root)
    res = engine.search({"query": "What is the office wifi password?", "k": 5})
    assert res["count"] == 0, paths(res)
    assert any("nothing matched the query well" in w for w in res["warnings"]), res["warnings"]
    good = engine.search({"query": "when is the move to kubernetes", "k": 5})
    assert paths(good)[0] == "projects/atlas.md" and not any("nothing matched" in w for w in good["warnings"])


class Paraphrase(FakeEmbedder):
    """A query of words no page holds that embeds as the vector note's own text does: a
    match by meaning alone, and a strong one."""

    def encode_query(self, text: str) -> np.ndarray:
        if text.strip() == "zqx plover":
            return super().encode_query("HNSW graphs answer nearest-neighbour queries quickly.")
        return super().encode_query(text)


def test_results_that_share_no_word_with_the_query_say_so(tmp_path, write_corpus) -> None:
    """Hybrid results all found by meaning alone are kept (a paraphrase is found so) and
    the warning says none shares a word; a query whose words are found has no warning."""
    with built_with(Paraphrase(), write_corpus) as engine:
        res = engine.search({"query": "zqx plover", "mode": "hybrid"})
        assert paths(res)[:1] == ["notes/vectors.md"], paths(res)
        assert any("no result shares a word with the query" in w for w in res["warnings"]), res["warnings"]
        good = engine.search({"query": "HNSW graphs", "mode": "hybrid"})
        assert paths(good)[:1] == ["notes/vectors.md"]
        assert not any("shares a word" in w for w in good["warnings"]), good["warnings"]
