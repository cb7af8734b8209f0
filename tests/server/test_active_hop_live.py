"""Active memory's second hop, against a live `commonplace serve` (real sockets) restarted
over an existing build, without vectors: an answer that takes two notes, the second of
which shares no word with the question but a name, reaches the block through the name
the first note holds (issue 28: evidence beyond pasting the search's results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dorylive import Server
from srvkit import post_ok, write_files


def turn(speaker: str, text: str, date: str) -> str:
    return f"---\ntitle: {speaker}, {date}\ndate: {date}\n---\n{speaker}: {text}\n"


FILES = {
    "talk/t01.md": turn("Omar", "I booked flights to visit Ana in the spring, I miss Ana so much.", "2023-09-23"),
    "talk/t02.md": turn("Omar", "My sister Ana is moving to Hanoi next month.", "2023-07-14"),
    "talk/t03.md": turn("Omar", "Family visits are the best, even when the flights are long.", "2023-08-23"),
    "talk/t04.md": turn("Elif", "I booked flights to visit Theo in the spring, I miss Theo so much.", "2023-10-21"),
    "talk/t05.md": turn("Elif", "My brother Theo is moving to Lisbon next month.", "2023-07-01"),
    "talk/t06.md": turn("Elif", "I'd love to visit Kyoto someday, everyone says the food is incredible.", "2023-06-01"),
}
# Omar's other turns share the question's words, so the word search's results (active
# memory asks for twenty) are full without the turn that says where Ana lives.
FILLER = ["The city felt quiet last week.", "Family dinners are the best part of the week.",
          "I love flying, the views are amazing.", "We should go to the new market downtown, just to visit.",
          "Cleaning took the whole weekend, spring is coming.", "My family loves long walks.",
          "Flying always makes me sleepy.", "The city council finally fixed the bridge.",
          "Come by any time, the family would love it.", "Which city has the best coffee, you think?"]
FILES.update({f"talk/f{i:02d}{j}.md": turn("Omar", f"{text} {other}", "2023-05-01")
              for i, text in enumerate(FILLER) for j, other in enumerate(("Really.", "Honestly, yes.", "Ha!"))})
QUESTION = "Which city will Omar be flying to in the spring to visit family, and which relative lives there?"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("active-hop")
    root = write_files(base / "corpus", FILES)
    token = TokenStore(root).create("hop")
    Server(root, base / "site").start().stop()  # builds
    server = Server(root, base / "site").start()  # restarted over that build
    server.token = token  # type: ignore[attr-defined]
    yield server
    server.stop()


def test_the_second_note_comes_through_the_name_the_first_holds(srv: Any) -> None:
    search = post_ok(srv, "/v1/search", {"query": QUESTION, "k": 10, "mode": "hybrid"})
    assert "talk/t02.md" not in [r["path"] for r in search["results"]]  # the words alone do not find it
    d = post_ok(srv, "/v1/active-memory", {"prompt": QUESTION, "agent": "a", "budget_tokens": 600})
    block = d["block"]
    assert "Omar: I booked flights to visit Ana in the spring" in block
    # "next month", said on 14 July 2023, is August 2023 (`context/when.py`)
    assert "My sister Ana is moving to Hanoi next month (August 2023). (2023-07-14, talk/t02.md)" in block, block
    assert "talk/t02.md" in d["sources"]
    assert "Theo" not in block.split("talk/t02.md")[0].split("\n")[-1]  # the hop looked up Ana, not Theo


def test_no_name_to_look_up_adds_nothing(srv: Any) -> None:
    """A question whose best note names nobody new makes no second search's sources appear."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": "Where would Elif love to eat someday?", "agent": "a"})
    assert "Kyoto" in d["block"] and "talk/t02.md" not in d["sources"]
