"""The API's documents, generated from the registry: the JSON Schema of each request model
(inlined, for agents), `/v1/tools` and `/v1/openapi.json`."""

from __future__ import annotations

from typing import Any

from .models import Request
from .registry import ROUTES, Route


def input_schema(route: Route) -> dict[str, Any]:
    """The JSON Schema of a route's request body (its model's, inlined, without titles)."""
    if route.model is None:
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": True}
    return model_schema(route.model)


def model_schema(model: type[Request]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    defs = schema.pop("$defs", {})
    out = _inline(schema, defs)
    out["additionalProperties"] = True
    out.setdefault("required", [])
    return out


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Resolve `$ref`s, drop `title`s and collapse Optional[X] (anyOf X|null) to X, as tool
    schemas are read by agents, not by code generators."""
    if isinstance(node, list):
        return [_inline(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties":
            out[key] = {name: _inline(v, defs) for name, v in value.items()}
            continue
        out[key] = _inline(value, defs)
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        rest = [x for x in any_of if x != {"type": "null"}]
        if len(rest) < len(any_of):
            if len(rest) == 1:
                out.pop("anyOf")
                out = {**rest[0], **out}
            else:
                out["anyOf"] = rest
    if out.get("default", 0) is None:
        out.pop("default")
    return out


def tools_document() -> dict[str, Any]:
    tools = []
    for r in ROUTES:
        if not r.tool:
            continue
        tools.append({
            "name": r.tool,
            "description": r.description,
            "inputSchema": input_schema(r),
            "method": r.methods[0],
            "path": r.path,
            "writes": r.writes,
        })
    return {"tools": tools}


ERROR_SCHEMA = {
    "type": "object",
    "description": "Dory's `detail` (a string, an object, or for 422 the list of failing fields) and "
                   "commonplace's `error` envelope, side by side.",
    "required": ["detail", "error"],
    "properties": {
        "detail": {},
        "error": {
            "type": "object",
            "required": ["code", "message", "type"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "type": {"type": "string"},
            },
        },
    },
}

_STATUS_TEXT = {
    303: "Not signed in: redirect to /wiki/login", 400: "Invalid input or refused write",
    401: "Missing or invalid bearer token", 403: "Forbidden (origin or host)", 404: "Not found",
    409: "Hash precondition failed or target exists", 413: "Request too large",
    422: "Request validation failed (the FastAPI-style `detail` list)",
    503: "Not ready (index loading, model loading) or storage unavailable",
}
_CONTENT = {"site": "*/*", "html": "text/html", "text": "text/plain", "sse": "text/event-stream",
            "mcp": "application/json"}


def _query_params(route: Route) -> list[dict[str, Any]]:
    schema = input_schema(route)
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema["properties"].items():
        if prop.get("type") == "object" or "properties" in prop:
            continue  # objects come in a JSON body only
        s = {k: v for k, v in prop.items() if k != "description"}
        if "anyOf" in s:
            s = {"type": "string"}
        out.append({"name": name, "in": "query", "required": name in required,
                    "description": prop.get("description", ""), "schema": s})
    return out


def _other_operation(r: Route, method: str) -> dict[str, Any]:
    """A route that answers something other than JSON (pages, metrics, events, MCP)."""
    errors = {str(code): {"description": _STATUS_TEXT[code]} if code == 303 else
              {"description": _STATUS_TEXT[code], "content": {"application/json": {"schema": ERROR_SCHEMA}}}
              for code in r.errors if code != 404}
    responses: dict[str, Any] = {"200": {"description": r.summary, "content": {_CONTENT[r.kind]: {}}}, **errors}
    if 404 in r.errors:
        responses["404"] = {"description": "Not found: the site's 404 page (HTML), or the JSON envelope",
                            "content": {"text/html": {}, "application/json": {"schema": ERROR_SCHEMA}}}
    if r.kind in ("site", "html"):
        responses["308"] = {"description": "Redirect to the page's canonical URL"}
    op: dict[str, Any] = {"operationId": f"{r.name}_{method.lower()}", "summary": r.summary,
                          "description": r.description, "responses": responses}
    params = [{"name": n, "in": "path", "required": True, "description": "Path inside the site",
               "schema": {"type": "string"}} for n in ("rel", "page") if "{" + n + "}" in r.path]
    if r.model is not None:
        params += _query_params(r)
    if params:
        op["parameters"] = params
    if not r.public:
        op["security"] = [{"bearer": []}, {}]
    return op


def openapi_document(server_url: str | None = None) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for r in ROUTES:
        ops: dict[str, Any] = {}
        if r.kind != "json":
            paths[r.path] = {m.lower(): _other_operation(r, m) for m in r.methods}
            continue
        for method in r.methods:
            op: dict[str, Any] = {
                "operationId": f"{r.name}_{method.lower()}",
                "summary": r.summary,
                "description": r.description,
                "responses": {
                    "200": {"description": "OK", "content": {"application/json": {"schema": r.response}}},
                    **{str(code): {"description": _STATUS_TEXT[code],
                                   "content": {"application/json": {"schema": ERROR_SCHEMA}}}
                       for code in r.errors},
                },
            }
            if not r.public:
                op["security"] = [{"bearer": []}, {}]
            if method == "GET":
                qp = _query_params(r) if r.model is not None else []
                if qp:
                    op["parameters"] = qp
            elif r.model is not None:
                op["requestBody"] = {
                    "required": bool(input_schema(r).get("required")),
                    "content": {"application/json": {"schema": input_schema(r)}},
                }
            ops[method.lower()] = op
        paths[r.path] = ops
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "commonplace",
            "version": _version(),
            "description": "Memory wiki query server: Dory's /v1 API and more. Errors carry Dory's "
                           "`detail` and commonplace's {\"error\": {\"code\", \"message\", \"type\"}}.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": ERROR_SCHEMA},
        },
    }
    if server_url:
        doc["servers"] = [{"url": server_url}]
    return doc


def _version() -> str:
    from commonplace.compiler import __version__

    return __version__
