"""Whether the query model is loaded: a server just restarted says ready on its index
and loads the model behind it (about a second and a half). Until it is loaded, hybrid
search and active memory search by words and say so, instead of spending Dory's 1.2 s
client timeout on the load; the first call starts the load, once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

LOADING_WARNING = "the embedding model is still loading: this answer searched by words only"

_LOADING: set[str] = set()
_LOADING_LOCK = threading.Lock()


def model_ready(root: Path) -> bool:
    """Whether the query model is loaded, or there is none to wait for. Not loaded yet:
    False, and the model is loaded behind the call, once."""
    from commonplace.compiler.search import existing_engine

    engine = existing_engine(root)
    meta = getattr(engine, "meta", None)
    if engine is None or meta is None or not meta.vectors:
        return True
    try:
        embedder = engine.embedder()
    except Exception:  # noqa: BLE001 - no model to load: the search says so itself
        return True
    if getattr(embedder, "loaded", True):
        return True
    key = str(root)
    with _LOADING_LOCK:
        if key not in _LOADING:
            _LOADING.add(key)
            threading.Thread(target=_load, args=(embedder, key), name="commonplace-query-model", daemon=True).start()
    return False


def _load(embedder: Any, key: str) -> None:
    try:
        embedder.encode_query("warm up")
    except Exception:  # noqa: BLE001 - the next vector query reports what failed
        pass
    finally:
        with _LOADING_LOCK:
            _LOADING.discard(key)
