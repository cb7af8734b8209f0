"""The API's single description: routes, parameters, response shapes, tool texts.

Everything that describes the API is generated from `ROUTES`: request validation
(`parse_params`), `GET /v1/openapi.json` and `GET /v1/tools`. A test walks Flask's URL map
and this table both ways, so the description cannot drift from what is served.

Parameter rules (Dory compatible): unknown fields are ignored; booleans accept JSON
booleans, 0/1, and the strings true/True/1/yes/on and false/False/0/no/off; integers accept
JSON integers and digit strings. A value of the wrong type is a 400 naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import ApiError

# --------------------------------------------------------------------------- parameters

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


@dataclass(frozen=True)
class Param:
    name: str
    schema: dict[str, Any]
    description: str
    required: bool = False
    default: Any = None
    in_query: bool = True  # also accepted as a query-string parameter

    @property
    def type(self) -> str | list[str]:
        return self.schema.get("type", "string")


def _s(**kw: Any) -> dict[str, Any]:
    return kw


STR_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def _coerce(p: Param, value: Any, where: str) -> Any:
    name = f"{where}{p.name}"
    t = p.schema.get("type")
    if "anyOf" in p.schema:  # string or list of strings
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise ApiError(400, "invalid_parameter", f"`{name}` must be a string or a list of strings")
    if t == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ApiError(400, "invalid_parameter", f"`{name}` must be a boolean (true/false)")
    if t == "integer":
        out: int | None = None
        if isinstance(value, bool):
            out = None
        elif isinstance(value, int):
            out = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            out = int(value)
        elif isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value.strip()) <= 18:
            out = int(value.strip())
        if out is None:
            raise ApiError(400, "invalid_parameter", f"`{name}` must be an integer")
        lo, hi = p.schema.get("minimum"), p.schema.get("maximum")
        if (lo is not None and out < lo) or (hi is not None and out > hi):
            raise ApiError(400, "invalid_parameter",
                           f"`{name}` must be between {lo if lo is not None else '-inf'} and {hi if hi is not None else 'inf'}")
        return out
    if t == "number":
        num: float | None = None
        if isinstance(value, bool):
            num = None
        elif isinstance(value, (int, float)):
            try:
                num = float(value)
            except OverflowError:  # a huge integer
                num = None
        elif isinstance(value, str):
            try:
                num = float(value.strip())
            except ValueError:
                num = None
        if num is None or not math.isfinite(num):
            raise ApiError(400, "invalid_parameter", f"`{name}` must be a finite number")
        return num
    if t == "object":
        if not isinstance(value, dict):
            raise ApiError(400, "invalid_parameter", f"`{name}` must be an object")
        return value
    if t == "array":
        if not isinstance(value, list):
            raise ApiError(400, "invalid_parameter", f"`{name}` must be an array")
        return value
    # string
    if not isinstance(value, str):
        raise ApiError(400, "invalid_parameter", f"`{name}` must be a string")
    ml = p.schema.get("maxLength")
    if ml is not None and len(value) > ml:
        raise ApiError(400, "invalid_parameter", f"`{name}` is longer than {ml:,} characters")
    enum = p.schema.get("enum")
    if enum is not None and value not in enum:
        raise ApiError(400, "invalid_parameter", f"`{name}` must be one of: {', '.join(map(str, enum))}")
    return value


def parse_params(route: "Route", query: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
    """Validated parameters: body fields win over query-string fields; unknown ones ignored."""
    out: dict[str, Any] = {}
    for p in route.params:
        if p.name in body and body[p.name] is not None:
            value = body[p.name]
        elif p.in_query and p.name in query:
            value = query[p.name]
        else:
            if p.required:
                raise ApiError(400, "missing_parameter", f"`{p.name}` is required")
            if p.default is not None:
                out[p.name] = p.default
            continue
        out[p.name] = _coerce(p, value, "")
    return out


# --------------------------------------------------------------------------- routes


@dataclass(frozen=True)
class Route:
    name: str  # tool name (x_y is served at /v1/x-y)
    path: str
    methods: tuple[str, ...]
    summary: str
    description: str  # written for an agent
    params: tuple[Param, ...] = ()
    response: dict[str, Any] = field(default_factory=dict)
    errors: tuple[int, ...] = (400, 401, 403, 413, 503)
    tool: bool = True
    writes: bool = False
    example: dict[str, Any] | None = None
    site: bool = False  # serves the built wiki (any content type), not JSON

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


SCOPE_SCHEMA = {
    "type": "object",
    "description": "Filters: path_glob, type, status, tags (each a string or a list of strings), since, until (ISO dates).",
    "properties": {
        "path_glob": STR_LIST,
        "type": STR_LIST,
        "status": STR_LIST,
        "tags": STR_LIST,
        "since": {"type": "string", "description": "ISO date (YYYY-MM-DD)"},
        "until": {"type": "string", "description": "ISO date (YYYY-MM-DD)"},
        "as_of": {"type": "string", "description": "ISO date"},
    },
}

DEBUG = Param("debug", {"type": "boolean"}, "Add diagnostic fields to the answer.", default=False)
DRY_RUN = Param("dry_run", {"type": "boolean"}, "Say what would happen; change nothing.", default=False)
SOFT = Param("soft", {"type": "boolean"},
             "If the content is refused (prompt-injection markers, invisible or bidi control characters), "
             "quarantine it under inbox/quarantine/ for a person to review instead of failing with 422.",
             default=False)

SEARCH = Route(
    "search", "/v1/search", ("POST",),
    "Search the memory (hybrid BM25 + vector by default)",
    "Search the memory corpus and get the best matching documents, each with its path, the line "
    "range of the best passage, a snippet with the matched words marked, its evidence class and "
    "confidence, and a stale_warning when the document is superseded or changed since indexing. "
    "Use natural language or exact identifiers; any text is a valid query (no syntax errors). "
    "Follow up with `get` on a result's path (and `from`/`lines` from its line range) to read it.",
    (
        Param("query", {"type": "string", "maxLength": 20000}, "What to look for: a question, keywords, an identifier, a phrase in quotes.", required=True),
        Param("k", {"type": "integer"}, "How many documents to return: 1-50 (default 10; values outside are clamped).", default=10),
        Param("mode", {"type": "string", "enum": ["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"]},
              "hybrid (default): both rankings fused; bm25/text/keyword/lexical: words; vector/semantic: meaning; exact: substring.",
              default="hybrid"),
        Param("corpus", {"type": "string", "enum": ["durable", "sessions", "all"]},
              "durable (default): notes, pages, decisions; sessions: raw session transcripts only; all: both.", default="durable"),
        Param("scope", SCOPE_SCHEMA, "Filters on path, type, status, tags and dates.", in_query=False),
        Param("min_score", {"type": "number"}, "Drop results scoring below this."),
        Param("include_content", {"type": "boolean"}, "Include the full text of the matching passage.", default=False),
        Param("snippet_marks", {"type": "string", "enum": ["markdown", "brackets", "html", "none"]},
              "How matched words are marked in snippets (default markdown **bold**).", in_query=True),
        DEBUG,
    ),
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
)

GET = Route(
    "get", "/v1/get", ("GET", "POST"),
    "Read a document (or some of its lines)",
    "Read a markdown document of the memory by its corpus-relative path (for example "
    "`people/alex.md`, as returned by `search`). `from` (1-based) and `lines` select a slice. "
    "With debug=true the answer adds total_lines, lines_returned, the parsed frontmatter and "
    "`hash` (sha256 of the whole file), which `write` needs as expected_hash to replace or forget it.",
    (
        Param("path", {"type": "string", "minLength": 1, "maxLength": 1024}, "Corpus-relative path of the document, e.g. people/alex.md.", required=True),
        Param("from", {"type": "integer", "minimum": 1}, "First line to return, 1-based (default 1).", default=1),
        Param("lines", {"type": "integer", "minimum": 1}, "How many lines to return (default: to the end)."),
        DEBUG,
    ),
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
    (
        Param("kind", {"type": "string", "enum": ["append", "create", "replace", "forget"]}, "append (default), create, replace or forget.", default="append"),
        Param("target", {"type": "string", "minLength": 1, "maxLength": 1024}, "Corpus-relative path, e.g. inbox/idea.md or logs/daily/2025-06-30.md.", required=True),
        Param("content", {"type": "string"}, "Markdown to write (may start with its own frontmatter).", default=""),
        Param("frontmatter", {"type": "object"}, "Frontmatter fields to set (merged; tags and aliases unioned).", in_query=False),
        Param("expected_hash", {"type": "string"}, "Required for replace and forget: 'sha256:<hex>' of the current file."),
        Param("reason", {"type": "string"}, "Required for forget: why the document is forgotten."),
        DRY_RUN,
        SOFT,
    ),
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
    (
        Param("action", {"type": "string", "enum": ["write", "replace", "forget"]}, "write (default), replace or forget.", default="write"),
        Param("kind", {"type": "string", "enum": ["fact", "preference", "state", "decision", "note"]}, "Kind of claim (default fact).", default="fact"),
        Param("subject", {"type": "string", "minLength": 1, "maxLength": 500}, "Who or what it is about: name, alias, slug, path or family:slug.", required=True),
        Param("content", {"type": "string"}, "The statement, one atomic fact (for forget: which claim, by text or id).", default=""),
        Param("scope", {"type": "string"}, "Accepted for Dory compatibility (checked like content); not used yet."),
        Param("confidence", {"anyOf": [{"type": "string"}, {"type": "number"}]}, "low, medium, high, or a number from 0 to 1."),
        Param("reason", {"type": "string"}, "Why (required for forget)."),
        Param("source", {"type": "string"}, "Evidence: a corpus path (optionally path#L3-L7) the claim comes from."),
        DRY_RUN,
        SOFT,
        Param("force_inbox", {"type": "boolean"}, "File the statement in inbox/ instead of a canonical page.", default=False),
        Param("allow_canonical", {"type": "boolean"}, "Allow changing a page marked canonical.", default=False),
    ),
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
)

WAKE = Route(
    "wake", "/v1/wake", ("POST",),
    "Get a start-of-session context block",
    "Call at the start of a session: returns `block`, a markdown context to read first, built "
    "from the core/ documents, the project page (when `project` is given), pinned decisions and "
    "the end of the most recent session notes, cut to fit `budget_tokens` (estimated offline). "
    "Profiles: default, core, project, minimal.",
    (
        Param("agent", {"type": "string", "maxLength": 200}, "Name of the agent waking up (shown in the block)."),
        Param("budget_tokens", {"type": "integer", "minimum": 1, "maximum": 200000}, "Token budget for the block (default 2000).", default=2000),
        Param("profile", {"type": "string", "maxLength": 100}, "default, core, project or minimal.", default="default"),
        Param("project", {"type": "string", "maxLength": 500}, "Project to include: slug, title or path."),
    ),
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
)

LINK = Route(
    "link", "/v1/link", ("POST",),
    "Follow links: neighbors, backlinks, broken links",
    "Explore the link graph of the memory. op=neighbors: documents linked from and to `path` "
    "(direction out, in or both; depth 1-5); op=backlinks: documents that link to `path`, with "
    "the line of each link; op=lint: broken links and self-links (of `path`, or of the whole "
    "corpus). Lists are cut at max_edges; `truncated` says so and `total_count` gives the full size.",
    (
        Param("op", {"type": "string", "enum": ["neighbors", "backlinks", "lint"]}, "neighbors (default), backlinks or lint.", default="neighbors"),
        Param("path", {"type": "string", "maxLength": 1024}, "Document path (or title/alias) to start from; optional for lint."),
        Param("direction", {"type": "string", "enum": ["out", "in", "both"]}, "For neighbors: out, in or both (default).", default="both"),
        Param("depth", {"type": "integer", "minimum": 1, "maximum": 5}, "For neighbors: how many hops (default 1).", default=1),
        Param("max_edges", {"type": "integer", "minimum": 1, "maximum": 10000}, "Most edges to return (default 200).", default=200),
    ),
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
)

STATUS = Route(
    "status", "/v1/status", ("GET", "POST"),
    "Index and server status",
    "What the server holds: document, chunk and vector counts, index health, embedding model "
    "and dimensions, pending embeddings, and the last build. debug=true adds index freshness "
    "(compares the corpus on disk with the index; slower on large corpora).",
    (Param("debug", {"type": "boolean"}, "Also check index freshness against the files on disk.", default=False),),
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
)

TOOLS = Route(
    "tools", "/v1/tools", ("GET",), "List the tools with JSON Schemas",
    "The tools this server offers, with input JSON Schemas, for agent bridges.",
    (), {"type": "object", "required": ["tools"], "properties": {"tools": {"type": "array"}}},
    errors=(400, 401, 403),
    tool=False,
)

OPENAPI = Route(
    "openapi", "/v1/openapi.json", ("GET",), "This OpenAPI description",
    "The OpenAPI 3.1 description of every route.", (),
    {"type": "object", "required": ["openapi", "paths"]},
    errors=(400, 401, 403),
    tool=False,
)

HEALTHZ = Route(
    "healthz", "/healthz", ("GET",), "Liveness and readiness",
    "200 {\"ok\": true} once the index is loaded and the model preloaded; 503 before.", (),
    {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
    errors=(503,),
    tool=False,
)

SITE_HOME = Route(
    "site_home", "/", ("GET",), "The wiki's start page",
    "The built site's index.html.", (), {}, errors=(400, 401, 403, 404), tool=False, site=True,
)

SITE_PAGE = Route(
    "site_page", "/{rel}", ("GET",), "A file of the built wiki",
    "Pages by pretty URL (`/people/alex/` serves people/alex/index.html; `/people/alex` and "
    "`/people/alex.md` redirect there), and the site's assets. Nothing outside the output "
    "folder is ever served: hidden parts, `..` and encoded separators are 404.",
    (), {}, errors=(400, 401, 403, 404), tool=False, site=True,
)

ROUTES: tuple[Route, ...] = (HEALTHZ, SEARCH, GET, WRITE, MEMORY_WRITE, WAKE, LINK, STATUS, TOOLS, OPENAPI,
                             SITE_HOME, SITE_PAGE)
BY_NAME = {r.name: r for r in ROUTES}


# --------------------------------------------------------------------------- documents


def input_schema(route: Route) -> dict[str, Any]:
    props = {}
    for p in route.params:
        s = dict(p.schema)
        s["description"] = p.description
        if p.default is not None:
            s["default"] = p.default
        props[p.name] = s
    return {
        "type": "object",
        "properties": props,
        "required": [p.name for p in route.params if p.required],
        "additionalProperties": True,
    }


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


def _query_param(p: Param) -> dict[str, Any] | None:
    schema = dict(p.schema)
    if schema.get("type") == "object":
        return None
    if "anyOf" in schema:
        schema = {"type": "string"}
    return {"name": p.name, "in": "query", "required": p.required, "description": p.description, "schema": schema}


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
            if r.writes or r.params:
                op["security"] = [{"bearer": []}, {}]
            if method == "GET":
                qp = [q for q in (_query_param(p) for p in r.params) if q]
                if qp:
                    op["parameters"] = qp
            elif r.params:
                op["requestBody"] = {
                    "required": any(p.required for p in r.params),
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
