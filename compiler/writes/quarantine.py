"""Quarantine: refused content kept, inert, as a new note under inbox/quarantine/ for a
person to review, instead of at the target.

The name is Dory's, `inbox/quarantine/<requested path, non-alphanumeric runs as '-'>-<first
12 hex of sha256(content)>.md` (`-2`, `-3` ... when taken: nothing is overwritten), and so
are the frontmatter fields (`quarantined_at`, `quarantine_reason`, `original_target`,
`original_kind`, `original_frontmatter`). The content is shown inside a code fence with
every refused character made visible (`<U+202E>`), so the copy itself is harmless.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .checks import Finding, reveal
from .compose import compose, today

QUARANTINE_DIR = "inbox/quarantine"


def quarantine_path(target: str, content: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", target.lower()).strip("-")[:120].strip("-") or "write"
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{QUARANTINE_DIR}/{slug}-{digest}.md"


def _shown(value: Any) -> Any:
    if isinstance(value, str):
        return reveal(value)[:2000]
    if isinstance(value, list):
        return [_shown(v) for v in value[:200]]
    if isinstance(value, dict):
        return {reveal(str(k))[:200]: _shown(v) for k, v in list(value.items())[:200]}
    return value


def quarantine_text(target: str, kind: str, content: str, findings: list[Finding], why: str,
                    frontmatter: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> str:
    shown_target = reveal(target)[:512]
    reasons = sorted({f.message for f in findings}) or [why]
    meta: dict[str, Any] = {
        "title": f"Quarantine: {shown_target[:200]}",
        "type": "capture",
        "status": "raw",
        "canonical": False,
        "source_kind": "generated",
        "temperature": "cold",
        "quarantined": True,
        "quarantined_at": today(),
        "quarantine_reason": why if not findings else "; ".join(reasons),
        "original_target": shown_target,
        "original_kind": kind,
        "reasons": reasons,
        "tags": ["quarantine"],
        "created": today(),
    }
    if frontmatter is not None:
        meta["original_frontmatter"] = _shown(frontmatter)
    meta.update(_shown(extra or {}))
    shown = reveal(content)
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`{3,}", shown)), default=0) + 1)
    body = (
        "# Quarantined write\n\n"
        "This content was refused by the write checks and kept here, inert, for a person to "
        "review. Invisible characters are shown as `<U+XXXX>`.\n\n"
        f"{fence}text\n{shown}{'' if shown.endswith(chr(10)) else chr(10)}{fence}\n"
    )
    return compose(meta, body)
