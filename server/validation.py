"""Request validation: a request model from the query string and the JSON body.

Free of Flask, so HTTP and MCP validate the same way. Body fields win over query-string
fields; a body field sent as null counts as absent; unknown fields are ignored. A request
that fails validation raises `ApiError` with the failing fields.
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


def validate(model: type[M], query: Mapping[str, Any] | None = None, body: Mapping[str, Any] | None = None) -> M:
    data: dict[str, Any] = {}
    if query:
        allowed = _query_names(model)
        data.update({k: v for k, v in query.items() if k in allowed})
    if body:
        data.update({k: v for k, v in body.items() if v is not None})
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(exc) from None


def invalid(exc: ValidationError) -> ApiError:
    """The first failing field, said plainly; every failure in `detail`."""
    errors = exc.errors(include_url=False, include_context=False)
    first = errors[0]
    name = ".".join(str(p) for p in first["loc"]) or "body"
    if first["type"] == "missing":
        return ApiError(400, "missing_parameter", f"`{name}` is required", detail=_detail(errors))
    return ApiError(400, "invalid_parameter", f"`{name}`: {first['msg']}", detail=_detail(errors))


def _detail(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        item = {"type": e["type"], "loc": ["body", *e["loc"]], "msg": e["msg"]}
        if isinstance(e.get("input"), (str, int, float, bool)) or e.get("input") is None:
            item["input"] = e.get("input")
        out.append(item)
    return out
