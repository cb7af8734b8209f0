"""Helpers shared by the claim store tests (imported by name; pytest puts this folder on sys.path)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

UTC = dt.timezone.utc

ALEX = """---
title: Alex Smith
aliases: [Alex, A. Smith]
tags: [team]
custom_field: {nested: [1, 2]}
---
# Alex Smith

Hand-written intro about Alex.
"""

ATLAS = """---
title: Atlas
type: project
status: active
aliases: [Project Atlas]
---
# Atlas

Notes a person wrote.
"""

FILES = {
    "people/alex.md": ALEX,
    "people/sam.md": "---\ntitle: Sam Lee\n---\n# Sam Lee\n",
    "people/atlas.md": "# Atlas Person\n\nA person whose slug collides with the project title.\n",
    "projects/atlas/state.md": ATLAS,
    "projects/atlas/notes.md": "# Atlas notes\n",
    "concepts/hybrid-search.md": "---\ntitle: Hybrid search\naliases: [RRF search]\n---\nBody.\n",
    "core/identity.md": "---\ntitle: Identity\n---\n# Identity\n",
    "notes/meeting.md": "# Meeting\n\nline two\nline three\n",
}


class FakeClock:
    """Returns `t`, then moves it one second on, so events get distinct, ordered times."""

    def __init__(self, start: dt.datetime) -> None:
        self.t = start

    def __call__(self) -> dt.datetime:
        now = self.t
        self.t = self.t + dt.timedelta(seconds=1)
        return now

    def set(self, when: str) -> None:
        self.t = dt.datetime.fromisoformat(when).replace(tzinfo=UTC)


def page(corpus: Path, rel: str) -> str:
    return (corpus / rel).read_text(encoding="utf-8")


def site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
