"""Active memory from an agent working in a project's folder (`cwd`), against a live
`commonplace serve` restarted over its build: of two projects' facts that answer the same
words, the one of the project the agent is in comes first."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted


def _files() -> dict[str, str]:
    return {
        "projects/ledgerline/state.md": "---\ntitle: Ledgerline\n---\n# Ledgerline\n\nThe nightly reconciliation job "
                                        "runs at 03:30 UTC.\n\nOwner: [[people/mira]].\n",
        "projects/atlas/state.md": "---\ntitle: Atlas\n---\n# Atlas\n\nThe nightly export job runs at 01:00 UTC.\n",
        "people/mira.md": "---\ntitle: Mira\n---\n# Mira\n\nMira reviews nightly job changes on Tuesdays.\n",
        "knowledge/notes/standup.md": "# Standup\n\nStandup is at 09:30 and lasts fifteen minutes.\n",
    }


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("am-cwd"), _files())
    yield server
    server.stop()


def _first(srv: Any, cwd: str | None) -> str:
    body = {"prompt": "When does the nightly job run?", "agent": "a", "budget_tokens": 600}
    if cwd is not None:
        body["cwd"] = cwd
    got = post_ok(srv, "/v1/active-memory", body)
    return next(ln for ln in got["block"].split("\n") if ln.startswith("- "))


@pytest.mark.parametrize("project", ["atlas", "ledgerline"])
def test_the_project_the_agent_is_in_comes_first(srv: Any, project: str) -> None:
    assert f"projects/{project}/state.md" in _first(srv, f"/home/me/code/{project}/")


def test_a_windows_folder_names_its_project(srv: Any) -> None:
    assert "projects/ledgerline/state.md" in _first(srv, "C:\\Users\\me\\code\\ledgerline")
    wake = post_ok(srv, "/v1/wake", {"agent": "a", "cwd": "C:\\Users\\me\\code\\ledgerline"})
    assert "03:30 UTC" in wake["block"], wake["block"]


def test_a_folder_that_names_no_project_changes_nothing(srv: Any) -> None:
    assert _first(srv, "/home/me/Downloads") == _first(srv, None)


@pytest.mark.parametrize("cwd", ["/home/me/code/atlas/ios/App", "/home/me/src/atlas-app", "C:\\code\\atlas\\src"])
def test_a_folder_inside_a_project_or_named_for_it_names_it(srv: Any, cwd: str) -> None:
    """Agents send the folder they are in: a subfolder of the project (`ios/App`) or a
    checkout named for it (`atlas-app`) gave no project section and no warning."""
    assert "projects/atlas/state.md" in _first(srv, cwd)
    wake = post_ok(srv, "/v1/wake", {"agent": "a", "cwd": cwd, "debug": True})
    assert "## Project: Atlas (projects/atlas/state.md)" in wake["block"], wake["block"]


def test_a_subfolder_word_names_only_a_project_page(srv: Any) -> None:
    """Above the last folder only a page under projects/ counts: `standup` names a note."""
    wake = post_ok(srv, "/v1/wake", {"agent": "a", "cwd": "/home/me/standup/tools", "debug": True})
    assert "## Project:" not in wake["block"], wake["block"]
