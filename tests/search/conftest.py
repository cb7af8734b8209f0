"""Search test fixtures: a deterministic fake embedder and small indexed corpora.

The fake embedder is a hashed bag of words (plus character trigrams for a little
fuzziness), L2-normalised, 64 dimensions: deterministic, instant, and similar texts get
similar vectors. It is injected through `embedding.set_embedder_factory`, the same seam a
tool would use; the real model only runs in tests marked `e2e`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from commonplace.compiler.search import embedding  # noqa: E402
from commonplace.compiler.search.read.engine import SearchEngine, close_engines  # noqa: E402

from searchkit import DIM, FakeEmbedder, doc, reindex  # noqa: E402,F401


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    fake = FakeEmbedder()
    embedding.set_embedder_factory(lambda ref: fake)
    yield fake
    embedding.set_embedder_factory(None)
    close_engines()


@pytest.fixture
def indexed(write_corpus: Callable, fake_embedder: FakeEmbedder) -> Callable[..., tuple[Path, SearchEngine]]:
    """Write files, build the indexes (fake embeddings) and return (root, engine)."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.stage import build_indexes

    def _make(files: dict[str, str], embed_: bool = True) -> tuple[Path, SearchEngine]:
        root = write_corpus(files)
        corpus = load_corpus(root)
        build_indexes(root, corpus.docs, embed=embed_)
        return root, SearchEngine(root, embedder=fake_embedder)

    return _make


@pytest.fixture(scope="session")
def _int8_cache_dir(tmp_path_factory) -> Path:
    """A model cache with the OpenVINO export and its int8 variant, made once a session and
    kept apart from the user's cache, so other tests see no int8 model. The export is the
    user cache's (made there if missing, as any real-model test would), copied: exporting
    again meant importing torch and tracing the model (about half of the fixture's minute);
    the int8 calibration runs here."""
    import os
    import shutil

    from commonplace.compiler.search.embedding import openvino_backend

    ref = embedding.resolve_model(None)
    shared = openvino_backend.export(ref.location, ref.model_id)
    d = tmp_path_factory.mktemp("model-cache")
    old = os.environ.get("COMMONPLACE_CACHE_DIR")
    os.environ["COMMONPLACE_CACHE_DIR"] = str(d)
    try:
        mine = openvino_backend.export_dir(ref.location, ref.model_id)
        shutil.copytree(shared, mine, ignore=shutil.ignore_patterns("int8-*", ".int8-*"))
        openvino_backend.quantize(openvino_backend.export(ref.location, ref.model_id))
    finally:
        if old is None:
            os.environ.pop("COMMONPLACE_CACHE_DIR", None)
        else:
            os.environ["COMMONPLACE_CACHE_DIR"] = old
    return d


@pytest.fixture
def int8_cache(_int8_cache_dir: Path, monkeypatch) -> Path:
    monkeypatch.setenv("COMMONPLACE_CACHE_DIR", str(_int8_cache_dir))
    return _int8_cache_dir
