"""`commonplace init`: a new corpus with the conventional folders and a few examples."""

from __future__ import annotations

from pathlib import Path

FOLDERS = [
    "core", "people", "projects", "concepts", "decisions", "logs/daily", "logs/sessions",
    "sources", "references", "inbox", "wiki", "claims",
]

FILES: dict[str, str] = {
    "core/identity.md": """---
title: Identity
type: core
canonical: true
pinned: true
tags: [core]
---
# Identity

Who keeps this memory and what it is for. Agents read the `core/` files first.

- Owner: you
- Purpose: durable notes, decisions and facts that outlive one conversation.

See [[Working agreements]] and the example project [[atlas]].
""",
    "core/working-agreements.md": """---
title: Working agreements
type: core
canonical: true
pinned: true
tags: [core]
---
# Working agreements

- Write decisions down in `decisions/`, one file each, with a date.
- Record facts about people and projects as claims: `commonplace claim add`.
- Link generously: `[[page]]`, `[[page|label]]`, `[[page#Heading]]`.
""",
    "projects/atlas/state.md": """---
title: Atlas
type: project
status: active
canonical: true
tags: [example]
aliases: [Project Atlas]
---
# Atlas

An example project. Its facts are compiled from claims into the managed section below
the text you write here.

## Goal

Ship the first version. Decided in [[2026-01-05-use-markdown|the markdown decision]].
""",
    "decisions/2026-01-05-use-markdown.md": """---
title: Keep memory as markdown
type: decision
status: active
date: 2026-01-05
tags: [example]
---
# Keep memory as markdown

## Context

Notes must outlive any one tool.

## Decision

Plain markdown files with YAML frontmatter, compiled by commonplace. See [[Identity]].

## Consequences

Everything else (site, indexes) can be deleted and rebuilt.
""",
    "inbox/welcome.md": """---
title: Welcome
tags: [example]
---
# Welcome

Quick captures land in `inbox/`. Move them somewhere durable when they matter,
for example into [[atlas]].
""",
}


class ScaffoldError(Exception):
    pass


def init_corpus(root: Path) -> list[str]:
    """Create the corpus; refuse (changing nothing) if any file we would write exists."""
    clashes = [rel for rel in FILES if (root / rel).exists()]
    if clashes:
        raise ScaffoldError(f"refusing to overwrite existing files: {', '.join(sorted(clashes))}")
    created: list[str] = []
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as fh:  # "x": never overwrite, even in a race
            fh.write(text)
        created.append(rel)
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(".commonplace/\nsite/\n", encoding="utf-8")
        created.append(".gitignore")
    return created
