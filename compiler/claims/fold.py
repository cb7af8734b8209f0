"""Folding the event log into claims: current state, `as_of` views and history.

A claim is a lineage identified by `claim_id`:

- `added` starts it with a first version (statement, kind, confidence, validity);
- `replaced` adds a new version; the previous version stops holding when the new one
  starts (its `valid_from`, else the event time);
- `retired` ends it: it held until the retire event's `valid_to` (else the event time)
  and stays in the history;
- `invalidated` says it was never true: it drops out of every view, past ones included
  (unless `known_at` is before the invalidation);
- a `retired` event with `"forgotten": true` is a forget: the claim leaves every view
  and its text is never compiled into a page again (the log keeps it).

Validity: a version holds from `valid_from` (else its event time) until `valid_to`
(exclusive for datetimes, inclusive for dates) or until the next version starts,
whichever is first. `as_of(t)` shows, for each claim, the latest version holding at
`t`. `known_at` folds only the events recorded by then ("what did we believe then").

Contradictions (flagged on pages, never resolved automatically): two claims holding at
the same time about the same entity contradict when their normalized statements differ
and either both are of kind `state` and about the same thing (an entity has one state of
each thing at a time: "CI runs on GitHub Actions" and "CI runs on Buildkite", not "PR #212
waits for review"; `markdown.restate.same_subject`) or both carry the same `key` (an
optional attribute name such as `location` or `role`). Different facts about one entity
do not contradict each other.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..markdown.restate import same_subject
from ..model import Warning_
from . import times
from .log import Event
from .text_rules import normalize

CURRENT, UPCOMING, ENDED, RETIRED, INVALIDATED, FORGOTTEN = (
    "current", "upcoming", "ended", "retired", "invalidated", "forgotten",
)


@dataclass
class Version:
    event: Event  # the added/replaced event that created it
    statement: str
    kind: str
    key: str | None
    confidence: Any
    valid_from: str | None
    valid_to: str | None
    start: dt.datetime = field(init=False)
    end: dt.datetime | None = None  # effective, exclusive; None = open

    def __post_init__(self) -> None:
        self.start = times.bound_start(self.valid_from) or self.event.at

    def holds_at(self, t: dt.datetime) -> bool:
        return self.start <= t and (self.end is None or t < self.end)

    def as_dict(self, redact: bool = False) -> dict[str, Any]:
        ev = self.event
        return {
            "statement": None if redact else self.statement,
            "kind": self.kind,
            "key": self.key,
            "confidence": self.confidence,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "effective_from": times.format_at(self.start),
            "effective_to": times.format_at(self.end) if self.end else None,
            "event_id": ev.id,
            "event": ev.event,
            "at": ev.data["at"],
            "actor": ev.actor,
            "evidence": ev.evidence,
            "source": ev.source,
            "reason": None if redact else ev.reason,
        }


@dataclass
class Claim:
    claim_id: str
    entity: str
    versions: list[Version] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    status: str = "active"  # active | retired | invalidated
    forgotten: bool = False
    closed_by: Event | None = None  # the retire/invalidate event, if any
    forgotten_by: Event | None = None
    retire_end: dt.datetime | None = None

    @property
    def last(self) -> Version:
        return self.versions[-1]

    @property
    def kind(self) -> str:
        return self.last.kind

    @property
    def key(self) -> str | None:
        return self.last.key

    @property
    def statement(self) -> str:
        return self.last.statement

    @property
    def created_at(self) -> dt.datetime:
        return self.events[0].at

    @property
    def updated_at(self) -> dt.datetime:
        return self.events[-1].at

    @property
    def statements(self) -> list[str]:
        """Every text this claim ever had (what a forget must purge)."""
        out: list[str] = []
        for v in self.versions:
            if v.statement not in out:
                out.append(v.statement)
        return out

    def version_at(self, t: dt.datetime) -> Version | None:
        if self.forgotten or self.status == INVALIDATED:
            return None
        for v in reversed(self.versions):
            if v.holds_at(t):
                return v
        return None

    def state_at(self, now: dt.datetime) -> str:
        if self.forgotten:
            return FORGOTTEN
        if self.status == INVALIDATED:
            return INVALIDATED
        if self.version_at(now) is not None:
            return CURRENT
        if self.status == RETIRED:
            return RETIRED
        if self.last.start > now:
            return UPCOMING
        return ENDED

    def _finish(self) -> None:
        """Effective windows: each version ends at its valid_to, the next start, or retirement."""
        for i, v in enumerate(self.versions):
            end = times.bound_end(v.valid_to)
            if i + 1 < len(self.versions):
                nxt = self.versions[i + 1].start
                end = nxt if end is None else min(end, nxt)
            elif self.status == RETIRED and self.retire_end is not None:
                end = self.retire_end if end is None else min(end, self.retire_end)
            v.end = end

    def as_dict(self, now: dt.datetime, *, history: bool = False, include_forgotten: bool = False,
                version: Version | None = None) -> dict[str, Any]:
        redact = self.forgotten and not include_forgotten
        v = version or self.last
        d: dict[str, Any] = {
            "claim_id": self.claim_id,
            "entity": self.entity,
            "kind": v.kind,
            "key": v.key,
            "statement": None if redact else v.statement,
            "confidence": v.confidence,
            "valid_from": v.valid_from,
            "valid_to": v.valid_to,
            "status": self.status,
            "state": self.state_at(now),
            "forgotten": self.forgotten,
            "recorded_at": self.events[0].data["at"],
            "updated_at": self.events[-1].data["at"],
            "actor": v.event.actor,
            "evidence": v.event.evidence,
            "source": v.event.source,
        }
        if self.closed_by is not None:
            d["closed"] = {"event": self.closed_by.event, "at": self.closed_by.data["at"],
                           "reason": None if redact else self.closed_by.reason}
        if self.forgotten_by is not None:
            d["tombstone"] = self.forgotten_by.source
        if history:
            d["versions"] = [x.as_dict(redact) for x in self.versions]
            d["events"] = [_event_dict(e, redact) for e in self.events]
        return d


def _event_dict(e: Event, redact: bool) -> dict[str, Any]:
    d = dict(e.data)
    if redact:
        for k in ("statement", "reason"):
            if d.get(k) is not None:
                d[k] = None
    d["_where"] = e.where
    return d


@dataclass
class State:
    claims: dict[str, Claim] = field(default_factory=dict)
    warnings: list[Warning_] = field(default_factory=list)
    events: int = 0
    by_entity: dict[str, list[Claim]] = field(default_factory=dict)  # in creation order

    def for_entity(self, entity: str) -> list[Claim]:
        return list(self.by_entity.get(entity, ()))

    def entities(self) -> list[str]:
        return sorted(e for e, claims in self.by_entity.items() if claims)

    def current(self, entity: str | None, now: dt.datetime) -> list[tuple[Claim, Version]]:
        return self.at(entity, now)

    def at(self, entity: str | None, t: dt.datetime) -> list[tuple[Claim, Version]]:
        out = []
        claims = self.for_entity(entity) if entity else [c for e in self.entities() for c in self.by_entity[e]]
        for c in claims:
            v = c.version_at(t)
            if v is not None:
                out.append((c, v))
        return out

    def apply(self, ev: Event) -> Claim | None:
        """Fold one event in (events of one claim must come in order). Returns its claim."""
        d = ev.data
        self.events += 1
        claim = self.claims.get(ev.claim_id)
        if claim is not None and claim.entity != ev.entity:
            self.warnings.append(Warning_(ev.path, f"event {ev.id} moves claim {ev.claim_id} from {claim.entity} to {ev.entity}; skipped", line=ev.line, code="claims-conflict"))
            return None
        kind_of_event = d["event"]
        if kind_of_event in ("added", "replaced"):
            if claim is None:
                if kind_of_event == "replaced":
                    self.warnings.append(Warning_(ev.path, f"claim {ev.claim_id} replaced before it was added; treated as added", line=ev.line, code="claims-order"))
                claim = self.claims[ev.claim_id] = Claim(ev.claim_id, ev.entity)
                self.by_entity.setdefault(ev.entity, []).append(claim)
            elif kind_of_event == "added":
                self.warnings.append(Warning_(ev.path, f"claim {ev.claim_id} added twice; the second is treated as a replacement", line=ev.line, code="claims-order"))
            prev = claim.versions[-1] if claim.versions else None
            kind = _str(d.get("kind")) or (prev.kind if prev else "fact")
            key = _str(d.get("key")) if "key" in d else (prev.key if prev else None)
            conf = d.get("confidence")
            if conf is None and prev is not None:
                conf = prev.confidence
            claim.versions.append(Version(ev, d["statement"], kind, key, conf, _str(d.get("valid_from")), _str(d.get("valid_to"))))
            claim.events.append(ev)
            if claim.status != "active" and not claim.forgotten:
                claim.status, claim.closed_by, claim.retire_end = "active", None, None
            return claim
        if claim is None:
            self.warnings.append(Warning_(ev.path, f"{kind_of_event} event for unknown claim {ev.claim_id}; skipped", line=ev.line, code="claims-order"))
            return None
        claim.events.append(ev)
        if d.get("forgotten") is True:
            claim.forgotten = True
            claim.forgotten_by = ev
        if kind_of_event == "invalidated":
            claim.status, claim.closed_by = INVALIDATED, ev
        elif claim.status != INVALIDATED:
            end = times.bound_end(_str(d.get("valid_to"))) or ev.at
            if claim.status == RETIRED and claim.retire_end is not None:
                end = min(end, claim.retire_end)
            claim.status, claim.closed_by, claim.retire_end = RETIRED, ev, end
        return claim

    def extend(self, events: Iterable[Event]) -> None:
        """Fold more events into this state (each later than its claim's earlier events)."""
        touched = {c.claim_id: c for ev in events if (c := self.apply(ev)) is not None}
        for c in touched.values():
            c._finish()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def fold(events: Iterable[Event], known_at: dt.datetime | None = None) -> State:
    """Events (in log order) -> claims. Problems become warnings, never exceptions."""
    state = State()
    for ev in events:
        if known_at is None or ev.at <= known_at:
            state.apply(ev)
    for claim in state.claims.values():
        claim._finish()
    return state


def conflict_groups(items: list[tuple[Claim, Version]]) -> list[tuple[str, str, list[str]]]:
    """[(rule, name, [claim_id, ...])] for claims holding together that disagree.

    `rule` is "kind" (name "state") or "key" (name = the key); see the module doc.
    """
    buckets: dict[tuple[str, str, str], list[tuple[Claim, Version]]] = defaultdict(list)
    for c, v in items:
        if v.kind == "state":
            buckets[(c.entity, "kind", "state")].append((c, v))
        if v.key:
            buckets[(c.entity, "key", v.key.casefold().strip())].append((c, v))
    out = []
    for (_, rule, name), group in sorted(buckets.items()):
        for part in _same_things(group) if rule == "kind" else [group]:
            if len({normalize(v.statement) for _, v in part}) > 1:
                out.append((rule, name, sorted(c.claim_id for c, _ in part)))
    return out


def _same_things(group: list[tuple[Claim, Version]]) -> list[list[tuple[Claim, Version]]]:
    """The state claims of one entity split into the things they are about (claims linked
    by `same_subject`, transitively), in their order."""
    parent = list(range(len(group)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (ci, vi) in enumerate(group):
        name = frozenset(ci.entity.split(":", 1)[-1].casefold().split("-"))
        for j in range(i):
            if root(i) != root(j) and same_subject(vi.statement, group[j][1].statement, name):
                parent[root(i)] = root(j)
    parts: dict[int, list[tuple[Claim, Version]]] = defaultdict(list)
    for i, item in enumerate(group):
        parts[root(i)].append(item)
    return list(parts.values())


def select_claims(claims: list[Claim], match: str, *, many: bool = False) -> list[Claim]:
    """Claims named by `match`: a claim id, else an exact statement (any version, normalized),
    else a substring of one. Several substring matches are an error unless `many`.

    Raises ClaimNotFound / AmbiguousClaim naming the candidates.
    """
    from .errors import AmbiguousClaim, ClaimNotFound
    from .text_rules import shorten

    m = match.strip()
    by_id = [c for c in claims if c.claim_id == m or c.claim_id.casefold() == m.casefold()]
    if by_id:
        return by_id
    key = normalize(m)
    if not key:
        raise ClaimNotFound("empty claim match")
    exact = [c for c in claims if any(normalize(v.statement) == key for v in c.versions)]
    if exact:
        return exact
    partial = [c for c in claims if any(key in normalize(v.statement) for v in c.versions)]

    def label(c: Claim) -> str:
        return f"{c.claim_id}: {shorten(c.statement, 80)}"

    if len(partial) == 1 or (partial and many):
        return partial
    if partial:
        raise AmbiguousClaim(
            f"{len(partial)} claims match {shorten(m, 80)!r}: " + "; ".join(label(c) for c in partial[:10])
            + " — give the claim id or the whole statement", [c.claim_id for c in partial])
    import difflib

    texts = {normalize(c.statement): c for c in claims}
    near = [texts[t] for t in difflib.get_close_matches(key, list(texts), n=5, cutoff=0.5)]
    hint = ("; closest: " + "; ".join(label(c) for c in near)) if near else ""
    raise ClaimNotFound(f"no claim matches {shorten(m, 80)!r}{hint}", [c.claim_id for c in near])
