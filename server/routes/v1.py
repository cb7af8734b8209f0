"""The `/v1` API blueprint (and `/healthz`): one view per registry operation.

Each view reads the JSON body (strictly: UTF-8, an object, bounded depth, no lone
surrogates), validates it with the operation's request model, builds an `OpContext` and
calls the operation. The routes never import the app factory: shared state comes from
`context.state()`.""" 

from __future__ import annotations

import json
import time
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from ..context import ServerState, state
from ..errors import ApiError, not_ready
from ..ops import TRANSPORT_HEADER, OpContext
from ..openapi import openapi_document, tools_document
from ..registry import ROUTES, WRITE_PATHS, Route
from ..validation import check_body, validate

api = Blueprint("api", __name__)

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("a number in the request body is out of range")
    return value


def _bad_body(message: str, kind: str = "json_invalid") -> ApiError:
    return ApiError(422, "invalid_json", message,
                    detail=[{"type": kind, "loc": ["body"], "msg": message, "input": None}])


def _json_type(mimetype: str) -> bool:
    return mimetype == "application/json" or (mimetype.startswith("application/") and mimetype.endswith("+json"))


def json_body() -> dict[str, Any]:
    """The request's JSON object ({} when there is no body). 422 for anything else, as a
    FastAPI server answers a body it cannot decode."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return {}
    data = request.get_data(cache=True)  # bounded by MAX_CONTENT_LENGTH (413 above it)
    if not data.strip():
        return {}
    if request.path in WRITE_PATHS and not _json_type(request.mimetype):
        # A write's body is JSON, said so: a text/plain or untyped POST is what a page on
        # another site can send without asking the browser first (a "simple" request).
        raise ApiError(415, "unsupported_media_type", "a write's body must be sent as Content-Type: application/json")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _bad_body("the request body is not UTF-8") from None
    try:
        body = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise _bad_body("the request body is nested too deeply") from None
    except ValueError as exc:
        msg = str(exc).split(":")[0][:200] if not isinstance(exc, json.JSONDecodeError) else \
            f"the request body is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        raise _bad_body(msg) from None
    if not isinstance(body, dict):
        raise _bad_body("the request body must be a JSON object", "model_attributes_type")
    check_body(body)
    return body


def ready_live() -> Any:
    st = state()
    if not st.ready:
        raise not_ready(st.redact(st.open_error))
    return st.live


def answer(data: dict[str, Any], status: int = 200) -> Response:
    resp = jsonify(data)
    resp.status_code = status
    return resp


def op_context(st: ServerState) -> OpContext:
    # A tool call `commonplace mcp` forwarded says so: its hints name the MCP tools.
    mcp = request.headers.get(TRANSPORT_HEADER, "").strip().lower() == "mcp"
    return OpContext(live=st.live, root=st.root, out=st.out, excluded=st.excluded(),
                     actor=getattr(g, "actor", None), server_info=lambda: server_info(st),
                     migrate_roots=tuple(st.config.migrate_roots), transport="mcp" if mcp else "http")


def server_info(st: ServerState) -> dict[str, Any]:
    cfg = st.config
    return {
        "version": _version(),
        "ready": st.ready,  # the /healthz gate: status reads readiness from here (issue 20)
        "uptime_s": round(time.time() - st.started, 1),
        "auth": {"tokens": _token_count(st),
                 "reads_need_token": not cfg.loopback,
                 "writes_need_token": not (cfg.no_auth and cfg.loopback)},
        "error": st.redact(st.open_error),
    }


def _view(route: Route) -> Any:
    def view() -> Response:
        assert route.model is not None and route.handler is not None
        req = validate(route.model, request.args, json_body())
        st = state()
        if route.needs_ready:
            ready_live()
        return answer(route.call(op_context(st), req))

    view.__name__ = route.name
    return view


for _route in ROUTES:
    if _route.kind == "json" and _route.handler is not None:
        api.add_url_rule(_route.flask_path, endpoint=_route.name, view_func=_view(_route), methods=list(_route.methods))


@api.route("/healthz", methods=["GET"])
def healthz() -> Response:
    st = state()
    if st.ready:
        return answer({"ok": True})
    body = ApiError(503, "not_ready", st.redact(st.open_error) or "starting: building the site, loading the index and model").body(getattr(g, "request_id", None))
    body["ok"] = False
    resp = answer(body, 503)
    resp.headers["Retry-After"] = "2"
    return resp


@api.route("/v1/tools", methods=["GET"])
def tools() -> Response:
    return answer(tools_document())


@api.route("/v1/openapi.json", methods=["GET"])
def openapi() -> Response:
    return answer(openapi_document())


def _token_count(st: ServerState) -> int:
    try:
        return len(st.tokens.list())
    except Exception:  # noqa: BLE001 - a broken token file: status still answers
        return 0


def _version() -> str:
    from commonplace.compiler import __version__

    return __version__
