"""The test kits' one fixture corpus: a platform team's small memory (core files, people, a
project, two decisions, a session log, a page of links). The server, MCP and context tests
write it with `write_files`; a kit that needs more adds files on top, never a copy."""

from __future__ import annotations

from pathlib import Path

CORPUS: dict[str, str] = {
    "core/identity.md": """---
title: Identity
type: core
pinned: true
canonical: true
tags: [core]
---
# Identity

This memory belongs to the platform team. Agents read core files first.
""",
    "core/rules.md": """---
title: Working rules
tags: [core]
---
# Working rules

- Write decisions down, one file each.
- Link generously: [[Alex]] and [[atlas]].
""",
    "people/alex.md": """---
title: Alex Kim
aliases: [Alex, AK]
tags: [people]
---
# Alex Kim

Alex runs the billing migration. See [[atlas]].
""",
    "people/sam.md": """---
title: Sam Reyes
canonical: true
---
# Sam Reyes

Sam owns the on-call rotation.
""",
    "projects/atlas/state.md": """---
title: Atlas
tags: [project]
---
# Atlas

Atlas moves billing off the legacy queue. Owner: [[Alex]].
""",
    "decisions/adr-0001-rrf.md": """---
title: Use reciprocal rank fusion
pinned: true
status: active
---
# Use reciprocal rank fusion

We fuse BM25 and vector rankings with k = 60.
""",
    "decisions/adr-0002-old.md": """---
title: Old decision
pinned: true
status: superseded
---
# Old decision

Superseded text.
""",
    "logs/sessions/2025/06/2025-06-29-coder.md": """---
title: Session 2025-06-29
date: 2025-06-29
---
# Session

Started the migration plan.
Stopped at: write the rollback runbook.
""",
    "notes/links.md": """---
title: Link notes
---
# Link notes

Links to [[Alex]], [[atlas]], a [[missing page]] and [[Link notes]] itself.
""",
}


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root
