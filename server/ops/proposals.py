"""Proposals (`/v1/memory-propose`, `/v1/proposals...`): semantic memory proposed before it
is committed (Dory's `dory_memory_propose` / `dory proposals`).

propose runs the memory-write router in dry-run mode and stores what it planned under
`inbox/proposed/<id>.md` (`compiler/sessions/proposals.py` has the file's shape). apply
runs the dry run again and refuses (409 `route_changed`) when the target path or the
subject it resolves to changed since; otherwise it is memory-write itself (claims,
evidence artifact, canonical page, refresh), so an applied proposal is a direct write
but for its provenance (`source`, `reason`). Applied and rejected proposals move to
`inbox/applied/` and `inbox/rejected/`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from commonplace.compiler import writes as w
from commonplace.compiler.fsutil import fsync_dir
from commonplace.compiler.sessions import proposals as pr

from ..errors import ApiError, from_write_error
from ..models import (MemoryWriteRequest, ProposalApplyRequest, ProposalRejectRequest, ProposalShowRequest,
                      ProposalsListRequest, ProposeRequest)
from . import OpContext
from .memory import memory_write
from .refresh import refresh


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _request(req: Any) -> dict[str, Any]:
    return {k: getattr(req, k) for k in pr.REQUEST_FIELDS}


def _dry_run(ctx: OpContext, request: dict[str, Any]) -> dict[str, Any]:
    return memory_write(ctx, MemoryWriteRequest(**request, dry_run=True))


def _write(ctx: OpContext, rel: str, meta: dict[str, Any], kind: str = "create") -> None:
    text = w.compose(meta, pr.body_text(meta))
    old = None
    if kind == "replace":
        old = w.content_hash((ctx.root / rel).read_bytes())
    wr = w.WriteRequest(kind, rel, text, expected_hash=old, actor=ctx.actor or "api")
    try:
        w.apply_write(ctx.root, wr, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None


def propose(ctx: OpContext, req: ProposeRequest) -> dict[str, Any]:
    request = _request(req)
    answer = _dry_run(ctx, request)
    if not answer.get("resolved") or answer.get("result") not in ("preview",):
        # Nothing a reviewer could apply: say why, store nothing.
        return {"stored": False, "id": None, "path": None, "result": answer.get("result"),
                "message": answer.get("message") or "the dry run did not plan a write", "dry_run": answer}
    pid, existing = pr.new_id(ctx.root, request)
    rel = pr.rel_of("proposed", pid)
    if existing:
        meta, _ = pr.read(ctx.root, rel)
        return {"stored": True, "existing": True, "indexed": True, **pr.summary(meta, rel)}
    meta = {
        "title": f"Proposal: {req.kind} about {req.subject}"[:200],
        "type": "capture", "status": "pending", "canonical": False, "source_kind": "generated",
        "temperature": "cold", "proposal_id": pid, "proposal_status": "proposed",
        "request": request,
        "planned": {"target_path": answer.get("target_path"), "subject_ref": answer.get("subject_ref"),
                    "evidence_path": answer.get("evidence_path")},
        "risk_flags": pr.risk_flags(request, answer, ctx.root),
        "source_paths": list(req.source_paths),
        "provenance": {"proposed_by": ctx.actor or "api", "proposed_at": _now(), "origin": req.origin or "api"},
        "preview": answer.get("diff") or answer.get("preview") or "",
    }
    _write(ctx, rel, meta)
    indexed, note = refresh(ctx.live, [rel])
    out = {"stored": True, "existing": False, "indexed": indexed, **pr.summary(meta, rel)}
    if note:
        out["message"] = note
    return out


def _load(ctx: OpContext, pid: str) -> tuple[str, str, dict[str, Any]]:
    where = pr.find(ctx.root, pid)
    if where is None:
        raise ApiError(404, "not_found", f"no proposal {pid}")
    state, rel = where
    return state, rel, _read(ctx, rel)


def _read(ctx: OpContext, rel: str) -> dict[str, Any]:
    """A proposal's frontmatter; a file edited into something unreadable is a 409 that
    names it, never a crash."""
    from commonplace.compiler.markdown import frontmatter as fm

    try:
        meta, _ = pr.read(ctx.root, rel)
    except (OSError, UnicodeDecodeError, fm.FrontmatterError) as exc:
        raise ApiError(409, "proposal_unreadable", f"{rel} cannot be read as a proposal: {exc}") from None
    if not isinstance(meta.get("request"), dict) or not meta.get("proposal_id"):
        raise ApiError(409, "proposal_unreadable", f"{rel} has no proposal_id or request in its frontmatter")
    return meta


def list_proposals(ctx: OpContext, req: ProposalsListRequest) -> dict[str, Any]:
    found = pr.listing(ctx.root, req.status)
    items = []
    skipped = []
    for state, rel in found:
        if len(items) >= req.limit:
            break
        try:
            items.append(pr.summary(_read(ctx, rel), rel))
        except ApiError as exc:
            skipped.append({"path": rel, "message": exc.message})
    out = {"status": req.status, "count": len(items), "total": len(found), "proposals": items}
    if skipped:
        out["unreadable"] = skipped
    return out


def show(ctx: OpContext, req: ProposalShowRequest) -> dict[str, Any]:
    state, rel, meta = _load(ctx, req.id)
    return {**pr.summary(meta, rel), "preview": meta.get("preview", "")}


def _settle(ctx: OpContext, rel: str, meta: dict[str, Any], state: str, outcome: dict[str, Any]) -> str:
    """Move a proposal to inbox/<state>/ with its outcome: the settled file is written
    first, then the proposed one removed (a crash between leaves both; `find` prefers the
    settled one and the next settle removes the other)."""
    pid = meta["proposal_id"]
    meta = {**meta, "proposal_status": state, "status": "done", "outcome": outcome}
    new = pr.rel_of(state, pid)
    _write(ctx, new, meta)
    with w.write_lock(ctx.root):
        full = ctx.root / rel
        if full.exists():
            full.unlink()
            fsync_dir(full.parent)
    return new


def _pending(ctx: OpContext, pid: str) -> tuple[str, dict[str, Any]]:
    state, rel, meta = _load(ctx, pid)
    if state != "proposed":
        raise ApiError(409, "already_settled", f"proposal {pid} was already {state} ({rel})")
    return rel, meta


def apply(ctx: OpContext, req: ProposalApplyRequest) -> dict[str, Any]:
    rel, meta = _pending(ctx, req.id)
    request = {k: (meta.get("request") or {}).get(k) for k in pr.REQUEST_FIELDS}
    planned = meta.get("planned") or {}
    again = _dry_run(ctx, request)
    now = {"target_path": again.get("target_path"), "subject_ref": again.get("subject_ref")}
    if not again.get("resolved") or any(now[k] != planned.get(k) for k in now):
        raise ApiError(409, "route_changed",
                       f"proposal {req.id} no longer routes where it was reviewed: planned "
                       f"{planned.get('subject_ref')} at {planned.get('target_path')}, now "
                       + (f"{now['subject_ref']} at {now['target_path']}" if again.get("resolved")
                          else f"unresolved ({again.get('message')})") + "; reject it and propose again",
                       planned=planned, now=now)
    if req.dry_run:
        return {"id": req.id, "applied": False, "dry_run": True, "path": rel, "planned": planned,
                "result": "preview", "message": f"would apply: {again.get('message')}"}
    live = dict(request, allow_canonical=True, dry_run=False)
    live["source"] = request.get("source") or f"inbox/applied/{req.id}.md"
    live["reason"] = request.get("reason") or f"applied proposal {req.id}"
    answer = memory_write(ctx, MemoryWriteRequest(**live))
    if answer.get("result") not in ("written", "replaced", "forgotten"):
        raise ApiError(409, "apply_failed", f"proposal {req.id} was not applied: {answer.get('message')}",
                       answer=answer)
    outcome = {"result": answer["result"], "applied_by": ctx.actor or "api", "applied_at": _now(),
               "claim_ids": answer.get("claim_ids") or [], "evidence_path": answer.get("evidence_path"),
               "message": answer.get("message")}
    new = _settle(ctx, rel, meta, "applied", outcome)
    indexed, _ = refresh(ctx.live, [rel, new])
    return {"id": req.id, "applied": True, "dry_run": False, "path": new, "result": answer["result"],
            "target_path": answer.get("target_path"), "claim_ids": outcome["claim_ids"],
            "evidence_path": outcome["evidence_path"], "indexed": bool(answer.get("indexed")) and indexed,
            "message": answer.get("message")}


def reject(ctx: OpContext, req: ProposalRejectRequest) -> dict[str, Any]:
    state, rel, meta = _load(ctx, req.id)
    if state == "rejected":  # rejecting twice is one rejection
        return {"id": req.id, "rejected": True, "path": rel, "indexed": True}
    if state != "proposed":
        raise ApiError(409, "already_settled", f"proposal {req.id} was already {state} ({rel})")
    if req.reason:
        findings = w.scan_content(req.reason)
        if findings:
            raise ApiError(400, "content_refused", f"reason refused by the write checks: {findings[0].message}")
    outcome = {"result": "rejected", "rejected_by": ctx.actor or "api", "rejected_at": _now(),
               "reason": req.reason, "message": f"rejected: {req.reason or 'no reason given'}"}
    new = _settle(ctx, rel, meta, "rejected", outcome)
    indexed, _ = refresh(ctx.live, [rel, new])
    return {"id": req.id, "rejected": True, "path": new, "indexed": indexed}
