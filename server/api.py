"""The `/v1` API blueprint (and `/healthz`): request parsing, then `ops`."""

from __future__ import annotations

import json
import time
from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from . import ops
from .app import state
from .errors import ApiError
from .schema import BY_NAME, Route, openapi_document, parse_params, tools_document

api = Blueprint("api", __name__)

MAX_JSON_DEPTH = 64


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("a number in the request body is out of range")
    return value


def _depth_ok(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return False
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return True


def _unicode_ok(value: Any) -> bool:
    """No string (key or value) holds a lone surrogate: JSON's \\ud800 escapes decode to
    text that cannot be encoded as UTF-8, so echoing it back would fail."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True


def json_body() -> dict[str, Any]:
    """The request's JSON object ({} when there is no body). 400 for anything else."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return {}
    data = request.get_data(cache=True)  # bounded by MAX_CONTENT_LENGTH (413 above it)
    if not data.strip():
        return {}
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ApiError(400, "invalid_json", "the request body is not UTF-8") from None
    try:
        body = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise ApiError(400, "invalid_json", "the request body is nested too deeply") from None
    except ValueError as exc:
        msg = str(exc).split(":")[0][:200] if not isinstance(exc, json.JSONDecodeError) else \
            f"the request body is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        raise ApiError(400, "invalid_json", msg) from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_json", "the request body must be a JSON object")
    if not _depth_ok(body):
        raise ApiError(400, "invalid_json", f"the request body is nested deeper than {MAX_JSON_DEPTH} levels")
    if not _unicode_ok(body):
        raise ApiError(400, "invalid_json", "the request body holds a lone surrogate (a \\ud800-\\udfff escape "
                                            "without its pair), which is not valid Unicode text")
    return body


def params(route: Route) -> dict[str, Any]:
    body = json_body()
    return parse_params(route, request.args, body)


def ready_live() -> Any:
    st = state()
    if not st.ready:
        msg = "the server is still starting (building or loading the index and model); retry shortly"
        if st.open_error:
            msg = f"the corpus could not be opened: {st.redact(st.open_error)}"
        raise ApiError(503, "not_ready", msg, headers={"Retry-After": "2"})
    return st.live


def answer(data: dict[str, Any], status: int = 200) -> Response:
    resp = jsonify(data)
    resp.status_code = status
    return resp


@api.route("/healthz", methods=["GET"])
def healthz() -> Response:
    st = state()
    if st.ready:
        return answer({"ok": True})
    body = ApiError(503, "not_ready", st.redact(st.open_error) or "starting: building the site, loading the index and model").body()
    body["ok"] = False
    resp = answer(body, 503)
    resp.headers["Retry-After"] = "2"
    return resp


@api.route("/v1/search", methods=["POST"])
def search() -> Response:
    p = params(BY_NAME["search"])
    live = ready_live()
    return answer(ops.search(live, p))


@api.route("/v1/get", methods=["GET", "POST"])
def get() -> Response:
    p = params(BY_NAME["get"])
    st = state()
    ready_live()
    return answer(ops.get(st.root, p, st.excluded()))


@api.route("/v1/write", methods=["POST"])
def write() -> Response:
    p = params(BY_NAME["write"])
    st = state()
    live = ready_live()
    return answer(ops.write(live, st.root, p, _actor(), st.excluded()))


@api.route("/v1/memory-write", methods=["POST"])
def memory_write() -> Response:
    p = params(BY_NAME["memory_write"])
    st = state()
    live = ready_live()
    # Extra fields some clients send (claim id to replace, forget everything): accepted.
    body = json_body()
    if isinstance(body.get("claim"), str):
        p["claim"] = body["claim"]
    if body.get("all") is True:
        p["all"] = True
    return answer(ops.memory_write(live, st.root, p, _actor()))


@api.route("/v1/wake", methods=["POST"])
def wake() -> Response:
    p = params(BY_NAME["wake"])
    live = ready_live()
    return answer(ops.wake(live, p))


@api.route("/v1/link", methods=["POST"])
def link() -> Response:
    p = params(BY_NAME["link"])
    live = ready_live()
    return answer(ops.link(live, p))


@api.route("/v1/status", methods=["GET", "POST"])
def status() -> Response:
    p = params(BY_NAME["status"])
    st = state()
    cfg = st.config
    server = {
        "version": _version(),
        "uptime_s": round(time.time() - st.started, 1),
        "auth": {"tokens": len(st.tokens.list()) if _safe_list(st) else 0,
                 "reads_need_token": not cfg.loopback,
                 "writes_need_token": not (cfg.no_auth and cfg.loopback)},
        "error": st.redact(st.open_error),
    }
    return answer(ops.status(st.live, st.root, server, st.out, freshness=bool(p.get("debug"))))


@api.route("/v1/tools", methods=["GET"])
def tools() -> Response:
    return answer(tools_document())


@api.route("/v1/openapi.json", methods=["GET"])
def openapi() -> Response:
    return answer(openapi_document())


def _actor() -> str | None:
    return getattr(g, "actor", None)


def _safe_list(st: Any) -> bool:
    try:
        st.tokens.list()
        return True
    except Exception:  # noqa: BLE001
        return False


def _version() -> str:
    from commonplace.compiler import __version__

    return __version__
