"""The blueprints: `guard` (request id, Host, Origin, auth: runs before every route), `v1`
(the JSON API and /healthz), `metrics`, `stream` (/v1/stream), `wiki` (Dory's browser
routes), `events` (live reload) and `pages` (the built wiki at /). None imports the app
factory; shared state comes from `server.context`."""

from __future__ import annotations

from typing import Any


def register(app: Any) -> None:
    from .events import events
    from .guard import guard
    from .metrics import metrics
    from .pages import pages
    from .stream import stream
    from .v1 import api
    from .wiki import wiki

    app.register_blueprint(guard)
    app.register_blueprint(api)
    app.register_blueprint(metrics)
    app.register_blueprint(stream)
    app.register_blueprint(wiki)
    app.register_blueprint(events)
    app.register_blueprint(pages)
