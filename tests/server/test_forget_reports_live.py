"""A forgotten fact that a saved research report quoted leaves the report too, against a
live `commonplace serve` (real sockets): default search returned the report, forgotten
sentence and all."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, started

FACT = "Tomás prefers a text message for shift changes, not a call."
REPORT = ("---\ntitle: What has changed this week\ntype: report\nstatus: final\nsource_kind: generated\n"
          "temperature: warm\nquestion: What has changed this week?\ncreated: 2026-12-04\n---\n"
          "# What has changed this week\n\n## Answer\n\n- people/tomas-reyes.md: " + FACT + "\n\n"
          "## Sources\n\n- people/tomas-reyes.md\n")
FILES = {
    "people/tomas-reyes.md": "---\ntitle: Tomás Reyes\ntype: person\n---\n# Tomás Reyes\n\nTomás bakes the bread.\n",
    "references/reports/2026-12-04-what-has-changed-this-week.md": REPORT,
    "knowledge/shifts.md": "---\ntitle: Shifts\n---\n# Shifts\n\nShift changes go on the board by Thursday.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("forget-reports"), FILES)
    yield server
    server.stop()


def test_a_forgotten_fact_leaves_the_reports_that_quoted_it(srv: Any) -> None:
    post_ok(srv, "/v1/memory-write", {"action": "write", "kind": "preference", "subject": "Tomás Reyes",
                                      "content": FACT, "allow_canonical": True})
    d = post_ok(srv, "/v1/memory-write", {"action": "forget", "kind": "preference", "subject": "Tomás Reyes",
                                          "content": FACT, "reason": "asked", "allow_canonical": True})
    assert d["result"] == "forgotten", d
    assert not any("references/reports/" in w for w in d.get("warnings", [])), d  # not "written by hand"
    report = (srv.corpus / "references/reports/2026-12-04-what-has-changed-this-week.md").read_text()
    assert "text message for shift changes" not in report and "status: superseded" in report, report
    hits = post_ok(srv, "/v1/search", {"query": "text message for shift changes", "k": 10})["results"]
    assert not any("text message" in h["snippet"] for h in hits), hits


def test_a_page_written_by_hand_is_not_edited_by_the_forget(srv: Any) -> None:
    assert "Shift changes go on the board" in (srv.corpus / "knowledge/shifts.md").read_text()
