"""The Flask application factory: configure, register the blueprints, install the error
handlers. Everything else lives in `context` (shared state), `routes/` (the blueprints) and
`ops/` (the operations).

    app = create_app(live, ServerConfig(corpus=..., out=...))

`live` is the compiler's `LiveCorpus` (or anything with the same contract: `ready`,
`docs`, `graph`, `resolver`, `search(request)`, `refresh(paths)`, `write_lock`).

Every failure, including Flask's own 404, 405 and 413, is answered with the one error
envelope; an unexpected exception is a 500 with a generic message (logged with the request
id, never sent to the client).
"""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path
from typing import Any

from flask import Flask, g, jsonify, request
from werkzeug.exceptions import HTTPException

from .context import EXTENSION, LiveContract, ServerConfig, ServerState, is_loopback  # noqa: F401 - re-exported
from .errors import TYPES, ApiError

log = logging.getLogger("commonplace.server")


def create_app(live: LiveContract, config: ServerConfig) -> Flask:
    here = str(Path(__file__).resolve().parent)
    # Explicit paths: Flask's package discovery trips over the editable-install finder.
    app = Flask(__name__, static_folder=None, root_path=here, instance_path=here)
    app.config["MAX_CONTENT_LENGTH"] = config.max_body
    app.config["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.url_map.strict_slashes = False
    app.extensions[EXTENSION] = ServerState(live, config)

    from .mcp.http import register as register_mcp
    from .routes import register

    register(app)
    register_mcp(app)  # /mcp: MCP over streamable HTTP (the SDK loads on its first request)

    @app.after_request
    def _finish(resp: Any) -> Any:
        rid = getattr(g, "request_id", None) or uuid.uuid4().hex
        resp.headers["x-request-id"] = rid
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.path.startswith("/v1/") or request.path == "/healthz":
            resp.headers.setdefault("Cache-Control", "no-store")
        t0 = getattr(g, "t0", None)
        if t0 is not None:
            ms = (time.perf_counter() - t0) * 1000
            log.info("%s %s %s %d %.1fms", rid, request.method, request.path[:200], resp.status_code, ms)
        return resp

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Any:
        resp = jsonify(exc.body(getattr(g, "request_id", None)))
        resp.status_code = exc.status
        for k, v in exc.headers.items():
            resp.headers[k] = v
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Any:
        status = exc.code or 500
        if status == 405 and not _has_route(app, request.path):
            status = 404  # only the site's catch-all matched: an unknown route, not a wrong method
        if status == 404 and not _is_api_path(request.path):
            from .routes.pages import not_found_page

            return not_found_page()
        messages = {
            400: "the request could not be understood",
            404: "no such route; see GET /v1/openapi.json",
            405: f"method {request.method} is not allowed here",
            413: f"the request body is larger than {config.max_body:,} bytes",
            414: "the URL is too long",
            431: "the request headers are too large",
        }
        codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
                 414: "uri_too_long", 431: "headers_too_large"}
        err = ApiError(status, codes.get(status, "http_error"), messages.get(status, exc.name),
                       type=TYPES.get(status, "invalid_request_error"))
        resp = jsonify(err.body(getattr(g, "request_id", None)))
        resp.status_code = status
        valid = getattr(exc, "valid_methods", None)
        if status == 405 and valid:
            resp.headers["Allow"] = ", ".join(valid)
        return resp

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Any:
        if isinstance(exc, HTTPException):  # pragma: no cover - handled above
            return _http_error(exc)
        from commonplace.compiler.writes.errors import disk_refusal

        why = disk_refusal(exc) if isinstance(exc, OSError) else None
        if why is not None:
            # The disk refused (full, read-only, no permission): the caller's request was
            # fine, so say so clearly instead of a 500. The path stays in the server log.
            log.warning("request %s: %s", getattr(g, "request_id", "?"), exc)
            err = ApiError(503, "write_failed", f"cannot write: {why}; the write did not complete",
                           type="server_error")
            resp = jsonify(err.body(getattr(g, "request_id", None)))
            resp.status_code = 503
            resp.headers["Retry-After"] = "60"
            return resp
        log.exception("request %s failed", getattr(g, "request_id", "?"))
        err = ApiError(500, "internal_error",
                       f"internal error; the server log has the details (request id {getattr(g, 'request_id', '?')})")
        resp = jsonify(err.body(getattr(g, "request_id", None)))
        resp.status_code = 500
        return resp

    return app


def _is_api_path(path: str) -> bool:
    return path.startswith("/v1/") or path == "/v1" or path in ("/healthz", "/metrics", "/mcp")


def _has_route(app: Flask, path: str) -> bool:
    """A route other than the site's catch-all matches `path` (with some method)."""
    adapter = app.url_map.bind("localhost")
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        try:
            endpoint, _ = adapter.match(path, method=method)
        except Exception:  # noqa: BLE001 - NotFound, MethodNotAllowed, redirects
            continue
        if endpoint != "pages.serve":
            return True
    return False
