"""`/v1/memory-write` about a person named by a first name, against a live `commonplace
serve` (real sockets), over a household's people pages that have no frontmatter.

The agent's-day probe: "Tom" was rejected with "did you mean person:ingrid-nilsson ...;
send subject=person:ingrid-nilsson" (her alias "Oma" is spelled like "Tom"), so following
the advice wrote Tom's allergy onto Grandma's page; "Priya" was rejected though
person:priya-shah is the only Priya. A first name two people share is theirs to pick from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from srvkit import post_ok, started

FILES = {
    "people/tom-berg.md": "# Tom Berg\n\nTom lives upstairs and fixes the bikes.\n",
    "people/ingrid-nilsson.md": "---\naliases: [Oma]\n---\n# Ingrid Nilsson\n\nThe children call her Oma.\n",
    "people/priya-shah.md": "# Priya Shah\n\nPriya teaches piano on Thursdays.\n",
    "people/anna-holm.md": "# Anna Holm\n\nAnna runs the allotment.\n",
    "people/anna-lund.md": "# Anna Lund\n\nAnna is Tom's cousin.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("first-names-live"), FILES)
    yield server
    server.stop()


def write(srv: Any, **body: Any) -> dict[str, Any]:
    return post_ok(srv, "/v1/memory-write", {"action": "write", "kind": "fact", "allow_canonical": True, **body})


def page(srv: Any, rel: str) -> str:
    return (Path(srv.corpus) / rel).read_text("utf-8")


def test_a_first_name_writes_to_that_person_not_to_one_spelled_alike(srv: Any) -> None:
    grandma = page(srv, "people/ingrid-nilsson.md")
    d = write(srv, subject="Tom", content="Tom is allergic to cats.")
    assert d["result"] == "written" and d["resolved"] is True, d
    assert d["subject_ref"] == "person:tom-berg" and d["target_path"] == "people/tom-berg.md", d
    assert "Tom is allergic to cats." in page(srv, "people/tom-berg.md")
    assert page(srv, "people/ingrid-nilsson.md") == grandma
    d = write(srv, subject="priya", content="Priya moved the piano lesson to Fridays.")
    assert d["result"] == "written" and d["target_path"] == "people/priya-shah.md", d


def test_a_first_name_two_people_share_asks_to_pick_one_of_them(srv: Any) -> None:
    d = write(srv, subject="Anna", content="Anna is vegetarian.")
    assert d["result"] == "rejected" and d["resolved"] is False, d
    assert d["candidates"] == ["person:anna-holm", "person:anna-lund"], d
    msg = d["message"]
    assert "person:anna-holm" in msg and "person:anna-lund" in msg, msg
    assert "ingrid" not in msg and "tom-berg" not in msg and "priya" not in msg, msg
    assert "send subject=" not in msg, msg  # no arbitrary one of them to send
    assert "Anna is vegetarian" not in page(srv, "people/anna-holm.md") + page(srv, "people/anna-lund.md")
    d = write(srv, subject="Lund", content="Anna Lund is vegetarian.")
    assert d["result"] == "written" and d["target_path"] == "people/anna-lund.md", d


def test_an_unknown_first_name_is_rejected_and_no_person_is_created(srv: Any) -> None:
    d = write(srv, subject="Tomas", content="Tomas likes jazz.")
    assert d["result"] == "rejected" and d["resolved"] is False, d
    assert "subject=person:ingrid-nilsson" not in d["message"], d["message"]
    d = write(srv, subject="Tomas", scope="person", content="Tomas likes jazz.")
    assert d["result"] == "rejected", d
    assert not (Path(srv.corpus) / "people/tomas.md").exists()


def test_the_hint_names_one_subject_only_when_one_is_clearly_meant() -> None:
    """Several alike and none clearly meant: the agent is asked to pick, not sent to the first."""
    from commonplace.server.models import MemoryWriteRequest
    from commonplace.server.ops.memory import how_to_resolve

    req = MemoryWriteRequest(action="write", kind="fact", subject="Tomas", content="Tomas is allergic to cats.")
    unsure = how_to_resolve(req, ["person:tom-berg", "person:tomasz-nowak"])
    assert "send subject=" not in unsure and "person:tom-berg, person:tomasz-nowak" in unsure, unsure
    sure = how_to_resolve(req, ["person:tomasz-nowak", "person:tom-berg"], best="person:tomasz-nowak")
    assert "send subject=person:tomasz-nowak" in sure, sure
