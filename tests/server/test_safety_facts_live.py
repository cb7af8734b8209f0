"""A person's safety facts reach the agent over a live `commonplace serve` (real sockets,
restarted over its build): the pages of the people a prompt names are candidates even when
its other words match other pages better, and a prompt about food brings up the allergy
of someone it does not name."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted

FILES = {
    "people/leo-berg.md": "# Leo Berg\n\nLeo is seven and in Year 3 at Elm Park Primary.\n\n"
                          "He has a tree-nut allergy and carries an EpiPen in his school bag.\n",
    "people/ada-berg.md": "# Ada Berg\n\nAda is ten and has swimming on Wednesdays.\n",
    "notes/lunchbox-ideas.md": "# Lunchbox ideas\n\nPesto pasta salad (the shop pesto has cashews in it).\n",
    **{f"notes/party-{i}.md": f"# Party {i}\n\nA birthday party on Saturday: tell the host about the invited "
                              f"guests, the birthday cake and party number {i}.\n" for i in range(14)},
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("safety-live"), FILES)
    yield server
    server.stop()


def test_the_named_childs_allergy_is_there_when_other_pages_match_better(srv: Any) -> None:
    block = post_ok(srv, "/v1/active-memory", {"prompt": "Leo's been invited to a birthday party on Saturday, "
                                                          "what should I tell the host?", "agent": "a"})["block"]
    assert "tree-nut allergy" in block and "people/leo-berg.md" in block, block


def test_a_food_prompt_brings_up_the_allergy_of_a_child_it_does_not_name(srv: Any) -> None:
    block = post_ok(srv, "/v1/active-memory", {"prompt": "What can I put in the kids' lunchboxes?",
                                                "agent": "a"})["block"]
    assert "Leo Berg: He has a tree-nut allergy" in block, block
