"""The checks before every route: request id, Host, Origin, then authentication (bearer
tokens from `.commonplace/tokens.json`, see server/tokens.py).

Policy (Dory's, see `authenticate`): `/healthz` and `/v1/openapi.json` are open; every
other `/v1` route, `/metrics` and `/mcp` need a valid bearer token whenever tokens are
configured, and are refused when none are, unless the server runs with `--no-auth` on a
loopback bind. `--loopback-reads` lets reads from this machine in without a token. The
built site at `/` is open to local clients of a loopback server and needs a token from
anywhere else; `/wiki` has its own login. "On loopback" means the TCP peer is a loopback
address *and* the request carries no forwarding header (X-Forwarded-For, Forwarded,
X-Real-IP, X-Forwarded-Host): behind a reverse proxy on the same machine every request
would otherwise look local.

The token is taken from `Authorization: Bearer <token>` only (never from the URL, where it
would end up in logs and browser history), except on /wiki, where Dory's `?token=` sets a
cookie. It is never logged or echoed.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from flask import Blueprint, g, request

from ..context import ServerConfig, is_loopback, state
from ..errors import ApiError
from ..registry import PUBLIC_PATHS, WRITE_PATHS
from ..tokens import TokenError

guard = Blueprint("guard", __name__)

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")



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


@guard.before_app_request
def begin() -> Any:
    """Request id (echo a sane `x-request-id`, else mint one), then the Host check (loopback
    binds answer only to loopback names, which defeats DNS rebinding) and the Origin check
    (a browser page from another origin may not call the API)."""
    g.t0 = time.perf_counter()
    rid = request.headers.get("x-request-id", "")
    g.request_id = rid if _REQUEST_ID.match(rid) else uuid.uuid4().hex
    config = state().config
    if not _host_allowed(request.host, config):
        raise ApiError(400, "bad_host", "the Host header is not one this server answers to")
    origin = request.headers.get("Origin")
    if origin is not None and not _origin_allowed(origin, request.host):
        raise ApiError(403, "cross_origin", "requests from another origin are not allowed")
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        raise ApiError(403, "cross_origin", "requests from another site are not allowed")
    return None


def _bearer() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(401, "invalid_token", "Authorization must be 'Bearer <token>'",
                       headers={"WWW-Authenticate": 'Bearer realm="commonplace"'})
    return value.strip()


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": 'Bearer realm="commonplace"'})


PROXY_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host")


def is_local_client() -> bool:
    """A client on this machine. A request relayed by a reverse proxy on loopback carries
    forwarding headers and is treated as remote: the proxy's clients are not local."""
    if not is_loopback(request.remote_addr or ""):
        return False
    return not any(h in request.headers for h in PROXY_HEADERS)


@guard.before_app_request
def authenticate() -> Any:
    """Dory's policy: with tokens configured, every /v1 request (and /metrics, /mcp) needs a
    valid one; with none, requests are refused (401) unless the server runs with --no-auth
    on loopback. `--loopback-reads` keeps reads from this machine open (commonplace's
    earlier policy). A presented token that is not valid is always a 401, even where none
    is needed; an unreadable token file is a 503. The site (/) and the wiki (/wiki, its own
    login) follow their own rules below."""
    st = state()
    path = request.path
    g.actor = None
    token = _bearer()
    if token is not None:
        try:
            st.tokens.configured()
        except TokenError:
            raise _bad_config() from None
        name = st.tokens.verify(token)
        if name is None:
            raise _unauthorized("invalid bearer token")
        g.actor = name
        return None
    if path in PUBLIC_PATHS or path.startswith("/wiki"):
        return None  # /wiki checks its own cookies, token parameter and login
    cfg = st.config
    client_local = is_local_client()
    if cfg.no_auth and cfg.loopback and client_local:
        return None
    protected = path.startswith("/v1/") or path in ("/metrics", "/mcp") or path.startswith("/mcp/")
    if not protected:  # the built site: open on loopback, a token elsewhere
        if cfg.loopback and client_local:
            return None
        raise _unauthorized("missing bearer token: this server needs 'Authorization: Bearer <token>' for "
                            "requests from other hosts")
    if cfg.loopback_reads and cfg.loopback and client_local and path not in WRITE_PATHS:
        return None
    try:
        configured = st.tokens.configured()
    except TokenError:
        raise _bad_config() from None
    if not configured:
        raise _unauthorized("authentication is required; add a bearer token (`commonplace token new NAME`) or run "
                            "`commonplace serve --no-auth` for local development")
    raise _unauthorized("missing bearer token")


def _bad_config() -> ApiError:
    return ApiError(503, "invalid_token_file", "invalid auth token configuration: .commonplace/tokens.json "
                                               "cannot be read; fix or remove it (`commonplace token list`)")
