"""Authentication: bearer tokens from `.commonplace/tokens.json` (see compiler/tokens.py).

Policy (design, "Server"):

- `/healthz`, `/v1/openapi.json`, `/v1/tools` and the site's static files of a loopback
  server need no token.
- Reads (search, get, wake, link, status) need no token when the server is bound to a
  loopback address and the client is on loopback; otherwise they need a valid token.
- Writes (write, memory-write) always need a valid token, unless the server was started
  with `--no-auth` on a loopback bind (the CLI refuses `--no-auth` on any other bind).
- A presented token that is not valid is always a 401, even where none is needed: a client
  with a revoked token should learn it at once, not when it first writes.
- The site itself (pages) follows the read rule.
- "On loopback" means the TCP peer is a loopback address *and* the request carries no
  forwarding header (X-Forwarded-For, Forwarded, X-Real-IP, X-Forwarded-Host): behind a
  reverse proxy on the same machine every request would otherwise look local.

The token is taken from `Authorization: Bearer <token>` only (never from the URL, where it
would end up in logs and browser history). It is never logged or echoed.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g, request

from .app import is_loopback, state
from .errors import ApiError

auth = Blueprint("auth", __name__)

PUBLIC = {"/healthz", "/v1/openapi.json", "/v1/tools"}
WRITES = {"/v1/write", "/v1/memory-write"}


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


@auth.before_app_request
def authenticate() -> Any:
    st = state()
    path = request.path
    token = _bearer()
    g.actor = None
    if token is not None:
        name = st.tokens.verify(token)
        if name is None:
            raise _unauthorized("the bearer token is not valid (revoked, mistyped or from another corpus)")
        g.actor = name
        return None
    if path in PUBLIC:
        return None
    cfg = st.config
    client_local = is_local_client()
    if path in WRITES:
        if cfg.no_auth and cfg.loopback and client_local:
            return None
        if not st.tokens.has_tokens():
            raise _unauthorized("writes need a bearer token and none exist: create one with "
                                "`commonplace token new NAME`, or run `commonplace serve --no-auth` on loopback")
        raise _unauthorized("writes need 'Authorization: Bearer <token>'")
    if cfg.loopback and client_local:
        return None
    raise _unauthorized("this server needs 'Authorization: Bearer <token>' for requests from other hosts")
