"""The agent's day of 2026-12-04 against a live `commonplace serve` restarted over its
build: research about a dinner says who is coeliac; a wake over HTTP names no MCP tool in
its truncation note; the coding wake keeps the pinned working agreements. (The corpus is
`tests/test_wake_budget_and_research.py`'s.)"""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted
from test_wake_budget_and_research import AGREEMENTS, FILES, QUESTION


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("wake-research"), FILES)
    yield server
    server.stop()


def test_research_about_the_dinner_says_the_dietary_needs(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": QUESTION, "kind": "briefing", "save": True})
    body = d["research"]["artifact"]["body"]
    answer = body.split("## Answer\n", 1)[1].split("\n## ", 1)[0]
    assert "Jonas has coeliac disease and eats strictly gluten-free." in answer, body
    assert "people/jonas-weber.md: Jonas has coeliac disease" in body.split("## Evidence\n", 1)[1], body
    assert "people/jonas-weber.md" in d["research"]["sources"]
    saved = (srv.corpus / d["artifact"]["path"]).read_text()
    assert "coeliac" in saved and "- people/jonas-weber.md" in saved.split("## Sources\n", 1)[1]


def test_research_not_about_food_says_no_diets(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "Which Python versions does lanternfish support?",
                                      "kind": "report", "save": False})
    body = d["research"]["artifact"]["body"]
    assert "coeliac" not in body and "vegetarian" not in body


def test_a_wake_over_http_names_no_mcp_tool(srv: Any) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "claude-code", "project": "lanternfish", "budget_tokens": 300,
                                  "debug": True})
    assert d["truncated"], d
    assert "dory_get" not in d["block"]
    assert any(f"GET /v1/get?path={p} for the rest]" in d["block"] for p in d["truncated"]), d["block"]


def test_the_coding_wake_keeps_the_pinned_working_agreements(srv: Any) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "claude-code", "cwd": "/home/sam/code/lanternfish/src",
                                  "profile": "coding", "budget_tokens": 800, "debug": True})
    assert "core/user.md" in d["sources"] and all(a in d["block"] for a in AGREEMENTS), d["block"]
    assert "projects/lanternfish/state.md" in d["sources"]
