"""Arguments for every tool, derived from the registry: the route's example as the good
call, and a call that breaks its schema as the bad one."""

from __future__ import annotations

import importlib.util
from typing import Any

from commonplace.server.errors import ApiError
from commonplace.server.openapi import input_schema, tools_document
from commonplace.server.registry import BY_TOOL, Route
from commonplace.server.validation import validate

TOOL_NAMES = [t["name"] for t in tools_document()["tools"]]


def route(tool: str) -> Route:
    return BY_TOOL[tool]


def good_args(tool: str) -> dict[str, Any]:
    return dict(route(tool).example or {})


def bad_args(tool: str) -> dict[str, Any]:
    """Missing the required fields, or (a tool with none required) a boolean that is not one."""
    schema = input_schema(route(tool))
    if schema.get("required"):
        return {}
    for name, prop in schema["properties"].items():
        if prop.get("type") == "boolean":
            return {name: "maybe"}
        if prop.get("type") == "integer":
            return {name: "many"}
    raise AssertionError(f"no way to break {tool}'s schema")


def validation_message(tool: str, args: dict[str, Any]) -> str:
    """What the HTTP API says about these arguments (it validates with the same function)."""
    try:
        validate(route(tool).model, body=args)  # type: ignore[arg-type]
    except ApiError as exc:
        assert exc.status == 422
        return exc.message
    raise AssertionError(f"{args} are valid for {tool}")


def op_available(tool: str) -> bool:
    """The operation's module exists (some are still being written by other work)."""
    module = (route(tool).handler or "").partition(":")[0]
    return importlib.util.find_spec(f"commonplace.server.ops.{module}") is not None


def required_keys(tool: str) -> set[str]:
    return set(route(tool).response.get("required", []))
