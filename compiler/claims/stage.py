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
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from ..model import STATE_DIR, Warning_, state_path

if TYPE_CHECKING:
    from .canonical import PageChange
    from .fold import Claim
    from .log import Event

# The claim store's modules are imported inside the functions: a corpus without a
# claim log (most builds) never needs them.

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
    root: Path | None = None
    forgotten_ids: set[str] = field(default_factory=set)  # every forgotten claim in the log
    _seen: set[str] | None = None

    def commit(self) -> None:
        """Record that derived state no longer holds the forgotten text (call it once the
        search indexes were purged); until then later stages keep reporting `forgotten`."""
        if self.root is None or self._seen == self.forgotten_ids:
            return
        from ..fsutil import atomic_write

        try:
            atomic_write(state_path(self.root) / SEEN_FILE,
                         json.dumps({"forgotten": sorted(self.forgotten_ids)}, indent=1).encode("utf-8"))
            self._seen = set(self.forgotten_ids)
        except OSError as exc:
            self.warnings.append(Warning_(f"{STATE_DIR}/{SEEN_FILE}", f"cannot record forgotten claims: {exc}", code="claims-state"))

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


def _read_seen(root: Path) -> set[str] | None:
    try:
        data = json.loads((state_path(root) / SEEN_FILE).read_text("utf-8"))
        return {x for x in data.get("forgotten", []) if isinstance(x, str)}
    except (OSError, ValueError, AttributeError):
        return None


def _page_key(root: Path, rel: str) -> tuple | None:
    try:
        st = os.lstat(root / rel)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _next_change(claims: list[Claim], now: dt.datetime) -> dt.datetime | None:
    """The first instant after `now` at which any claim starts or stops holding."""
    out = None
    for c in claims:
        for v in c.versions:
            for t in (v.start, v.end):
                if t is not None and t > now and (out is None or t < out):
                    out = t
    return out


@dataclass
class _Memo:
    """What the last compile of one entity's page depended on (this process only)."""

    events: int  # hash of the entity's event ids, in order
    page: tuple | None  # the page file as we left it
    computed_at: dt.datetime
    valid_until: dt.datetime | None  # next validity boundary: the page changes then
    warnings: list[Warning_]


_memos: dict[str, dict[str, _Memo]] = {}


def run_stage(root: Path, now: dt.datetime | None = None, commit: bool = True) -> StageResult:
    """Recompile canonical pages from the log. With `commit=False` the caller calls
    `result.commit()` after purging derived state (the build does, after the index)."""
    from .log import LOG_DIR

    root = Path(root).resolve()
    result = StageResult(root=root)
    if not (root / LOG_DIR).is_dir():
        return result
    from . import times
    from .canonical import compile_page
    from .entities import Registry, entity_from_log
    from .errors import PageConflict
    from .fold import fold
    from .forget import redact_artifacts
    from ..locks import claims_lock
    from .log import ClaimLog

    with claims_lock(root):
        read = ClaimLog(root).read()
        result.warnings += read.warnings
        result.events = len(read.events)
        now = now or times.utcnow()
        groups: dict[str, list[Event]] = {}
        forgotten_ids: set[str] = set()
        claim_ids: set[str] = set()
        for ev in read.events:
            d = ev.data
            groups.setdefault(d["entity"], []).append(ev)
            claim_ids.add(d["claim_id"])
            if d.get("forgotten") is True:
                forgotten_ids.add(d["claim_id"])
        result.claims = len(claim_ids)
        reg = Registry.load(root)
        first_run = str(root) not in _memos
        memos = _memos.setdefault(str(root), {})
        for eid in sorted(groups):
            events = groups[eid]
            entity = entity_from_log(reg, eid, events)
            ids = {e.claim_id for e in events}
            if not entity.exists and ids <= forgotten_ids:
                continue  # never resurrect a page whose every claim was forgotten
            result.entities += 1
            fp = hash(tuple(e.id for e in events))
            memo = memos.get(eid)
            if (memo is not None and memo.events == fp and memo.page == _page_key(root, entity.path)
                    and memo.computed_at <= now and (memo.valid_until is None or now < memo.valid_until)):
                result.unchanged += 1
                result.warnings += memo.warnings
                continue
            state = fold(events)
            claims = state.for_entity(eid)
            try:
                change = compile_page(root, entity, claims, now)
            except PageConflict as exc:
                memos.pop(eid, None)
                result.warnings += state.warnings
                result.warnings.append(Warning_(entity.path, f"claims not compiled: {exc.message}", code="claims-page"))
                continue
            except OSError as exc:
                memos.pop(eid, None)
                result.warnings += state.warnings
                result.warnings.append(Warning_(entity.path, f"claims not compiled: {exc}", code="claims-page"))
                continue
            result.warnings += state.warnings
            memos[eid] = _Memo(fp, _page_key(root, entity.path), now, _next_change(claims, now), list(state.warnings))
            if change.changed:
                result.changes.append(change)
            else:
                result.unchanged += 1

        seen = _read_seen(root)
        result.forgotten_ids, result._seen = forgotten_ids, seen
        new = sorted(forgotten_ids - (seen or set()))
        result.forgotten_new = new
        result.forgotten = bool(new)
        if forgotten_ids and (new or first_run):
            # Keep artifacts clean even if a forget was merged in from elsewhere: the
            # claims' own artifacts on a process's first build, every artifact when a
            # forget is new here.
            touched = {e for e, evs in groups.items() if any(ev.claim_id in forgotten_ids for ev in evs)}
            forgotten = [c for e in sorted(touched) for c in fold(groups[e]).for_entity(e) if c.forgotten]
            result.redacted = redact_artifacts(root, forgotten, full_scan=bool(new))
        if commit:
            result.commit()
    return result


def forgotten_statements(root: Path) -> list[str]:
    """Every text of every forgotten claim: what the search stage must purge from caches.

    Keep it in memory only; never write it anywhere derived.
    """
    from .fold import fold
    from .forget import secrets_of
    from .log import ClaimLog

    read = ClaimLog(Path(root)).read()
    state = fold(read.events)
    return secrets_of([c for c in state.claims.values() if c.forgotten])
