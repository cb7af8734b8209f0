"""A prompt about recent work against a live `commonplace serve` (real sockets),
restarted over its build: the days it names are read by their date, and a daily note's
fact that a later session changed is shown with the change beside it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from srvkit import post_ok, restarted

TODAY = dt.datetime.now(dt.timezone.utc).date()
YESTERDAY = TODAY - dt.timedelta(days=1)
BEFORE = TODAY - dt.timedelta(days=2)


def _note(day: dt.date, *lines: str) -> str:
    return f"---\ntitle: {day.isoformat()}\ntype: daily\n---\n# {day.isoformat()}\n\n" + "".join(f"- {ln}\n" for ln in lines)


FILES = {
    "people/jonas-weber.md": "---\ntitle: Jonas Weber\ntype: person\n---\n# Jonas Weber\n\nJonas owns Harbor.\n",
    f"logs/daily/{BEFORE.isoformat()}.md": _note(
        BEFORE, "Call with Mei about the tutorial outline.",
        "Tomás says the Homebrew formula needs the new tarball checksum before Friday."),
    f"logs/daily/{YESTERDAY.isoformat()}.md": _note(
        YESTERDAY, "Found the cause of the timestamp parsing bug.",
        "Jonas confirmed the maintainers' dinner at FOSDEM is on the Saturday evening."),
    f"logs/daily/{TODAY.isoformat()}.md": _note(TODAY, "Merged the fix for the timestamp parsing bug.",
                                                "Need to send Tomás the signed tarball by Monday."),
}
SESSION = {
    "path": f"logs/sessions/agent/{TODAY.isoformat()}-ci.md", "agent": "claude-code", "device": "cli",
    "session_id": "s1", "status": "done", "captured_from": "test", "updated": f"{TODAY.isoformat()}T10:00:00Z",
    "content": "user: Also, Jonas says the FOSDEM dinner is now on the Friday evening, not Saturday, because the "
               "venue was booked.\n\nassistant: Got it: the maintainers' dinner at FOSDEM moved to Friday evening.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def setup(first: Any) -> Any:
        return post_ok(first, "/v1/session-ingest", SESSION)

    server = restarted(tmp_path_factory.mktemp("recent-live"), FILES, setup)
    yield server
    server.stop()


def _ask(srv: Any, prompt: str) -> dict[str, Any]:
    return post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a", "debug": True})


def test_yesterday_and_today_reads_both_notes(srv: Any) -> None:
    d = _ask(srv, "What did I do yesterday, and what's left for today?")
    block = d["block"]
    assert "Need to send Tomás the signed tarball" in block and "Found the cause" in block, block
    assert d["confidence"] != "low", d  # found by their dates, not by shared words


def test_a_notes_fact_a_later_session_changed_shows_the_change(srv: Any) -> None:
    """Yesterday's note says Saturday; today's session (outside the day asked about) moved
    the dinner to Friday: the agent reads both, the newer one under the old."""
    lines = _ask(srv, "What did I do yesterday?")["block"].split("\n")
    at = next(i for i, ln in enumerate(lines) if "on the Saturday evening" in ln)
    assert lines[at + 1].startswith("  - newer: ") and "Friday evening" in lines[at + 1], lines


def test_a_session_about_something_else_is_not_shown_as_a_notes_update(srv: Any) -> None:
    """The Homebrew deadline "before Friday" shares "says" and "Friday" with the dinner's
    move: that is no update of it."""
    block = _ask(srv, "What did we say about the Homebrew formula checksum?")["block"]
    lines = block.split("\n")
    at = next(i for i, ln in enumerate(lines) if "Homebrew formula" in ln)
    assert at + 1 == len(lines) or not lines[at + 1].startswith("  - newer: "), block


def test_wake_shows_the_session_that_changed_yesterdays_note(srv: Any) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "a", "budget_tokens": 1200})
    lines = d["block"].split("\n")
    at = next(i for i, ln in enumerate(lines) if "on the Saturday evening" in ln)
    assert lines[at + 1].startswith("  - newer: ") and "Friday evening" in lines[at + 1], d["block"]
