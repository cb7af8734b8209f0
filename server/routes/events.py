"""`GET /_/events`: live reload for the built site under `commonplace serve`.

The pages' script (templates/static/site.js) listens here and reloads when a rebuild wrote
its page. After each refresh of the live corpus (a write through the API, an editor's save
seen by --watch), one `event: rebuilt` names the pages of the changed documents and of the
documents linking to them (their backlinks and link titles change): `{"urls": [...]}`,
site-relative (`people/alex/index.html`); a removal sends `{"all": true}`.

A stream holds one of waitress's threads, so it ends after STREAM_SECONDS and the browser's
EventSource reconnects by itself (`retry`); a closed tab frees its thread at the next
keep-alive. Pages opened from disk never call this.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

from flask import Blueprint, Response

from ..context import state

events = Blueprint("events", __name__)

STREAM_SECONDS = 30.0
POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 10.0


def rebuilt_pages(live: Any, result: Any) -> dict[str, Any]:
    """What a refresh wrote that an open page may show."""
    if getattr(result, "removed", None):
        return {"all": True}
    docs = getattr(live, "docs", {}) or {}
    graph = getattr(live, "graph", None)
    backlinks = getattr(graph, "backlinks", {}) or {}
    paths: set[str] = set()
    for path in getattr(result, "changed", []) or []:
        paths.add(path)
        paths.update(backlinks.get(path, ()))
    urls = sorted(docs[p].url for p in paths if p in docs)
    return {"urls": urls} if urls else {}


@events.route("/_/events", methods=["GET"])
def stream_events() -> Response:
    st = state()
    live = st.live

    def generate() -> Iterator[str]:
        seen = getattr(live, "last_refresh", None)
        yield "retry: 1000\n\n"
        start = last_sent = time.monotonic()
        while time.monotonic() - start < STREAM_SECONDS:
            time.sleep(POLL_SECONDS)
            current = getattr(live, "last_refresh", None)
            if current is not None and current is not seen:
                seen = current
                payload = rebuilt_pages(live, current)
                if payload:
                    yield f"event: rebuilt\ndata: {json.dumps(payload, sort_keys=True)}\n\n"
                    last_sent = time.monotonic()
            elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
                yield ": keep-alive\n\n"  # a closed connection fails here and frees the thread
                last_sent = time.monotonic()

    resp = Response(generate(), mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp
