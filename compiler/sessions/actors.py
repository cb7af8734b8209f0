"""Per-actor memory: an actor's personal preferences, seen by that actor only.

An actor's personal page is `core/actors/<stem>.md`, where `<stem>` is the name the
claim log already gives the actor's own files (`claims/YYYY/MM/DD/<stem>.jsonl`), so
`coder` -> `core/actors/coder.md` and an unsafe name gets a short hash. Wake for an
actor adds that page (its `## Preferences` section when it has one, else its body) and
leaves every other actor's page out; no other wake section ever shows a personal page.

The episodic side is per actor already: transcripts under `logs/sessions/<agent>/...`
(one file per session) and claim events in one file per actor and day, so two writers
never append to the same file.
"""

from __future__ import annotations

import re
from pathlib import Path

ACTORS_DIR = "core/actors/"
_SECTION = re.compile(r"^##\s+Preferences\s*$", re.IGNORECASE | re.MULTILINE)


def personal_path(actor: str) -> str:
    from ..claims.log import actor_file_stem

    return f"{ACTORS_DIR}{actor_file_stem(actor).lower()}.md"


def is_personal(rel: str) -> bool:
    return rel.startswith(ACTORS_DIR)


def preferences(root: Path | None, actor: str | None) -> tuple[str, str] | None:
    """(path, markdown) of `actor`'s personal preferences, or None."""
    if root is None or not actor or not str(actor).strip():
        return None
    rel = personal_path(actor)
    full = Path(root) / rel
    if full.is_symlink() or not full.is_file():
        return None
    from ..markdown import frontmatter as fm

    text = full.read_text("utf-8", "replace")
    try:
        _, body, _ = fm.split(text)
    except fm.FrontmatterError:
        body = text
    m = _SECTION.search(body)
    if m:
        rest = body[m.end():]
        nxt = re.search(r"^##\s", rest, re.MULTILINE)
        body = rest[: nxt.start()] if nxt else rest
    body = body.strip()
    if not body:
        return None
    return rel, f"## Personal preferences ({str(actor).strip()[:100]})\n\n{body}"
