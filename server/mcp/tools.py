"""MCP tools: the registry's routes that have a tool name (Dory's `dory_*`), with the same
description and input schema as `GET /v1/tools`, calling the same operations.

A call answers the operation's JSON both as text (what most hosts show the model) and as
`structuredContent`. A refused call (bad arguments, missing document, stale hash, server
not ready) is a tool error (`isError`) whose text is the HTTP API's `error.message`, and
whose structured content carries the HTTP status and the error object; the call never
takes the connection down. A write the operation answered with `result: rejected` (200 over
HTTP, Dory's contract) is a tool error too: its text starts with the message that says how
to succeed, and its structured content is the whole answer. An unknown tool name is a protocol error, as the spec says.
"""

from __future__ import annotations

import errno
import json
import logging
from functools import lru_cache
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..errors import ApiError
from ..openapi import input_schema
from ..registry import BY_TOOL, ROUTES, Route
from .backend import Backend

log = logging.getLogger("commonplace.mcp")

# Business outcomes HTTP answers with 200 that did not do what the call asked.
REFUSED_RESULTS = ("rejected", "failed")
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def tool_routes() -> list[Route]:
    return [r for r in ROUTES if r.tool]


@lru_cache(maxsize=1)
def tool_list() -> tuple[types.Tool, ...]:
    return tuple(
        types.Tool(
            name=r.tool or r.name,
            title=r.summary,
            description=r.description,
            input_schema=input_schema(r),
            annotations=types.ToolAnnotations(title=r.summary, read_only_hint=not r.writes, open_world_hint=False),
        )
        for r in tool_routes()
    )


def error_result(status: int, code: str, message: str, type_: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        structured_content={"status": status, "error": {"code": code, "message": message, "type": type_}},
        is_error=True,
    )


def call_tool(backend: Backend, name: str, arguments: dict[str, Any] | None,
              actor: str | None = None) -> types.CallToolResult:
    """Run one tool call to the end (blocking: the server runs it in a worker thread)."""
    route = BY_TOOL.get(name)
    if route is None:
        known = ", ".join(sorted(BY_TOOL))
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}; the tools are: {known}")
    try:
        data = backend.call(route, dict(arguments or {}), actor)
    except ApiError as exc:
        return error_result(exc.status, exc.code, exc.message, exc.type)
    except OSError as exc:
        if exc.errno in _DISK_ERRORS:  # as the HTTP API says it: the caller's request was fine
            why = "no space left on the device" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else \
                "the corpus is read-only here"
            return error_result(503, "write_failed", f"cannot write: {why}; the write did not complete",
                                "server_error")
        log.exception("tool %s failed", name)
        return error_result(500, "internal_error", "internal error; the MCP server's log (stderr) has the details",
                            "server_error")
    except Exception:  # noqa: BLE001 - a bug must not end the session
        log.exception("tool %s failed", name)
        return error_result(500, "internal_error", "internal error; the MCP server's log (stderr) has the details",
                            "server_error")
    text = json.dumps(data, ensure_ascii=False)
    if isinstance(data, dict) and data.get("result") in REFUSED_RESULTS:
        # HTTP answers a rejected write with 200 (Dory's contract); a tool host needs the
        # refusal as one, with what to do about it first.
        first = str(data.get("message") or data["result"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{first}\n{text}")],
                                    structured_content=data, is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)
