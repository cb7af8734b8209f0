"""The one way a package here exports names it imports on first use (PEP 562).

    __getattr__ = lazy_exports(__name__, {"ClaimStore": "service", ...})

`import package` stays cheap (no Whoosh, torch or Flask until a name is used); the first
`package.name` (or `from package import name`) imports the submodule and keeps the value
in the package, so later uses cost a dict lookup. `tests/test_import_graph.py` reads
these tables as import edges.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: name -> the submodule (relative) defining it."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
