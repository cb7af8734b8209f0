"""Audit and generated material, and how default search ranks it.

An agent searching memory wants facts, not the bookkeeping around them. Some documents
record how memory changed or were produced from other documents:

- `evidence`: per-write evidence artifacts (`sources/semantic/**`), the raw input of each
  `memory-write`. The entity page holds the same fact, current.
- `inbox`: captures, proposals and quarantine (`inbox/**`, status `quarantined`).
- `report`: saved research reports (generated, with the `question` they answered).
- `generated`: other generated pages (`source_kind: generated`: compiled wiki pages,
  tombstones).

Default search (no `scope`, corpus `durable` or `all`) leaves evidence artifacts out, as
Dory leaves them out of its index, and demotes the rest: a demoted hit's score is
multiplied by its kind's `DEMOTION`, so it ranks below ordinary matches but still answers when
nothing else does. A request with any `scope` asked for specific documents and gets them
ranked as they match.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

EVIDENCE_PREFIX = "sources/semantic/"
REPORT_PREFIXES = ("references/reports/", "references/briefings/")
# A demoted hit's score factor, by kind. In hybrid fusion (k=20) a page first in both lists
# scores about 3/21; times 0.8 it ranks with a page sixth in both: below an ordinary page
# that matches as well, still in the top ten when it is the answer (an inbox capture can be
# the only place a fact is; 0.5 for every kind cost the quality benchmark's inbox answers
# 0.6 points of held-out hybrid R@10). A saved report repeats its question in its title and
# quotes the pages it found, which always exist: it goes further down.
DEMOTION = {"inbox": 0.8, "generated": 0.8, "report": 0.5}


def audit_kind(path: str, fm: Mapping[str, Any] | None) -> str | None:
    """evidence, inbox, report, generated, or None for an ordinary document."""
    fm = fm if isinstance(fm, Mapping) else {}
    if path.startswith(EVIDENCE_PREFIX):
        return "evidence"
    if path.startswith("inbox/") or str(fm.get("status", "")).strip().lower() == "quarantined":
        return "inbox"
    generated = bool(fm.get("generated") is True) or str(fm.get("source_kind", "")).strip().lower() in {
        "generated", "compiled"}
    if generated and (fm.get("question") or path.startswith(REPORT_PREFIXES)):
        return "report"
    if generated or path.endswith(".tombstone.md"):
        return "generated"
    return None


def applies(corpus: str, scope_empty: bool) -> bool:
    """Whether a request gets the default treatment (no scope; durable or all)."""
    return scope_empty and corpus in ("durable", "all")


def kinds(db: Any, paths: Iterable[str], memo: dict[str, str | None] | None = None) -> dict[str, str]:
    """{path: audit kind} for the audit documents among `paths` (others absent). `memo`
    keeps each path's kind (None: not audit) for the index generation it belongs to: a
    search reads and parses the frontmatter of every hit otherwise (1 to 2 ms a search
    at 10,000 documents)."""
    out: dict[str, str] = {}
    todo = []
    for p in dict.fromkeys(paths):
        if p.startswith(EVIDENCE_PREFIX):
            out[p] = "evidence"  # no need to read its row
        elif memo is not None and p in memo:
            if memo[p]:
                out[p] = memo[p]  # type: ignore[assignment]
        else:
            todo.append(p)
    if memo is not None:
        memo.update(dict.fromkeys(todo))
    for i in range(0, len(todo), 500):
        batch = todo[i : i + 500]
        q = f"SELECT path, frontmatter FROM docs WHERE path IN ({','.join('?' * len(batch))})"
        for path, raw in db.execute(q, batch):
            try:
                fm = json.loads(raw) if raw else {}
            except ValueError:
                fm = {}
            kind = audit_kind(path, fm)
            if kind:
                out[path] = kind
                if memo is not None:
                    memo[path] = kind
    return out


def apply(db: Any, hits: list[Any], policy: bool, demote: bool = True,
          memo: dict[str, str | None] | None = None) -> list[Any]:
    """Default search's treatment of a hit list (objects with `path` and `score`):
    evidence artifacts left out; with `demote`, other audit documents' scores times
    its kind's `DEMOTION` and the list re-sorted (stable: ties keep their order)."""
    if not policy or not hits:
        return hits
    found = kinds(db, [h.path for h in hits], memo)
    if not found:
        return hits
    out = [h for h in hits if found.get(h.path) != "evidence"]
    if demote:
        for h in out:
            if h.path in found:
                h.score *= DEMOTION.get(found[h.path], 1.0)
        out.sort(key=lambda h: -h.score)
    return out
