"""`ClaimStore`: the one entry point for recording and reading claims.

Used by `commonplace claim ...` and by the server's `/v1/memory-write`. Every mutation
runs under the corpus claims lock and does, in order: validate the input, resolve the
subject to one entity, write the evidence artifact (or tombstone), append the events to
the log, recompile the entity's canonical page. `dry_run=True` does everything in memory
and returns the page it would write, touching nothing.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..fsutil import atomic_write, inside
from ..locks import claims_lock
from ..markdown.restate import FLOOR, SHARE, restated_by, same_subject
from . import times
from .canonical import (
    PageChange, compile_page, find_sections, heal_merge_conflict, plan_page, read_page, set_frontmatter_fields,
)
from .entities import CREATABLE, FAMILY_NAMES, Entity, Registry, entity_from_log
from .errors import AmbiguousClaim, ClaimNotFound, InvalidClaim, PageConflict, UnknownSubject
from .evidence import artifact_path, redact_text, side_tombstone, write_artifact, write_tombstone
from .fold import Claim, State, conflict_groups, fold, select_claims
from .forget import redact_artifacts, remaining, secrets_of, with_reports
from .inputs import (
    check_bounds, check_confidence, check_key, check_kind, check_raw, evidence_ref, instant, scan_texts,
)
from .log import ClaimLog, Event, actor_label, new_id
from .text_rules import MAX_REASON, MAX_STATEMENT, check_text, normalize, one_line, shorten


def default_actor() -> str:
    env = os.environ.get("COMMONPLACE_ACTOR")
    if env and env.strip():
        return env
    try:
        return getpass.getuser() or "unknown"
    except Exception:  # no passwd entry (containers)
        return "unknown"


@dataclass
class ClaimWriteResult:
    """What a mutation did (or, with dry_run, would do)."""

    action: str  # add | replace | retire | invalidate | forget | noop
    entity: Entity
    dry_run: bool = False
    claim_ids: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    evidence_path: str | None = None  # artifact, or the tombstone for forget
    page: PageChange | None = None
    created: bool = False  # the entity's page was created
    contradictions: list[dict[str, Any]] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)  # artifacts the forgotten text was cut from
    still_present: list[str] = field(default_factory=list)  # markdown that still holds it (hand-written)
    side_tombstone: str | None = None  # `<stem>.tombstone.md` next to a wholly forgotten page
    warnings: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def target_path(self) -> str:
        return self.entity.path

    @property
    def page_changed(self) -> bool:
        return bool(self.page and self.page.changed)

    def as_dict(self, preview: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "action": self.action,
            "entity": self.entity.id,
            "title": self.entity.title,
            "target_path": self.target_path,
            "dry_run": self.dry_run,
            "created": self.created,
            "claim_ids": self.claim_ids,
            "events": self.events,
            "evidence_path": self.evidence_path,
            "page_changed": self.page_changed,
            "page_summary": self.page.summary() if self.page else None,
            "contradictions": self.contradictions,
            "redacted": self.redacted,
            "still_present": self.still_present,
            "warnings": self.warnings,
            "message": self.message,
        }
        if preview and self.page is not None:
            d["preview"] = self.page.new.decode("utf-8")
            d["diff"] = self.page.diff()
        return d


class ClaimStore:
    """Claims of one corpus.

    `actor` is recorded on every event (and names the log file); `now` replaces the
    clock (tests); `fsync=False` skips fsync on log appends (bulk imports, tests).
    """

    def __init__(self, corpus: Path | str, actor: str | None = None, *, fsync: bool = True,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        self.root = Path(corpus).resolve()
        self.actor = actor_label(actor if actor is not None else default_actor())
        self.log = ClaimLog(self.root, fsync=fsync)
        self._now = now

    # -- reading ----------------------------------------------------------------------------

    def now(self) -> dt.datetime:
        return self._now() if self._now else times.utcnow()

    def registry(self) -> Registry:
        return Registry.load(self.root)

    def load(self, known_at: Any = None, entity: str | None = None) -> State:
        """Fold the log (only events recorded by `known_at`; only `entity`'s claims).

        Claims fold independently, so folding one entity's events gives exactly that
        entity's part of the whole fold, at a fraction of the cost.
        """
        read = self.log.read()
        events = read.events if entity is None else [e for e in read.events if e.data["entity"] == entity]
        state = fold(events, instant(known_at, "known_at") if known_at is not None else None)
        state.warnings = read.warnings + state.warnings
        return state

    def resolve(self, subject: str, *, create: bool = False) -> Entity:
        """The entity `subject` names. Unknown `project:`/`concept:`/`decision:` subjects
        (and `person:`/`core:` with create=True) come back with `exists=False`."""
        return self._resolve(self.registry(), subject, create)

    def current(self, subject: str | None = None) -> list[dict[str, Any]]:
        return self.as_of(subject, self.now())

    def as_of(self, subject: str | None, when: Any, known_at: Any = None) -> list[dict[str, Any]]:
        """Claims holding at `when` (date: end of that day), as dicts, oldest first."""
        t = instant(when, "as_of")
        eid = self.entity_id(subject)
        state = self.load(known_at, eid)
        return [c.as_dict(t, version=v) for c, v in state.at(eid, t)]

    def history(self, subject: str | None = None, claim: str | None = None,
                include_forgotten: bool = False) -> list[dict[str, Any]]:
        """Every claim (any state) with its versions and events. Forgotten text is
        shown as null unless `include_forgotten` (the log keeps it for audits)."""
        eid = self.entity_id(subject)
        state = self.load(entity=eid)
        claims = state.for_entity(eid) if eid else [c for e in state.entities() for c in state.for_entity(e)]
        if claim:
            claims = select_claims(claims, claim, many=True)
        now = self.now()
        return [c.as_dict(now, history=True, include_forgotten=include_forgotten) for c in claims]

    def contradictions(self, subject: str | None = None) -> list[dict[str, Any]]:
        eid = self.entity_id(subject)
        state = self.load(entity=eid)
        now = self.now()
        out = []
        for entity in ([eid] if eid else state.entities()):
            for rule, name, ids in conflict_groups(state.at(entity, now)):
                out.append({"entity": entity, "rule": rule, "name": name, "claim_ids": ids})
        return out

    # -- writing ----------------------------------------------------------------------------

    def add(self, subject: str, statement: str, kind: str = "fact", *, confidence: Any = None,
            valid_from: Any = None, valid_to: Any = None, evidence: Any = None, key: str | None = None,
            reason: str | None = None, actor: str | None = None, create: bool = False,
            dry_run: bool = False, raw_input: str | None = None,
            artifact_fields: dict[str, Any] | None = None,
            edit: Callable[[str], str] | None = None) -> ClaimWriteResult:
        """Record a new claim about `subject`. Repeating a current claim is a no-op.
        `artifact_fields` are added to the evidence artifact's frontmatter."""
        statement = check_text(statement, "statement", MAX_STATEMENT)
        kind = check_kind(kind)
        conf = check_confidence(confidence)
        vf, vt = check_bounds(valid_from, valid_to)
        key = check_key(key)
        reason = check_text(reason, "reason", MAX_REASON, required=False)
        raw = check_raw(raw_input)
        scan_texts(statement=statement, reason=reason, key=key, raw_input=raw, subject=subject,
              evidence=evidence if isinstance(evidence, str) else None)
        actor = actor_label(actor) if actor is not None else self.actor
        with claims_lock(self.root):
            reg = self.registry()
            entity = self._resolve(reg, subject, create)
            ev_dict, warnings = evidence_ref(self.root, evidence)
            warnings += self._check_page(entity)
            state = self._entity_state(entity)
            now = self.now()
            for c, v in state.at(entity.id, now):
                if v.kind == kind and normalize(v.statement) == normalize(statement) and (v.key or None) == key:
                    return ClaimWriteResult("noop", entity, dry_run, [c.claim_id], warnings=warnings,
                                       message=f"{entity.id} already has this {kind} claim ({c.claim_id}); nothing recorded")
            at = self._clock(None)
            event = _event(entity, new_id("c"), "added", at, actor, kind=kind, statement=statement,
                           valid_from=vf, valid_to=vt, confidence=conf, evidence=ev_dict, reason=reason)
            if key:
                event["key"] = key
            if not entity.exists:
                event["entity_title"] = one_line(entity.title)
            return self._commit(entity, [event], state, "add", at, kind=kind, reason=reason,
                                raw_input=raw if raw is not None else statement, evidence=ev_dict,
                                dry_run=dry_run, warnings=warnings, artifact_fields=artifact_fields, edit=edit)

    def replace(self, subject: str, statement: str, *, claim: str | None = None, kind: str | None = None,
                key: str | None = None, confidence: Any = None, valid_from: Any = None, valid_to: Any = None,
                evidence: Any = None, reason: str | None = None, actor: str | None = None,
                dry_run: bool = False, raw_input: str | None = None, every: bool = False,
                artifact_fields: dict[str, Any] | None = None,
                edit: Callable[[str], str] | None = None, only_restated: bool = False) -> ClaimWriteResult:
        """Give an existing claim a new statement (its old one goes to the history).

        `claim` names it (id, whole statement, or a unique part of it). Without `claim`,
        the entity's single current claim of `kind` (and `key`) is replaced; with `every`
        (a single claim: only a state whatever the statement says, another kind when the
        statement restates it)
        (Dory's replace), the one of several the statement restates (`restated_by`: the
        clearly best match; never every claim of the kind, nor the oldest; a `state`
        replaces the states about the same thing, `_restated`): ClaimNotFound when it
        restates none of them, AmbiguousClaim when it fits several equally. With
        `only_restated` (the page's prose holds the fact) even a single claim is replaced
        only when the statement restates it well. `edit` changes the page's hand-written
        text before it is compiled.
        """
        statement = check_text(statement, "statement", MAX_STATEMENT)
        kind = check_kind(kind) if kind is not None else None
        conf = check_confidence(confidence)
        vf, vt = check_bounds(valid_from, valid_to)
        key = check_key(key)
        reason = check_text(reason, "reason", MAX_REASON, required=False)
        raw = check_raw(raw_input)
        scan_texts(statement=statement, reason=reason, key=key, raw_input=raw,
              evidence=evidence if isinstance(evidence, str) else None)
        actor = actor_label(actor) if actor is not None else self.actor
        with claims_lock(self.root):
            entity = self._resolve_known(subject)
            ev_dict, warnings = evidence_ref(self.root, evidence)
            warnings += self._check_page(entity)
            state = self._entity_state(entity)
            now = self.now()
            active = [c for c in state.for_entity(entity.id) if c.status == "active" and not c.forgotten]
            others: list[Claim] = []
            if every and not (claim and claim.strip()) and kind is not None:
                same = [c for c in active if c.kind == kind and (key is None or (c.key or "").casefold() == key.casefold())]
                # A single state is the entity's state, replaced by the new one (Dory); a
                # single fact or preference only by a statement about it: Dory's rule had
                # "wants feedback by Monday" erase "prefers colour-blind-safe palettes".
                if len(same) > 1 or same and (only_restated or kind != "state"):
                    same = self._restated(entity, same, kind, statement, strict=only_restated)
                    others = same[1:]
                active = same[:1] or active
            target = self._pick_one(entity, active, claim, kind, key, now, "replace")
            last = target.last
            new_kind = kind or last.kind
            if (normalize(statement) == normalize(last.statement) and new_kind == last.kind and not others
                    and (conf is None or conf == last.confidence) and vf is None and vt is None
                    and (key is None or key == last.key) and ev_dict is None):
                return ClaimWriteResult("noop", entity, dry_run, [target.claim_id], warnings=warnings,
                                   message=f"{target.claim_id} already says that; nothing recorded")
            at = self._clock(target.updated_at)
            event = _event(entity, target.claim_id, "replaced", at, actor, kind=new_kind, statement=statement,
                           valid_from=vf, valid_to=vt, confidence=conf, evidence=ev_dict, reason=reason)
            if key is not None:
                event["key"] = key
            retired = [_event(entity, c.claim_id, "retired", at, actor, kind=c.kind,
                              reason=f"replaced by {target.claim_id}") for c in others]
            return self._commit(entity, [event, *retired], state, "replace", at, kind=new_kind, reason=reason,
                                raw_input=raw if raw is not None else statement, evidence=ev_dict,
                                dry_run=dry_run, warnings=warnings, artifact_fields=artifact_fields, edit=edit)

    def retire(self, subject: str, claim: str, *, reason: str, valid_to: Any = None,
               actor: str | None = None, dry_run: bool = False) -> ClaimWriteResult:
        """The claim held but no longer does (as of `valid_to`, default now). Kept in history."""
        return self._close("retired", subject, claim, reason, valid_to, actor, dry_run)

    def invalidate(self, subject: str, claim: str, *, reason: str, actor: str | None = None,
                   dry_run: bool = False) -> ClaimWriteResult:
        """The claim was never true: it leaves every view, past ones included."""
        return self._close("invalidated", subject, claim, reason, None, actor, dry_run)

    def forget(self, subject: str, statement: str | None = None, *, reason: str, all: bool = False,
               actor: str | None = None, dry_run: bool = False,
               kinds: tuple[str, ...] | None = None) -> ClaimWriteResult:
        """Forget claims for good: matching ones (a claim id, the statement, or a unique part
        of it; every match with `all`), or every claim of the entity (`all` alone).

        Writes a tombstone with the reason, appends retire events marked forgotten,
        recompiles the page without the text, redacts it from evidence artifacts, and,
        when the whole entity is forgotten, marks its page superseded by
        `<stem>.tombstone.md` (Dory's shape). `kinds` limits an `all` forget to those kinds.
        """
        reason = check_text(reason, "reason", MAX_REASON)
        scan_texts(reason=reason)
        pattern = check_text(statement, "statement", MAX_STATEMENT, required=False)
        if pattern is None and not all:
            raise InvalidClaim("say what to forget: a statement or claim id, or all of the entity's claims")
        actor = actor_label(actor) if actor is not None else self.actor
        with claims_lock(self.root):
            entity = self._resolve_known(subject)
            state = self._entity_state(entity)
            everything = [c for c in state.for_entity(entity.id) if not c.forgotten]
            pool = [c for c in everything if kinds is None or c.kind in kinds]
            if not pool:
                raise ClaimNotFound(f"{entity.id} has no claims to forget")
            if pattern is not None:
                targets = select_claims(pool, pattern, many=all)
            else:
                targets = pool
            if not targets:
                raise ClaimNotFound(f"{entity.id} has no claims to forget")
            whole = pattern is None and {c.claim_id for c in targets} == {c.claim_id for c in everything}
            secrets = secrets_of(targets) + ([pattern] if pattern and len(pattern) >= 3 else [])
            safe_reason = redact_text(reason, secrets)
            at = self._clock(max(c.updated_at for c in targets))
            events = [_event(entity, c.claim_id, "retired", at, actor, kind=c.kind, reason=safe_reason) for c in targets]
            for e in events:
                e["forgotten"] = True
            ids = [c.claim_id for c in targets]
            result = ClaimWriteResult("forget", entity, dry_run, ids, events)
            if dry_run:
                for e in events:
                    e["source"] = artifact_path(entity, at, "forget")
                state.extend(_as_event(e) for e in events)
                result.page = plan_page(self.root, entity, state.for_entity(entity.id), self.now())
                result.evidence_path = events[0]["source"]
                result.message = f"would forget {len(ids)} claim{'s' if len(ids) != 1 else ''} of {_label(entity)}"
                return result
            tomb = write_tombstone(
                self.root, entity, at, actor=actor, reason=safe_reason, whole_entity=whole,
                claims=[{"claim_id": c.claim_id, "kind": c.kind, "recorded": c.events[0].data["at"],
                         "actor": c.events[0].actor} for c in targets],
                event_ids=[e["id"] for e in events],
            )
            for e in events:
                e["source"] = tomb
            files = self.log.append_many(events)
            state.extend(_as_event(e, f) for e, f in zip(events, files))
            if entity.exists or any(not c.forgotten for c in state.for_entity(entity.id)):
                result.page = compile_page(self.root, entity, state.for_entity(entity.id), self.now())
            if whole and result.page is not None:
                self._mark_superseded(entity, tomb, safe_reason, at, result)
            forgotten = [state.claims[i] for i in ids]
            result.evidence_path = tomb
            result.redacted = redact_artifacts(self.root, forgotten, full_scan=True)
            still = [p for p in remaining(self.root, secrets_of(targets)) if p != tomb]
            result.still_present, result.redacted = with_reports(self.root, still, secrets_of(targets), tomb, result.redacted)
            if result.still_present:
                result.warnings.append(
                    "the forgotten text still appears in files written by hand or in other claims: "
                    + ", ".join(result.still_present[:20]) + " (edit them, or forget those claims too)")
            result.message = (f"forgot {len(ids)} claim{'s' if len(ids) != 1 else ''} of {_label(entity)}; "
                              f"tombstone {tomb}")
            return result

    def compile(self, subject: str | None = None) -> list[PageChange]:
        """Recompile canonical pages from the log (all entities with claims, or one)."""
        from .stage import run_stage

        if subject is None:
            res = run_stage(self.root, now=self.now())
            return res.changes
        with claims_lock(self.root):
            entity = self._resolve_known(subject)
            state = self.load(entity=entity.id)
            return [compile_page(self.root, entity, state.for_entity(entity.id), self.now())]

    # -- internals ----------------------------------------------------------------------------

    def _close(self, event_name: str, subject: str, claim: str, reason: str, valid_to: Any,
               actor: str | None, dry_run: bool) -> ClaimWriteResult:
        reason = check_text(reason, "reason", MAX_REASON)
        scan_texts(reason=reason)
        if not isinstance(claim, str) or not claim.strip():
            raise InvalidClaim("say which claim: its id, its statement, or a unique part of it")
        _, vt = check_bounds(None, valid_to)
        actor = actor_label(actor) if actor is not None else self.actor
        action = "retire" if event_name == "retired" else "invalidate"
        with claims_lock(self.root):
            entity = self._resolve_known(subject)
            warnings = self._check_page(entity)
            state = self._entity_state(entity)
            if event_name == "retired":
                pool = [c for c in state.for_entity(entity.id) if c.status == "active" and not c.forgotten]
            else:
                pool = [c for c in state.for_entity(entity.id) if c.status != "invalidated" and not c.forgotten]
            if not pool:
                raise ClaimNotFound(f"{entity.id} has no claims that can be {event_name}")
            targets = select_claims(pool, claim)
            at = self._clock(max(c.updated_at for c in targets))
            events = [_event(entity, c.claim_id, event_name, at, actor, kind=c.kind, reason=reason, valid_to=vt)
                      for c in targets]
            return self._commit(entity, events, state, action, at, kind=targets[0].kind, reason=reason,
                                raw_input=None, evidence=None, dry_run=dry_run, warnings=warnings)

    def _commit(self, entity: Entity, events: list[dict[str, Any]], state: State, action: str,
                at: dt.datetime, *, kind: str | None, reason: str | None, raw_input: str | None,
                evidence: dict | None, dry_run: bool, warnings: list[str],
                artifact_fields: dict[str, Any] | None = None,
                edit: Callable[[str], str] | None = None) -> ClaimWriteResult:
        """Write the artifact, append the events, recompile the page (or preview all that).

        `state` is the fold of the log as read under the lock; it is extended in place.
        """
        ids = list(dict.fromkeys(e["claim_id"] for e in events))
        result = ClaimWriteResult(action, entity, dry_run, ids, events, created=not entity.exists, warnings=warnings)
        if dry_run:
            for e in events:
                e["source"] = artifact_path(entity, at, action)
            result.evidence_path = events[0]["source"]
            state.extend(_as_event(e) for e in events)
            result.page = plan_page(self.root, entity, state.for_entity(entity.id), self.now(), edit=edit)
        else:
            source = write_artifact(
                self.root, entity, action, at, actor=events[0]["actor"], kind=kind, reason=reason,
                claim_ids=ids, event_ids=[e["id"] for e in events], raw_input=raw_input, evidence=evidence,
                extra=artifact_fields,
            )
            for e in events:
                e["source"] = source
            result.evidence_path = source
            files = self.log.append_many(events)
            state.extend(_as_event(e, f) for e, f in zip(events, files))
            result.page = compile_page(self.root, entity, state.for_entity(entity.id), self.now(), edit=edit)
        for rule, name, group in conflict_groups(state.at(entity.id, self.now())):
            if set(group) & set(ids):
                result.contradictions.append({"rule": rule, "name": name, "claim_ids": group})
                others = [g for g in group if g not in ids]
                result.warnings.append(f"contradicts {', '.join(others)} ({'kind state' if rule == 'kind' else 'key ' + name}); "
                                       "flagged on the page — use replace or retire to settle it")
        verb = {"add": "added", "replace": "replaced", "retire": "retired", "invalidate": "invalidated"}[action]
        what = f"{kind} claim" if action == "add" else "claim"
        result.message = f"{'would have ' if dry_run else ''}{verb} {what} {', '.join(ids)} of {_label(entity)}"
        return result

    def _mark_superseded(self, entity: Entity, tomb: str, reason: str, at: dt.datetime,
                         result: ClaimWriteResult) -> None:
        """Dory's forget of a whole entity: the page stays, marked superseded by
        `<stem>.tombstone.md` next to it, which gives the reason and points at the claim
        tombstone (never at the forgotten text)."""
        full = inside(self.root, entity.path)
        old = read_page(self.root, entity.path)
        if old is None:
            return
        folder, _, name = entity.path.rpartition("/")
        stem = name[:-3]
        side = f"{folder}/{stem}.tombstone.md"
        text = old.decode("utf-8")
        new = set_frontmatter_fields(text, {"status": "superseded", "superseded_by": f"{stem}.tombstone.md",
                                            "canonical": False, "source_kind": "generated", "temperature": "cold"})
        if new == text:
            if "status: superseded" not in text:
                result.warnings.append(f"could not mark {entity.path} superseded (its frontmatter does not parse)")
            return
        atomic_write(inside(self.root, side), side_tombstone(entity, stem, reason, tomb, at).encode("utf-8"))
        atomic_write(full, new.encode("utf-8"))
        assert result.page is not None
        result.page = PageChange(entity.path, result.page.old, new.encode("utf-8"))
        result.side_tombstone = side

    def _clock(self, after: dt.datetime | None) -> dt.datetime:
        t = self.now()
        if after is not None and t <= after:
            t = after + dt.timedelta(microseconds=1)  # keep event order even if clocks disagree
        return t

    def _resolve(self, reg: Registry, subject: str, create: bool) -> Entity:
        try:
            return reg.resolve(subject)
        except UnknownSubject:
            s = one_line(subject) if isinstance(subject, str) else ""
            prefix = s.split(":", 1)[0].strip().lower() if ":" in s else ""
            family = FAMILY_NAMES.get(prefix)
            if family and (family in CREATABLE or create):
                return reg.plan(s)
            raise

    def _resolve_known(self, subject: str) -> Entity:
        """An entity that exists, or whose page is gone but whose claims are in the log."""
        try:
            entity = self._resolve(self.registry(), subject, False)
        except UnknownSubject:
            s = one_line(subject) if isinstance(subject, str) else ""
            events = [e for e in self.log.read().events if e.data["entity"] == s]
            if not events:
                raise
            return entity_from_log(Registry(self.root), s, events)
        if not entity.exists and not any(e.data["entity"] == entity.id for e in self.log.read().events):
            raise UnknownSubject(f"no entity {entity.id} yet; add a claim to create it")
        return entity

    def entity_id(self, subject: str | None) -> str | None:
        """The entity id `subject` names; an id whose page is gone still works if it has claims."""
        if subject is None:
            return None
        try:
            return self.resolve(subject).id
        except UnknownSubject:
            # Claims may outlive their page (or the page was never written): exact ids still work.
            s = one_line(subject)
            if self.load(entity=s).for_entity(s):
                return s
            raise

    def _entity_state(self, entity: Entity) -> State:
        read = self.log.read()
        return fold([e for e in read.events if e.data["entity"] == entity.id])

    def _check_page(self, entity: Entity) -> list[str]:
        """Refuse before writing anything if the page cannot be compiled safely."""
        data = read_page(self.root, entity.path)
        if data is None:
            return []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PageConflict(f"{entity.path} is not valid UTF-8 (byte {exc.start}); fix it first") from None
        text = heal_merge_conflict(text, entity.path) or text
        find_sections(text, entity.path)
        if re.search(r"(?m)^status:\s*['\"]?superseded", text.split("\n---", 1)[0] if text.startswith("---") else ""):
            return [f"{entity.path} is marked superseded; change its status if {entity.id} is current again"]
        return []

    def _restated(self, entity: Entity, same: list[Claim], kind: str, statement: str,
                  strict: bool) -> list[Claim]:
        """The claim of `same` that `statement` restates with a change: moving the
        reconciliation job to 03:30 changes "runs nightly at 02:00", not the launch deadline.
        A new `state` that restates none replaces the states about the same thing
        (`same_subject`: the ones it would contradict; "Rooster is paused" replaces "Rooster
        is active"), the first of them, the others retired by it."""
        name = frozenset(entity.id.split(":", 1)[-1].casefold().split("-"))
        hit, tied = restated_by(statement, [c.last.statement for c in same], name, floor=SHARE if strict else FLOOR)
        if hit is not None:
            return [same[hit]]
        if not tied and kind == "state" and not strict:
            about = [c for c in same if same_subject(c.last.statement, statement, name)]
            if about:
                return about
        if tied:
            listed = "; ".join(f"{same[i].claim_id}: {shorten(same[i].last.statement, 120)}" for i in tied[:5])
            raise AmbiguousClaim(f"the statement could restate any of {len(tied)} current {kind} claims of "
                                 f"{entity.id} ({listed}); nothing changed: send claim=<claim id> (or part of "
                                 f"its text) to replace one", [same[i].claim_id for i in tied])
        raise ClaimNotFound(f"no current {kind} claim of {entity.id} says what the statement changes")

    def _pick_one(self, entity: Entity, active: list[Claim], claim: str | None, kind: str | None,
                  key: str | None, now: dt.datetime, verb: str) -> Claim:
        if claim is not None and claim.strip():
            hits = select_claims(active, claim)
            if len(hits) > 1:
                raise AmbiguousClaim(f"{len(hits)} claims match; give the claim id: "
                                     + ", ".join(c.claim_id for c in hits), [c.claim_id for c in hits])
            return hits[0]
        if kind is None:
            raise InvalidClaim(f"say which claim to {verb}: its id or statement, or a kind with exactly one current claim")
        pool = [c for c in active if c.kind == kind and (key is None or (c.key or "").casefold() == key.casefold())]
        live = [c for c in pool if c.version_at(now) is not None] or pool
        if len(live) == 1:
            return live[0]
        what = f"{kind} claims" + (f" with key {key}" if key else "")
        if not live:
            raise ClaimNotFound(f"{entity.id} has no active {what} to {verb}; use add")
        raise AmbiguousClaim(f"{entity.id} has {len(live)} active {what}; name one: "
                             + "; ".join(f"{c.claim_id}: {c.statement[:60]}" for c in live), [c.claim_id for c in live])


def _label(entity: Entity) -> str:
    title = one_line(entity.title)[:80]
    return entity.id if title.casefold() in (entity.slug.casefold(), "") else f"{entity.id} ({title})"


def _event(entity: Entity, claim_id: str, event: str, at: dt.datetime, actor: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": new_id("e"),
        "claim_id": claim_id,
        "entity": entity.id,
        "kind": fields.get("kind"),
        "statement": fields.get("statement"),
        "event": event,
        "valid_from": fields.get("valid_from"),
        "valid_to": fields.get("valid_to"),
        "confidence": fields.get("confidence"),
        "evidence": fields.get("evidence"),
        "reason": fields.get("reason"),
        "actor": actor,
        "at": times.format_at(at),
    }


def _as_event(data: dict[str, Any], path: str = "(dry run)") -> Event:
    return Event(dict(data), path, 0, times.parse_at(data["at"]))
