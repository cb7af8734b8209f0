"""The OpenVINO backend against the sentence-transformers reference (real default model)."""

from __future__ import annotations

import numpy as np
import pytest
import retrieval_corpus as rc

from commonplace.compiler.search import embedding
from commonplace.compiler.search.embedding import base, openvino_backend, pool

pytestmark = pytest.mark.e2e

HOSTILE = [
    "", "   ", "  padded on both sides  ", "emoji 🎉🚀 naïve café", "x" * 5000, "word " * 600,
    "\t\ttabs\n\nand newlines\n", "C++ foo_bar svc-auth-v2 title:x AND NOT", "ÀÉÎ UPPER Case", "\x00nul\x7f",
]


@pytest.fixture(scope="module")
def ref():
    return embedding.resolve_model(None)


@pytest.fixture(scope="module")
def st_fp32(ref):
    return embedding.SentenceTransformerEmbedder(ref, "fp32")


def test_tokens_match_sentence_transformers(ref, st_fp32):
    ov = openvino_backend.OpenVINOEmbedder(ref, "fp32")
    ov.load()
    st_fp32.dim  # loads the reference model
    texts = list(rc.DOCS.values()) + HOSTILE
    theirs = st_fp32._model.preprocess(texts)["input_ids"].tolist()
    ours = [e.ids for e in ov._tok.encode_batch([openvino_backend._clean(t) for t in texts])]
    for t, a, b in zip(texts, theirs, ours):
        a = [x for x in a if x != 0]  # their batch is padded to its longest text
        b = [x for x in b if x != 0]
        assert a == b, t[:60]


def _expected_precision(ref, precision: str) -> str:
    base = "bf16" if embedding.cpu_has_bf16() else "fp32"
    if precision == "fp32":
        return "fp32"
    if precision == "bf16":
        return base
    q8 = openvino_backend.quantized_dir(openvino_backend.export_dir(ref.location, ref.model_id)) / "model.xml"
    if embedding.cpu_has_vnni() and (precision == "int8" or q8.is_file()):
        return f"int8+{base}"
    return base


@pytest.mark.parametrize("precision", ["fp32", "bf16", "auto", "int8"])
def test_vectors_match_the_fp32_reference(ref, st_fp32, precision, request):
    if precision == "int8":
        request.getfixturevalue("int8_cache")  # an isolated cache holding the int8 model
    ov = openvino_backend.OpenVINOEmbedder(ref, precision)
    texts = list(rc.DOCS.values()) + [q for _, q, _ in rc.QUESTIONS] + HOSTILE
    got, want = ov.encode(texts), st_fp32.encode(texts)
    assert got.shape == want.shape == (len(texts), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-3)
    cos = np.sum(got * want, axis=1)
    assert float(cos.min()) >= {"fp32": 0.9999, "bf16": base.BF16_MIN_COSINE}.get(precision, 0.995)
    assert ov.precision == _expected_precision(ref, precision)
    assert ov.dim == 384 and ov.calls == 1 and ov.encoded == len(texts)
    np.testing.assert_allclose(ov.encode_query(texts[3]), got[3], atol=1e-5)  # batch-independent


def test_int8_is_made_once_only_for_big_jobs_and_then_chosen_by_auto(ref, int8_cache, monkeypatch):
    d = openvino_backend.export(ref.location, ref.model_id)
    q8 = openvino_backend.quantized_dir(d)
    assert (q8 / "model.xml").is_file() and (q8 / "model.bin").is_file()
    assert not [p for p in d.iterdir() if p.name.startswith(".int8-")]  # no leftovers
    mtime = (q8 / "model.bin").stat().st_mtime_ns
    assert openvino_backend.quantize(d) == q8 and (q8 / "model.bin").stat().st_mtime_ns == mtime

    calls = []
    monkeypatch.setattr(openvino_backend, "quantize", lambda path: calls.append(path))
    monkeypatch.setattr(pool, "cpu_has_vnni", lambda: True)
    pool._export_once(None, expected=openvino_backend.QUANTIZE_MIN_TEXTS - 1)
    assert calls == []  # a small job: bf16 is fine, no 20 s of calibration
    pool._export_once(None, expected=openvino_backend.QUANTIZE_MIN_TEXTS)
    assert calls == [d]
    monkeypatch.setenv("COMMONPLACE_EMBED_PRECISION", "bf16")
    pool._export_once(None, expected=10 ** 6)
    assert calls == [d]  # asked for bf16: never quantized

    # int8: the feed-forward inputs (MatMuls feeding a GELU) and the query/key/value
    # projections; the attention and feed-forward outputs stay bf16 (cosine, see the decision).
    import openvino as ov

    targets = openvino_backend._int8_matmuls(ov.Core().read_model(str(d / "model.xml")))
    assert len(targets) == 24
    assert sum("intermediate" in t for t in targets) == 6
    assert sum(any(f"self.{k}" in t for k in ("query", "key", "value")) for t in targets) == 18
    assert not any("output.dense" in t for t in targets)


def test_a_failed_int8_probe_keeps_bf16(ref, int8_cache, monkeypatch, caplog):
    if not embedding.cpu_has_vnni():
        pytest.skip("no VNNI: auto never tries int8 here")
    monkeypatch.setattr(openvino_backend, "INT8_MIN_COSINE", 1.01)  # no model can pass
    ov = openvino_backend.OpenVINOEmbedder(ref, "auto")
    ov.load()
    assert ov.precision == ("bf16" if embedding.cpu_has_bf16() else "fp32")
    assert "int8 probe cosine" in caplog.text


def test_the_export_is_reused_and_a_changed_model_gets_a_new_one(ref, tmp_path, monkeypatch):
    monkeypatch.setenv("COMMONPLACE_CACHE_DIR", str(tmp_path / "cache"))
    first = openvino_backend.export(ref.location, ref.model_id)
    assert {p.name for p in first.iterdir()} == {"model.xml", "model.bin", "tokenizer.json", "pipeline.json"}
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".export-")]  # no leftovers
    mtime = (first / "model.bin").stat().st_mtime_ns
    assert openvino_backend.export(ref.location, ref.model_id) == first
    assert (first / "model.bin").stat().st_mtime_ns == mtime  # not exported again
    assert openvino_backend.export_dir(ref.location, "another-model") != first


def test_auto_falls_back_to_torch_when_openvino_cannot_run(ref, monkeypatch, caplog):
    def broken(*a, **k):
        raise openvino_backend.Unsupported("pipeline ['Transformer', 'Dense'] is not supported")

    monkeypatch.setattr(openvino_backend, "export", broken)
    e = embedding.AutoEmbedder(ref, "fp32")
    v = e.encode(["a text about signing keys"])
    assert v.shape == (1, 384) and e.backend == "torch" and embedding.precision_label(e) == "fp32 (torch)"
    assert "OpenVINO embeddings unavailable" in caplog.text
    strict = embedding.AutoEmbedder(ref, "fp32", fallback=False)
    with pytest.raises(embedding.EmbeddingError, match="OpenVINO backend unavailable"):
        strict.encode(["x"])


def test_backend_setting_picks_the_runtime(ref, monkeypatch):
    monkeypatch.setenv("COMMONPLACE_EMBED_BACKEND", "torch")
    assert isinstance(embedding.make_embedder(ref), embedding.SentenceTransformerEmbedder)
    monkeypatch.setenv("COMMONPLACE_EMBED_BACKEND", "openvino")
    assert isinstance(embedding.make_embedder(ref), embedding.AutoEmbedder)
    monkeypatch.setenv("COMMONPLACE_EMBED_BACKEND", "nonsense")
    assert embedding.backend_setting() == "auto"


class _Mod:
    def __init__(self, kind: str, **attrs):
        self.__class__ = type(kind, (), {})
        self.__dict__.update(attrs)


@pytest.mark.parametrize("kinds, ok", [
    (["Transformer", "Pooling", "Normalize"], True),
    (["Transformer", "Pooling"], True),
    (["Transformer", "Pooling", "Dense", "Normalize"], False),
    (["Transformer"], False),
])
def test_only_pipelines_we_reproduce_are_exported(kinds, ok):
    class FakeST(list):
        max_seq_length = 256

    mods = FakeST(_Mod(k, pooling_mode="mean", word_embedding_dimension=384) for k in kinds)
    if ok:
        assert openvino_backend._pipeline_of(mods)["pooling"] == "mean"
    else:
        with pytest.raises(openvino_backend.Unsupported):
            openvino_backend._pipeline_of(mods)
    mods = FakeST(_Mod(k, pooling_mode="max", word_embedding_dimension=384) for k in ["Transformer", "Pooling"])
    with pytest.raises(openvino_backend.Unsupported, match="pooling mode"):
        openvino_backend._pipeline_of(mods)
