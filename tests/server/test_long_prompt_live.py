"""A long prompt (a pasted traceback, then the question) against a live `commonplace
serve` restarted over its build: the block answers the question first, and what memory
holds about the pasted text comes after it (`compiler/context/asks.py`)."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted

PASTE = """I'm in the middle of refactoring the ingest worker and hit this again:

Traceback (most recent call last):
  File "/srv/app/worker/ingest.py", line 214, in run_batch
    rows = self.reader.fetch(batch_id, limit=self.config.batch_size)
  File "/srv/app/worker/reader.py", line 88, in fetch
    cursor.execute(QUERY, (batch_id, limit))
psycopg2.errors.QueryCanceled: canceling statement due to statement timeout
CONTEXT: while scanning relation "events_2026_11"

The batch size is 5000 and the statement timeout is 30s. It only happens on Mondays.

"""

FILLER = {
    "knowledge/notes/release-train.md": "# Release train\n\nReleases leave every second Tuesday; the batch of "
                                        "changes freezes on the Friday before.",
    "knowledge/notes/office.md": "# Office\n\nThe office on Mondays is quiet; most of the team works from home.",
    "knowledge/notes/worker-pool.md": "# Worker pool\n\nEach worker takes one batch at a time from the queue.",
    "knowledge/notes/standup.md": "# Standup\n\nStandup is at 09:30 and lasts fifteen minutes.",
    "knowledge/notes/canteen.md": "# Canteen\n\nThe canteen closes at 14:00 and has a salad bar.",
}


def _files() -> dict[str, str]:
    files = {
        "people/dana.md": "---\ntitle: Dana\ntype: person\n---\n# Dana\n\nDana leads the billing team.\n\n"
                          "Dana is allergic to peanuts, so team lunches skip the satay.\n",
        "runbooks/ingest-worker.md": "# Ingest worker\n\nThe ingest worker hits the statement timeout on Mondays: "
                                     "the weekly rollup still holds the events table. Run VACUUM ANALYZE on the "
                                     "events partition before the Monday batch.\n",
    }
    files.update({p: f"---\ntitle: {p.rsplit('/', 1)[1][:-3]}\n---\n{body}\n" for p, body in FILLER.items()})
    return files


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("long-prompt"), _files())
    yield server
    server.stop()


def _ask(srv: Any, prompt: str) -> dict[str, Any]:
    return post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a", "budget_tokens": 600})


def test_the_question_after_a_paste_is_answered_first(srv: Any) -> None:
    got = _ask(srv, PASTE + "Unrelated, while I remember: what is Dana allergic to? I'm ordering the team lunch.")
    first = got["block"].split("\n## ")[0]  # the block's first section
    assert "Dana is allergic to peanuts" in first, got["block"]
    # what memory holds about the pasted traceback comes too, after the answer
    assert "VACUUM ANALYZE" in got["block"], got["block"]
    assert got["block"].index("peanuts") < got["block"].index("VACUUM")


def test_a_question_about_the_paste_searches_the_paste(srv: Any) -> None:
    """"What does this mean?" holds nothing to search for: the whole prompt is searched."""
    got = _ask(srv, PASTE + "What does this mean?")
    assert "VACUUM ANALYZE" in got["block"].split("\n## ")[0], got["block"]
    assert "peanuts" not in got["block"], got["block"]


def test_a_short_prompt_is_searched_whole(srv: Any) -> None:
    got = _ask(srv, "The ingest worker times out on Mondays. Is Dana allergic to anything?")
    assert "peanuts" in got["block"] and "VACUUM ANALYZE" in got["block"], got["block"]


JAVA = "\n".join(["Reviewing this class before the release:", "",
                  "public class InvoiceExporter {",
                  "    private final Queue queue;",
                  "    private final Clock clock;",
                  "    private int retries = 3;",
                  "    public void export(Batch batch) {",
                  "        for (Invoice invoice : batch.invoices()) { queue.push(invoice.toRow(clock.now())); }",
                  "    }",
                  "    private void retry(Batch batch) { if (retries-- > 0) export(batch); }",
                  "}", "", ""])


def test_a_pasted_class_that_says_private_is_no_question_about_privacy(srv: Any) -> None:
    """The profile is read from what is asked: `private` in the code would have picked the
    privacy profile, which uses no durable evidence at all."""
    got = post_ok(srv, "/v1/active-memory", {"prompt": JAVA + "Before I forget, is Dana allergic to anything?",
                                             "agent": "a", "budget_tokens": 600, "debug": True})
    assert got["profile"] == "general", got
    assert "Dana is allergic to peanuts" in got["block"], got["block"]
