"""The checks before every route: request id, Host, Origin, then authentication (bearer
tokens from `.commonplace/tokens.json`, see server/tokens.py).

Policy (Dory's, see `authenticate`): `/healthz` and `/v1/openapi.json` are open; every
other `/v1` route, `/metrics` and `/mcp` need a valid bearer token whenever tokens are
configured, and are refused when none are, unless the server runs with `--no-auth` on a
loopback bind. `--loopback-reads` lets reads from this machine in without a token. The
built site at `/` is open to local clients of a loopback server and needs a token from
anywhere else; `/wiki` has its own login. "On loopback" is decided from the TCP peer,
never from a header a client sends: the peer is a loopback address and the request carries
no forwarding header (a proxy nobody declared: its clients are not local); or the peer is
a proxy the operator named with `--trusted-proxy` and the client address it forwards
(X-Forwarded-For, else Forwarded) is a loopback address.

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

from ..context import ServerConfig, is_loopback, is_trusted_proxy, state
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


PROXY_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto")


def _forwarded_chain() -> list[str]:
    """The client addresses a proxy recorded, oldest first: X-Forwarded-For, else the
    `for=` parameters of Forwarded (RFC 7239). Ports and brackets removed."""
    xff = request.headers.getlist("X-Forwarded-For")
    if xff:
        hops = [h.strip() for line in xff for h in line.split(",")]
    else:
        hops = []
        for line in request.headers.getlist("Forwarded"):
            for element in line.split(","):
                for pair in element.split(";"):
                    key, _, value = pair.strip().partition("=")
                    if key.lower() == "for":
                        hops.append(value.strip().strip('"'))
    out = []
    for h in hops:
        if h.startswith("["):
            h = h[1:h.find("]")] if "]" in h else h[1:]
        elif h.count(":") == 1:
            h = h.split(":", 1)[0]
        out.append(h)
    return out


def _trusted(addr: str, cfg: ServerConfig) -> bool:
    return bool(cfg.trusted_proxies) and is_trusted_proxy(addr, cfg.trusted_proxies)


def client_address() -> str | None:
    """Who sent this request, as far as the server can trust it: the socket's peer, or,
    when the peer is a proxy the operator named (`--trusted-proxy`), the last address in
    its forwarding header that is not itself a trusted proxy. None when a trusted proxy
    relayed a request without saying for whom (never taken as local)."""
    peer = request.environ.get("REMOTE_ADDR") or ""
    cfg = state().config
    if not _trusted(peer, cfg):
        return peer
    chain = _forwarded_chain()
    if not chain:
        return None
    addr = peer
    while chain and _trusted(addr, cfg):  # the first hop is the client, even if a proxy's address
        addr = chain.pop()
    return addr


def is_local_client() -> bool:
    """A client on this machine, decided from the socket's peer (and what a trusted proxy
    says), never from a header a client could send. A request that reaches the socket from
    loopback carrying forwarding headers, but not from a trusted proxy, is taken as remote:
    that is a proxy the operator did not declare, and its clients are not local."""
    peer = request.environ.get("REMOTE_ADDR") or ""
    if _trusted(peer, state().config):
        addr = client_address()
        return addr is not None and is_loopback(addr)
    if not is_loopback(peer):
        return False
    return not any(h in request.headers for h in PROXY_HEADERS)


def request_is_secure() -> bool:
    """HTTPS as the browser sees it: the request's own scheme, or what a trusted proxy that
    ends TLS says in X-Forwarded-Proto / Forwarded `proto=`."""
    if request.is_secure:
        return True
    if not _trusted(request.environ.get("REMOTE_ADDR") or "", state().config):
        return False
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip().lower()
    if not proto:
        for pair in request.headers.get("Forwarded", "").split(",")[-1].split(";"):
            key, _, value = pair.strip().partition("=")
            if key.lower() == "proto":
                proto = value.strip().strip('"').lower()
    return proto == "https"


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
