"""What the server holds (`/v1/status`, and `/metrics` from the same numbers).

Dory's fields (`dory-contract.md` §1.5), which its clients read: `api_version`; counts
`corpus_files` (durable documents, sessions and evidence artifacts excluded), `session_files` (files under
logs/sessions/ on disk), `session_docs_indexed`, `session_missing_docs`,
`session_stale_docs`, `files_indexed`, `chunks_indexed`, `vectors_indexed` (durable
documents in the search index, as Dory counts them: `files_indexed` leaves out the
evidence artifacts of memory-writes, `sources/semantic/**`, which Dory does not index and
default search leaves out); index health `index_present`,
`index_stale`, `index_healthy`, `index_missing_files`, `vector_drift` (chunks without a
vector; 0 when the server runs without embeddings, which then expects none),
`last_reindex_at`; `embedding_provider` (`local`, or `none` without embeddings),
`embedding_model`, `embedding_dimensions`; the reranker and active-memory language model
fields (commonplace has neither). `debug=true` adds `corpus_root` and `index_root` (as
placeholders: no server paths leave the server), `embedding_batch_size`, `openclaw{...}`
and `compat_matrix`.

commonplace's own fields stay alongside: `ok`, `ready`, `documents`, `files`, `chunks`,
`vectors`, `index`, `model`, `dimensions`, `pending`, `last_build`, `last_refresh`,
`server`. `ready` is the server's readiness, the state `/healthz` answers from, so
status never says ready before /healthz does (issue 20). Until the corpus is open (a first
MCP call starts it), `documents`, `files` and `corpus_files` are the built index's counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...compiler.corpus.scan import session_files
from ...compiler.search import EVIDENCE_PREFIX
from ..models import StatusRequest
from . import OpContext

API_VERSION = "v1"


def _model_dimensions(model: str | None) -> int | None:
    """Dimensions of the configured local model from its files, without loading it."""
    try:
        from commonplace.compiler.search import resolve_model

        ref = resolve_model(model) if model else resolve_model(None)
        if not ref.is_local:
            return None
        for name, key in (("1_Pooling/config.json", "word_embedding_dimension"), ("config.json", "hidden_size")):
            p = Path(ref.location) / name
            if p.is_file():
                value = json.loads(p.read_text("utf-8")).get(key)
                if isinstance(value, int) and value > 0:
                    return value
    except Exception:  # noqa: BLE001 - unknown is an answer
        return None
    return None


def _openclaw(ctx: OpContext) -> dict[str, Any]:
    """OpenClaw diagnostics. Recall events and artifact listing live in `ops/sessions.py`;
    its `openclaw_diagnostics(ctx)`, when present, fills in the recall numbers."""
    out: dict[str, Any] = {
        "flush_enabled": False, "recall_tracking_enabled": False, "artifact_listing_enabled": False,
        "recent_recall_count": 0, "promotion_candidate_count": 0, "last_recall_event_at": None,
        "last_recall_selected_path": None, "last_recall_promotion_at": None, "last_flush_status": None,
        "recent_backend_error": None,
    }
    try:
        from . import sessions  # type: ignore[attr-defined]
    except ImportError:
        return out
    out["recall_tracking_enabled"] = callable(getattr(sessions, "recall_event", None))
    out["artifact_listing_enabled"] = callable(getattr(sessions, "public_artifacts", None))
    diag = getattr(sessions, "openclaw_diagnostics", None)
    if callable(diag):
        try:
            out.update({k: v for k, v in (diag(ctx) or {}).items() if k in out})
        except Exception as exc:  # noqa: BLE001 - status answers anyway
            out["recent_backend_error"] = type(exc).__name__
    return out


def dory_fields(ctx: OpContext, docs: dict[str, Any], info: dict[str, Any], opening: bool = False) -> dict[str, Any]:
    """Dory's status fields. `opening`: the corpus is not open yet, so its files are the
    ones the built index holds (not none)."""
    live, root = ctx.live, ctx.root
    embed = bool(live.embed)
    try:
        from commonplace.compiler.search import index_counts

        counts = index_counts(root)
    except Exception:  # noqa: BLE001 - a broken index: counts are zero, health says so
        counts = {}
    on_disk = session_files(root)
    indexed_sessions = counts.get("sessions", {})
    files_indexed = counts.get("files", 0)
    corpus_files = files_indexed if opening else sum(
        1 for d in docs.values() if not d.is_session and not d.path.startswith(EVIDENCE_PREFIX))
    chunks_indexed = counts.get("chunks", 0)
    vectors_indexed = counts.get("vectors", 0)
    missing = max(0, corpus_files - files_indexed)
    drift = chunks_indexed - vectors_indexed if embed else 0
    present = bool(counts) and files_indexed > 0
    stale = not present or missing > 0 or drift != 0
    emb = info.get("embedding") or {}
    model = emb.get("model") or emb.get("configured_model")
    dims = emb.get("dimensions") or _model_dimensions(emb.get("configured_model")) or 0
    return {
        "api_version": API_VERSION,
        "corpus_files": corpus_files,
        "session_files": len(on_disk),
        "session_docs_indexed": counts.get("session_docs", 0),
        "session_missing_docs": sum(1 for p in on_disk if p not in indexed_sessions),
        "session_stale_docs": sum(1 for p, sig in on_disk.items() if p in indexed_sessions and indexed_sessions[p] != sig),
        "files_indexed": files_indexed,
        "chunks_indexed": chunks_indexed,
        "vectors_indexed": vectors_indexed,
        "index_present": present,
        "index_stale": stale,
        "index_healthy": present and not stale,
        "index_missing_files": missing,
        "vector_drift": drift,
        "last_reindex_at": info.get("built_at"),
        "embedding_provider": "local" if embed else "none",
        "embedding_model": model,
        "embedding_dimensions": int(dims),
        "query_reranker_enabled": False,
        "query_reranker_provider": None,
        "query_reranker_model": None,
        "active_memory_llm_provider": "none",
        "active_memory_llm_stages": "off",
    }


def status(ctx: OpContext, req: StatusRequest) -> dict[str, Any]:
    live, root, out, debug = ctx.live, ctx.root, ctx.out, req.debug
    server = ctx.server_info()
    # The server's readiness (the /healthz gate), not the corpus object's: the corpus is
    # open a moment before the model is loaded and the gate opens.
    ready = bool(server["ready"]) if "ready" in server else bool(live.ready)
    docs = live.docs if ready else {}
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

        info = index_status(root, out, check_freshness=debug)
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
        if not ready and isinstance(info.get("documents"), int):  # opening: what the built index holds
            answer["documents"] = answer["files"] = info["documents"]
    for key, value in (("last_build", live.last_build), ("last_refresh", live.last_refresh)):
        if value is not None:
            answer[key] = value.as_dict() if hasattr(value, "as_dict") else value
    lb = answer["last_build"]
    if isinstance(lb, dict):  # warnings name corpus files only; keep the answer small
        lb.pop("warnings", None)
    answer.update(dory_fields(ctx, docs, info if isinstance(info, dict) else {}, opening=not ready))
    from commonplace.compiler.search import recovered

    answer["recovered"] = recovered()  # derived state discarded and rebuilt by this process
    if debug:
        from commonplace.compiler.search import index_root

        try:
            index_rel = index_root(root).relative_to(root).as_posix()
        except ValueError:
            index_rel = "index"
        try:
            from commonplace.compiler.search import ENCODE_BATCH
        except ImportError:
            ENCODE_BATCH = 0  # noqa: N806
        answer.update(corpus_root="<corpus>", index_root=f"<corpus>/{index_rel}", embedding_batch_size=ENCODE_BATCH,
                      openclaw=_openclaw(ctx), compat_matrix=ctx.compat())
    return answer
