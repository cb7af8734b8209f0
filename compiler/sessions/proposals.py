"""Proposals: semantic writes kept for review before they touch durable memory.

A proposal is a markdown file, `inbox/proposed/<id>.md`, whose frontmatter holds the
memory-write request to replay (`request`), where its dry run said it would land
(`planned`: target path and subject), risk flags, source paths and provenance; the body
shows the statement and the dry run's preview for a reader. Applying or rejecting moves
it to `inbox/applied/` or `inbox/rejected/` with the outcome added.

The id is derived from the request (`p-` and 12 hex digits of a hash of action, kind,
subject, scope and content), so proposing the same statement twice gives one proposal;
a statement proposed again after its proposal was applied or rejected gets `-2`, `-3`...
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ..markdown import frontmatter as fm

STATES = ("proposed", "applied", "rejected")
DIRS = {s: f"inbox/{s}" for s in STATES}
ID = re.compile(r"^p-[0-9a-f]{12}(?:-\d{1,4})?$")
REQUEST_FIELDS = ("action", "kind", "subject", "content", "scope", "confidence", "reason", "source")


def base_id(request: dict[str, Any]) -> str:
    key = json.dumps([request.get(k) for k in ("action", "kind", "subject", "scope", "content")], ensure_ascii=False)
    return "p-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def rel_of(state: str, pid: str) -> str:
    return f"{DIRS[state]}/{pid}.md"


def find(root: Path, pid: str) -> tuple[str, str] | None:
    """(state, path) of a proposal; a settled copy wins over a proposed one (a crash
    between writing the settled file and removing the proposed one leaves both)."""
    for state in ("applied", "rejected", "proposed"):
        rel = rel_of(state, pid)
        if (Path(root) / rel).is_file():
            return state, rel
    return None


def new_id(root: Path, request: dict[str, Any]) -> tuple[str, bool]:
    """(id, already proposed): the request's id, or the next free one when an earlier
    proposal of the same request was settled."""
    base = base_id(request)
    for n in range(1, 10000):
        pid = base if n == 1 else f"{base}-{n}"
        where = find(root, pid)
        if where is None:
            return pid, False
        if where[0] == "proposed":
            return pid, True
    raise RuntimeError("no free proposal id")


def read(root: Path, rel: str) -> tuple[dict[str, Any], str]:
    text = (Path(root) / rel).read_text("utf-8")
    raw, body, _ = fm.split(text)
    return (dict(fm.load(raw)) if raw is not None else {}), body


def body_text(meta: dict[str, Any]) -> str:
    req = meta.get("request") or {}
    planned = meta.get("planned") or {}
    lines = [f"# {meta.get('title', 'Proposal')}", "",
             f"Proposed {req.get('action')} of a {req.get('kind')} about **{req.get('subject')}**, "
             f"planned for `{planned.get('target_path')}` ({planned.get('subject_ref')}).", "",
             "## Statement", "", str(req.get("content", "")).strip(), ""]
    flags = meta.get("risk_flags") or []
    if flags:
        lines += ["## Risk flags", "", *[f"- {f}" for f in flags], ""]
    sources = meta.get("source_paths") or []
    if sources:
        lines += ["## Sources", "", *[f"- `{s}`" for s in sources], ""]
    preview = meta.get("preview")
    if preview:
        lines += ["## Preview", "", "```diff", str(preview).rstrip(), "```", ""]
    outcome = meta.get("outcome")
    if outcome:
        lines += ["## Outcome", "", str(outcome.get("message") or outcome.get("result") or ""), ""]
    return "\n".join(lines)


def summary(meta: dict[str, Any], rel: str) -> dict[str, Any]:
    req = meta.get("request") or {}
    return {"id": meta.get("proposal_id"), "status": meta.get("proposal_status"), "path": rel,
            "action": req.get("action"), "kind": req.get("kind"), "subject": req.get("subject"),
            "content": req.get("content"), "planned": meta.get("planned"), "risk_flags": meta.get("risk_flags", []),
            "source_paths": meta.get("source_paths", []), "provenance": meta.get("provenance", {}),
            "outcome": meta.get("outcome")}


def listing(root: Path, state: str = "proposed") -> list[tuple[str, str]]:
    """(state, path) of every proposal in `state` ('all' for every state), oldest id first."""
    states = STATES if state == "all" else (state,)
    out = []
    settled = {p.stem for s in ("applied", "rejected") for p in (Path(root) / DIRS[s]).glob("p-*.md")}
    for s in states:
        folder = Path(root) / DIRS[s]
        for p in sorted(folder.glob("p-*.md")):
            if ID.match(p.stem) and not (s == "proposed" and p.stem in settled):
                out.append((s, rel_of(s, p.stem)))
    return out


def risk_flags(request: dict[str, Any], answer: dict[str, Any], root: Path) -> list[str]:
    """What a reviewer should look at, from the request and its dry run."""
    flags = []
    target = answer.get("target_path")
    if target and not (Path(root) / target).exists():
        flags.append("creates_entity")
    if request.get("action") == "replace":
        flags.append("replaces_claims")
    if request.get("action") == "forget":
        flags.append("forgets_claims")
    if request.get("confidence") == "low":
        flags.append("low_confidence")
    if str(target or "").startswith(("core/", "people/")):
        flags.append("canonical_core_or_person")
    if len(str(request.get("content") or "")) > 500:
        flags.append("long_statement")
    if answer.get("warnings"):
        flags.append("warnings")
    return flags
