"""Build stage `claims`: recompile every canonical page from the log, before the scan.

Runs first in `build()`, so the pages the rest of the pipeline reads already hold the
compiled claims. Idempotent: a page is written only when its bytes change. A page that
cannot be compiled (broken markers, not UTF-8, symlink) becomes a warning and is left
as it is. A missing page of an entity with live claims is recreated from the log.

It also reports forgetting to the stages after it: `forgotten` is true when the log
holds forgotten claims not yet seen by an earlier build of this corpus (tracked in
`.commonplace/claims-forgotten.json`; a fresh clone counts all as new), so the search
stage can purge indexes and caches. `forgotten_statements()` gives the texts to purge.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import STATE_DIR, Warning_
from . import times
from .canonical import PageChange, compile_page
from .entities import Entity, Registry, entity_path
from .errors import PageConflict
from .fold import State, fold
from .forget import redact_artifacts, secrets_of
from .fsutil import atomic_write, corpus_lock
from .log import LOG_DIR, ClaimLog

SEEN_FILE = "claims-forgotten.json"


@dataclass
class StageResult:
    events: int = 0
    claims: int = 0
    entities: int = 0
    changes: list[PageChange] = field(default_factory=list)
    unchanged: int = 0
    forgotten: bool = False  # forgotten claims this corpus's builds had not seen yet
    forgotten_new: list[str] = field(default_factory=list)  # their claim ids
    redacted: list[str] = field(default_factory=list)
    warnings: list[Warning_] = field(default_factory=list)

    @property
    def pages_updated(self) -> list[str]:
        return [c.path for c in self.changes if c.changed]

    @property
    def pages_created(self) -> list[str]:
        return [c.path for c in self.changes if c.created]

    def extra(self) -> dict[str, Any]:
        """Counters for BuildResult.extra (never any claim text)."""
        return {
            "claims_events": self.events,
            "claims_pages_updated": len(self.pages_updated),
            "claims_forgotten": self.forgotten,
        }


def _entity_for(reg: Registry, eid: str, state: State) -> Entity:
    hit = reg.entities.get(eid)
    if hit is not None:
        return hit
    family, slug = eid.split(":", 1)
    title = slug
    for c in state.for_entity(eid):
        for ev in c.events:
            if isinstance(ev.entity_title, str) and ev.entity_title.strip():
                title = ev.entity_title.strip()
                break
        else:
            continue
        break
    return Entity(eid, family, slug, entity_path(family, slug), title, (), exists=False)


def _read_seen(root: Path) -> set[str] | None:
    try:
        data = json.loads((root / STATE_DIR / SEEN_FILE).read_text("utf-8"))
        return {x for x in data.get("forgotten", []) if isinstance(x, str)}
    except (OSError, ValueError, AttributeError):
        return None


def run_stage(root: Path, now: dt.datetime | None = None) -> StageResult:
    root = Path(root).resolve()
    result = StageResult()
    if not (root / LOG_DIR).is_dir():
        return result
    with corpus_lock(root):
        read = ClaimLog(root).read()
        result.warnings += read.warnings
        state = fold(read.events)
        result.warnings += state.warnings
        result.events, result.claims = state.events, len(state.claims)
        now = now or times.utcnow()
        reg = Registry.load(root)
        for eid in state.entities():
            claims = state.for_entity(eid)
            entity = _entity_for(reg, eid, state)
            if not entity.exists and all(c.forgotten for c in claims):
                continue  # never resurrect a page whose every claim was forgotten
            result.entities += 1
            try:
                change = compile_page(root, entity, claims, now)
            except PageConflict as exc:
                result.warnings.append(Warning_(entity.path, f"claims not compiled: {exc.message}", code="claims-page"))
                continue
            except OSError as exc:
                result.warnings.append(Warning_(entity.path, f"claims not compiled: {exc}", code="claims-page"))
                continue
            if change.changed:
                result.changes.append(change)
            else:
                result.unchanged += 1

        forgotten = [c for c in state.claims.values() if c.forgotten]
        ids = {c.claim_id for c in forgotten}
        seen = _read_seen(root)
        new = sorted(ids - (seen or set()))
        result.forgotten_new = new
        result.forgotten = bool(new)
        if forgotten:
            # Keep artifacts clean even if a forget was merged in from elsewhere: always
            # the claims' own artifacts, every artifact when a forget is new here.
            result.redacted = redact_artifacts(root, forgotten, full_scan=bool(new))
        if seen is None or seen != ids:
            try:
                atomic_write(root / STATE_DIR / SEEN_FILE,
                             json.dumps({"forgotten": sorted(ids)}, indent=1).encode("utf-8"))
            except OSError as exc:
                result.warnings.append(Warning_(f"{STATE_DIR}/{SEEN_FILE}", f"cannot record forgotten claims: {exc}", code="claims-state"))
    return result


def forgotten_statements(root: Path) -> list[str]:
    """Every text of every forgotten claim: what the search stage must purge from caches.

    Keep it in memory only; never write it anywhere derived.
    """
    read = ClaimLog(Path(root)).read()
    state = fold(read.events)
    return secrets_of([c for c in state.claims.values() if c.forgotten])
