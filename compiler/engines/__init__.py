"""Build engines: where a build's per-document work and its embeddings run.

The local engine is the default and lives elsewhere: forked parse/render workers
(`workers.py`) and one embedding process per core (`search/embedding/pool.py`).
`--engine ray` runs the same work on a Ray cluster:

    ray_cluster.py  connecting (clear errors before anything is written), the code check
    ray_tasks.py    what runs on the cluster: parse+chunk and render tasks, the embedding actor
    ray_site.py     the runner `SiteState.update` drives (parse, render; writes stay here)
    ray_embed.py    the embedding actors: cache lookup first, only misses are sent
    ray_build.py    one build's engine: the runner, the index stage's hooks, closing
    ray_guard.py    the build runs in a forked child, so a driver Ray ends still reports

Importing this package, or any module in it, imports no Ray: `open_engine` does, when
a build asks for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ENGINES = ("local", "ray")


class EngineError(RuntimeError):
    """The engine cannot run this build (not installed, cluster unreachable, nodes with other
    code, the cluster lost mid-build). Raised before the site or the indexes are written."""


def open_engine(name: str, address: str | None, root: Path, *, embed: bool = True, progress: bool = False) -> Any:
    """The engine for a build other than the local one, connected and checked; None for
    `local`. Raises `EngineError` before the caller has written anything."""
    if name == "local":
        if address:
            raise EngineError("--address needs --engine ray")
        return None
    if name != "ray":
        raise EngineError(f"unknown engine {name!r} (choose from {', '.join(ENGINES)})")
    from .ray_build import RayEngine

    return RayEngine.open(address, root, embed=embed, progress=progress)
