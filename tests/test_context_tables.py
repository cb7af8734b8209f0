"""A markdown table read as facts (`compiler/context/tables.py`): each row a sentence about
its first cell, told by the headers; no pipes, no separator row."""

from __future__ import annotations

from commonplace.compiler.context.facts import page_units

PAGE = """# Search modes

| mode | default | what it does |
|---|:---:|---|
| `hybrid` | yes | fuses the **BM25** and vector lists |
| `bm25` | no | words only; `a \\| b` is one cell |

| setting | value |
|---------|-------|
| port | 8766 |
| host | 127.0.0.1 |

A line that starts with a pipe but is no table:

|not a table|
"""


def test_a_row_is_a_fact_about_its_first_cell() -> None:
    got = [u.text for u in page_units("modes.md", PAGE).units]
    assert got == [
        "`hybrid`: default: yes; what it does: fuses the BM25 and vector lists",
        "`bm25`: default: no; what it does: words only; `a | b` is one cell",
        "port: 8766",  # two columns, the second table (a blank line ended the first)
        "host: 127.0.0.1",
        "A line that starts with a pipe but is no table:",
        "not a table",
    ], got
    assert not any("---" in t or t.startswith("|") for t in got)
