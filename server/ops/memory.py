"""Semantic writes (`/v1/memory-write`, Dory's contract §1.5 and §3.2) through commonplace's
claim store: resolve the subject, record the claim in the log, recompile the entity's
canonical page (managed sections; hand-written text kept), and keep the raw input as an
evidence artifact under sources/semantic/.

Answers are Dory's: business outcomes are 200 with `result` one of preview, written,
replaced, forgotten, quarantined, rejected. Dory's rules, as defaults:
- every entity family is canonical memory: a live write needs `allow_canonical`;
- an unknown subject with scope project, concept or decision creates that entity;
  `kind=decision` goes to a decision entity;
- replace with no current claim of the kind records one; with one, replaces it; with several,
  replaces the one its statement restates (Dory replaces all), records a new claim when it
  restates none (the message says so and lists them), and is rejected, listing them, when
  it fits several equally;
- forget selects the claims its content names, else every current claim of the kind
  (every kind for `note`); when nothing is left the page is marked superseded by
  `<stem>.tombstone.md`; with no claims at all the page itself is forgotten that way;
- `force_inbox` files a capture under inbox/semantic/ instead; `soft` quarantines what
  cannot be resolved or is refused by the content checks.
Forgotten claim text is still removed from the page, the artifacts and every derived index
(commonplace's forgetting).

Where what a write produced lands (issue 28): the evidence artifact is written and
rendered but, as in Dory, not part of default search nor of status' `files_indexed`; a
`kind: decision` about an existing project is linked from the project's page (`## Key
Decisions`; the answer's `linked_from`); a rejection says how to succeed (create the page,
`force_inbox`, `soft`, `allow_canonical`).
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path
from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError, from_claim_error, from_write_error
from ..models import MemoryWriteRequest
from . import OpContext
from .elsewhere import still_said, tracking
from .refresh import purge, refresh

GATE = ("live semantic write resolves to canonical memory; rerun with dry_run=true to preview, "
        "allow_canonical=true to commit, or force_inbox=true for a tentative capture")
_VERB = {"write": "create", "replace": "replace", "forget": "forget"}


def _validation(message: str, code: str = "invalid_request") -> ApiError:
    return ApiError(400, code, message, detail={"code": "dory_validation_error", "message": message,
                                                "type": "validation"})


def _claim_error(exc: Any) -> ApiError:
    err = from_claim_error(exc)
    if err.status == 400:
        err.detail = {"code": "dory_validation_error", "message": err.message, "type": "validation"}
    return err


def primary_section(family: str, kind: str, path: str) -> str:
    """The page section a statement of `kind` belongs to (Dory's table, §3.2)."""
    if family == "person" or (family == "core" and path.endswith("/user.md")):
        return "Preferences And Working Style" if kind == "preference" else "Current Facts"
    if family == "project":
        return "Open Work" if kind == "note" else "Current State"
    if family == "concept":
        return "Open Questions" if kind == "note" else "Current Understanding"
    if family == "decision":
        return "Decision"
    stem = path.rsplit("/", 1)[-1][:-3]
    return {"active": "Current Focus", "defaults": "Default Operating Assumptions", "env": "Environment",
            "identity": "Role"}.get(stem, "Behavior Rules")


def _slug(text: str) -> str:
    return w.schema.slug_segment(text).replace("/", "-").replace("_", "-").strip("-")


def memory_write(ctx: OpContext, req: MemoryWriteRequest) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "resolved": False, "action": req.action, "kind": req.kind, "subject_ref": None, "target_path": None,
        "result": "rejected", "confidence": req.confidence, "indexed": False, "quarantined": False, "message": "",
        "dry_run": req.dry_run,
    }
    if req.action in ("write", "replace") and not req.content.strip():
        raise _validation(f"content is required for action={req.action}", "missing_parameter")
    if req.force_inbox:
        return _force_inbox(ctx, req, answer)
    findings = w.scan_content("\n".join([req.content, req.reason or "", req.subject, req.source or ""]))
    if findings:
        first = findings[0]
        why = f"content refused by the write checks: {first.message} on line {first.line}"
        if req.soft:
            return _quarantine(ctx, req, answer, why, findings)
        answer.update(message=why + "; send soft=true to quarantine it for review", findings=[f.as_dict() for f in findings])
        return answer

    from commonplace.compiler import claims as c

    store = c.ClaimStore(ctx.root, actor=ctx.actor or "api")
    try:
        entity, planned, project = _resolve(store, req)
    except c.UnknownSubject as exc:
        why = f"could not resolve semantic subject: {req.subject} ({exc.message})"
        if req.soft:
            return _quarantine(ctx, req, answer, why)
        answer.update(message=why + "; " + how_to_resolve(req, list(exc.candidates), ctx.transport,
                                                          getattr(exc, "best", None)),
                      candidates=list(exc.candidates))
        return answer
    except c.AmbiguousSubject as exc:
        why = f"ambiguous semantic subject: {req.subject} ({exc.message})"
        if req.soft:
            return _quarantine(ctx, req, answer, why)
        answer.update(message=why + "; name one exactly (a candidate's id, e.g. person:<slug>), or rerun with "
                              "force_inbox=true for a tentative capture", candidates=list(exc.candidates))
        return answer
    except c.ClaimError as exc:
        raise _claim_error(exc) from None
    answer.update(resolved=True, subject_ref=entity.id, target_path=entity.path, confidence=req.confidence or "high")
    if not req.dry_run and not req.allow_canonical:
        answer["message"] = GATE
        return answer
    try:
        r, extra = _apply(ctx, store, req, entity, planned)
    except (c.ClaimNotFound, c.UnknownSubject) as exc:
        answer.update(message=exc.message)  # Dory: nothing there to change is a rejection, not an error
        return answer
    except c.ClaimError as exc:
        raise _claim_error(exc) from None
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    return _answer(ctx, req, answer, r, extra, project)


def how_to_resolve(req: MemoryWriteRequest, candidates: list[str] | None = None, transport: str = "http",
                   best: str | None = None) -> str:
    """How an unresolved write can succeed (Dory never creates people or core entities):
    send the candidate's id when one is clearly meant (`best`), pick one when several are
    alike (not a second page of the same person), else create the page first, with the
    call the caller can make (the MCP tool, or the HTTP route)."""
    from commonplace.compiler.claims.entities import entity_path

    rest = ("rerun with force_inbox=true for a tentative capture in inbox/semantic/, or soft=true to quarantine "
            "it for review")
    if candidates and best is None and len(candidates) > 1:
        # None is clearly meant: "send subject=<the first>" wrote Tom's allergy on Oma's page
        return (f"if it is one of {', '.join(candidates[:5])}, send its id as subject again; if it is someone "
                f"else, create their page first; or {rest}")
    if candidates:
        first = best if best in candidates else candidates[0]
        family, _, slug = first.partition(":")
        try:
            page = f" (its page is {entity_path(family, slug)})"
        except (KeyError, ValueError):
            page = ""
        more = f", or another candidate: {', '.join(candidates[1:5])}" if len(candidates) > 1 else ""
        return (f"to write about it, send subject={first}{page} again{more}; if it is someone else, create "
                f"their page first; or {rest}")
    slug = _entity_slug(req.subject.split(":", 1)[-1]) or "<slug>"
    page = {"person": f"{entity_path('person', slug)} (frontmatter type: person)",
            "core": f"{entity_path('core', slug)} (type: core)"}
    create = page.get(req.scope or "", f"the page, e.g. {entity_path('person', slug)} for a person")
    how = ("the dory_write tool (kind: create, target: the page, frontmatter with its type)" if transport == "mcp"
           else "POST /v1/write (kind=create)")
    other = "" if req.scope in ("person", "core") else (
        "; or send scope=project, concept or decision, which creates that entity")
    return (f"to record it, create {create} first with {how} and send this write "
            f"again with allow_canonical=true; or {rest}{other}")


def _entity_slug(name: str) -> str:
    """The slug the claim store gives `name` (`claims.entities.slugify`: Unicode letters
    kept, `Søren Ødegård` -> `søren-ødegård`), so the page a rejection says to create is
    the one the next write resolves to; '' when nothing is left of it."""
    from commonplace.compiler.claims import ClaimError
    from commonplace.compiler.claims.entities import slugify

    try:
        return slugify(name)
    except ClaimError:
        return ""


def _resolve(store: Any, req: MemoryWriteRequest) -> tuple[Any, str, Any]:
    """(entity, the subject to record against, the project a decision is about or None).
    Scope narrows the search to a family; an unknown project, concept or decision subject
    is planned as a new entity (Dory); a `decision` claim goes to a decision entity."""
    from commonplace.compiler import claims as c

    subject = req.subject.strip()
    has_family = ":" in subject and subject.split(":", 1)[0].strip().lower() in (
        "person", "people", "project", "projects", "concept", "concepts", "decision", "decisions", "core")
    scope = req.scope
    try:
        entity = store.resolve(f"{scope}:{subject}" if scope and not has_family else subject)
    except c.AmbiguousSubject as exc:
        # A `kind: decision` write about a project creates `decisions/<slug>.md` under the
        # project's own name; that page must not make the name ambiguous for the next write
        # about the project (a fact, or another decision, which routes there again).
        others = [h for h in exc.candidates if not h.startswith("decision:")]
        if len(others) != 1 or len(others) == len(exc.candidates):
            raise
        entity = store.resolve(others[0])
    except c.UnknownSubject:
        if scope in ("project", "concept", "decision") and not has_family:
            entity = store.resolve(f"{scope}:{subject}", create=True)
        elif scope and not has_family:
            entity = store.resolve(subject)  # the family may be named differently: try everything
        else:
            raise
    project = None
    if req.kind == "decision" and entity.family != "decision":
        project = entity if entity.family == "project" and entity.exists else None
        entity = store.resolve(f"decision:{_slug(subject.split(':', 1)[-1]) or entity.slug}", create=True)
    planned = entity.id if entity.exists else f"{entity.family}:{entity.title}"
    return entity, planned, project


def _fields(req: MemoryWriteRequest, entity: Any) -> dict[str, Any]:
    """Dory's evidence-artifact fields, next to commonplace's."""
    return {"action": req.action, "subject": req.subject, "entity_id": entity.id, "status": "done",
            "canonical": False, "temperature": "cold", "origin_surface": req.source or "semantic-write",
            "canonical_target": entity.path}


def _patch(req: MemoryWriteRequest, entity: Any, loose: bool = False) -> Any:
    """Dory's section patch on replace: the page's own `## <section>` prose (and Summary)
    is rewritten to the new statement so it no longer contradicts it; a page without the
    section has the sentences the statement restates rewritten (`claims/prose.py`). With
    `loose` (no claim of the kind says what the statement changes: the prose may), the
    one sentence the statement restates clearly best is rewritten too."""
    from commonplace.compiler.claims.prose import rewrite_restated, rewrite_section

    names = [primary_section(entity.family, req.kind, entity.path)]
    if entity.family in ("project", "concept", "person"):
        names.append("Summary")

    # The prose of the statement, without any headings it came wrapped in ("# Rooster\n## Current State\n...").
    prose = " ".join(line.strip() for line in req.content.splitlines()
                     if line.strip() and not line.lstrip().startswith("#")) or req.content

    def by_section(text: str) -> str:
        for name in names:
            text = rewrite_section(text, name, prose, entity.path)
        return text

    def by_sentence(text: str) -> str:
        return rewrite_restated(text, prose, entity.path, _name_words(entity) if loose else None)

    def edit(text: str) -> str:
        # A new state is the section's whole content (Dory); a changed fact or preference
        # is one sentence and the rest of the section still holds, so the sentence it
        # restates is rewritten, and the section only when no sentence restates it.
        for step in (by_section, by_sentence) if req.kind == "state" else (by_sentence, by_section):
            done = step(text)
            if done != text:
                return done
        return text

    return edit


def _name_words(entity: Any) -> frozenset[str]:
    """The words of an entity's name, and the pronouns a page's prose says it with: every
    statement about it has them ("She wants feedback by Tuesday")."""
    return frozenset(entity.id.split(":", 1)[-1].casefold().split("-")) | _PRONOUNS


_PRONOUNS = frozenset("she he they her his him their them it its".split())


def _prose_restates(ctx: OpContext, req: MemoryWriteRequest, entity: Any) -> bool:
    """The page's hand-written prose holds the fact a `replace` changes (not a state:
    that is the section's whole content). Then the replace is of that sentence, and no
    claim that says something else is retired (Dory retires every claim of the kind)."""
    from commonplace.compiler.claims import ClaimError
    from commonplace.compiler.claims.prose import rewrite_restated

    if req.kind == "state" or req.claim:
        return False
    try:
        text = (Path(ctx.root) / entity.path).read_text("utf-8")
        return rewrite_restated(text, req.content, entity.path) != text
    except (OSError, UnicodeError, ValueError, ClaimError):  # the replace itself reports a broken page
        return False


def _apply(ctx: OpContext, store: Any, req: MemoryWriteRequest, entity: Any, planned: str) -> tuple[Any, dict[str, Any]]:
    from commonplace.compiler import claims as c

    common = dict(confidence=req.confidence, reason=req.reason, evidence=req.source, dry_run=req.dry_run,
                  raw_input=req.content, artifact_fields=_fields(req, entity))
    add = partial(store.add, planned, req.content, req.kind, create=True, **common)
    if req.action == "write":
        return add(), {}
    if req.action == "replace":
        removed: list[str] = []  # the page's lines the replace changed (`elsewhere`)
        wrote: list[str] = []  # and what they say now: a value both keep was not changed
        changed = {"removed": removed, "added": wrote}
        edit = tracking(_patch(req, entity), removed, wrote)
        if not entity.exists:
            return add(edit=edit), {}
        try:
            return store.replace(entity.id, req.content, claim=req.claim, kind=req.kind, every=True, edit=edit,
                                 only_restated=_prose_restates(ctx, req, entity), **common), changed
        except c.AmbiguousClaim as exc:
            if req.claim:
                raise
            raise c.ClaimNotFound(exc.message, exc.candidates) from None  # a rejection that lists them
        except (c.ClaimNotFound, c.UnknownSubject):
            if req.claim:
                raise
            before = [x for x in store.current(entity.id) if x.get("kind") == req.kind]
            rewrote: list[bool] = []
            loose = tracking(_patch(req, entity, loose=True), removed, wrote)  # no claim says it: the prose may

            def tracked(text: str) -> str:
                out = loose(text)
                rewrote.append(out != text)
                return out

            r = add(edit=tracked)  # Dory: replacing nothing records the statement
            if r.action == "add":
                r.message += "; " + _replaced_none(req, before, any(rewrote))
            return r, changed
    reason = (req.reason or "").strip() or "semantic forget"
    kinds = None if req.kind == "note" else (req.kind,)
    forget = partial(store.forget, entity.id, reason=reason, dry_run=req.dry_run)
    unmatched = False
    try:
        if req.claim:
            return forget(req.claim), {}
        if req.all:
            return forget(None, all=True), {}
        if req.content.strip():
            try:
                return forget(req.content, all=True, kinds=kinds), {}
            except c.ClaimNotFound:
                # Dory retires every claim of the kind whatever the text says; forgetting
                # "Maya is vegetarian" then erased her handle and her leave. Text that
                # matches no claim of its kind forgets nothing and says what is there.
                # `kind: note` stays Dory's "forget this subject" (every kind, then the page).
                unmatched = kinds is not None
        if not unmatched:
            return forget(None, all=True, kinds=kinds), {}
    except (c.ClaimNotFound, c.UnknownSubject):
        if req.claim or not entity.exists:
            raise
    if unmatched:
        # No claim says it; the page's own prose may: that sentence is what is forgotten.
        from commonplace.compiler.claims.forget import forget_prose

        r = forget_prose(store, entity, req.content, kind=req.kind, reason=reason, ignore=_name_words(entity),
                         dry_run=req.dry_run, artifact_fields=_fields(req, entity))
        if r is not None:
            return r, {}
        raise c.ClaimNotFound(_nothing_matches(store, entity, req, kinds))
    # No claims to forget: Dory forgets the page itself (superseded, <stem>.tombstone.md).
    wr = w.WriteRequest("forget", entity.path, reason=reason, dry_run=req.dry_run, actor=ctx.actor, schema=True)
    res = w.apply_write(ctx.root, wr, ctx.excluded)
    return None, {"write": res}


def _listed(claims: list[dict[str, Any]], most: int = 5) -> str:
    """`id: statement` of the first `most` claims, and how many more there are."""
    listed = "; ".join(f"{x.get('claim_id')}: {x.get('statement')}" for x in claims[:most])
    return listed + (f" (+{len(claims) - most} more)" if len(claims) > most else "")


def _replaced_none(req: MemoryWriteRequest, before: list[dict[str, Any]], rewrote: bool = False) -> str:
    """What a replace that restated no current claim did instead (it added one)."""
    if not before and rewrote:
        return f"there was no {req.kind} claim to replace: the page's own sentence that said it now says this"
    if rewrote:
        return (f"no current {req.kind} claim says what this changes (current ones: {_listed(before)}); the "
                "page's own sentence that said it now says this")
    if not before:
        return (f"there was no current {req.kind} claim to replace, and no sentence of the page's own text "
                "says what this changes")
    return (f"no current {req.kind} claim says what this changes, so none was replaced (current ones: "
            f"{_listed(before)}); send claim=<claim id> (or part of its text) to replace a specific one")


def _nothing_matches(store: Any, entity: Any, req: MemoryWriteRequest, kinds: tuple[str, ...] | None) -> str:
    """What to send instead when a forget's text matches no current claim and no sentence
    of the page: the claims there, the page's sentences closest to it, and only last, as
    the whole-page option it is, all=true (following a hint that led with it erased a
    person's page, allergy and all)."""
    from commonplace.compiler.claims.prose import closest_sentences

    what = f"{req.kind} claim" if kinds else "claim"
    have = [x for x in store.current(entity.id) if kinds is None or x.get("kind") in kinds]
    there = (f"current ones: {_listed(have)}" if have else f"{entity.id} has no current {what}s").rstrip(".")
    said = req.content.strip()
    try:
        text = (Path(store.root) / entity.path).read_text("utf-8")
        near = closest_sentences(text, said, entity.path, _name_words(entity))
    except (OSError, UnicodeError, ValueError, AttributeError):
        near = []
    close = (f"; the closest sentences of {entity.path}: " + "; ".join(repr(x[:200]) for x in near)
             + " (send one's own words as content to take it out)" if near
             else f"; no sentence of {entity.path} says it either")
    every = len(store.current(entity.id))
    claims = f"its {every} claim{'s' if every != 1 else ''} and " if every else ""
    return (f"nothing forgotten: no current {what} of {entity.id} matches {said[:200]!r}{close}; {there}. "
            f"Send claim=<claim id> (or part of its text) to forget one claim. Only to erase everything: "
            f"all=true forgets the whole page, {claims}every sentence of its own text, safety facts included, "
            f"and marks it superseded")


def _answer(ctx: OpContext, req: MemoryWriteRequest, answer: dict[str, Any], r: Any,
            extra: dict[str, Any], project: Any = None) -> dict[str, Any]:
    if r is None:  # the page forgotten by path
        res = extra["write"]
        answer.update(result="preview" if req.dry_run else "forgotten", target_path=res.path,
                      message=f"no current claims to forget; the page {'would be' if req.dry_run else 'is'} "
                              f"marked superseded by {w.tombstone_path(res.path)}")
        if req.dry_run:
            answer["message"] = _preview(answer["target_path"], "would_forget", None) + "; " + answer["message"]
            return answer
        answer["indexed"], note = refresh(ctx.live, res.paths)
        if note:
            answer["message"] += "; " + note
        return answer
    answer["target_path"] = r.target_path
    answer["claim_ids"] = r.claim_ids
    answer["evidence_path"] = r.evidence_path
    if r.warnings:
        answer["warnings"] = r.warnings[:10]
    if req.dry_run:
        verb = "would_forget" if req.action == "forget" else "would_replace" if r.page and r.page.old else "would_create"
        answer.update(result="preview", message=_preview(r.target_path, verb, r.evidence_path))
        d = r.as_dict(preview=True)
        answer["preview"], answer["diff"] = d.get("preview"), d.get("diff")
        return answer
    answer["result"] = {"write": "written", "replace": "replaced", "forget": "forgotten"}[req.action]
    answer["message"] = r.message
    linked = None
    if project is not None and req.action != "forget":
        from commonplace.compiler.claims.related import link_decision

        if link_decision(ctx.root, project.path, r.target_path, r.entity.title):
            linked = project.path
        answer["linked_from"] = project.path  # the project page links the decision
    if r.action == "noop" and not linked:
        answer["indexed"] = True
        return answer
    # The claim store compiled the page; refresh it, the project page that now links it,
    # the evidence file (or tombstones) and any artifact a forget redacted (the claim log
    # itself is not a document). The evidence file is in the site and reachable by a
    # scoped search, but default search leaves it out and status does not count it
    # (compiler/search/read/audit.py): Dory writes it without indexing it.
    paths = [r.target_path, linked, r.evidence_path, getattr(r, "side_tombstone", None), *r.redacted]
    indexed, note = refresh(ctx.live, list(dict.fromkeys(p for p in paths if p)))
    if r.action == "forget":
        purge(ctx.live)
    answer["indexed"] = indexed
    if note:
        answer["message"] += "; " + note
    if extra.get("removed"):  # other pages that still say what this replace changed
        found = still_said(ctx, r.target_path, r.entity.title, extra["removed"], req.content, extra.get("added"))
        if found:
            answer["warnings"] = [*answer.get("warnings", []), *found][:10]
    return answer


def _preview(path: str, verb: str, evidence: str | None) -> str:
    out = (f"CANONICAL TARGET {path}; preview only; use force_inbox=true for tentative notes or "
           f"allow_canonical=true after review. dry_run: {verb}")
    return out + (f"; semantic evidence would be {evidence}" if evidence else "")


def _force_inbox(ctx: OpContext, req: MemoryWriteRequest, answer: dict[str, Any]) -> dict[str, Any]:
    now = dt.datetime.now(dt.timezone.utc)
    target = f"inbox/semantic/{now:%Y-%m-%d-%H%M%S-%f}-{_slug(req.subject)[:80] or 'unknown-subject'}.md"
    meta = {"title": f"Inbox semantic capture for {req.subject}", "type": "capture", "status": "raw",
            "canonical": False, "source_kind": "semantic", "temperature": "cold", "original_action": req.action,
            "original_kind": req.kind, "original_subject": req.subject, "original_scope": req.scope,
            "original_confidence": req.confidence, "original_reason": req.reason, "original_source": req.source,
            "forced_inbox": True}
    wr = w.WriteRequest("create", target, req.content, frontmatter=meta, soft=req.soft, dry_run=req.dry_run,
                        reason=req.reason, actor=ctx.actor, schema=True)
    try:
        res = w.apply_write(ctx.root, wr, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    if res.quarantined:
        answer.update(result="preview" if res.dry_run else "quarantined", quarantined=True, target_path=res.path,
                      message="force_inbox content was quarantined")
    else:
        answer.update(result="preview" if res.dry_run else "written", target_path=res.path,
                      message=f"force_inbox: {res.shown_action}")
    if not res.dry_run:
        answer["indexed"], note = refresh(ctx.live, [res.path])
        if note:
            answer["message"] += "; " + note
    return answer


def _quarantine(ctx: OpContext, req: MemoryWriteRequest, answer: dict[str, Any], why: str,
                findings: list[w.Finding] | None = None) -> dict[str, Any]:
    """Dory's quarantine of an unresolved (or refused) semantic write:
    inbox/quarantine/semantic-<scope>-<subject>-md-<hash>.md, never at the page."""
    requested = f"semantic/{req.scope or 'unknown'}-{_slug(req.subject)[:80] or 'unknown-subject'}.md"
    meta = {"title": f"Semantic quarantine for {req.subject}", "type": "capture", "original_action": req.action,
            "original_kind": req.kind, "original_subject": req.subject, "original_scope": req.scope,
            "original_reason": req.reason, "original_source": req.source}
    wr = w.WriteRequest("append", requested, req.content, frontmatter=meta, dry_run=req.dry_run, soft=True,
                        actor=ctx.actor)
    try:
        res = w.quarantine(ctx.root, wr, findings or [], ctx.excluded, why=why)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    answer.update(quarantined=True, target_path=res.path)
    if res.dry_run:
        answer.update(result="preview", message=f"dry_run: would quarantine unresolved semantic write: {why}")
        return answer
    answer["indexed"], _ = refresh(ctx.live, [res.path])
    answer.update(result="quarantined", message=why)
    return answer
