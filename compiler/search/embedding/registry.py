"""The process-wide embedders: one per model, loaded once and reused by builds and
queries. `make_embedder` picks the backend (`AutoEmbedder`: OpenVINO first, torch when
it cannot run); tests and tools swap the implementation with `set_embedder_factory`."""

from __future__ import annotations

import threading
from typing import Any, Sequence

from . import openvino_backend
from .base import (
    STATIC_MODEL, Embedder, EmbedderFactory, EmbeddingError, ModelRef, backend_setting, log, precision_setting,
    resolve_model,
)
from .static_backend import StaticEmbedder
from .torch_backend import SentenceTransformerEmbedder


class AutoEmbedder:
    """OpenVINO first, torch when the model cannot be exported or run there (decided on
    first use, once). Both give vectors within cosine 0.9999 of fp32, so the embedding
    cache is shared between them."""

    def __init__(self, ref: ModelRef, precision: str = "auto", fallback: bool = True):
        self.ref = ref
        self.model_id = ref.model_id
        self._precision = precision
        self._fallback = fallback
        self._impl: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._impl is None:
            with self._lock:
                if self._impl is None:
                    ov = openvino_backend.OpenVINOEmbedder(self.ref, self._precision)
                    try:
                        ov.load()
                        self._impl = ov
                    except Exception as exc:  # noqa: BLE001 - any failure: the torch path still works
                        if not self._fallback:
                            raise EmbeddingError(f"OpenVINO backend unavailable: {exc}") from exc
                        log.warning("OpenVINO embeddings unavailable (%s); using torch", exc)
                        self._impl = SentenceTransformerEmbedder(self.ref, self._precision)
        return self._impl

    @property
    def backend(self) -> str | None:
        return getattr(self._impl, "backend", "torch") if self._impl is not None else None

    @property
    def dim(self) -> int:
        return self._get().dim

    @property
    def precision(self) -> str:
        return self._impl.precision if self._impl is not None else "unloaded"

    @property
    def loaded(self) -> bool:
        return self._impl is not None and self._impl.loaded

    @property
    def calls(self) -> int:
        return self._impl.calls if self._impl is not None else 0

    @property
    def encoded(self) -> int:
        return self._impl.encoded if self._impl is not None else 0

    def encode(self, texts: Sequence[str]) -> Any:
        return self._get().encode(texts)

    def encode_query(self, text: str) -> Any:
        return self._get().encode_query(text)


def make_embedder(ref: ModelRef, precision: str | None = None) -> Embedder:
    """The real model with the configured backend and precision."""
    if ref.model_id == STATIC_MODEL:
        return StaticEmbedder(ref)
    precision = precision or precision_setting()
    backend = backend_setting()
    if backend != "torch" and openvino_backend.available():
        return AutoEmbedder(ref, precision, fallback=backend == "auto")
    if backend == "openvino":
        raise EmbeddingError("COMMONPLACE_EMBED_BACKEND=openvino but openvino is not installed")
    return SentenceTransformerEmbedder(ref, precision)


def _default_factory(ref: ModelRef) -> Embedder:
    return make_embedder(ref)


_factory: EmbedderFactory = _default_factory
_embedders: dict[str, Embedder] = {}
_registry_lock = threading.Lock()


def set_embedder_factory(factory: EmbedderFactory | None) -> None:
    """Swap how embedders are made (tests inject a fake); None restores the real model."""
    global _factory
    with _registry_lock:
        _factory = factory or _default_factory
        _embedders.clear()


def get_embedder(name: str | None = None) -> Embedder:
    """The process-wide embedder for a model: loaded once, reused by builds and queries."""
    ref = resolve_model(name)
    with _registry_lock:
        e = _embedders.get(ref.model_id)
        if e is None:
            e = _factory(ref)
            _embedders[ref.model_id] = e
        return e


def loaded_embedders() -> list[Embedder]:
    return list(_embedders.values())


def real_model_in_use() -> bool:
    """No factory swapped in (a test's fake is never worth worker processes)."""
    return _factory is _default_factory
