"""The claim store: append-only facts about entities, with provenance and time,
compiled into the entities' canonical pages.

    log.py        the JSON Lines event log (claims/YYYY/MM/DD/<actor>.jsonl)
    fold.py       events -> claims: current state, as_of, history, contradictions
    entities.py   entity registry from canonical pages; subject resolution
    canonical.py  managed sections of canonical pages
    evidence.py   immutable evidence artifacts and tombstones (sources/semantic/...)
    forget.py     purging forgotten text from everything derived
    stage.py      the build stage that recompiles pages from the log
    inputs.py     checks of what a claim write is given (kind, bounds, evidence, ...)
    text_rules.py statement rules, comparison, and markdown escaping for pages
    service.py    ClaimStore, the entry point for the CLI and the server

Public API: `ClaimStore`, `ClaimWriteResult`, the errors, `run_stage`, `forgotten_statements`.
"""

from __future__ import annotations

from ..lazy import lazy_exports

# Public name -> the module defining it. Imported on first use: a build of a corpus
# without a claim log never loads the claim store (45 ms of start-up, measured).
_EXPORTS = {
    "ClaimStore": "service", "ClaimWriteResult": "service", "Entity": "entities", "Registry": "entities",
    "AmbiguousClaim": "errors", "AmbiguousSubject": "errors", "ClaimError": "errors", "ClaimNotFound": "errors",
    "InvalidClaim": "errors", "PageConflict": "errors", "RefusedContent": "errors", "UnknownSubject": "errors",
    "EVENTS": "log", "KINDS": "log", "ClaimLog": "log",
    "StageResult": "stage", "forgotten_statements": "stage", "run_stage": "stage",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "AmbiguousClaim", "AmbiguousSubject", "ClaimError", "ClaimLog", "ClaimNotFound", "ClaimStore", "ClaimWriteResult",
    "EVENTS", "Entity", "InvalidClaim", "KINDS", "PageConflict", "RefusedContent", "Registry", "StageResult",
    "UnknownSubject", "forgotten_statements", "run_stage",
]
