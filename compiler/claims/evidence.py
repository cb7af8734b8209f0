"""Evidence artifacts: the raw input of every semantic write, kept as a markdown file.

    sources/semantic/YYYY/MM/DD/<slug>-<HHMMSS>-<action>.md

Artifacts are created exclusively (a name collision gets `-2`, `-3`, ...), complete on
disk before their name appears, and never overwritten. The one exception is `redact`:
when a claim is forgotten, its text is cut out of every artifact that quoted it, since
artifacts are rendered into the site like any other page.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from ..markdown import frontmatter as fm
from ..fsutil import atomic_write, create_exclusive, inside
from . import times
from .entities import Entity, slugify
from .errors import InvalidClaim
from .text_rules import fenced, md_code, md_inline, one_line, wikilink

ARTIFACT_DIR = "sources/semantic"
ACTIONS = ("add", "replace", "retire", "invalidate", "forget")
REDACTED = "[forgotten]"


def _file_slug(entity: Entity) -> str:
    try:
        return slugify(entity.slug)
    except InvalidClaim:
        return "entity"


def artifact_path(entity: Entity, at: dt.datetime, action: str, n: int = 1) -> str:
    at = at.astimezone(times.UTC)
    suffix = "" if n == 1 else f"-{n}"
    return f"{ARTIFACT_DIR}/{at:%Y/%m/%d}/{_file_slug(entity)}-{at:%H%M%S}-{action}{suffix}.md"


def _title(action: str, entity: Entity, at: dt.datetime, n: int = 1) -> str:
    """Unique like the file name: same second, same entity, same action -> `#2`, `#3`."""
    suffix = f" #{n}" if n > 1 else ""
    return f"Claim {action}: {one_line(entity.title)[:120]} ({at.astimezone(times.UTC):%Y-%m-%d %H:%M:%S} UTC{suffix})"


def artifact_text(*, entity: Entity, action: str, at: dt.datetime, actor: str, kind: str | None,
                  reason: str | None, claim_ids: list[str], event_ids: list[str],
                  raw_input: str | None, evidence: dict | None, extra: dict[str, Any] | None = None,
                  n: int = 1) -> str:
    title = _title(action, entity, at, n)
    meta: dict[str, Any] = {
        "title": title,
        "type": "source",
        "source_kind": "semantic",
        "entity": entity.id,
        "action": action,
        "kind": kind,
        "actor": actor,
        "reason": reason,
        "claim_ids": claim_ids,
        "event_ids": event_ids,
        "at": times.format_at(at),
    }
    if evidence:
        meta["evidence"] = evidence
    meta.update(extra or {})
    meta = {k: v for k, v in meta.items() if v is not None}
    lines = [
        f"# {md_inline(title, 300, start=True)}",
        "",
        f"Semantic write `{action}` about {wikilink(entity.path, entity.title)} by {md_inline(actor, 100)}, "
        f"recorded {times.display(at)}. Claims: {', '.join(md_code(c) for c in claim_ids)}.",
        "",
    ]
    if reason:
        lines += [f"Reason: {md_inline(reason, 2000)}", ""]
    if raw_input is not None:
        lines += ["Raw input:", "", fenced(raw_input)]
    return f"---\n{fm.dump(meta)}---\n" + "\n".join(lines).rstrip("\n") + "\n"


def write_artifact(root: Path, entity: Entity, action: str, at: dt.datetime, **kw: Any) -> str:
    """Create the artifact; returns its corpus-relative path."""
    if action not in ACTIONS:
        raise ValueError(action)
    for n in range(1, 1000):
        rel = artifact_path(entity, at, action, n)
        data = artifact_text(entity=entity, action=action, at=at, n=n, **kw).encode("utf-8")
        if create_exclusive(inside(root, rel), data):
            return rel
    raise OSError(f"no free artifact name for {entity.id} at {at}")


def tombstone_text(*, entity: Entity, at: dt.datetime, actor: str, reason: str,
                   claims: list[dict[str, Any]], event_ids: list[str], whole_entity: bool, n_file: int = 1) -> str:
    n = len(claims)
    suffix = f" #{n_file}" if n_file > 1 else ""
    title = f"Forgotten: {n} claim{'s' if n != 1 else ''} about {one_line(entity.title)[:120]} ({at.astimezone(times.UTC):%Y-%m-%d %H:%M:%S} UTC{suffix})"
    meta: dict[str, Any] = {
        "title": title,
        "type": "tombstone",
        "source_kind": "semantic",
        "entity": entity.id,
        "action": "forget",
        "actor": actor,
        "reason": reason,
        "claim_ids": [c["claim_id"] for c in claims],
        "event_ids": event_ids,
        "whole_entity": whole_entity,
        "at": times.format_at(at),
    }
    lines = [
        f"# {md_inline(title, 300, start=True)}",
        "",
        f"On {times.display(at)}, {md_inline(actor, 100)} asked to forget "
        f"{'everything recorded' if whole_entity else f'{n} claim' + ('s' if n != 1 else '')} about "
        f"{wikilink(entity.path, entity.title)}.",
        "",
        f"Reason: {md_inline(reason, 2000)}",
        "",
        "| claim | kind | first recorded | by |",
        "|---|---|---|---|",
    ]
    for c in claims:
        lines.append(f"| {md_code(c['claim_id'])} | {md_inline(str(c['kind']), 40)} | {c['recorded'][:10]} | {md_inline(str(c.get('actor') or ''), 80)} |")
    lines += [
        "",
        "The forgotten text has been removed from the entity page, from the evidence files that "
        "quoted it, and from everything built from the corpus (site and search indexes). The claim "
        "log under `claims/` keeps the events, so the history stays auditable.",
    ]
    return f"---\n{fm.dump(meta)}---\n" + "\n".join(lines) + "\n"


def write_tombstone(root: Path, entity: Entity, at: dt.datetime, **kw: Any) -> str:
    for n in range(1, 1000):
        rel = artifact_path(entity, at, "forget", n)
        data = tombstone_text(entity=entity, at=at, n_file=n, **kw).encode("utf-8")
        if create_exclusive(inside(root, rel), data):
            return rel
    raise OSError(f"no free tombstone name for {entity.id} at {at}")


def side_tombstone(entity: Entity, stem: str, reason: str, claim_tombstone: str, at: dt.datetime) -> str:
    """`<stem>.tombstone.md` beside a wholly forgotten page (Dory's name and fields): the
    reason, and a link to the claim tombstone; never the forgotten statements."""
    meta: dict[str, Any] = {
        "title": f"Tombstone for {stem}",
        "type": entity.family,
        "status": "superseded",
        "canonical": False,
        "source_kind": "generated",
        "temperature": "cold",
        "created": at.astimezone(times.UTC).date().isoformat(),
        "entity": entity.id,
        "tombstone_for": entity.path.rsplit("/", 1)[-1],
    }
    body = (f"Retired: {md_inline(reason, 2000)}\n\n"
            f"Every claim about {wikilink(entity.path, entity.title)} was forgotten; the record is "
            f"{wikilink(claim_tombstone, 'tombstone')}.\n")
    return f"---\n{fm.dump(meta)}---\n\n{body}"


# -- redaction ----------------------------------------------------------------------------


def _patterns(secrets: list[str]) -> list[re.Pattern[str]]:
    """Whole-word, case-insensitive patterns for each secret (and its one-line form)."""
    forms: set[str] = set()
    for s in secrets:
        if s and s.strip():
            forms.add(s.strip())
            if one_line(s):
                forms.add(one_line(s))
    return [re.compile(r"(?<!\w)" + re.escape(f) + r"(?!\w)", re.IGNORECASE)
            for f in sorted(forms, key=len, reverse=True)]


def redact_text(text: str, secrets: list[str]) -> str:
    """Every whole-word occurrence of each secret (any case) -> `[forgotten]`."""
    for pat in _patterns(secrets):
        text = pat.sub(REDACTED, text)
    return text


def _redact_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        return [_redact_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: _redact_value(v, secrets) for k, v in value.items()}
    return value


def contains(text: str, secrets: list[str]) -> bool:
    return any(p.search(text) for p in _patterns(secrets))


def redact_file(root: Path, rel: str, secrets: list[str], tombstone: str | None) -> bool:
    """Cut `secrets` out of one artifact; mark it superseded by the tombstone. True if changed."""
    try:
        full = inside(root, rel)
        if full.is_symlink():
            return False
        data = full.read_bytes()
        text = data.decode("utf-8")
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    if not contains(text, secrets):
        return False
    meta: dict[str, Any] = {}
    try:
        raw, body, _ = fm.split(text)
        if raw is not None:
            meta = fm.load(raw)
    except fm.FrontmatterError:
        raw, body = None, text
    if raw is not None and meta:
        meta = _redact_value(meta, secrets)
        meta["status"] = "superseded"
        if tombstone:
            meta["superseded_by"] = f"[[{tombstone}]]"
        meta["redacted"] = True
        new = f"---\n{fm.dump(meta)}---\n" + redact_text(body, secrets)
    else:
        new = redact_text(text, secrets)
    if contains(new, secrets):  # the secret survived (e.g. split by YAML folding): blank it all
        new = f"---\n{fm.dump({'title': meta.get('title', 'Redacted evidence'), 'status': 'superseded', 'redacted': True})}---\n{REDACTED}\n"
    atomic_write(full, new.encode("utf-8"))
    return True


def artifact_files(root: Path) -> list[str]:
    base = root / ARTIFACT_DIR
    if not base.is_dir() or base.is_symlink():
        return []
    out = []
    for p in sorted(base.rglob("*.md")):
        rel = p.relative_to(root).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")) and not p.is_symlink():
            out.append(rel)
    return out
