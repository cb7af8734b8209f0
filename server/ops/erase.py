"""Erasing a claim or an entity (`/v1/purge` with `target` = `claim:<id>` or an entity id
such as `person:alex`): the text leaves the claim log itself, every page and artifact
that held it, and derived state (site, indexes, caches). `forget` keeps history; this
does not (compiler/sessions/erase.py says what stays: ids, times, actors, no text).

Like a file purge: a dry run by default, a live one needs `reason` and, because claims
are canonical memory, `allow_canonical`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from commonplace.compiler import writes as w
from commonplace.compiler.fsutil import fsync_dir
from commonplace.compiler.sessions import erase as er

from ..errors import ApiError
from ..models import PurgeRequest
from . import OpContext
from .refresh import purge as purge_derived
from .refresh import refresh

FAMILIES = ("person", "project", "concept", "decision", "core")


def is_claim_target(target: str) -> bool:
    head = target.split(":", 1)[0].strip().lower()
    return ":" in target and (head == "claim" or head in FAMILIES)


def _refuse(message: str, code: str = "invalid_request") -> ApiError:
    return ApiError(400, code, message, detail={"code": "dory_validation_error", "message": message,
                                                "type": "validation"})


def _select(ctx: OpContext, target: str) -> tuple[Any, list[Any], Any]:
    """(store, claims to erase, entity or None for one claim)."""
    from commonplace.compiler import claims as c

    store = c.ClaimStore(ctx.root, actor=ctx.actor or "api")
    state = store.load()
    head, _, rest = target.partition(":")
    if head.strip().lower() == "claim":
        claim = state.claims.get(rest.strip())
        if claim is None:
            raise ApiError(404, "not_found", f"no claim {rest.strip()}")
        return store, [claim], None
    try:
        entity = store.resolve(target)
    except c.ClaimError as exc:
        raise ApiError(404, "not_found", exc.message) from None
    return store, list(state.for_entity(entity.id)), entity


def erase(ctx: OpContext, req: PurgeRequest) -> dict[str, Any]:
    from commonplace.compiler.claims.forget import remaining, secrets_of
    from commonplace.compiler.claims.log import ClaimLog

    target = req.target.strip()
    store, claims, entity = _select(ctx, target)
    secrets = secrets_of(claims)
    page = entity.path if entity is not None and (ctx.root / entity.path).is_file() else None
    answer: dict[str, Any] = {"path": target, "action": "would_purge" if req.dry_run else "purged", "paths": [],
                              "bytes_deleted": 0, "hash": None, "indexed": False, "dry_run": req.dry_run,
                              "claims": [c.claim_id for c in claims], "erased": False}
    if req.dry_run:
        answer["paths"] = [page] if page else []
        answer["message"] = (f"would erase {len(claims)} claim(s) from the claim log and every page and artifact "
                             f"holding their text" + (f", and delete {page}" if page else ""))
        return answer
    if not req.allow_canonical:
        raise _refuse("erasing claims changes canonical memory; send allow_canonical=true", "protected")
    if not (req.reason or "").strip():
        raise _refuse("live purge requires a reason")
    changed: list[str] = []
    with w.write_lock(ctx.root):
        live_claims = [c for c in claims if not c.forgotten]
        if live_claims:
            subject = claims[0].entity
            if entity is not None:
                r = store.forget(subject, None, reason=req.reason, all=True)
            else:
                r = store.forget(subject, live_claims[0].claim_id, reason=req.reason)
            changed += [p for p in (r.target_path, r.evidence_path, getattr(r, "side_tombstone", None), *r.redacted) if p]
        logs = er.rewrite_log(ctx.root, [c.claim_id for c in claims])
        at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        ClaimLog(ctx.root).append_many(er.erased_events(claims, ctx.actor or "api", at))
        if page is not None:
            for rel in (page, w.tombstone_path(page)):
                full = ctx.root / rel
                if full.is_file():
                    answer["bytes_deleted"] += full.stat().st_size
                    full.unlink()
                    fsync_dir(full.parent)
                    changed.append(rel)
        out = ctx.out if ctx.out is not None else None
        changed += er.redact_blobs(ctx.root, secrets)  # compacted originals first: their gists go with them
        left = [p for p in remaining(ctx.root, secrets, out) if p not in (page,)]
        changed += er.redact_files(ctx.root, left, secrets)
    paths = sorted(set(changed))
    answer.update(paths=paths, claim_logs=logs, erased=True)
    docs = [p for p in paths if not p.endswith(".blob")]  # blobs are no documents: nothing derived to refresh
    indexed, note = refresh(ctx.live, docs) if docs else (True, None)
    purge_derived(ctx.live)
    answer["indexed"] = indexed
    if note:
        answer["message"] = note
    return answer
