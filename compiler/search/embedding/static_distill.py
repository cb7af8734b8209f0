"""A static embedding model distilled from the bundled transformer, once, offline.

The model2vec method, done with what is already installed (decision
2026-11-27-static-embeddings: `model2vec[distill]` pins a transformers older than ours):

1. every token of the model's vocabulary is embedded by the transformer itself, as the
   one-token text `[CLS] token [SEP]` with the model's own mean pooling;
2. PCA to `DIMS` dimensions (centres the space and drops the directions every token
   shares, which otherwise dominate a mean of many tokens);
3. Zipf weighting: token ids of a WordPiece vocabulary run roughly from common to rare,
   so a token's probability is taken as proportional to 1 / rank and its vector is scaled
   by `SIF / (SIF + p)`: common tokens count less in a text's mean.

The result is one float32 table (vocabulary x `DIMS`) kept with the tokenizer in the user
cache (`static/<model>-<key>/`), keyed like the OpenVINO export by the model's files and
`STATIC_FORMAT`, written to a temporary folder and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path

from .base import log

STATIC_FORMAT = 1
DIMS = 256
SIF = 1e-4
TOKEN_BATCH = 512

_lock = threading.Lock()


def static_dir(location: str, model_id: str) -> Path:
    """Where the distilled table of this model lives (a changed model gets a new one)."""
    from .openvino_backend import cache_root

    h = hashlib.sha256(f"{STATIC_FORMAT}\0{DIMS}\0{SIF}\0{model_id}\0{location}".encode())
    root = Path(location)
    for p in sorted(root.rglob("*")) if root.is_dir() else []:
        if p.is_file():
            st = p.stat()
            h.update(f"\0{p.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)[:60]
    return cache_root() / "static" / f"{slug}-{h.hexdigest()[:16]}"


def token_vectors(location: str):  # -> float32 ndarray (vocab, hidden)
    """Step 1: each vocabulary token through the transformer, mean-pooled like the model."""
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(location, local_files_only=True)
    model = AutoModel.from_pretrained(location, local_files_only=True)
    model.eval()
    n = tok.vocab_size
    cls, sep = tok.cls_token_id, tok.sep_token_id
    out = np.zeros((n, model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for i in range(0, n, TOKEN_BATCH):
            ids = torch.arange(i, min(i + TOKEN_BATCH, n)).unsqueeze(1)
            batch = torch.cat([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            out[i : i + len(ids)] = hidden.mean(dim=1).float().numpy()
    return out


def reduce(vectors, dims: int = DIMS, sif: float = SIF):
    """Steps 2 and 3: PCA, then Zipf weighting by token id."""
    import numpy as np

    x = vectors.astype(np.float64)
    x -= x.mean(axis=0)
    # principal axes from the covariance (hidden x hidden): small, exact, no sklearn needed
    w, v = np.linalg.eigh(x.T @ x)
    axes = v[:, np.argsort(w)[::-1][: min(dims, x.shape[1])]]
    x = x @ axes
    inv_rank = 1.0 / np.arange(2, len(x) + 2)
    p = inv_rank / inv_rank.sum()
    x *= (sif / (sif + p))[:, None]
    return x.astype(np.float32)


def distill(location: str, model_id: str) -> Path:
    """The distilled model's folder, made now if missing (about a minute on two cores)."""
    import numpy as np

    target = static_dir(location, model_id)
    if (target / "meta.json").is_file():
        return target
    with _lock:
        if (target / "meta.json").is_file():
            return target
        t0 = time.perf_counter()
        log.warning("distilling a static embedding model from %s (once)", model_id)
        table = reduce(token_vectors(location))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".static-", dir=target.parent))
        try:
            np.save(tmp / "embeddings.npy", table)
            shutil.copyfile(Path(location) / "tokenizer.json", tmp / "tokenizer.json")
            meta = {"format": STATIC_FORMAT, "source": model_id, "dims": int(table.shape[1]),
                    "vocab": int(table.shape[0]), "sif": SIF, "seconds": round(time.perf_counter() - t0, 1)}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
            try:
                tmp.rename(target)
            except OSError:  # another process finished first: theirs is as good
                if not (target / "meta.json").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return target
