"""A `/v1/memory-write` replace with no claim id changes the claim its statement restates,
and only that one, against a live `commonplace serve` (real sockets).

The audit's case: a project with a launch deadline and a reconciliation time; a replace
that moves the reconciliation job to 03:30 once rewrote the deadline (the oldest fact of
the kind) and retired the reconciliation claim. And a replace that restates none of
several claims changes none of them: it is recorded as a new claim and says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from srvkit import post_ok, started

FILES = {
    "projects/ledgerline/state.md": "---\ntitle: Ledgerline\ntype: project\n---\n# Ledgerline\n\n"
                                    "Ledgerline is the billing team's ledger service.\n",
    "projects/harbor/state.md": "---\ntitle: Harbor\ntype: project\n---\n# Harbor\n\nHarbor is the ops portal.\n",
    "projects/pier/state.md": "---\ntitle: Pier\ntype: project\n---\n# Pier\n\nPier is the edge proxy.\n",
}
DEADLINE = "The Ledgerline launch deadline is 2026-12-15."
NIGHTLY = "The Ledgerline reconciliation job runs nightly at 02:00 UTC."
MOVED = ("The Ledgerline reconciliation job now runs nightly at 03:30 UTC, moved from 02:00 to avoid "
         "the backups.")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("replace-live"), FILES)
    yield server
    server.stop()


def write(srv: Any, **body: Any) -> dict[str, Any]:
    return post_ok(srv, "/v1/memory-write", {"action": "write", "kind": "fact", "allow_canonical": True, **body})


def current_claims(srv: Any, rel: str) -> str:
    """The page's current claims (its managed claims block before the history)."""
    page = (Path(srv.corpus) / rel).read_text("utf-8")
    block = page.split("<!-- commonplace:claims:start -->")[1].split("<!-- commonplace:claims:end -->")[0]
    return block.split("History")[0]


def test_a_replace_changes_the_claim_it_restates_not_the_oldest_of_its_kind(srv: Any) -> None:
    d1 = write(srv, subject="Ledgerline", scope="project", content=DEADLINE)
    d2 = write(srv, subject="Ledgerline", scope="project", content=NIGHTLY)
    assert d1["result"] == d2["result"] == "written", (d1, d2)
    deadline_id, nightly_id = d1["claim_ids"][0], d2["claim_ids"][0]
    d = write(srv, action="replace", subject="Ledgerline", scope="project", content=MOVED,
              reason="clash with backup window")
    assert d["result"] == "replaced", d
    assert d["claim_ids"] == [nightly_id], d  # the reconciliation claim, and only it
    assert nightly_id in d["message"] and deadline_id not in d["message"], d["message"]
    facts = current_claims(srv, "projects/ledgerline/state.md")
    assert DEADLINE in facts, facts  # the unrelated claim is untouched
    assert "now runs nightly at 03:30 UTC" in facts and "runs nightly at 02:00 UTC" not in facts, facts
    block = post_ok(srv, "/v1/active-memory", {"prompt": "When is the Ledgerline launch deadline?",
                                               "agent": "a"})["block"]
    assert "2026-12-15" in block, block


def test_a_replace_that_restates_no_claim_changes_none_and_says_so(srv: Any) -> None:
    a = write(srv, subject="Harbor", scope="project", content="The Harbor API is written in Go.")
    b = write(srv, subject="Harbor", scope="project", content="Harbor deploys to production every Tuesday.")
    d = write(srv, action="replace", subject="Harbor", scope="project",
              content="The Harbor mascot is a blue heron called Wade.")
    assert d["result"] == "replaced", d  # Dory's result for a replace that records a new claim
    new = d["claim_ids"]
    assert len(new) == 1 and new[0] not in (a["claim_ids"][0], b["claim_ids"][0]), d
    msg = d["message"]
    assert "added" in msg and "none was replaced" in msg and "claim" in msg, msg
    assert a["claim_ids"][0] in msg and b["claim_ids"][0] in msg, msg  # the current ones, to pick from
    facts = current_claims(srv, "projects/harbor/state.md")
    for text in ("The Harbor API is written in Go.", "Harbor deploys to production every Tuesday.",
                 "The Harbor mascot is a blue heron called Wade."):
        assert text in facts, facts


def test_a_replace_that_fits_two_claims_equally_changes_neither(srv: Any) -> None:
    a = write(srv, subject="Pier", scope="project", content="The Pier staging proxy listens on port 8001.")
    b = write(srv, subject="Pier", scope="project", content="The Pier production proxy listens on port 8002.")
    d = write(srv, action="replace", subject="Pier", scope="project", content="The Pier proxy listens on port 8005.")
    assert d["result"] == "rejected", d
    assert a["claim_ids"][0] in d["message"] and b["claim_ids"][0] in d["message"] and "claim" in d["message"], d
    facts = current_claims(srv, "projects/pier/state.md")
    assert "port 8001" in facts and "port 8002" in facts and "8005" not in facts, facts
    # naming the claim settles it
    d = write(srv, action="replace", subject="Pier", scope="project", claim=a["claim_ids"][0],
              content="The Pier staging proxy listens on port 8005.")
    assert d["result"] == "replaced" and d["claim_ids"] == a["claim_ids"], d
    # and a statement that clearly restates one of them picks it without an id
    d = write(srv, action="replace", subject="Pier", scope="project",
              content="The Pier production proxy now listens on port 9000.")
    assert d["result"] == "replaced" and d["claim_ids"] == b["claim_ids"], d
    facts = current_claims(srv, "projects/pier/state.md")
    assert "staging proxy listens on port 8005" in facts and "production proxy now listens on port 9000" in facts
