"""Request validation: a request model from the query string and the JSON body.

Free of Flask, so HTTP and MCP validate the same way. Body fields win over query-string
fields; unknown fields are ignored. A request that fails validation is a 422 whose
`detail` is the FastAPI-style list (type, loc, msg, input, ctx), as Dory answers.
"""

from __future__ import annotations

from typing import Any, Mapping, TypeVar

from pydantic import ValidationError

from .errors import ApiError
from .models import Request

M = TypeVar("M", bound=Request)


def _query_names(model: type[Request]) -> set[str]:
    names = set()
    for name, f in model.model_fields.items():
        ann = str(f.annotation)
        if "dict" in ann or "Scope" in ann:
            continue  # objects come in a JSON body only
        names.add(f.alias or name)
    return names


MAX_JSON_DEPTH = 64


def _depth_ok(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return False
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return True


def _unicode_ok(value: Any) -> bool:
    """No string (key or value) holds a lone surrogate: JSON's \\ud800 escapes decode to
    text that cannot be encoded as UTF-8, so echoing it back would fail."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True


def check_body(body: Any) -> None:
    """Arguments every transport refuses before validation (HTTP bodies, MCP tool calls):
    nesting deeper than MAX_JSON_DEPTH, and lone surrogates, which cannot be written as
    UTF-8 (a 422, as a body that is not JSON)."""
    problem = None
    if not _depth_ok(body):
        problem = f"the request body is nested deeper than {MAX_JSON_DEPTH} levels"
    elif not _unicode_ok(body):
        problem = ("the request body holds a lone surrogate (a \\ud800-\\udfff escape without its pair), "
                   "which is not valid Unicode text")
    if problem:
        raise ApiError(422, "invalid_json", problem, detail=[{"type": "json_invalid", "loc": ["body"], "msg": problem,
                                                              "input": None}])


def validate(model: type[M], query: Mapping[str, Any] | None = None, body: Mapping[str, Any] | None = None) -> M:
    if body:
        check_body(body)
    data: dict[str, Any] = {}
    where: dict[str, str] = {}
    if query:
        allowed = _query_names(model)
        for k, v in query.items():
            if k in allowed:
                data[k], where[k] = v, "query"
    if body:
        for k, v in body.items():
            data[k], where[k] = v, "body"
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(exc, where, "query" if query and not body else "body") from None


def invalid(exc: ValidationError, where: Mapping[str, str] | None = None, default: str = "body") -> ApiError:
    """422: the first failing field said plainly in `error.message`; all in `detail`."""
    errors = exc.errors(include_url=False)
    detail = []
    for e in errors:
        head = str(e["loc"][0]) if e["loc"] else ""
        item: dict[str, Any] = {"type": e["type"], "loc": [(where or {}).get(head, default), *e["loc"]],
                                "msg": e["msg"], "input": _jsonable(e.get("input"))}
        if e.get("ctx"):
            item["ctx"] = {k: _jsonable(v) for k, v in e["ctx"].items()}
        detail.append(item)
    first = detail[0]
    name = ".".join(str(p) for p in first["loc"][1:]) or "body"
    if first["type"] == "missing":
        message = f"`{name}` is required"
    else:
        message = f"`{name}`: {first['msg']}"
    return ApiError(422, "validation_error", message, detail=detail)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        if isinstance(value, str) and len(value) > 200:
            return value[:200] + "..."
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in list(value)[:20]]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in list(value.items())[:20]}
    return str(value)[:200]
