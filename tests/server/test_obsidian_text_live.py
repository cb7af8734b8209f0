"""What an agent reads of an Obsidian note, against a live `commonplace serve` restarted
over its build: no callout opening (`[!note]`), block id (`^ref`), footnote mark (`[^1]`)
or `%%hidden%%` comment in a search snippet or an active-memory line; the text stays."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted

NOTE = """---
title: Lisbon trip
---
# Lisbon trip

> [!note] Booking
> The riverside hotel is booked for three nights. ^hotel-ref

The flight leaves at 09:40 from ==gate B12==.[^gate] ^flight

%% the agent must not read this: surprise party on the last night %%

[^gate]: Gate numbers change on the day.
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("obsidian-text"), {"travel/lisbon.md": NOTE})
    yield server
    server.stop()


def _clean(text: str) -> None:
    for mark in ("[!note]", "^hotel-ref", "^flight", "[^gate]", "%%", "==", "surprise party"):
        assert mark not in text, (mark, text)


def test_a_snippet_is_the_text_without_obsidian_marks(srv: Any) -> None:
    got = post_ok(srv, "/v1/search", {"query": "riverside hotel booked flight gate", "k": 3, "mode": "bm25"})
    snippet = got["results"][0]["snippet"]
    assert "riverside hotel is booked" in snippet, snippet
    _clean(snippet)


def test_active_memory_reads_the_text_without_obsidian_marks(srv: Any) -> None:
    got = post_ok(srv, "/v1/active-memory", {"prompt": "When does the Lisbon flight leave, and which hotel?",
                                             "agent": "a", "budget_tokens": 400})
    assert "The flight leaves at 09:40 from gate B12." in got["block"], got["block"]
    assert "riverside hotel is booked for three nights." in got["block"], got["block"]
    _clean(got["block"])
