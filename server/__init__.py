"""commonplace HTTP server: a thin Flask layer over the compiler.

    from commonplace.server import create_app, ServerConfig

Modules: `context` (config and per-app state: a leaf), `app` (the factory only), `routes/`
(blueprints: `guard` checks, `v1` API, `pages` built site), `models` (request models),
`registry` (every operation: model, handler, texts; OpenAPI and tools come from it),
`validation`, `ops/` (the operations, free of Flask), `errors`, `tokens`, `runner`
(waitress lifecycle), `client` (HTTP client for the command line) and `cli/` (the
`commonplace` console script, composing the compiler's commands with the server's).
"""

from __future__ import annotations

from commonplace.compiler.lazy import lazy_exports

__all__ = ["create_app", "ServerConfig"]
__getattr__ = lazy_exports(__name__, {"create_app": "app", "ServerConfig": "app"})  # importing it loads no Flask
