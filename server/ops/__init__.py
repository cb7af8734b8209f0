"""The API's operations, free of Flask: each takes an `OpContext` and a validated request
model (`server/models.py`) and returns the JSON answer, or raises `ApiError`.

HTTP (`routes/v1.py`) and MCP call the same functions through the registry, so both offer
exactly the same tools with the same checks and the same write path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from commonplace.compiler.live.contract import LiveContract


@dataclass
class OpContext:
    live: LiveContract  # the compiler's LiveCorpus (or anything with its contract)
    root: Path  # corpus folder, resolved
    out: Path | None = None  # site output folder
    excluded: tuple[Path, ...] = ()  # folders inside the corpus that are not content
    actor: str | None = None  # token name of the caller, if any
    server_info: Callable[[], dict[str, Any]] = field(default=lambda: {})
    # Which compatibility routes this server offers (`registry.compat_matrix`, handed in by
    # the registry when it calls an op: an op never imports the registry that imports it).
    compat: Callable[[], dict[str, str]] = field(default=lambda: {})
    migrate_roots: tuple[str, ...] = ()  # `serve --migrate-root`: folders /v1/migrate may read
    transport: str = "http"  # "mcp" when an MCP tool call runs the op: its hints name tools, not routes


# Sent by `commonplace mcp` when it forwards a tool call to a running server (`mcp/backend.py`):
# the server runs the op with `transport="mcp"`, so the agent reads the same hints as over /mcp.
TRANSPORT_HEADER = "X-Commonplace-Transport"
