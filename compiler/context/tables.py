"""A markdown table's rows as facts: `<first cell>: <header>: <cell>; ...`.

A row read as a line of text is `| `hybrid` | yes | fuses the lists |`: pipes an agent has
to parse, and no word saying which column is which; the separator row `|---|:---:|` was a
line of evidence of its own. A row is a fact about its first cell, told by the headers:

    `hybrid`: default: yes; what it does: fuses the BM25 and vector lists

and a two-column table reads `<first>: <second>`.
"""

from __future__ import annotations

import re

from .plain import plain_line

_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?$|^\|\s*:?-+:?\s*\|$")


def is_separator(line: str) -> bool:
    """The row under a table's header (`|---|:---:|`)."""
    return bool(_SEPARATOR.match(line.strip()))


def cells(line: str) -> list[str]:
    """A row's cells as plain text; `\\|` is a pipe inside a cell."""
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [plain_line(c.strip().replace("\\|", "|")) for c in re.split(r"(?<!\\)\|", row)]


def row_text(header: list[str], row: list[str]) -> str:
    """One row as a sentence of its cells, each after its column's header."""
    first, rest = (row[0], row[1:]) if row else ("", [])
    if len(header) <= 2:
        told = [c for c in rest if c]
    else:
        told = [f"{h}: {c}" if h else c for h, c in zip(header[1:], rest) if c]
    if not told:
        return first
    return f"{first}: {'; '.join(told)}" if first else "; ".join(told)
