"""Which corpora have a `index_fill.VectorFiller` at work in this process. A leaf, so the
index stage can ask (`filling`) without importing the filler, which imports the stage."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

_active: dict[Path, Any] = {}
_lock = threading.Lock()


def filling(root: Path) -> bool:
    """Whether a filler works on this corpus in this process."""
    with _lock:
        return Path(root).resolve() in _active


def claim(root: Path, owner: Any) -> None:
    with _lock:
        _active[Path(root).resolve()] = owner


def release(root: Path, owner: Any) -> None:
    with _lock:
        if _active.get(Path(root).resolve()) is owner:
            del _active[Path(root).resolve()]
