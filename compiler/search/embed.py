"""Compatibility: the embedding code lives in the `embedding` package; import from there.

Kept only while callers move (`engine.py` imports `get_embedder` from here); the names
are the package's own, so patching them here changes nothing.
"""

from __future__ import annotations

from .embedding import *  # noqa: F403
from .embedding import __all__  # noqa: F401
