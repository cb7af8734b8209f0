"""Big embedding jobs: one single-threaded worker process per core (`worker`), each with
the model loaded once, fed (key, texts) jobs by one thread each."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

from . import openvino_backend
from .base import STATIC_MODEL, EmbeddingError, backend_setting, cpu_has_vnni, log, precision_setting, resolve_model
from .frames import read_frame, write_frame
from .registry import real_model_in_use

POOL_MIN_TEXTS = 600  # below this, starting workers (each imports torch, ~6 s) does not pay


def pool_workers() -> int:
    env = os.environ.get("COMMONPLACE_EMBED_WORKERS", "").strip()
    if env.isdigit():
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_allowed(n_texts: int, model: str | None = None) -> bool:
    """Big jobs with the real model use one single-threaded worker process per core.

    On this kind of machine that is 1.5-1.9x faster than one process with one torch thread
    per core (no OpenMP barriers between cores, which also makes it robust to other load).
    The static tier never does: a table look-up is faster than starting a worker.
    """
    if resolve_model(model).model_id == STATIC_MODEL:
        return False
    return real_model_in_use() and n_texts >= POOL_MIN_TEXTS and pool_workers() > 1


def _export_once(name: str | None, expected: int = 0) -> None:
    """Export the OpenVINO model before starting workers, so they do not all convert it
    at once; for a big job (or `COMMONPLACE_EMBED_PRECISION=int8`) also its int8 variant.
    A failure here is left for each worker's own fallback (bf16, or torch)."""
    if backend_setting() == "torch" or not openvino_backend.available():
        return
    ref = resolve_model(name)
    try:
        d = openvino_backend.export(ref.location, ref.model_id)
    except Exception as exc:  # noqa: BLE001
        log.warning("OpenVINO export failed (%s); workers will use torch", exc)
        return
    setting = precision_setting()
    if setting == "int8" or (setting == "auto" and cpu_has_vnni() and expected >= openvino_backend.QUANTIZE_MIN_TEXTS):
        try:
            openvino_backend.quantize(d)
        except Exception as exc:  # noqa: BLE001
            log.info("no int8 embedding model (%s); bf16 it is", exc)


class EmbeddingPool:
    """One worker process per core (`worker`), each with the model loaded once.

    `imap(groups)` yields (group index, vectors, precision) as groups finish, in any
    order; a worker's error or death raises `EmbeddingError`.
    """

    def __init__(self, name: str | None, workers: int | None = None, expected: int = 0):
        import subprocess
        import tempfile

        self.workers = workers or pool_workers()
        _export_once(name, expected)
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", COMMONPLACE_EMBED_THREADS="1",
                   TOKENIZERS_PARALLELISM="false",
                   HF_HUB_DISABLE_PROGRESS_BARS="1")
        if resolve_model(name).is_local:
            env.setdefault("HF_HUB_OFFLINE", "1")
        self._errs = [tempfile.TemporaryFile() for _ in range(self.workers)]
        self._procs = [
            subprocess.Popen([sys.executable, "-m", "commonplace.compiler.search.embedding.worker", name or "",
                              precision_setting()], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env)
            for err in self._errs
        ]

    def _stderr_tail(self, i: int) -> str:
        try:
            self._errs[i].seek(0)
            return self._errs[i].read()[-600:].decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def stream(self, on_result: Callable[[Any, Any, str], None]) -> "EmbeddingStream":
        """Submit groups while they are being produced; `on_result(key, vectors, precision)`
        runs in a feeder thread as each group finishes."""
        return EmbeddingStream(self, on_result)

    def imap(self, groups: Sequence[list[str]]) -> Iterator[tuple[int, Any, str]]:
        """(group index, vectors, precision) as groups finish, in any order."""
        import queue

        out: "queue.Queue[tuple]" = queue.Queue()
        st = self.stream(lambda key, vecs, prec: out.put((key, vecs, prec)))
        for gi, g in enumerate(groups):
            st.submit(gi, g)
        st.close()
        for _ in range(len(groups)):
            while True:
                try:
                    item = out.get(timeout=0.2)
                    break
                except queue.Empty:
                    if st.error is not None:
                        raise st.error
                    if st.finished():
                        raise EmbeddingError("embedding workers stopped early")
            yield item
        st.join()
        if st.error is not None:
            raise st.error

    def close(self) -> None:
        for p in self._procs:
            try:
                if p.stdin:
                    p.stdin.close()
                p.wait(timeout=30)
            except Exception:  # noqa: BLE001
                p.kill()
        for f in self._errs:
            f.close()

    def terminate(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.kill()
        for p in self._procs:
            try:
                p.wait(timeout=10)
            except Exception:  # noqa: BLE001
                pass


class EmbeddingStream:
    """A queue of (key, texts) jobs fed to an `EmbeddingPool`'s workers by one thread each."""

    def __init__(self, pool: "EmbeddingPool", on_result: Callable[[Any, Any, str], None]):
        import queue

        self._pool = pool
        self._on_result = on_result
        self._jobs: "queue.Queue[Any]" = queue.Queue()
        self.error: BaseException | None = None
        self.submitted = 0
        self._threads = [threading.Thread(target=self._feed, args=(i,), daemon=True, name=f"embed-feed-{i}")
                         for i in range(pool.workers)]
        for t in self._threads:
            t.start()

    def submit(self, key: Any, texts: list[str]) -> None:
        self.submitted += 1
        self._jobs.put((key, texts))

    def close(self) -> None:
        """No more jobs: each feeder stops after the queue drains."""
        for _ in self._threads:
            self._jobs.put(None)

    def finished(self) -> bool:
        return not any(t.is_alive() for t in self._threads)

    def join(self, timeout: float | None = None) -> None:
        for t in self._threads:
            t.join(timeout)

    def _feed(self, i: int) -> None:
        import numpy as np

        proc = self._pool._procs[i]
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if self.error is not None:
                continue  # drain: a failed stream finishes nothing more
            key, texts = job
            try:
                write_frame(proc.stdin, (0, texts))
                reply = read_frame(proc.stdout)
                if reply is None:
                    raise EmbeddingError(f"embedding worker exited: {self._pool._stderr_tail(i) or proc.poll()}")
                _gid, data, rows, dim, precision = reply
                if data is None:
                    raise EmbeddingError(precision)
                self._on_result(key, np.frombuffer(data, dtype=np.float32).reshape(rows, dim), precision)
            except BaseException as exc:  # noqa: BLE001 - the owner reads .error
                if self.error is None:
                    self.error = exc if isinstance(exc, EmbeddingError) else EmbeddingError(str(exc))
                self._pool.terminate()

