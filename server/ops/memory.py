"""Semantic writes through the claim store (`/v1/memory-write`): resolve the subject,
record the claim, recompile the entity page, or file the statement in the inbox or in
quarantine when it cannot or may not go to its page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError, from_claim_error, from_write_error
from ..models import MemoryWriteRequest
from . import OpContext
from .refresh import purge, refresh


def memory_write(ctx: OpContext, req: MemoryWriteRequest) -> dict[str, Any]:
    from commonplace.compiler import claims as c

    live, root, actor = ctx.live, ctx.root, ctx.actor
    params = req.model_dump()

    action, kind, subject, content = req.action, req.kind, req.subject, req.content
    reason, dry_run, soft, confidence = req.reason, req.dry_run, req.soft, req.confidence
    answer: dict[str, Any] = {
        "resolved": False, "action": action, "kind": kind, "subject_ref": None, "target_path": None,
        "result": "rejected", "confidence": confidence, "indexed": False, "quarantined": False, "message": "",
        "dry_run": dry_run,
    }
    if action in ("write", "replace") and not content.strip():
        raise ApiError(400, "missing_parameter", f"`content` is required for action={action}")
    if action == "forget" and not (reason or "").strip():
        raise ApiError(400, "missing_parameter", "`reason` is required for action=forget")

    findings = w.scan_content("\n".join([content, reason or "", subject, params.get("scope") or ""]))
    if findings:
        if not soft:
            first = findings[0]
            raise ApiError(422, "content_refused",
                           f"content refused: {first.message}; send soft=true to quarantine it for review",
                           findings=[f.as_dict() for f in findings])
        return _quarantine(live, root, answer, params, actor, findings, "content refused by the write checks")

    store = c.ClaimStore(root, actor=actor or "api")
    try:
        entity = store.resolve(subject)
    except (c.UnknownSubject, c.AmbiguousSubject) as exc:
        if soft:
            return _quarantine(live, root, answer, params, actor, [], exc.message)
        answer.update(message=exc.message, candidates=exc.candidates)
        return answer
    except c.ClaimError as exc:
        raise from_claim_error(exc) from None
    answer.update(resolved=True, subject_ref=entity.id, target_path=entity.path)

    canonical = entity.exists and _is_canonical(root, entity.path)
    if params.get("force_inbox") or (canonical and not params.get("allow_canonical")):
        if not params.get("force_inbox"):
            answer.update(message=f"{entity.path} is a canonical page: send allow_canonical=true to change it, "
                                  "or force_inbox=true to file the statement in the inbox for a person")
            return answer
        return _inbox(live, root, answer, params, actor, entity)

    try:
        if action == "write":
            r = store.add(entity.id if entity.exists else subject, content, kind, confidence=confidence,
                          reason=reason, evidence=params.get("source"), dry_run=dry_run, raw_input=content)
        elif action == "replace":
            r = store.replace(entity.id, content, claim=req.claim, kind=kind,
                              confidence=confidence, reason=reason, evidence=params.get("source"),
                              dry_run=dry_run, raw_input=content)
        else:
            r = store.forget(entity.id, content.strip() or None, reason=reason or "",
                             all=req.all, dry_run=dry_run)
    except c.ClaimError as exc:
        raise from_claim_error(exc) from None
    answer["result"] = "dry_run" if dry_run else {"add": "written", "replace": "replaced", "forget": "forgotten",
                                                   "noop": "unchanged"}.get(r.action, r.action)
    answer["message"] = r.message + ("" if not r.warnings else " (" + "; ".join(r.warnings[:5]) + ")")
    answer["target_path"] = r.target_path
    answer["claim_ids"] = r.claim_ids
    answer["evidence_path"] = r.evidence_path
    if dry_run:
        d = r.as_dict(preview=True)
        answer["preview"] = d.get("preview")
        answer["diff"] = d.get("diff")
        return answer
    if r.action == "noop":
        answer["indexed"] = True
        return answer
    # The claim store already compiled the page; refresh it, the evidence file and any
    # artifact a forget redacted (the claim log itself is not a document).
    paths = [r.target_path] + ([r.evidence_path] if r.evidence_path else []) + list(r.redacted)
    indexed, note = refresh(live, list(dict.fromkeys(paths)))
    if r.action == "forget":
        purge(live)
    answer["indexed"] = indexed
    if note:
        answer["message"] += "; " + note
    return answer


def _is_canonical(root: Path, rel: str) -> bool:
    try:
        r = w.read_document(root, rel)
    except w.WriteError:
        return False
    v = r.frontmatter.get("canonical")
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))


def _note_text(title: str, meta: dict[str, Any], body: str) -> str:
    from commonplace.compiler import frontmatter as fm

    meta = {"title": title, **meta}
    return "---\n" + fm.dump(meta) + "---\n\n" + body


def _inbox(live: Any, root: Path, answer: dict[str, Any], params: dict[str, Any], actor: str | None,
           entity: Any) -> dict[str, Any]:
    import datetime as dt

    now = dt.datetime.now(dt.timezone.utc)
    slug = entity.slug[:60] if entity else "memory"
    target = f"inbox/{now:%Y-%m-%d}-{slug}-{params['action']}.md"
    meta = {"type": "capture", "status": "raw", "entity": entity.id if entity else None,
            "memory_action": params["action"], "claim_kind": params["kind"],
            "actor": actor or "api", "tags": ["memory-write"]}
    if params.get("confidence") is not None:
        meta["confidence"] = params["confidence"]
    line = params.get("content") or ""
    body = f"- {now:%H:%M:%S}Z ({params['kind']}) {line.strip()}\n"
    if params.get("reason"):
        body += f"  - reason: {params['reason'].strip()}\n"
    if params.get("source"):
        body += f"  - source: {params['source'].strip()}\n"
    req = w.WriteRequest("append", target, _note_text(f"Inbox: {entity.title if entity else 'memory'} {now:%Y-%m-%d}", meta, body),
                         dry_run=bool(params.get("dry_run")), actor=actor)
    try:
        res = w.apply_write(root, req)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    answer.update(result="dry_run" if res.dry_run else "inbox", target_path=res.path,
                  message=f"filed in {res.path} for a person to review")
    if not res.dry_run:
        answer["indexed"], note = refresh(live, [res.path])
        if note:
            answer["message"] += "; " + note
    return answer


def _quarantine(live: Any, root: Path, answer: dict[str, Any], params: dict[str, Any], actor: str | None,
                findings: list[w.Finding], why: str) -> dict[str, Any]:
    content = params.get("content") or ""
    text = (f"subject: {params.get('subject')}\naction: {params['action']}\n"
            f"kind: {params['kind']}\nreason: {params.get('reason') or ''}\n\n{content}")
    req = w.WriteRequest("create", "inbox/memory-write.md", text, dry_run=bool(params.get("dry_run")),
                         soft=True, actor=actor)
    try:
        res = w.quarantine(root, req, findings or [w.Finding("unresolved-subject", why, 1)], why=why)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    if not res.dry_run:
        answer["indexed"], _ = refresh(live, [res.path])
    answer.update(result="quarantined", quarantined=True, target_path=res.path,
                  message=f"{why}; quarantined in {res.path} for review")
    return answer
