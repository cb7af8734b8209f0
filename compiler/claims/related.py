"""Links between entity pages that a write implies: a decision about a project is linked
from the project's page, so whatever reads the project (its page, wake, active memory)
reaches the decision.

Dory routes `kind: decision` to `decisions/<slug>.md`; the project page gets one bullet
under a hand-editable `## Key Decisions` section (Dory's project section name), added once:

    ## Key Decisions

    - [[decisions/ledgerline.md|Ledgerline]]

The bullet names the decision, not its statement: the decision page holds the current
statement, so a replaced decision never leaves a stale copy here.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..fsutil import atomic_write, inside
from ..locks import claims_lock
from .canonical import find_sections
from .text_rules import md_inline

SECTION = "Key Decisions"
_HEADING = re.compile(r"^##[ \t]+" + re.escape(SECTION) + r"[ \t#]*\r?$", re.I)
_ANY_HEADING = re.compile(r"^#{1,2}[ \t]")


def decision_bullet(decision_path: str, title: str) -> str:
    target = decision_path[:-3] if decision_path.endswith(".md") else decision_path
    label = md_inline(title, 120).replace("|", "-").replace("]", ")")
    return f"- [[{target}.md|{label}]]"


def link_decision(root: Path, project_path: str, decision_path: str, title: str, dry_run: bool = False) -> bool:
    """Add the decision's bullet to the project page; False when the page is missing or
    already links the decision. Hand-written text and managed sections stay as they were."""
    with claims_lock(root):
        full = inside(root, project_path)
        try:
            text = full.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        target = decision_path[:-3] if decision_path.endswith(".md") else decision_path
        if re.search(r"\[\[" + re.escape(target) + r"(?:\.md)?[\]|#]", text):
            return False
        new = add_bullet(text, decision_bullet(decision_path, title), project_path)
        if not dry_run:
            atomic_write(full, new.encode("utf-8"))
        return True


def add_bullet(text: str, bullet: str, path: str = "page") -> str:
    """`text` with `bullet` at the end of its `## Key Decisions` section (the section made
    before the first managed section, or at the end, when there is none)."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(nl)
    spans = find_sections(text, path)
    managed_lines = {n for s in spans.values() for n in range(s.start_line - 1, s.end_line)}
    start = next((i for i, line in enumerate(lines) if i not in managed_lines and _HEADING.match(line)), None)
    if start is not None:
        end = next((i for i in range(start + 1, len(lines))
                    if i in managed_lines or _ANY_HEADING.match(lines[i])), len(lines))
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        out = lines[:end] + ([""] if end == start + 1 else []) + [bullet] + lines[end:]
        if end < len(lines) and lines[end].strip():
            out.insert(end + 1 + (end == start + 1), "")
        return nl.join(out)
    first_managed = min((s.start_line - 1 for s in spans.values()), default=None)
    block = [f"## {SECTION}", "", bullet, ""]
    if first_managed is None:
        body = text.rstrip("\r\n")
        return body + nl + nl + nl.join(block)
    return nl.join(lines[:first_managed] + block + lines[first_managed:])
