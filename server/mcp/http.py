"""`/mcp` in `commonplace serve`: MCP over streamable HTTP, behind the API's bearer tokens.

The route is a Flask view, so the guard runs first (request id, Host, Origin, token) and
the URL map serves what the registry's `mcp` route declares. The view hands the request
to the SDK's streamable HTTP handler, an ASGI app, which runs on an event loop thread of
its own (started on the first request, so a server that never sees MCP never pays for the
SDK). The SDK runs stateless with JSON answers: every POST carries one JSON-RPC message
and gets its whole answer back, so no waitress thread is held by an open event stream
and any worker can answer any request. A GET (the optional server-to-client stream) is
405, as the spec allows; a DELETE is the SDK's 405 (there are no sessions to end).

Tools run the same operations as `/v1`, on the same live corpus, with the same write lock
and refresh, so MCP and HTTP writers see each other's writes at once. `--loopback-reads`
does not open `/mcp`: its tools write, so a token is needed unless the server runs with
`--no-auth` on loopback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, request

from ..context import ServerState, state
from ..errors import ApiError
from ..ops import OpContext
from ..registry import Route
from .backend import Backend, not_ready, run_local

EXTENSION = "commonplace.mcp"
TIMEOUT = 300.0  # one call; a first search may load the model
ACTOR_KEY = "commonplace.actor"

mcp_blueprint = Blueprint("mcp", __name__)
_bridges_lock = threading.Lock()


class AppBackend(Backend):
    """The routes on the app's own live corpus, as `/v1` runs them."""

    def __init__(self, st: ServerState) -> None:
        self.st = st
        self.root = st.root
        self.out = st.out

    def call(self, route: Route, args: dict[str, Any], actor: str | None = None) -> dict[str, Any]:
        from ..routes.v1 import server_info

        st = self.st

        def context() -> OpContext:
            if route.needs_ready and not st.ready:
                raise not_ready(st.redact(st.open_error))
            return OpContext(live=st.live, root=st.root, out=st.out, excluded=st.excluded(), actor=actor,
                             server_info=lambda: server_info(st), migrate_roots=tuple(st.config.migrate_roots),
                             transport="mcp")

        return run_local(route, args, context)


def _actor(ctx: Any) -> str | None:
    req = getattr(ctx, "request", None)
    scope = getattr(req, "scope", None)
    return scope.get(ACTOR_KEY) if isinstance(scope, dict) else None


class Bridge:
    """The SDK's streamable HTTP handler on its own event loop, called from WSGI threads."""

    def __init__(self, st: ServerState) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from .server import build_server

        server = build_server(AppBackend(st), actor_of=_actor)
        # No transport security settings: the guard has checked Host and Origin already.
        self.manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True,
                                                    max_request_body_size=st.config.max_body)
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._failed: BaseException | None = None
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), name="commonplace-mcp-http", daemon=True)
        self.thread.start()
        started.wait()
        if self._failed is not None:
            raise RuntimeError(f"the MCP transport did not start: {self._failed!r}")

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main(started))
        except BaseException as exc:  # noqa: BLE001 - reported to the thread that waits
            self._failed = exc
        finally:
            started.set()

    async def _main(self, started: threading.Event) -> None:
        self._stop = asyncio.Event()
        async with self.manager.run():
            started.set()
            await self._stop.wait()

    def close(self) -> None:
        if self._stop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stop.set)
            self.thread.join(5)

    def exchange(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        future = asyncio.run_coroutine_threadsafe(self._exchange(scope, body), self.loop)
        try:
            return future.result(TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ApiError(503, "timeout", f"the MCP request took longer than {TIMEOUT:.0f} s") from None

    async def _exchange(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        answer: dict[str, Any] = {"status": 500, "headers": []}
        chunks: list[bytes] = []
        done = asyncio.Event()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()  # the whole body was read: the next event is the end
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["headers"] = list(message.get("headers") or [])
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            done.set()
        return answer["status"], answer["headers"], b"".join(chunks)


def bridge(app: Flask) -> Bridge:
    with _bridges_lock:
        b = app.extensions.get(EXTENSION)
        if b is None:
            b = app.extensions[EXTENSION] = Bridge(app.extensions["commonplace"])
        return b


def _require_token(st: ServerState) -> None:
    from ..routes.guard import is_local_client

    if getattr(g, "actor", None) is not None:
        return
    cfg = st.config
    if cfg.no_auth and cfg.loopback and is_local_client():
        return
    raise ApiError(401, "unauthorized", "missing bearer token: /mcp needs 'Authorization: Bearer <token>' (its tools "
                                        "write, so --loopback-reads does not open it)",
                   headers={"WWW-Authenticate": 'Bearer realm="commonplace"'})


def _scope(actor: str | None) -> dict[str, Any]:
    env = request.environ
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": env.get("SERVER_PROTOCOL", "HTTP/1.1").partition("/")[2] or "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "query_string": request.query_string,
        "root_path": "",
        "headers": headers,
        "client": (request.remote_addr or "", int(env.get("REMOTE_PORT") or 0)),
        "server": (env.get("SERVER_NAME", ""), int(env.get("SERVER_PORT") or 0)),
        ACTOR_KEY: actor,
    }


@mcp_blueprint.route("/mcp", methods=["GET", "POST", "DELETE"])
def endpoint() -> Response:
    st = state()
    _require_token(st)
    if request.method == "GET":
        return _no_stream()
    body = request.get_data(cache=False)  # bounded by MAX_CONTENT_LENGTH (413 above it)
    status, headers, data = bridge(current_app).exchange(_scope(getattr(g, "actor", None)), body)
    kept = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers if k.lower() != b"content-length"]
    return Response(data, status=status, headers=kept)


def _no_stream() -> Response:
    from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError

    err = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
        code=INVALID_REQUEST, message="Method Not Allowed: this server offers no event stream; POST requests"))
    return Response(err.model_dump_json(by_alias=True, exclude_unset=True), status=405,
                    headers={"Allow": "POST, DELETE"}, mimetype="application/json")


def register(app: Flask) -> None:
    app.register_blueprint(mcp_blueprint)
