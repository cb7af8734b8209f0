"""The Flask application factory.

    app = create_app(live, ServerConfig(corpus=..., out=...))

`live` is the compiler's `LiveCorpus` (or anything with the same contract: `ready`,
`docs`, `graph`, `resolver`, `search(**request)`, `refresh(paths)`, `write_lock`). The app
is thin: it parses and checks requests, calls the compiler, and shapes answers.

Every request passes, in order: request id (echo `x-request-id` when sane, else mint one),
Host check (loopback binds answer only to loopback names, which defeats DNS rebinding),
Origin check (a browser page from another origin may not call the API), authentication
(bearer tokens; see `auth.py`), then the route. Every failure, including Flask's own 404,
405 and 413, is answered with the one error envelope; an unexpected exception is a 500
with a generic message (logged with the request id, never sent to the client).
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, g, jsonify, request
from werkzeug.exceptions import HTTPException

from .errors import ApiError, TYPES

log = logging.getLogger("commonplace.server")
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)

DEFAULT_MAX_BODY = 1024 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    h = host.strip().strip("[]").lower()
    if h in ("localhost", "ip6-localhost") or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


@dataclass
class ServerConfig:
    corpus: Path
    out: Path
    host: str = "127.0.0.1"
    port: int = 8766
    no_auth: bool = False  # only honoured on a loopback bind
    max_body: int = DEFAULT_MAX_BODY
    allowed_hosts: list[str] = field(default_factory=list)  # extra Host names (non-loopback binds)
    public_url: str | None = None

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


class ServerState:
    """What the routes share: the live corpus, config, tokens."""

    def __init__(self, live: Any, config: ServerConfig) -> None:
        from commonplace.compiler.tokens import TokenStore

        self.live = live
        self.config = config
        self.root = Path(config.corpus).resolve()
        self.out = Path(config.out).resolve()
        self.tokens = TokenStore(self.root)
        self.started = time.time()
        self.open_error: str | None = None  # set when the backend failed to open
        # `serve` sets a gate and opens it once the index and model are loaded and the
        # watcher runs: until then /healthz says 503 even if the corpus is built.
        self.gate: threading.Event | None = None

    @property
    def ready(self) -> bool:
        if self.gate is not None and not self.gate.is_set():
            return False
        return bool(getattr(self.live, "ready", False))

    def redact(self, text: str | None) -> str | None:
        """A message with the server's own filesystem paths replaced by placeholders."""
        if text is None:
            return None
        for path, name in ((self.out, "<out>"), (self.root, "<corpus>"), (Path.home(), "~")):
            text = text.replace(str(path), name)
        return text

    def excluded(self) -> tuple[Path, ...]:
        """Folders inside the corpus that are not corpus content (the site output)."""
        try:
            self.out.relative_to(self.root)
            return (self.out,)
        except ValueError:
            return ()


def state() -> ServerState:
    from flask import current_app

    return current_app.extensions["commonplace"]


def _host_allowed(host_header: str, cfg: ServerConfig) -> bool:
    host = host_header.strip().lower()
    if not host:
        return False
    # Split off a port: "[::1]:8766", "localhost:8766", "::1" (bare v6 has no brackets).
    if host.startswith("["):
        name = host[: host.find("]") + 1] if "]" in host else host
    elif host.count(":") == 1:
        name = host.split(":", 1)[0]
    else:
        name = host
    if not re.fullmatch(r"[a-z0-9.\-\[\]:_]{1,255}", name):
        return False
    allowed = {h.lower() for h in cfg.allowed_hosts}
    if name in allowed or name.strip("[]") in allowed:
        return True
    if cfg.loopback:
        return is_loopback(name)
    if not allowed:  # non-loopback bind without an allow-list: tokens guard everything
        return True
    return name.strip("[]") == cfg.host.lower().strip("[]")


def _origin_allowed(origin: str, host_header: str) -> bool:
    if origin in ("", "null"):
        return origin == ""
    m = re.match(r"^[a-z][a-z0-9+.-]*://([^/]+)$", origin.strip().lower())
    return bool(m) and m.group(1) == host_header.strip().lower()


def create_app(live: Any, config: ServerConfig) -> Flask:
    here = str(Path(__file__).resolve().parent)
    # Explicit paths: Flask's package discovery trips over the editable-install finder.
    app = Flask(__name__, static_folder=None, root_path=here, instance_path=here)
    app.config["MAX_CONTENT_LENGTH"] = config.max_body
    app.config["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.url_map.strict_slashes = False
    st = ServerState(live, config)
    app.extensions["commonplace"] = st

    from .api import api
    from .auth import auth
    from .site import site

    app.register_blueprint(auth)
    app.register_blueprint(api)
    app.register_blueprint(site)

    @app.before_request
    def _begin() -> Any:
        g.t0 = time.perf_counter()
        rid = request.headers.get("x-request-id", "")
        g.request_id = rid if _REQUEST_ID.match(rid) else uuid.uuid4().hex
        if not _host_allowed(request.host, config):
            raise ApiError(400, "bad_host", "the Host header is not one this server answers to")
        origin = request.headers.get("Origin")
        if origin is not None and not _origin_allowed(origin, request.host):
            raise ApiError(403, "cross_origin", "requests from another origin are not allowed")
        if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
            raise ApiError(403, "cross_origin", "requests from another site are not allowed")
        return None

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
        resp = jsonify(exc.body())
        resp.status_code = exc.status
        for k, v in exc.headers.items():
            resp.headers[k] = v
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Any:
        status = exc.code or 500
        if status == 404 and not _is_api_path(request.path):
            from .site import not_found_page

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
        resp = jsonify(err.body())
        resp.status_code = status
        valid = getattr(exc, "valid_methods", None)
        if status == 405 and valid:
            resp.headers["Allow"] = ", ".join(valid)
        return resp

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Any:
        if isinstance(exc, HTTPException):  # pragma: no cover - handled above
            return _http_error(exc)
        if isinstance(exc, OSError) and exc.errno in _DISK_ERRORS:
            # The disk refused (full, read-only, no permission): the caller's request was
            # fine, so say so clearly instead of a 500. The path stays in the server log.
            log.warning("request %s: %s", getattr(g, "request_id", "?"), exc)
            why = "no space left on the device" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else \
                "the corpus is read-only here"
            err = ApiError(503, "write_failed", f"cannot write: {why}; the write did not complete",
                           type="server_error")
            resp = jsonify(err.body())
            resp.status_code = 503
            resp.headers["Retry-After"] = "60"
            return resp
        log.exception("request %s failed", getattr(g, "request_id", "?"))
        err = ApiError(500, "internal_error",
                       f"internal error; the server log has the details (request id {getattr(g, 'request_id', '?')})")
        resp = jsonify(err.body())
        resp.status_code = 500
        return resp

    return app


def _is_api_path(path: str) -> bool:
    return path.startswith("/v1/") or path == "/v1" or path == "/healthz"
