"""The claim store: append-only facts about entities, with provenance and time,
compiled into the entities' canonical pages.

    log.py        the JSON Lines event log (claims/YYYY/MM/DD/<actor>.jsonl)
    fold.py       events -> claims: current state, as_of, history, contradictions
    entities.py   entity registry from canonical pages; subject resolution
    canonical.py  managed sections of canonical pages
    evidence.py   immutable evidence artifacts and tombstones (sources/semantic/...)
    forget.py     purging forgotten text from everything derived
    stage.py      the build stage that recompiles pages from the log
    api.py        ClaimStore, the entry point for the CLI and the server

Public API: `ClaimStore`, `WriteResult`, the errors, `run_stage`, `forgotten_statements`.
"""

from __future__ import annotations

from .api import ClaimStore, WriteResult
from .entities import Entity, Registry
from .errors import (
    AmbiguousClaim, AmbiguousSubject, ClaimError, ClaimNotFound, InvalidClaim, PageConflict, RefusedContent,
    UnknownSubject,
)
from .log import EVENTS, KINDS, ClaimLog
from .stage import StageResult, forgotten_statements, run_stage

__all__ = [
    "AmbiguousClaim", "AmbiguousSubject", "ClaimError", "ClaimLog", "ClaimNotFound", "ClaimStore", "EVENTS",
    "Entity", "InvalidClaim", "KINDS", "PageConflict", "RefusedContent", "Registry", "StageResult", "UnknownSubject",
    "WriteResult", "forgotten_statements", "run_stage",
]
