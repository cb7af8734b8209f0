"""`GET /v1/stream`: server-sent events, as Dory streams them (dory-contract.md §1.5).

Frames are `event: <name>\\ndata: <json, sorted keys>\\n\\n`. Events, in order: `status`
(what `/v1/status` answers), then with `reindex=true` one `reindex` (the corpus re-read
from disk and everything changed rebuilt; `force=true` also rebuilds the whole search
index) or `error`, then `done` `{"ok": true}`. The guard authenticates it like every
/v1 route; a reindex needs a token even where --loopback-reads opens reads.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Iterator

from flask import Blueprint, Response, g, request

from ..context import state
from ..errors import ApiError
from ..models import StatusRequest, StreamRequest
from ..registry import resolve
from ..validation import validate
from .guard import is_local_client
from .v1 import op_context

if TYPE_CHECKING:
    from commonplace.compiler.live.contract import LiveContract

stream = Blueprint("stream", __name__)
log = logging.getLogger("commonplace.server")


def frame(event: str, payload: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)}\n\n"


def reindex(live: LiveContract, force: bool) -> dict[str, Any]:
    """Re-read the corpus from disk and rebuild what changed; with `force`, then rebuild
    the whole search index from every document (the embedding cache keeps it cheap)."""
    result = live.refresh([], rescan=True)
    out = result.as_dict() if hasattr(result, "as_dict") else {}
    out["forced"] = bool(force)
    if force and live.index:
        from commonplace.compiler.search import build_indexes

        with live.write_lock:
            report = build_indexes(live.root, list(live.docs.values()), embed=live.embed)
        out["index"] = report.as_extra() if hasattr(report, "as_extra") else {}
    return out


@stream.route("/v1/stream", methods=["GET"])
def events() -> Response:
    req = validate(StreamRequest, request.args)
    st = state()
    cfg = st.config
    if req.reindex and g.get("actor") is None and not (cfg.no_auth and cfg.loopback and is_local_client()):
        # A rebuild is a write to derived state: like writes, it needs a token even where
        # --loopback-reads lets reads in without one.
        raise ApiError(401, "unauthorized", "reindex needs a bearer token",
                       headers={"WWW-Authenticate": 'Bearer realm="commonplace"'})
    if req.reindex and not st.ready:
        raise ApiError(503, "not_ready", "the server is still starting; retry shortly", headers={"Retry-After": "2"})
    ctx = op_context(st)
    live = st.live
    status = resolve("status:status")(ctx, StatusRequest())  # before the stream: its errors are HTTP errors

    def generate() -> Iterator[str]:
        yield frame("status", status)
        if req.reindex:
            try:
                yield frame("reindex", reindex(live, req.force))
            except Exception as exc:  # noqa: BLE001 - reported in the stream, logged in full
                log.exception("reindex from /v1/stream failed")
                yield frame("error", {"detail": st.redact(f"reindex failed: {type(exc).__name__}: {exc}")})
        yield frame("done", {"ok": True})

    resp = Response(generate(), mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"  # a proxy in front should pass events through at once
    return resp
