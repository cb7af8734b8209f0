"""`GET /_/events`: live reload for the built site under `commonplace serve`.

The pages' script (templates/static/site.js) listens here and reloads when a rebuild wrote
its page. After each refresh of the live corpus (a write through the API, an editor's save
seen by --watch), one `event: rebuilt` names the pages of the changed documents and of the
documents linking to them (their backlinks and link titles change): `{"urls": [...]}`,
site-relative (`people/alex/index.html`); a removal sends `{"all": true}`.

Who may listen: whoever may see the pages. `/_/events` passes the guard's rule for the
site (a local client of a loopback server, else a bearer token); `/wiki/_/events`, where
the wiki's pages listen, passes the wiki's login.

A stream holds one of waitress's threads, so at most half of them (`max_streams`) stream
at once, leaving the rest to every other route (/healthz included); a stream over the cap
is answered at once with a longer `retry`, and its browser tries again later. A stream ends
after STREAM_SECONDS and the EventSource reconnects by itself; a closed tab frees its thread
at the next keep-alive. Pages opened from disk never call this.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any, Iterator

from flask import Blueprint, Response, current_app

from ..context import state

if TYPE_CHECKING:
    from commonplace.compiler.live.contract import LiveContract

events = Blueprint("events", __name__)

STREAM_SECONDS = 30.0
POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 10.0
BUSY_RETRY_MS = 15_000  # a browser turned away (too many streams) tries again after this
_SLOTS = "commonplace.event_slots"


def max_streams(threads: int) -> int:
    """Streams open at once: half of waitress's threads, at least one."""
    return max(1, threads // 2)


def _slots() -> threading.BoundedSemaphore:
    slots = current_app.extensions.get(_SLOTS)
    if slots is None:
        slots = current_app.extensions.setdefault(
            _SLOTS, threading.BoundedSemaphore(max_streams(state().config.threads)))
    return slots


def rebuilt_pages(live: LiveContract, result: Any) -> dict[str, Any]:
    """What a refresh wrote that an open page may show."""
    if getattr(result, "removed", None):
        return {"all": True}
    docs = live.docs
    backlinks = live.graph.backlinks
    paths: set[str] = set()
    for path in getattr(result, "changed", []) or []:
        paths.add(path)
        paths.update(backlinks.get(path, ()))
    urls = sorted(docs[p].url for p in paths if p in docs)
    return {"urls": urls} if urls else {}


class _Held:
    """The stream's iterator, giving its slot back when the server closes it: at the end,
    when the client went away, or unread (a HEAD request, an error before the first byte)."""

    def __init__(self, gen: Iterator[str], slots: threading.BoundedSemaphore) -> None:
        self.gen, self.slots, self.held = gen, slots, True

    def __iter__(self) -> Iterator[str]:
        return self.gen

    def close(self) -> None:
        try:
            self.gen.close()
        finally:
            if self.held:
                self.held = False
                self.slots.release()


@events.route("/wiki/_/events", methods=["GET"])
def wiki_events() -> Response:
    from .wiki import authorize

    deny = authorize()
    return deny if deny is not None else stream_events()


@events.route("/_/events", methods=["GET"])
def stream_events() -> Response:
    st = state()
    live = st.live
    slots = _slots()
    if not slots.acquire(blocking=False):
        resp = Response(f"retry: {BUSY_RETRY_MS}\n\n", mimetype="text/event-stream")
        resp.headers["Cache-Control"] = "no-store"
        return resp

    def generate() -> Iterator[str]:
        seen = live.last_refresh
        yield "retry: 1000\n\n"
        start = last_sent = time.monotonic()
        while time.monotonic() - start < STREAM_SECONDS:
            time.sleep(POLL_SECONDS)
            current = live.last_refresh
            if current is not None and current is not seen:
                seen = current
                payload = rebuilt_pages(live, current)
                if payload:
                    yield f"event: rebuilt\ndata: {json.dumps(payload, sort_keys=True)}\n\n"
                    last_sent = time.monotonic()
            elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
                yield ": keep-alive\n\n"  # a closed connection fails here and frees the thread
                last_sent = time.monotonic()

    resp = Response(_Held(generate(), slots), mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp
