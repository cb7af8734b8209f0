"""Embeddings: the model (lazy, once per process), its backends, batching, and the cache.

    base.py              model names, settings (backend, precision), CPU capabilities,
                         `EmbeddingError`, the `Embedder` protocol, probe texts
    torch_backend.py     sentence-transformers on torch (the fallback)
    openvino_backend.py  the same model exported to and run by OpenVINO (bf16, int8 FFN)
    static_distill.py    the static tier's table, distilled once from the default model
    static_backend.py    the static tier: a text's vector is the mean of its tokens' rows
    registry.py          one embedder per model per process; `set_embedder_factory`
    pool.py              big jobs: one worker process per core
    frames.py            the pool <-> worker wire format
    worker.py            the worker process (`python -m ...embedding.worker`)
    cache.py             vectors by (model, chunk text hash) in SQLite

Imports go one way: base <- backends <- registry <- pool; worker uses registry and
frames. Importing this package loads no numpy, torch or OpenVINO: they load on first use.
"""

from __future__ import annotations

from .base import (
    DEFAULT_MODEL, Embedder, EmbeddingError, ModelRef, backend_setting, cpu_has_bf16, cpu_has_vnni, precision_label,
    precision_setting, resolve_model,
)
from .cache import EmbeddingCache
from .pool import EmbeddingPool, pool_allowed, pool_workers
from .registry import AutoEmbedder, get_embedder, loaded_embedders, make_embedder, set_embedder_factory
from .torch_backend import SentenceTransformerEmbedder

__all__ = [
    "DEFAULT_MODEL", "AutoEmbedder", "Embedder", "EmbeddingCache", "EmbeddingError", "EmbeddingPool", "ModelRef",
    "SentenceTransformerEmbedder", "backend_setting", "cpu_has_bf16", "cpu_has_vnni", "get_embedder",
    "loaded_embedders", "make_embedder", "pool_allowed", "pool_workers", "precision_label", "precision_setting",
    "resolve_model", "set_embedder_factory",
]
