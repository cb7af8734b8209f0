"""The static embedding tier: a text's vector is the mean of its tokens' distilled vectors.

No transformer runs: one tokenizer pass and a table look-up per text, so it embeds
thousands of chunks a second on one core where the transformer does tens. The table is
distilled from the bundled all-MiniLM-L6-v2 once (`static_distill`). It is a model of its
own (`STATIC_MODEL`): its vectors are cached, indexed and searched under its own id and
are never mixed with the transformer's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

from .base import EmbeddingError, ModelRef

MAX_TOKENS = 4096  # a chunk is ~256 tokens; this only bounds a pathological text


class StaticEmbedder:
    backend = "static"

    def __init__(self, ref: ModelRef, precision: str = "auto"):
        self.ref = ref
        self.model_id = ref.model_id
        self.calls = 0
        self.encoded = 0
        self._table: Any = None
        self._tok: Any = None
        self._lock = threading.Lock()

    @property
    def precision(self) -> str:
        return "fp32" if self._table is not None else "unloaded"

    @property
    def loaded(self) -> bool:
        return self._table is not None

    @property
    def dim(self) -> int:
        return int(self._load()[0].shape[1])

    def _load(self) -> tuple[Any, Any]:
        if self._table is None:
            with self._lock:
                if self._table is None:
                    import numpy as np
                    from tokenizers import Tokenizer

                    from .static_distill import distill

                    try:
                        d = distill(self.ref.location, self.model_id)
                        tok = Tokenizer.from_file(str(d / "tokenizer.json"))
                        table = np.load(d / "embeddings.npy")
                        json.loads((d / "meta.json").read_text())
                    except Exception as exc:  # noqa: BLE001 - one error type for callers
                        raise EmbeddingError(f"static model unavailable: {exc}") from exc
                    tok.no_padding()
                    tok.enable_truncation(MAX_TOKENS)
                    self._tok = tok
                    self._table = table
        return self._table, self._tok

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        table, tok = self._load()
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for i, enc in enumerate(tok.encode_batch(list(texts), add_special_tokens=False)):
            if enc.ids:
                out[i] = table[enc.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0)
        self.calls += 1
        self.encoded += len(texts)
        return out

    def encode_query(self, text: str) -> Any:
        return self.encode([text])[0]


def available(location: str) -> bool:
    return (Path(location) / "tokenizer.json").is_file()
