"""Retrieval quality on a labelled question set (tests/search/retrieval_corpus.py).

MRR@10 and recall@10 per mode. The fast test checks the lexical modes and the fixture
itself; the e2e test uses the real default model and checks that hybrid is at least as
good as the better of bm25 and vector in recall (and within 0.05 of it in MRR). Run with
`-s` to see the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import retrieval_corpus as rc

from commonplace.compiler.build.pipeline import load_corpus
from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.index.stage import build_indexes
from commonplace.compiler.search.text import terms

K = 10
MODES = ("bm25", "vector", "hybrid", "exact")


def evaluate(engine: SearchEngine, modes=MODES, kinds=None) -> dict[str, dict[str, float]]:
    """{mode: {"mrr": .., "recall": .., plus per kind "mrr:<kind>"}} over the question set."""
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        rr: dict[str, list[float]] = {}
        rec: dict[str, list[float]] = {}
        for kind, q, rel in rc.QUESTIONS:
            if kinds and kind not in kinds:
                continue
            got = [r["path"] for r in engine.search({"query": q, "mode": mode, "k": K})["results"]]
            first = next((i for i, p in enumerate(got, 1) if p in rel), None)
            for key in ("all", kind):
                rr.setdefault(key, []).append(1.0 / first if first else 0.0)
                rec.setdefault(key, []).append(len(set(got) & set(rel)) / len(rel))
        row = {"mrr": sum(rr["all"]) / len(rr["all"]), "recall": sum(rec["all"]) / len(rec["all"])}
        for key in rr:
            if key != "all":
                row[f"mrr:{key}"] = sum(rr[key]) / len(rr[key])
                row[f"recall:{key}"] = sum(rec[key]) / len(rec[key])
        out[mode] = row
    return out


def table(metrics: dict[str, dict[str, float]]) -> str:
    kinds = sorted({k.split(":")[1] for row in metrics.values() for k in row if ":" in k})
    head = f"{'mode':<8} {'MRR@10':>7} {'R@10':>6} " + " ".join(f"{'MRR ' + k:>15}" for k in kinds)
    lines = [head]
    for mode, row in metrics.items():
        lines.append(f"{mode:<8} {row['mrr']:>7.3f} {row['recall']:>6.3f} "
                     + " ".join(f"{row.get('mrr:' + k, 0):>15.3f}" for k in kinds))
    return "\n".join(lines)


def _build(root: Path) -> None:
    rc.write(root)
    report = build_indexes(root, load_corpus(root).docs)
    assert report.embeddings_pending == 0


def test_fixture_is_sound():
    assert len(rc.QUESTIONS) >= 30
    kinds = {k for k, _, _ in rc.QUESTIONS}
    assert kinds == {"keyword", "ident", "paraphrase"}
    for kind, q, rel in rc.QUESTIONS:
        for path in rel:
            assert path in rc.DOCS, path
        if kind == "paraphrase":  # no word in common with the answer, by the index's own analyzer
            shared = set(terms(q)) & {t for p in rel for t in terms(rc.DOCS[p] + " " + p)}
            assert not shared, (q, shared)


def test_lexical_retrieval(tmp_path, fake_embedder, capsys):
    root = tmp_path / "corpus"
    _build(root)
    m = evaluate(SearchEngine(root, embedder=fake_embedder))
    with capsys.disabled():
        print("\nretrieval with a fake (bag-of-words) embedder:\n" + table(m))
    assert m["bm25"]["mrr:ident"] == 1.0  # every identifier ranks its document first
    assert m["bm25"]["mrr:keyword"] >= 0.9
    assert m["exact"]["mrr:ident"] == 1.0
    assert m["bm25"]["mrr:paraphrase"] <= 0.2  # the paraphrases really are lexically disjoint


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("precision", ["auto", "int8"])
def test_retrieval_with_the_real_model(tmp_path, capsys, precision, request, monkeypatch):
    from commonplace.compiler.search import embedding

    if precision == "int8":  # the int8 feed-forward model must rank as well (isolated model cache)
        request.getfixturevalue("int8_cache")
        monkeypatch.setenv("COMMONPLACE_EMBED_PRECISION", "int8")
    embedding.set_embedder_factory(None)
    root = tmp_path / "corpus"
    _build(root)
    engine = SearchEngine(root)
    m = evaluate(engine)
    with capsys.disabled():
        print(f"\nretrieval with {engine.meta.model} ({engine.meta.precision}), {len(rc.QUESTIONS)} questions:\n"
              + table(m))
    assert m["hybrid"]["recall"] >= max(m["bm25"]["recall"], m["vector"]["recall"])
    # Hybrid weighs BM25 twice and keeps low-coverage BM25 hits (decision 2026-11-23-hybrid-
    # fusion-weights: +2.6 R@10 on long questions over short documents). On this set's
    # lexically disjoint paraphrases a chance one-word BM25 match can lift the vector list's
    # second page above its first (3 of 11 at the time): MRR may trail vector's by 0.05.
    assert m["hybrid"]["mrr"] >= m["bm25"]["mrr"]
    assert m["hybrid"]["mrr"] >= m["vector"]["mrr"] - 0.05
    assert m["vector"]["mrr:paraphrase"] >= 0.6
    assert m["hybrid"]["mrr:ident"] >= 0.9
