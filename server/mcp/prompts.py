"""The MCP prompt `wake`: the start-of-session context block of `/v1/wake` (`dory_wake`).

Its arguments are the wake request's fields (prompt arguments are strings; the request
model turns "600" into 600 as it does for a query string). Getting it runs the same
operation as the tool and returns the block as one user message, for hosts that offer
prompts as slash commands.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..errors import ApiError
from ..openapi import input_schema
from ..registry import BY_NAME
from .backend import Backend

NAME = "wake"


@lru_cache(maxsize=1)
def prompt_list() -> tuple[types.Prompt, ...]:
    route = BY_NAME["wake"]
    schema = input_schema(route)
    required = set(schema.get("required", []))
    args = [types.PromptArgument(name=name, description=prop.get("description"), required=name in required)
            for name, prop in schema["properties"].items()
            if prop.get("type") in ("string", "integer", "boolean") or "enum" in prop]
    return (types.Prompt(name=NAME, title=route.summary, description=route.description, arguments=args),)


def get(backend: Backend, name: str, arguments: dict[str, str] | None, actor: str | None = None) -> types.GetPromptResult:
    if name != NAME:
        raise MCPError(types.INVALID_PARAMS, f"unknown prompt {name!r}; the prompts are: {NAME}")
    route = BY_NAME["wake"]
    try:
        data: dict[str, Any] = backend.call(route, dict(arguments or {}), actor)
    except ApiError as exc:
        code = types.INVALID_PARAMS if exc.status in (400, 404, 422) else types.INTERNAL_ERROR
        raise MCPError(code, exc.message) from None
    return types.GetPromptResult(
        description=f"Wake block ({data.get('profile', 'default')} profile)",
        messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=str(data.get("block", ""))))],
    )
