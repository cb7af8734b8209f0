"""Search: the request model becomes the engine's request; its errors become API errors."""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from ..models import SearchRequest
from . import OpContext


def search(ctx: OpContext, req: SearchRequest) -> dict[str, Any]:
    from commonplace.compiler.search.engine import IndexNotReady
    from commonplace.compiler.search.query import InvalidRequest

    body = req.model_dump(exclude_none=True, by_alias=True)
    try:
        return run_search(ctx.live, body)
    except InvalidRequest as exc:
        raise ApiError(400, "invalid_parameter", str(exc)) from None
    except IndexNotReady:
        raise ApiError(503, "index_not_ready", "the search index is not built yet; try again shortly") from None


def run_search(live: Any, body: dict[str, Any]) -> dict[str, Any]:
    """The live corpus's search (it holds the engine and the model)."""
    return live.search(body)
