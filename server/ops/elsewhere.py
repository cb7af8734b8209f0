"""Other pages that still say what a `replace` changed.

A replace rewrites the entity's page; the same fact is often kept elsewhere too (a weekly
schedule's table still says "Ada swimming 17:00" on Tuesday after her page says
Wednesdays at 17:30). The write does not edit pages it was not asked about, but it says
where the old value still stands: the values (times, dates, numbers, weekdays) the replace
changed (`changed_values`: in the lines it removed, in neither the lines it wrote nor the
statement), searched by words with the entity's first name; a line of another page that
holds the name and one of them is named in `warnings`. A value both keep, such as the
version in "Version 0.9 is in beta", is no old value: it only names the subject.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from ..models import SearchRequest
from . import OpContext
from .search import engine_request, run_engine

_VALUE = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
                    r"[€£$]?\d[\d,.]*\d|\b\d\b", re.I)
MAX_SHOWN = 3
LOOKED_AT = 8  # search results read


def tracking(edit: Callable[[str], str], removed: list[str], added: list[str] | None = None) -> Callable[[str], str]:
    """`edit`, noting the lines it removed or changed in `removed` (and what it wrote
    instead in `added`)."""
    def tracked(text: str) -> str:
        out = edit(text)
        if out != text:
            before, after = text.split("\n"), out.split("\n")
            was, now = set(before), set(after)
            removed.extend(line for line in before if line.strip() and line not in now)
            if added is not None:
                added.extend(line for line in after if line.strip() and line not in was)
        return out

    return tracked


def _key(value: str) -> str:
    v = value.casefold()
    return v[:-1] if v.endswith("days") else v


def changed_values(removed: list[str], added: list[str], statement: str) -> list[str]:
    """The values of the `removed` lines that the replace changed: not in the lines it
    wrote (`added`) nor in the statement, and no version the new values extend ("0.9" of
    "0.9.0": the release is still 0.9's)."""
    new = {_key(v) for v in _VALUE.findall(" ".join([*added, statement]))}
    old = {v for v in _VALUE.findall(" ".join(removed)) if _key(v) not in new}
    return sorted(v for v in old if not any(n.startswith(_key(v) + ".") for n in new))


def still_said(ctx: OpContext, entity_path: str, entity_name: str, removed: list[str], statement: str,
               added: list[str] | None = None) -> list[str]:
    """Warnings naming the lines of other pages that still hold an old value (see the module)."""
    old = changed_values(removed, added or [], statement)
    name = entity_name.split()[0] if entity_name.split() else ""
    if not old or len(name) < 2:
        return []
    sreq = SearchRequest(query=f"{name} {' '.join(old)}", k=LOOKED_AT, mode="bm25", include_content=False)
    try:
        results = run_engine(ctx.live, engine_request(sreq)).get("results") or []
    except Exception:  # noqa: BLE001 - a hint, never a reason for the write to fail
        return []
    said_name = re.compile(r"\b" + re.escape(name) + r"\b", re.I)
    said_old = re.compile("|".join(r"\b" + re.escape(v) + r"\b" for v in old), re.I)
    out: list[str] = []
    for r in results:
        path = str(r.get("path") or "")
        if not path or path == entity_path or path.startswith(("sources/", "logs/sessions/", ".commonplace/")):
            continue
        try:
            lines = (Path(ctx.root) / path).read_text("utf-8").split("\n")
        except (OSError, UnicodeError):
            continue
        for n, line in enumerate(lines, start=1):
            if said_name.search(line) and said_old.search(line) and "commonplace:" not in line:
                out.append(f"{path}:{n} still says {line.strip()[:160]!r}; this replace changed "
                           f"{entity_path} only")
                break
        if len(out) >= MAX_SHOWN:
            break
    return out
