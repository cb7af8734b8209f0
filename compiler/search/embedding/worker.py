"""An embedding worker process: `python -m commonplace.compiler.search.embedding.worker MODEL PRECISION`.

Reads frames from stdin, writes frames to stdout; a frame is a 4-byte big-endian length
and a pickle. Requests are `(group_id, [texts])`; replies are `(group_id, float32 bytes,
rows, dim, precision)` or `(group_id, None, 0, 0, "error: ...")`. The worker's model runs
one thread (OpenVINO, or torch as the fallback): the parent starts one worker per core
(see `pool.EmbeddingPool`).

A separate interpreter (not multiprocessing) so the parent's `__main__` is never
re-imported and nothing inherited from the parent (threads, locks) can bite.
"""

from __future__ import annotations

import os
import sys

from .base import precision_label, resolve_model
from .frames import read_frame, write_frame
from .registry import make_embedder


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    precision = sys.argv[2] if len(sys.argv) > 2 else "auto"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np

    embedder = make_embedder(resolve_model(name), precision)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        req = read_frame(stdin)
        if req is None:
            return 0
        gid, texts = req
        try:
            v = np.ascontiguousarray(embedder.encode(texts), dtype=np.float32)
            write_frame(stdout, (gid, v.tobytes(), v.shape[0], v.shape[1], precision_label(embedder)))
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            write_frame(stdout, (gid, None, 0, 0, f"error: {type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    sys.exit(main())
