"""A person's daily notes are memory an agent is given, against a live `commonplace serve`
(real sockets) restarted over an existing build: active memory shows the daily note that
answers (it used to leave out everything under `logs/`), dated by the note's day, its
relative times given their days, and a session of that day that changes it beside it.
Eval and job logs under `logs/` stay out."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from srvkit import post_ok, restarted

FILES = {
    "people/noor-haddad.md": "---\ntitle: Noor Haddad\ntype: person\naliases: [Noor]\n---\n# Noor Haddad\n\n"
                             "Noor leads the finance systems team.\n",
    "logs/daily/2025-03-06.md": "# Thursday\n\n- The deploy freeze starts next Monday and lasts two weeks.\n"
                                "- Ravi is out sick today, so the load test moves to tomorrow.\n",
    "logs/daily/2025-03-07.md": "# Friday\n\n- The load test ran yesterday: p99 at 410 ms.\n"
                                "- Noor asked for the export schema by next Friday.\n",
    f"logs/daily/{(dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).date().isoformat()}.md":
        "# Notes\n\n- Paired with Ravi on the flaky importer; the fix is in\n  review with Noor.\n",
    "knowledge/work-hours.md": "# Work hours\n\nWork hours are nine to five; on-call work is paid extra.\n\n"
                               "Leave policy: 25 days of leave a year, and time off in lieu.\n",
    "logs/evals/2025-03-07-run.md": "# Eval run\n\nexport schema due Noor deploy freeze starts: 14/20 passed.\n",
}
SESSION = {
    "path": "logs/sessions/claude/2025-03-07-billing.md", "agent": "claude", "device": "cli", "session_id": "b1",
    "status": "done", "captured_from": "test", "updated": "2025-03-07T16:00:00Z",
    "content": "user: Noor moved the schema deadline, she now wants it by next Wednesday instead of Friday.\n\n"
               "assistant: Noted: the export schema is now due next Wednesday (was Friday).\n",
}

YESTERDAY = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).date().isoformat()
YESTERDAYS = {
    "path": f"logs/sessions/codex/{YESTERDAY}-retry.md", "agent": "codex", "device": "cli", "session_id": "r1",
    "status": "done", "captured_from": "test", "updated": f"{YESTERDAY}T09:00:00Z",
    "content": "user: the invoice uploader keeps timing out\n\nassistant: Added a retry with backoff to the "
               "invoice uploader and a test for it.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def setup(first: Any) -> None:
        for body in (SESSION, YESTERDAYS):
            post_ok(first, "/v1/session-ingest", body)

    server = restarted(tmp_path_factory.mktemp("daily-live"), FILES, setup)
    yield server
    server.stop()


def test_the_daily_note_that_answers_is_shown_with_its_days(srv: Any) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "When does the deploy freeze start?", "agent": "a"})
    first = d["block"].split("\n")[1]
    # the note's own day (its name; the file was written today), "next Monday" said on the 26th
    assert first == ("- The deploy freeze starts next Monday (2025-03-10) and lasts two weeks. "
                     "(2025-03-06, logs/daily/2025-03-06.md)"), d["block"]
    assert "logs/evals/" not in d["block"] and "logs/evals/2025-03-07-run.md" not in d["sources"]


def test_a_session_of_the_same_day_that_moves_a_date_goes_beside_the_note(srv: Any) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "When is the export schema due to Noor?", "agent": "a"})
    block = d["block"]
    note = "- Noor asked for the export schema by next Friday (2025-03-14). (2025-03-07, logs/daily/2025-03-07.md)"
    assert note in block, block
    under = block.split(note, 1)[1].split("\n")[1]
    assert under.startswith("  - same day, in a session: ") and "next Wednesday (2025-03-12)" in under, block
    assert under.endswith("(2025-03-07, logs/sessions/claude/2025-03-07-billing.md)")


@pytest.mark.parametrize("prompt", ["What did I work on yesterday?", "Where did we leave off?"])
def test_a_question_about_recent_work_gets_the_sessions_first(srv: Any, prompt: str) -> None:
    """No word of the question is in the session ("work", "yesterday"): the session of the
    day it names (or the newest) is found by its date, shown by what it did, before other
    evidence."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a"})
    block = d["block"]
    line = (f"- Added a retry with backoff to the invoice uploader and a test for it. "
            f"({YESTERDAY}, logs/sessions/codex/{YESTERDAY}-retry.md)")
    assert line in block, block
    parts = block.split("\n\n")
    assert next(i for i, p in enumerate(parts) if p.startswith("## Session evidence")) <= 1, block
    if "yesterday" in prompt:  # the other sessions were on another day
        assert "2025-03-07-billing" not in block.split("## Session evidence", 1)[1].split("\n\n")[0]


@pytest.mark.parametrize("prompt", ["What did I do yesterday?", "Where did we leave off?"])
def test_a_question_about_recent_work_gets_that_days_note_whole(srv: Any, prompt: str) -> None:
    """The note shares no word with the question; it is found by its day (the newest note
    for "left off", as no session is newer), leads the block, its wrapped line whole."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a"})
    assert d["block"].split("\n")[1] == (f"- Paired with Ravi on the flaky importer; the fix is in review with Noor. "
                                         f"({YESTERDAY}, logs/daily/{YESTERDAY}.md)"), d["block"]
    assert "2025-03-06.md" not in d["block"] and not d.get("warnings")
    # Its words are all about time and work: a page that shares them ("work", "leave",
    # "time") is not what was done, and is not shown.
    assert "work-hours" not in d["block"], d["block"]


@pytest.mark.parametrize("prompt", ["What did I get done in the past 3 days?", "What happened over the last week?"])
def test_a_span_of_days_gets_its_sessions_and_notes(srv: Any, prompt: str) -> None:
    """A span ("the past 3 days", "the last week") is recent work as "yesterday" is: the
    span's session and daily note, found by their dates, not pages sharing its words; the
    sessions and notes from before it stay out."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a"})
    block = d["block"]
    assert f"logs/sessions/codex/{YESTERDAY}-retry.md" in block and f"logs/daily/{YESTERDAY}.md" in block, block
    assert "2025-03-07" not in block and "2025-03-06" not in block and "work-hours" not in block, block
