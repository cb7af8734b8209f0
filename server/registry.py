"""The API's single description: every operation, its request model, response shape and
the text an agent reads.

Everything that describes the API comes from `ROUTES` and the request models in
`models.py`: request validation (`validation.py`), the route registration (`routes/v1.py`),
`GET /v1/openapi.json`, `GET /v1/tools` and the MCP tools. A test walks Flask's URL map and
this table both ways, so the description cannot drift from what is served.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .ops import documents, links, memory, search, status, wake
from .models import (GetRequest, LinkRequest, MemoryWriteRequest, Request, SearchRequest, StatusRequest,
                     WakeRequest, WriteRequest)

# --------------------------------------------------------------------------- routes


@dataclass(frozen=True)
class Route:
    name: str  # tool name (x_y is served at /v1/x-y)
    path: str
    methods: tuple[str, ...]
    summary: str
    description: str  # written for an agent
    model: type[Request] | None = None
    response: dict[str, Any] = field(default_factory=dict)
    errors: tuple[int, ...] = (400, 401, 403, 413, 503)
    tool: bool = True
    writes: bool = False
    example: dict[str, Any] | None = None
    site: bool = False  # serves the built wiki (any content type), not JSON
    handler: Callable[[Any, Any], dict[str, Any]] | None = None  # ops function (OpContext, model)
    needs_ready: bool = True  # 503 until the corpus is open

    @property
    def flask_path(self) -> str:
        return self.path.replace("{rel}", "<path:rel>")

    @property
    def body_methods(self) -> tuple[str, ...]:
        return tuple(m for m in self.methods if m == "POST")


def _result_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["path", "lines", "title", "snippet", "evidence_class", "confidence", "stale_warning"],
        "properties": {
            "path": {"type": "string"},
            "lines": {"type": "string", "description": "1-based line range 'start-end' of the best chunk"},
            "title": {"type": "string"},
            "snippet": {"type": "string"},
            "evidence_class": {"type": "string"},
            "confidence": {"type": ["string", "number", "null"]},
            "stale_warning": {"type": ["string", "null"]},
            "score": {"type": "number"},
            "frontmatter": {"type": "object"},
            "content": {"type": "string"},
        },
    }


SEARCH = Route(
    "search", "/v1/search", ("POST",),
    "Search the memory (hybrid BM25 + vector by default)",
    "Search the memory corpus and get the best matching documents, each with its path, the line "
    "range of the best passage, a snippet with the matched words marked, its evidence class and "
    "confidence, and a stale_warning when the document is superseded or changed since indexing. "
    "Use natural language or exact identifiers; any text is a valid query (no syntax errors). "
    "Follow up with `get` on a result's path (and `from`/`lines` from its line range) to read it.",
    SearchRequest,
    {
        "type": "object",
        "required": ["query", "count", "results", "took_ms", "warnings"],
        "properties": {
            "query": {"type": "string"},
            "count": {"type": "integer"},
            "results": {"type": "array", "items": _result_schema()},
            "took_ms": {"type": "number"},
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
    },
    example={"query": "who owns the billing migration?", "k": 5},
    handler=search.search,
)

GET = Route(
    "get", "/v1/get", ("GET", "POST"),
    "Read a document (or some of its lines)",
    "Read a markdown document of the memory by its corpus-relative path (for example "
    "`people/alex.md`, as returned by `search`). `from` (1-based) and `lines` select a slice. "
    "With debug=true the answer adds total_lines, lines_returned, the parsed frontmatter and "
    "`hash` (sha256 of the whole file), which `write` needs as expected_hash to replace or forget it.",
    GetRequest,
    {
        "type": "object",
        "required": ["path", "from", "content"],
        "properties": {
            "path": {"type": "string"},
            "from": {"type": "integer"},
            "content": {"type": "string"},
            "total_lines": {"type": "integer"},
            "lines_returned": {"type": "integer"},
            "frontmatter": {"type": "object"},
            "hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
        },
    },
    errors=(400, 401, 403, 404, 413, 503),
    example={"path": "core/identity.md", "debug": True},
    handler=documents.get,
)

WRITE = Route(
    "write", "/v1/write", ("POST",),
    "Write a markdown document (append, create, replace, forget)",
    "Write to the memory corpus; the wiki and search indexes are updated before the answer "
    "(`indexed`). kind=append adds content at the end of `target` (creating it with frontmatter "
    "if missing; frontmatter fields are merged, tags unioned); create makes a new file (409 if it "
    "exists); replace overwrites it and needs expected_hash (the current `hash` from get with "
    "debug=true; 409 if the file changed since); forget replaces the document with a tombstone "
    "and removes its text everywhere (needs expected_hash and reason). `target` is relative, ends "
    "in .md, and may not be hidden or leave the corpus. Content with prompt-injection markers or "
    "invisible characters is refused (422) unless soft=true, which quarantines it for review. "
    "dry_run=true reports what would happen.",
    WriteRequest,
    {
        "type": "object",
        "required": ["path", "action", "bytes_written", "hash", "indexed", "edges_added"],
        "properties": {
            "path": {"type": "string"},
            "action": {"type": "string"},
            "bytes_written": {"type": "integer"},
            "hash": {"type": "string"},
            "indexed": {"type": "boolean"},
            "edges_added": {"type": "integer"},
            "dry_run": {"type": "boolean"},
            "quarantined": {"type": "boolean"},
            "message": {"type": "string"},
        },
    },
    errors=(400, 401, 403, 404, 409, 413, 422, 503),
    writes=True,
    example={"kind": "append", "target": "inbox/notes.md", "content": "Remember to rotate the signing keys."},
    handler=documents.write,
)

MEMORY_WRITE = Route(
    "memory_write", "/v1/memory-write", ("POST",),
    "Record a fact about a person, project, concept or decision",
    "Remember something about an entity through the claim store: the subject (a person, project, "
    "concept or decision, by name, alias, slug or id like person:alex) is resolved, the statement "
    "is recorded as a claim with provenance, an evidence file keeps the raw input, and the "
    "entity's canonical page is recompiled and reindexed. action=write adds a claim, replace "
    "replaces the current claim of that kind, forget removes matching claims for good (needs "
    "reason). An unknown or ambiguous subject is rejected (resolved=false; soft=true quarantines "
    "it instead). Pages marked canonical need allow_canonical=true, or force_inbox=true to file "
    "the note in the inbox for a person. dry_run=true previews.",
    MemoryWriteRequest,
    {
        "type": "object",
        "required": ["resolved", "action", "kind", "subject_ref", "target_path", "result", "confidence",
                     "indexed", "quarantined", "message"],
        "properties": {
            "resolved": {"type": "boolean"},
            "action": {"type": "string"},
            "kind": {"type": "string"},
            "subject_ref": {"type": ["string", "null"]},
            "target_path": {"type": ["string", "null"]},
            "result": {"type": "string"},
            "confidence": {"type": ["string", "number", "null"]},
            "indexed": {"type": "boolean"},
            "quarantined": {"type": "boolean"},
            "message": {"type": "string"},
        },
    },
    errors=(400, 401, 403, 404, 409, 413, 422, 503),
    writes=True,
    example={"action": "write", "kind": "preference", "subject": "Alex", "content": "Alex prefers async reviews.",
             "allow_canonical": True},
    handler=memory.memory_write,
)

WAKE = Route(
    "wake", "/v1/wake", ("POST",),
    "Get a start-of-session context block",
    "Call at the start of a session: returns `block`, a markdown context to read first, built "
    "from the core/ documents, the project page (when `project` is given), pinned decisions and "
    "the end of the most recent session notes, cut to fit `budget_tokens` (estimated offline). "
    "Profiles: default, core, project, minimal.",
    WakeRequest,
    {
        "type": "object",
        "required": ["profile", "block"],
        "properties": {
            "profile": {"type": "string"},
            "block": {"type": "string"},
            "tokens": {"type": "integer"},
            "budget_tokens": {"type": "integer"},
            "sources": {"type": "array"},
            "omitted": {"type": "array"},
            "warnings": {"type": "array"},
        },
    },
    example={"agent": "coder", "budget_tokens": 1500},
    handler=wake.wake,
)

LINK = Route(
    "link", "/v1/link", ("POST",),
    "Follow links: neighbors, backlinks, broken links",
    "Explore the link graph of the memory. op=neighbors: documents linked from and to `path` "
    "(direction out, in or both; depth 1-5); op=backlinks: documents that link to `path`, with "
    "the line of each link; op=lint: broken links and self-links (of `path`, or of the whole "
    "corpus). Lists are cut at max_edges; `truncated` says so and `total_count` gives the full size.",
    LinkRequest,
    {
        "type": "object",
        "required": ["op", "count", "total_count", "truncated"],
        "properties": {
            "op": {"type": "string"},
            "path": {"type": ["string", "null"]},
            "edges": {"type": "array"},
            "broken": {"type": "array"},
            "self_links": {"type": "array"},
            "count": {"type": "integer"},
            "total_count": {"type": "integer"},
            "truncated": {"type": "boolean"},
        },
    },
    errors=(400, 401, 403, 404, 413, 503),
    example={"op": "backlinks", "path": "people/alex.md"},
    handler=links.link,
)

STATUS = Route(
    "status", "/v1/status", ("GET", "POST"),
    "Index and server status",
    "What the server holds: document, chunk and vector counts, index health, embedding model "
    "and dimensions, pending embeddings, and the last build. debug=true adds index freshness "
    "(compares the corpus on disk with the index; slower on large corpora).",
    StatusRequest,
    {
        "type": "object",
        "required": ["ok", "ready", "documents"],
        "properties": {
            "ok": {"type": "boolean"},
            "ready": {"type": "boolean"},
            "documents": {"type": "integer"},
            "files": {"type": "integer"},
            "chunks": {"type": ["integer", "null"]},
            "vectors": {"type": ["integer", "null"]},
            "index": {"type": "object"},
            "model": {"type": ["string", "null"]},
            "dimensions": {"type": ["integer", "null"]},
            "pending": {"type": ["integer", "null"]},
            "last_build": {"type": ["object", "null"]},
            "last_refresh": {"type": ["object", "null"]},
        },
    },
    errors=(400, 401, 403, 413, 503),
    handler=status.status,
    needs_ready=False,
)

TOOLS = Route(
    "tools", "/v1/tools", ("GET",), "List the tools with JSON Schemas",
    "The tools this server offers, with input JSON Schemas, for agent bridges.",
    None, {"type": "object", "required": ["tools"], "properties": {"tools": {"type": "array"}}},
    errors=(400, 401, 403),
    tool=False,
)

OPENAPI = Route(
    "openapi", "/v1/openapi.json", ("GET",), "This OpenAPI description",
    "The OpenAPI 3.1 description of every route.", None,
    {"type": "object", "required": ["openapi", "paths"]},
    errors=(400, 401, 403),
    tool=False,
)

HEALTHZ = Route(
    "healthz", "/healthz", ("GET",), "Liveness and readiness",
    "200 {\"ok\": true} once the index is loaded and the model preloaded; 503 before.", None,
    {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
    errors=(503,),
    tool=False,
)

SITE_HOME = Route(
    "site_home", "/", ("GET",), "The wiki's start page",
    "The built site's index.html.", None, {}, errors=(400, 401, 403, 404), tool=False, site=True,
)

SITE_PAGE = Route(
    "site_page", "/{rel}", ("GET",), "A file of the built wiki",
    "Pages by pretty URL (`/people/alex/` serves people/alex/index.html; `/people/alex` and "
    "`/people/alex.md` redirect there), and the site's assets. Nothing outside the output "
    "folder is ever served: hidden parts, `..` and encoded separators are 404.",
    None, {}, errors=(400, 401, 403, 404), tool=False, site=True,
)

ROUTES: tuple[Route, ...] = (HEALTHZ, SEARCH, GET, WRITE, MEMORY_WRITE, WAKE, LINK, STATUS, TOOLS, OPENAPI,
                             SITE_HOME, SITE_PAGE)
BY_NAME = {r.name: r for r in ROUTES}


# --------------------------------------------------------------------------- documents


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
            "name": r.name,
            "description": r.description,
            "inputSchema": input_schema(r),
            "method": "POST",
            "path": r.path,
            "writes": r.writes,
        })
    return {"tools": tools}


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "type"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "type": {"type": "string"},
            },
        }
    },
}

_STATUS_TEXT = {
    400: "Invalid input", 401: "Missing or invalid bearer token", 403: "Forbidden (origin or host)",
    404: "No such document", 409: "Hash precondition failed or target exists", 413: "Request too large",
    422: "Content refused", 503: "Not ready (index loading, model loading) or storage unavailable",
}


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


def _site_operation(r: Route) -> dict[str, Any]:
    errors = {str(code): {"description": _STATUS_TEXT[code],
                          "content": {"application/json": {"schema": ERROR_SCHEMA}}} for code in r.errors if code != 404}
    op: dict[str, Any] = {
        "operationId": r.name,
        "summary": r.summary,
        "description": r.description,
        "responses": {
            "200": {"description": "A page or asset of the built site", "content": {"*/*": {}}},
            "308": {"description": "Redirect to the page's canonical URL (trailing slash)"},
            "404": {"description": "Not found: the site's 404 page (HTML), or the JSON envelope under /v1/",
                    "content": {"text/html": {}, "application/json": {"schema": ERROR_SCHEMA}}},
            **errors,
        },
    }
    if "{rel}" in r.path:
        op["parameters"] = [{"name": "rel", "in": "path", "required": True,
                             "description": "Path inside the site", "schema": {"type": "string"}}]
    return op


def openapi_document(server_url: str | None = None) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for r in ROUTES:
        ops: dict[str, Any] = {}
        if r.site:
            paths[r.path] = {"get": _site_operation(r)}
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
            if r.writes or r.model is not None:
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
            "description": "Memory wiki query server: Dory-compatible /v1 API. Errors use one envelope: "
                           "{\"error\": {\"code\", \"message\", \"type\"}}.",
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
