"""What a search that returned nothing says about why: the words were all stop words or
symbols, the words matched nothing, every result was under `min_score`, or (for session
recall) no session has been ingested yet. An agent acts on the difference: rephrase,
lower the threshold, or stop looking."""

from __future__ import annotations

from typing import Any

from ..text import weighted_terms

# The server adds how to store one, in the words of the caller's transport (an HTTP route
# or an MCP tool).
NO_SESSIONS = "no sessions have been ingested yet, so there is nothing to recall"


def empty(mode: str, pq: Any, found: int, min_score: float | None, sessions: bool) -> str:
    """The warning for an empty answer. `found`: results before `min_score`; `sessions`:
    whether any session document is indexed (only asked about for corpus sessions)."""
    if found and min_score is not None:
        return f"{found} result(s) scored below min_score {min_score:g}; nothing left"
    if not sessions:
        return NO_SESSIONS
    if mode == "exact":
        return "no matches: no document contains that text"
    words = " ".join([pq.words, *pq.phrases, *pq.prefixes, *(v for _f, v in pq.fielded)])
    if not weighted_terms(words):
        return "the query has no searchable words (only stop words or symbols)"
    return "no matches: no document contains the query's words"


def empty_scope(scope: Any, types: set[Any]) -> str:
    """The warning when no document at all is inside the request's scope."""
    known = sorted(str(t) for t in types if t)
    unknown = [t for t in scope.types if t not in types]
    if unknown:
        return (f"no document is in the scope: no document has type {', '.join(map(repr, unknown))} "
                f"(types in this corpus: {', '.join(known[:20]) or 'none'})")
    return "no document is in the scope (its path_glob, type, status, tags, since and until together match none)"
