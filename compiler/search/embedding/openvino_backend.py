"""The OpenVINO embedding backend: the same sentence-transformers model, run by OpenVINO.

Why: on this kind of CPU (AVX512-BF16, no AMX) OpenVINO runs all-MiniLM-L6-v2 in bf16
about 1.3x faster per core than torch's bf16, with vectors closer to fp32 (cosine 0.99997
vs 0.9999), and a process that embeds never imports torch once the model is exported
(worker start-up ~1 s instead of ~6 s). See docs/decisions/2026-11-22-openvino-embeddings.md.

How:

- `export(ref)`: once per model and OpenVINO version, the model's transformer is converted
  from PyTorch (the only step that imports torch and sentence-transformers) and saved with
  its tokenizer and pooling settings in the user cache (`COMMONPLACE_CACHE_DIR`, else
  `$XDG_CACHE_HOME/commonplace`, else `~/.cache/commonplace`). The export is written to a
  temporary folder and renamed into place, so concurrent processes never see half of one.
- Only pipelines we can reproduce exactly are exported: Transformer -> mean or CLS pooling ->
  optional Normalize. Anything else raises `Unsupported` and the caller uses torch.
- `quantize(export)`: once, for big jobs (`QUANTIZE_MIN_TEXTS`) or when asked, the
  feed-forward input layers (the MatMuls that feed a GELU) and the query/key/value
  projections become int8, calibrated with NNCF on bundled text (`calibration.json`) with
  asymmetric activations (NNCF's MIXED preset); the CPU runs them with VNNI and everything
  else stays bf16. One thread, 1,035 corpus chunks: 69.5 chunks/s against ~61 for int8
  feed-forward inputs alone (format 1) and ~55 for bf16, cosine min 0.9975 to fp32 (0.997
  on hostile texts). Also making the attention output and feed-forward output int8 was
  74-88 chunks/s but a text of one repeated word fell to cosine 0.955-0.966, below the
  0.995 we promise (decision 2026-11-23-embedding-throughput).
- `OpenVINOEmbedder`: tokenizes with the model's own fast tokenizer (`tokenizers`, no
  transformers import), runs batches sorted by length, pools and normalizes in numpy.
  Precision `auto` takes the int8 model when it exists, the CPU has VNNI and a probe stays
  within `INT8_MIN_COSINE` of fp32; else bf16 under the same kind of probe; else fp32.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Sequence

from ... import progress
from .base import BF16_MIN_COSINE, PROBES, EmbeddingError, cpu_has_bf16, cpu_has_vnni, log

EXPORT_FORMAT = 1
QUANT_FORMAT = 2  # 1: feed-forward inputs, symmetric; 2: also Q/K/V, asymmetric activations
OV_BATCH = 8  # bf16, one thread: 8 texts per infer measured fastest (48 vs 44/s at 32)
INT8_MIN_COSINE = 0.997  # stricter than bf16's probe: its margin to the 0.995 promise
QUANTIZE_MIN_TEXTS = 5000  # quantizing takes ~15 s once; below this bf16 is fine


class Unsupported(RuntimeError):
    """This model or machine cannot use the OpenVINO backend; use torch instead."""


def available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("openvino") is not None and importlib.util.find_spec("tokenizers") is not None
    except (ImportError, ValueError):
        return False


def cache_root() -> Path:
    env = os.environ.get("COMMONPLACE_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "commonplace"


def _ov_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openvino")
    except PackageNotFoundError:
        return "0"


def export_dir(location: str, model_id: str) -> Path:
    """Where the export of this model lives: keyed by the model's files (name, size, mtime),
    the OpenVINO version and our export format, so a changed model is exported again."""
    h = hashlib.sha256(f"{EXPORT_FORMAT}\0{_ov_version()}\0{model_id}\0{location}".encode())
    root = Path(location)
    if root.is_dir():
        for p in sorted(root.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"\0{p.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_id)[:60]
    return cache_root() / "openvino" / f"{slug}-{h.hexdigest()[:16]}"


def _complete(d: Path) -> bool:
    return all((d / n).is_file() for n in ("model.xml", "model.bin", "tokenizer.json", "pipeline.json"))


def export(location: str, model_id: str) -> Path:
    """The exported model's folder, exporting it first if needed (imports torch once)."""
    final = export_dir(location, model_id)
    if _complete(final):
        return final
    with progress.step("Preparing the embedding model", "once, ~15 s",
                       done="Prepared the embedding model for this machine (kept for later runs)"), progress.quiet():
        return _export(location, final)


def _export(location: str, final: Path) -> Path:
    try:
        import openvino as ov
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise Unsupported(f"cannot export: {exc}") from exc

    progress.quiet_loaded()
    st = SentenceTransformer(location, device="cpu")
    pipeline = _pipeline_of(st)
    tok = getattr(st.tokenizer, "backend_tokenizer", None)
    if tok is None:
        raise Unsupported("the model's tokenizer is not a fast tokenizer")
    hf = st[0].auto_model.eval()
    sample = st.tokenizer(["an example sentence", "two"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    pipeline["inputs"] = names
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=final.parent))
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracing warnings about shapes we do not rely on
            ovm = ov.convert_model(hf, example_input={n: sample[n] for n in names})
        ov.save_model(ovm, str(tmp / "model.xml"), compress_to_fp16=False)
        tok.save(str(tmp / "tokenizer.json"))
        (tmp / "pipeline.json").write_text(json.dumps(pipeline, indent=1), encoding="utf-8")
        try:
            os.rename(tmp, final)
        except OSError:
            if not _complete(final):  # not another process winning the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def quantized_dir(export_path: Path) -> Path:
    return export_path / f"int8-{QUANT_FORMAT}"


def quantize(export_path: Path) -> Path:
    """The int8 variant of an export, made first if needed (imports NNCF once)."""
    final = quantized_dir(export_path)
    if (final / "model.xml").is_file():
        return final
    with progress.step("Calibrating int8 embeddings", "once, ~20 s",
                       done="Calibrated int8 embeddings for this machine (kept for later runs)"), progress.quiet():
        return _quantize(export_path, final)


def _quantize(export_path: Path, final: Path) -> Path:
    try:
        import nncf
        import numpy as np
        import openvino as ov
    except ImportError as exc:
        raise Unsupported(f"cannot quantize: {exc}") from exc
    model = ov.Core().read_model(str(export_path / "model.xml"))
    targets = _int8_matmuls(model)
    if not targets:
        raise Unsupported("no MatMul feeding a GELU: not a BERT-like feed-forward to quantize")
    others = [op.get_friendly_name() for op in model.get_ops()
              if op.get_type_name() == "MatMul" and op.get_friendly_name() not in targets]
    pipe = json.loads((export_path / "pipeline.json").read_text(encoding="utf-8"))
    tok, _ = _tokenizer(export_path, pipe)
    items = []
    for text in calibration_texts():
        e = tok.encode(_clean(text))
        feed = {"input_ids": e.ids, "attention_mask": e.attention_mask, "token_type_ids": e.type_ids}
        items.append({k: np.array([feed[k]], dtype=np.int64) for k in pipe["inputs"]})
    logging.getLogger("nncf").setLevel(logging.WARNING)  # its statistics tables
    # NNCF draws progress bars on stdout, which would corrupt `build --json`.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        q = nncf.quantize(model, nncf.Dataset(items), model_type=nncf.ModelType.TRANSFORMER,
                          preset=nncf.QuantizationPreset.MIXED, subset_size=len(items),
                          ignored_scope=nncf.IgnoredScope(names=others, validate=False))
    tmp = Path(tempfile.mkdtemp(prefix=".int8-", dir=export_path))
    try:
        ov.save_model(q, str(tmp / "model.xml"), compress_to_fp16=False)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "model.xml").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _ffn_input_matmuls(model: Any) -> set[str]:
    """MatMuls whose output reaches a GELU, directly or through the bias Add."""
    out = set()
    for op in model.get_ops():
        if op.get_type_name() != "MatMul":
            continue
        frontier = [op]
        for _ in range(2):
            nxt = []
            for node in frontier:
                for output in node.outputs():
                    for inp in output.get_target_inputs():
                        nxt.append(inp.get_node())
            if any(n.get_type_name() == "Gelu" for n in nxt):
                out.add(op.get_friendly_name())
                break
            frontier = [n for n in nxt if n.get_type_name() == "Add"]
    return out


def _qkv_matmuls(model: Any) -> set[str]:
    """The attention's query, key and value projections: MatMuls whose input also feeds
    at least two other MatMuls (one hidden state fanned out three ways)."""
    out = set()
    for op in model.get_ops():
        if op.get_type_name() != "MatMul":
            continue
        src = op.input_value(0)
        readers = [t.get_node() for t in src.get_target_inputs()]
        if sum(r.get_type_name() == "MatMul" for r in readers) >= 3:
            out.add(op.get_friendly_name())
    return out


def _int8_matmuls(model: Any) -> set[str]:
    """The layers made int8: the feed-forward inputs and the query/key/value projections.
    The feed-forward outputs (reading skewed GELU outputs) and the attention output stay
    bf16: with them int8 too, a text of one repeated word fell to cosine 0.955-0.966."""
    ffn = _ffn_input_matmuls(model)
    return ffn | _qkv_matmuls(model) if ffn else set()


def calibration_texts() -> list[str]:
    data = json.loads((Path(__file__).parent.parent / "calibration.json").read_text(encoding="utf-8"))
    return [str(t) for t in data["texts"]]


def _tokenizer(export_path: Path, pipe: dict[str, Any]) -> tuple[Any, int]:
    """The export's tokenizer, truncating and not padding, and its pad id."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(export_path / "tokenizer.json"))
    tok.enable_truncation(int(pipe["max_seq_length"]))
    pad_id = int((tok.padding or {}).get("pad_id", 0))
    tok.no_padding()  # tokenizer.json may carry padding; we pad each batch ourselves (see `_run`)
    return tok, pad_id


def _pipeline_of(st: Any) -> dict[str, Any]:
    """The modules after the transformer, when they are ones we reproduce exactly."""
    mods = list(st)
    kinds = [type(m).__name__ for m in mods]
    if len(mods) < 2 or kinds[0] != "Transformer" or kinds[1] != "Pooling" or not set(kinds[2:]) <= {"Normalize"}:
        raise Unsupported(f"pipeline {kinds} is not Transformer -> Pooling [-> Normalize]")
    pool = mods[1]
    mode = getattr(pool, "pooling_mode", None)
    if mode is None:  # older sentence-transformers: one flag per mode
        flags = {"mean": getattr(pool, "pooling_mode_mean_tokens", False),
                 "cls": getattr(pool, "pooling_mode_cls_token", False)}
        on = [m for m, v in flags.items() if v]
        mode = on[0] if len(on) == 1 else None
    mode = {"mean_tokens": "mean", "cls_token": "cls"}.get(str(mode), str(mode))
    if mode not in {"mean", "cls"}:
        raise Unsupported(f"pooling mode {mode!r}")
    if getattr(pool, "include_prompt", True) is False:
        raise Unsupported("pooling excludes prompts")
    return {
        "max_seq_length": int(st.max_seq_length or 512),
        "pooling": mode,
        "normalize": "Normalize" in kinds,
        "dim": int(getattr(pool, "word_embedding_dimension", 0) or 0),
    }


def embed_threads() -> int:
    """Threads for one inference: `COMMONPLACE_EMBED_THREADS`, else every core we may use.

    In a server or watcher a save's one or two changed chunks are on the latency path:
    two threads embed them in 34 ms instead of 51 (two chunks), which took the p50 of
    save-to-searchable at 10,000 documents from 158 to 142 ms. Build workers run one
    thread each (the pool sets the variable)."""
    env = os.environ.get("COMMONPLACE_EMBED_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class OpenVINOEmbedder:
    """`Embedder` running an exported model with OpenVINO (bf16 where the CPU has it)."""

    backend = "openvino"

    def __init__(self, ref: Any, precision: str = "auto", threads: int | None = None):
        self.ref = ref
        self.model_id = ref.model_id
        self._want = precision
        self._precision = "unloaded"
        self._threads = threads or embed_threads()
        self._lock = threading.Lock()
        self._compiled: Any = None
        self._request: Any = None
        self._tok: Any = None
        self._pipe: dict[str, Any] = {}
        self.calls = 0
        self.encoded = 0
        self.probe_cosine: float | None = None

    # -- loading
    def load(self) -> None:
        if self._compiled is not None:
            return
        with self._lock:
            if self._compiled is not None:
                return
            d = export(self.ref.location, self.model_id)
            with progress.step("Loading the embedding model"):
                self._load_export(d)

    def _load_export(self, d: Path) -> None:
        """Compile the export for this CPU, choosing the precision by probes (~1 s)."""
        import openvino as ov

        self._pipe = json.loads((d / "pipeline.json").read_text(encoding="utf-8"))
        self._tok, self._pad_id = _tokenizer(d, self._pipe)
        core = ov.Core()
        model = core.read_model(str(d / "model.xml"))

        def compile_(prec: str, model: Any = model) -> Any:
            return core.compile_model(model, "CPU", {
                "INFERENCE_PRECISION_HINT": prec, "INFERENCE_NUM_THREADS": self._threads,
                "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                # never pin: one worker per core, each pinning "its" thread would share core 0
                "ENABLE_CPU_PINNING": False,
            })

        import numpy as np

        fp32 = compile_("f32")
        compiled, precision = fp32, "fp32"
        reference: list[Any] = []  # fp32 probe vectors, computed once a candidate needs them

        def probe(candidate: Any) -> float:
            if not reference:
                reference.append(self._run(fp32, PROBES))
            return float(np.min(np.sum(reference[0] * self._run(candidate, PROBES), axis=1)))

        # bf16 and int8 only where the CPU runs them natively: elsewhere OpenVINO emulates
        # them, slower than fp32 and further from it (int8 fell to cosine 0.982 on AVX2 only).
        if self._want in ("bf16", "int8") and not cpu_has_bf16():
            log.warning("this CPU has no native bf16; using fp32")
        if self._want == "int8" and not cpu_has_vnni():
            log.warning("this CPU has no int8 dot-product instructions (VNNI); int8 embeddings not used")
        if self._want in ("bf16", "int8", "auto") and cpu_has_bf16():
            try:
                fast = compile_("bf16")
                cos = probe(fast)
            except Exception as exc:  # noqa: BLE001 - no bf16 kernels here: stay fp32
                log.warning("bf16 embeddings unavailable (%s); using fp32", exc)
            else:
                self.probe_cosine = cos
                if cos >= BF16_MIN_COSINE or self._want == "bf16":
                    compiled, precision = fast, "bf16"
                else:
                    log.warning("bf16 probe cosine %.4f < %.3f; using fp32", cos, BF16_MIN_COSINE)
        if self._want in ("int8", "auto") and cpu_has_vnni():
            q8 = quantized_dir(d)
            try:
                if self._want == "int8":
                    quantize(d)
                if (q8 / "model.xml").is_file():
                    fast = compile_("bf16" if precision == "bf16" else "f32", core.read_model(str(q8 / "model.xml")))
                    cos = probe(fast)
                    if cos >= INT8_MIN_COSINE or self._want == "int8":
                        compiled, precision = fast, f"int8+{precision}"
                        self.probe_cosine = cos
                    else:
                        log.warning("int8 probe cosine %.4f < %.3f; using %s", cos, INT8_MIN_COSINE, precision)
            except Exception as exc:  # noqa: BLE001 - the bf16/fp32 model still works
                log.warning("int8 embeddings unavailable (%s); using %s", exc, precision)
        self._compiled, self._precision = compiled, precision
        self._request = compiled.create_infer_request()

    def _run(self, compiled: Any, texts: Sequence[str], request: Any = None) -> Any:
        """Unit vectors for `texts`, in order. Texts are batched by token count, so a batch
        is nearly all real tokens (sorting by characters left 11% padding, measured)."""
        import numpy as np

        request = request or compiled.create_infer_request()
        names = self._pipe["inputs"]
        n = len(texts)
        dim = int(compiled.outputs[0].get_partial_shape()[-1].get_length())
        out = np.zeros((n, dim), dtype=np.float32)
        encs = self._tok.encode_batch([_clean(t) for t in texts])
        order = sorted(range(n), key=lambda i: len(encs[i].ids), reverse=True)
        for lo in range(0, n, OV_BATCH):
            idx = order[lo : lo + OV_BATCH]
            width = len(encs[idx[0]].ids)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encs[i]
                k = len(e.ids)
                ids[row, :k], mask[row, :k], types[row, :k] = e.ids, e.attention_mask, e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            hidden = np.asarray(request.infer({k: feed[k] for k in names})[0], dtype=np.float32)
            if self._pipe["pooling"] == "cls":
                v = hidden[:, 0, :]
            else:
                m = mask[..., None].astype(np.float32)
                v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            norms = np.linalg.norm(v, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out[idx] = v / norms
        return out

    # -- Embedder
    @property
    def dim(self) -> int:
        self.load()
        return int(self._compiled.outputs[0].get_partial_shape()[-1].get_length())

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def loaded(self) -> bool:
        return self._compiled is not None

    def encode(self, texts: Sequence[str]) -> Any:
        self.load()
        self.calls += 1
        self.encoded += len(texts)
        try:
            with self._lock:  # one infer request: callers from several threads take turns
                return self._run(self._compiled, texts, self._request)
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingError(f"encoding failed: {exc}") from exc

    def encode_query(self, text: str) -> Any:
        return self.encode([text])[0]


def _clean(text: str) -> str:
    # sentence-transformers strips inputs before tokenizing; an empty input still gets [CLS] [SEP]
    return str(text).strip()
