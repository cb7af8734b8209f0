"""The torch backend: the sentence-transformers model run by torch (the fallback when
OpenVINO cannot run the model; bf16 where the CPU has it and the probe allows)."""

from __future__ import annotations

import os
import threading
from typing import Any, Sequence

from ... import progress
from .base import BF16_MIN_COSINE, ENCODE_BATCH, PROBES, EmbeddingError, ModelRef, cpu_has_bf16, log


class SentenceTransformerEmbedder:
    """sentence-transformers model, loaded on first use; thread-safe lazy load."""

    backend = "torch"

    def __init__(self, ref: ModelRef, precision: str = "auto", batch_size: int = ENCODE_BATCH):
        self.ref = ref
        self.model_id = ref.model_id
        self._want = precision
        self._precision = "unloaded"
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.calls = 0  # encode calls (tests and benchmarks count them)
        self.encoded = 0  # texts encoded
        self.probe_cosine: float | None = None

    # -- loading
    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            if self.ref.is_local:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                with progress.step("Loading the embedding model (torch)", "~10 s"), progress.quiet():
                    model = self._load_torch()
            except Exception as exc:  # noqa: BLE001
                raise EmbeddingError(f"cannot load embedding model {self.ref.location!r}: {exc}") from exc
            get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dim = int(get_dim() or 0) or None
            self._precision = "fp32"
            self._model = model
            if self._want in {"auto", "bf16", "int8"}:  # no int8 path on torch: its best is bf16
                self._try_bf16(force=self._want == "bf16")
            if self._dim is None:
                self._dim = int(self._encode_raw(["probe"]).shape[1])
            return self._model

    def _load_torch(self) -> Any:
        import torch
        from sentence_transformers import SentenceTransformer

        progress.quiet_loaded()
        # One torch thread in-process: queries and small jobs are tiny matrices, where
        # OpenMP across cores costs more than it gives (6x slower query embeddings on
        # a busy 2-core machine). Big jobs use one worker process per core instead.
        torch.set_num_threads(max(1, int(os.environ.get("COMMONPLACE_TORCH_THREADS", "1") or 1)))
        model = SentenceTransformer(self.ref.location, device="cpu")
        model.eval()
        return model

    def _try_bf16(self, force: bool) -> None:
        import numpy as np
        import torch

        if not force:
            try:
                capable = torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
            except Exception:  # noqa: BLE001
                capable = False
            if not (capable and cpu_has_bf16()):
                return
        ref = self._encode_raw(PROBES)
        fp32_state = {k: v.clone() for k, v in self._model.state_dict().items()}
        try:
            self._model.to(torch.bfloat16)
            got = self._encode_raw(PROBES)
        except Exception as exc:  # noqa: BLE001 - unsupported op: stay fp32
            log.warning("bf16 embeddings unavailable (%s); using fp32", exc)
            self._model.to(torch.float32)
            self._model.load_state_dict(fp32_state)
            return
        cos = float(np.min(np.sum(ref * got, axis=1)))
        self.probe_cosine = cos
        if cos >= BF16_MIN_COSINE or force:
            self._precision = "bf16"
        else:
            log.warning("bf16 probe cosine %.4f < %.3f; using fp32", cos, BF16_MIN_COSINE)
            self._model.to(torch.float32)
            self._model.load_state_dict(fp32_state)

    def _encode_raw(self, texts: Sequence[str]) -> Any:
        import numpy as np
        import torch

        with torch.inference_mode():
            out = self._model.encode(
                list(texts), batch_size=self.batch_size, convert_to_tensor=True,
                normalize_embeddings=False, show_progress_bar=False,
            )
        v = out.float().cpu().numpy().astype(np.float32, copy=False)
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return v / norms

    # -- Embedder
    @property
    def dim(self) -> int:
        self._load()
        assert self._dim is not None
        return self._dim

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def encode(self, texts: Sequence[str]) -> Any:
        self._load()
        self.calls += 1
        self.encoded += len(texts)
        try:
            return self._encode_raw(texts)
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingError(f"encoding failed: {exc}") from exc

    def encode_query(self, text: str) -> Any:
        return self.encode([text])[0]
