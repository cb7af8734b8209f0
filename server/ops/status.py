"""What the server holds (`/v1/status`): counts, index health, model, last build."""

from __future__ import annotations

from typing import Any

from ..models import StatusRequest
from . import OpContext


def status(ctx: OpContext, req: StatusRequest) -> dict[str, Any]:
    live, root, out, freshness = ctx.live, ctx.root, ctx.out, req.debug
    server = ctx.server_info()
    ready = bool(getattr(live, "ready", False))
    docs = (getattr(live, "docs", None) or {}) if ready else {}
    answer: dict[str, Any] = {
        "ok": True,
        "ready": ready,
        "documents": len(docs),
        "files": len(docs),
        "chunks": None,
        "vectors": None,
        "index": {},
        "model": None,
        "dimensions": None,
        "pending": None,
        "last_build": None,
        "last_refresh": None,
        "server": server,
    }
    try:
        from commonplace.compiler.search import index_status

        info = index_status(root, out, check_freshness=freshness)
    except Exception as exc:  # noqa: BLE001 - status must answer even with a broken index
        info = {"index": False, "error": type(exc).__name__}
    if isinstance(info, dict):
        info = {k: v for k, v in info.items() if k != "corpus"}  # no server filesystem paths
        answer["index"] = info
        answer["chunks"] = info.get("chunks")
        answer["vectors"] = info.get("vectors")
        emb = info.get("embedding") or {}
        answer["model"] = emb.get("model") or emb.get("configured_model")
        answer["dimensions"] = emb.get("dimensions")
        answer["pending"] = (info.get("pending") or {}).get("documents")
    for key, attr in (("last_build", "last_build"), ("last_refresh", "last_refresh")):
        value = getattr(live, attr, None)
        if value is not None:
            answer[key] = value.as_dict() if hasattr(value, "as_dict") else value
    lb = answer["last_build"]
    if isinstance(lb, dict):  # warnings name corpus files only; keep the answer small
        lb.pop("warnings", None)
    return answer
