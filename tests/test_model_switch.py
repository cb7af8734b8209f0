"""A model change re-embeds once and never mixes two models' vectors in one index, even
when the switch's embedding is interrupted half way (the build is site first: the BM25
pass already belongs to the new model). In-process, with two stand-in models."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "search"))

from searchkit import FakeEmbedder  # noqa: E402

from test_site_first import make_corpus  # noqa: E402


class Model(FakeEmbedder):
    """The word-hashing stand-in; model "b" permutes its dimensions (a different space
    with the same size, so mixing would go unnoticed by shape); `stop_after` raises
    KeyboardInterrupt (Ctrl-C) on the call after that many."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.stop_after: int | None = None
        self.encoded = 0

    def encode(self, texts):  # noqa: ANN001, ANN201
        if self.stop_after is not None and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        out = super().encode(texts)
        self.encoded += len(texts)
        return out[:, ::-1].copy() if self.name == "model-b" else out


@pytest.fixture
def models(monkeypatch):
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.read.engine import close_engines

    made = {"model-a": Model("model-a"), "model-b": Model("model-b")}
    embedding.set_embedder_factory(lambda ref: made[ref.model_id])
    yield made
    embedding.set_embedder_factory(None)
    close_engines()


def build(root: Path, out: Path, model: str, monkeypatch) -> dict:
    from commonplace.compiler.build.pipeline import BuildOptions
    from commonplace.compiler.build.pipeline import build as run_build

    monkeypatch.setenv("COMMONPLACE_EMBED_MODEL", model)
    return run_build(BuildOptions(corpus=root, out=out)).extra


def stored(root: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The live index's meta and its vectors by chunk text (the text the model saw)."""
    from commonplace.compiler.search.index.chunk import compose_embed_text
    from commonplace.compiler.search.store.disk import open_table
    from commonplace.compiler.search.store.vectors import VectorIndex

    index = root / ".commonplace" / "index"
    gen = index / (index / "CURRENT").read_text().strip()
    meta = json.loads((gen / "meta.json").read_text())
    db = open_table(gen, readonly=True)
    rows = [(r["id"], compose_embed_text(r["prefix"], r["text"])) for r in
            db.execute("SELECT id, prefix, text FROM chunks WHERE has_vector = 1")]
    db.close()
    if not rows:
        return meta, {}
    vecs = VectorIndex.load(gen / "vectors.hnsw", meta["dim"], deleted=meta["deleted_vectors"]).get(
        [i for i, _ in rows])
    return meta, {text: v for (_, text), v in zip(rows, vecs)}


def assert_all_from(model: Model, vectors: dict[str, np.ndarray]) -> None:
    texts = sorted(vectors)
    expected = Model(model.name).encode(texts)
    got = np.stack([vectors[t] for t in texts])
    assert np.allclose(got, expected, atol=1e-5), f"vectors not all from {model.name}"


def test_model_switch_reembeds_once_and_never_mixes(tmp_path, models, monkeypatch):
    root = make_corpus(tmp_path / "notes")
    out = tmp_path / "site"
    a, b = models["model-a"], models["model-b"]
    build(root, out, "model-a", monkeypatch)
    meta, vectors = stored(root)
    assert meta["model"] == "model-a" and meta["vectors"] == meta["chunks"] == 360
    assert_all_from(a, vectors)

    # Switch, and stop the embedding after its first group (256 chunks) as Ctrl-C would.
    b.stop_after = 1
    with pytest.raises(KeyboardInterrupt):
        build(root, out, "model-b", monkeypatch)
    meta, vectors = stored(root)
    # The live index is model b's already (its BM25 pass), and holds none of a's vectors.
    assert meta["model"] == "model-b" and (meta["chunks"], meta["vectors"]) == (360, 0)
    assert vectors == {}

    b.stop_after = None
    extra = build(root, out, "model-b", monkeypatch)
    assert extra["chunks_embedded"] == 360 - 256  # the interrupted run's group came from the cache
    assert b.encoded == 360  # every text embedded by b exactly once over both runs
    meta, vectors = stored(root)
    assert meta["model"] == "model-b" and meta["vectors"] == meta["chunks"] == 360
    assert_all_from(b, vectors)

    assert build(root, out, "model-b", monkeypatch).get("chunks_embedded", 0) == 0
    # Back to a: its vectors are still cached; nothing is embedded again, none of b's stay.
    encoded = a.encoded
    build(root, out, "model-a", monkeypatch)
    assert a.encoded == encoded
    meta, vectors = stored(root)
    assert meta["model"] == "model-a" and meta["vectors"] == 360
    assert_all_from(a, vectors)
