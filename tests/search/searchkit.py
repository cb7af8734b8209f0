"""Search test helpers shared by the test modules: the fake embedder and corpus helpers.

(Kept out of conftest.py so test modules import them by a unique module name; several
test folders have a conftest.py, and `from conftest import ...` picks an arbitrary one.)
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Sequence

import numpy as np

DIM = 64
_WORD = re.compile(r"\w+")


def _bucket(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little") % DIM


class FakeEmbedder:
    model_id = "fake-bow"
    precision = "fp32"

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.texts: list[str] = []
        self.fail_after = fail_after  # raise on the call after this many successful calls

    @property
    def dim(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise RuntimeError("fake embedder failure")
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                out[i, _bucket(w)] += 1.0
                for j in range(len(w) - 2):
                    out[i, _bucket("#" + w[j : j + 3])] += 0.2
            out[i, 0] += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def reindex(root: Path, embed_: bool = True):
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.stage import build_indexes

    return build_indexes(root, load_corpus(root).docs, embed=embed_)


def doc(title: str, body: str, **fm: object) -> str:
    lines = ["---", f"title: {title}"]
    for k, v in fm.items():
        lines.append(f"{k}: {v}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body
