"""The pure parts of dory_suite.py (the harness that runs Dory's HTTP tests against a live
server, which needs a Dory checkout and is not run here): its list of deliberate
differences matches the documentation, and a bad --dory is a clear error."""

from __future__ import annotations

import re
from pathlib import Path

import dory_suite

DOC = Path(__file__).resolve().parents[2] / "docs" / "references" / "http-api.md"


def compatibility_rows() -> dict[str, str]:
    """route -> its "differs, and why" cell, from the Compatibility with Dory table."""
    section = DOC.read_text("utf-8").split("## Compatibility with Dory", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            rows[cells[0].strip("`")] = cells[2]
    return rows


def test_every_listed_difference_is_said_in_its_row_of_the_compatibility_table():
    rows = compatibility_rows()
    assert "/v1/memory-write" in rows and "/wiki/..." in rows  # the table was read
    for test, diff in dory_suite.DIFFERENCES.items():
        assert re.fullmatch(r"test_\w+\.py::test_\w+", test), test
        assert diff.route in rows, f"{test}: no row {diff.route!r} in {DOC.name}"
        assert diff.says in rows[diff.route], f"{test}: the {diff.route} row does not say {diff.says!r}"
    assert not set(dory_suite.DIFFERENCES) & set(dory_suite.NOT_APPLICABLE)


def test_a_failure_is_a_regression_unless_listed_and_only_a_regression_fails_the_run(capsys):
    listed = next(iter(dory_suite.DIFFERENCES))
    rows = dory_suite.verdicts({listed: {"outcome": "failed", "message": "assert 7 == 8"},
                                "test_x.py::test_ok": {"outcome": "passed", "message": ""}})
    assert dory_suite.report(rows) == 0
    rows = dory_suite.verdicts({"test_x.py::test_new": {"outcome": "failed", "message": "assert 1 == 2\nmore"}})
    assert dory_suite.report(rows) == 1
    out = capsys.readouterr().out
    assert "test_x.py::test_new" in out and "REGRESSION  assert 1 == 2" in out


def test_a_folder_that_is_not_a_dory_checkout_is_refused_with_what_to_give(tmp_path, capsys):
    assert dory_suite.main(["--dory", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "tests/integration/http/" in err and "Dory checkout" in err
