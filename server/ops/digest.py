"""Digests (`/v1/digest`, `dory_digest`): one session, or one day of sessions, into a
page under `logs/digests/` with the decisions, facts, open questions and follow-ups it
holds, each with its source turn (compiler/sessions/digest.py).

The page is written through the write path (atomic, under the corpus lock) and
refreshed; writing it again from the same sessions changes nothing. The digest's
decisions, and its facts that name a known entity, become proposals for review
(`proposals.py`), never durable writes; a fact is proposed to the entity it is about
(`digest.subject_of`), not to whoever else the line names.
"""

from __future__ import annotations

import re
from typing import Any

from commonplace.compiler import writes as w
from commonplace.compiler.sessions import blobs
from commonplace.compiler.sessions import compact as cp
from commonplace.compiler.sessions import digest as dg

from ..errors import ApiError, from_write_error
from ..models import DigestRequest, ProposeRequest
from . import OpContext
from .refresh import refresh
from .sessions import existing_session

MAX_PROPOSALS = 20
_DECISION_WORDS = {"decided", "agreed", "chose", "settled", "decision", "going", "use"}


def _original(ctx: OpContext, rel: str) -> bytes:
    try:
        return cp.original_bytes(ctx.root, rel)
    except blobs.BlobError as exc:
        raise ApiError(409, "blob_missing", f"cannot digest {rel}: it is compacted and {exc}") from None


def _session_files(ctx: OpContext, req: DigestRequest) -> tuple[str, str, list[tuple[str, bytes]], str | None]:
    """(digest path, title, [(session path, original bytes)], date)."""
    if bool(req.session) == bool(req.date):
        raise ApiError(400, "invalid_parameter", "give one of `session` (a logs/sessions/...md path) or `date` "
                                                 "(YYYY-MM-DD)")
    if req.session:
        rel = existing_session(ctx, req.session, "session")
        data = _original(ctx, rel)
        meta = dg.session_meta(data)
        title = f"Digest: {meta.get('title') or rel.rsplit('/', 1)[-1][:-3]}"
        return dg.digest_path(rel), title, [(rel, data)], dg.session_date(meta)
    day = str(req.date)
    chosen = []
    for c in cp.candidates(ctx.root):
        name_day = re.search(r"\d{4}-\d{2}-\d{2}", c.path.rsplit("/", 1)[-1])
        if c.date == day or (name_day and name_day.group(0) == day):
            chosen.append((c.path, _original(ctx, c.path)))
    return dg.day_path(day), f"Digest of {day}", chosen, day


def _entities(root: Any) -> list[tuple[re.Pattern, str]]:
    from commonplace.compiler.claims import Registry

    out = []
    for e in Registry.load(root).entities.values():
        for name in {e.title, *e.aliases}:
            if len(name) >= 3:
                out.append((re.compile(r"\b" + re.escape(name) + r"\b"), e.id))
    return out


def _proposals(ctx: OpContext, d: dg.Digest) -> list[dict[str, Any]]:
    from .proposals import propose

    names = _entities(ctx.root)
    out = []
    for it in d.items:
        if len(out) >= MAX_PROPOSALS:
            break
        source = f"{it.path}#L{it.start}-L{it.end}"
        if it.section == "decision":
            words = [x for x in dg.content_words(it.text) if x.lower() not in _DECISION_WORDS][:6]
            subject = "-".join(x.lower() for x in words) or "session-decision"
            fields = {"kind": "decision", "subject": f"decision:{subject}"[:200], "scope": "decision"}
        elif it.section in ("fact", "followup"):
            hit = dg.subject_of(it.text, names)  # the project a line is about, not the person it names
            if hit is None:
                continue
            fields = {"kind": "fact" if it.section == "fact" else "note", "subject": hit}
        else:
            continue
        req = ProposeRequest(action="write", content=it.text, confidence="medium", source=source,
                             source_paths=[source], origin=f"digest {d.target}", **fields)
        try:
            res = propose(ctx, req)
        except ApiError as exc:
            res = {"stored": False, "message": exc.message}
        out.append({"id": res.get("id"), "stored": res.get("stored"), "section": it.section,
                    "subject": fields["subject"], "message": res.get("message")})
    return out


def digest(ctx: OpContext, req: DigestRequest) -> dict[str, Any]:
    target, title, sessions, date = _session_files(ctx, req)
    if not sessions:
        raise ApiError(404, "not_found", f"no session transcripts of {req.date} under logs/sessions/")
    d = dg.build(target, title, sessions, date)
    if req.use_llm:
        from commonplace.compiler.sessions.llm import LLMConfig, rewrite

        cfg = LLMConfig.from_env()
        if cfg is not None:
            text = rewrite(d.sections_markdown(), cfg)
            if text is not None:
                d.body_override, d.generator = text, f"llm:{cfg.model}"
            else:
                d.generator = f"{dg.GENERATOR} (llm:{cfg.model} failed; extractive kept)"
    out: dict[str, Any] = {"path": target, "saved": False, "action": "not_saved", "indexed": False,
                           "digest": d.as_dict(), "content": d.text(), "proposals": []}
    if req.save:
        data = d.text().encode("utf-8")
        full = w.locate(ctx.root, target, ctx.excluded)
        old = full.read_bytes() if full.is_file() else None
        if old == data:
            out.update(saved=True, action="unchanged", indexed=True, hash=w.content_hash(data))
        else:
            wr = w.WriteRequest("create" if old is None else "replace", target, d.text(),
                                expected_hash=None if old is None else w.content_hash(old), actor=ctx.actor or "api")
            try:
                res = w.apply_write(ctx.root, wr, ctx.excluded)
            except w.WriteError as exc:
                raise from_write_error(exc) from None
            indexed, note = refresh(ctx.live, res.paths)
            out.update(saved=True, action=res.action, indexed=indexed, hash=res.hash)
            if note:
                out["message"] = note
    if req.propose:
        out["proposals"] = _proposals(ctx, d)
    return out
