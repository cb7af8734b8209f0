"""commonplace HTTP server: a thin Flask layer over the compiler.

    from commonplace.server import create_app, ServerConfig

Modules: `app` (factory, request hooks, error envelope), `auth` (bearer tokens), `api`
(`/v1` routes and `/healthz`), `site` (the built wiki at `/`), `schema` (routes,
parameters, OpenAPI and tool descriptions from one table), `ops` (the operations
themselves, free of Flask, shared with other front ends).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "ServerConfig"]


def __getattr__(name: str) -> Any:  # lazy: importing the package does not import Flask
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(name)
