"""An agent's day in one date (issue 28, "stale beats current"): a project page written and
linked to a decision this morning, then a session that moves the date the page states.
Against a live `commonplace serve` restarted over its build, the very first active-memory
call shows the session's update beside the page's fact, both dated."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from srvkit import post_ok, restarted

PAGE = ("---\ntitle: Atlas migration\ntype: project\n---\n# Atlas migration\n\n## Current State\n\n"
        "The Atlas migration moves billing to Kubernetes. The Atlas cutover is planned for 14 December.\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def setup(first: Any) -> None:
        # Linking the decision from the project rewrites the page: its date is today.
        post_ok(first, "/v1/memory-write", {"action": "write", "allow_canonical": True, "subject": "Atlas migration",
                                            "kind": "decision", "scope": "project",
                                            "content": "We keep the old fleet warm for two weeks after the cutover."})
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        post_ok(first, "/v1/session-ingest", {
            "path": f"logs/sessions/agent/{now[:10]}-atlas.md", "agent": "claude", "device": "cli",
            "session_id": "day-1", "status": "done", "captured_from": "test", "updated": now,
            "content": "user: the Atlas cutover slipped, it is now on 23 January because of the change freeze.\n\n"
                       "assistant: Noted, the Atlas cutover is now 23 January.\n"})

    server = restarted(tmp_path_factory.mktemp("same-day"), {"projects/atlas/state.md": PAGE}, setup)
    yield server
    server.stop()


def test_the_first_call_shows_todays_session_beside_the_page_it_updates(srv: Any) -> None:
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    d = post_ok(srv, "/v1/active-memory", {"prompt": "When is the Atlas cutover?", "agent": "a", "budget_tokens": 600})
    block = d["block"]
    old = next(i for i, ln in enumerate(block.split("\n")) if "planned for 14 December" in ln)
    after = block.split("\n")[old + 1]
    assert "23 January" in after and after.lstrip().startswith("- same day, in a session:"), block
    assert f"({today}, logs/sessions/agent/" in after, block


def test_an_older_session_is_not_shown_as_an_update(srv: Any, tmp_path: Path) -> None:
    # A session dated before the page's last change is history, not an update of it.
    post_ok(srv, "/v1/session-ingest", {
        "path": "logs/sessions/agent/2020-01-02-atlas.md", "agent": "claude", "device": "cli",
        "session_id": "old-1", "status": "done", "captured_from": "test", "updated": "2020-01-02T09:00:00Z",
        "content": "user: the Atlas cutover is on 3 March.\n\nassistant: Noted, the Atlas cutover is on 3 March.\n"})
    block = post_ok(srv, "/v1/active-memory", {"prompt": "When is the Atlas cutover?", "agent": "a",
                                               "budget_tokens": 600})["block"]
    assert "3 March" not in block, block
    assert "23 January" in block, block
