"""When research saves a report, against a live `commonplace serve` (real sockets)
restarted over its build (an agent's day, the calls that went wrong):

- "What is the name of Leo's dentist?" saved a report answering with Leo's EpiPen: the
  name was the only word memory shared with it. A name says whom a question is about, not
  what it asks; a question whose only match is a name saves nothing and says why;
- a question the memory answers ("When does Leo's EpiPen expire?") is still saved;
- an answer line is a sentence, never a markdown heading: a session file whose first
  line is `# Sales call ...` leaked as `- # Sales call ...` into "What changed this week?".
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from srvkit import post_ok, restarted

TODAY = dt.datetime.now(dt.timezone.utc).date()
NOW = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
FILES = {
    "people/leo.md": "---\ntitle: Leo\ntype: person\n---\n# Leo\n\nLeo is Sam's son, he is seven.\n\n"
                     "Leo's EpiPen expires in March 2027. Leo is allergic to peanuts.\n",
    "people/sam.md": "---\ntitle: Sam\ntype: person\n---\n# Sam\n\nSam leads the billing team.\n",
    "projects/harbor.md": "---\ntitle: Harbor\ntype: project\n---\n# Harbor\n\nHarbor is owned by the billing "
                          "team.\n",
    # a session kept as notes, no turns: its summary is its first lines, heading and all
    f"logs/sessions/agent/{TODAY.isoformat()}-globex.md": f"---\ntitle: Globex call\ntype: session\n"
                                                          f"created: '{TODAY.isoformat()}T11:00:00Z'\n---\n"
                                                          f"# Sales call {TODAY.isoformat()}: Globex wants the pilot "
                                                          "extended\n\nGlobex asked to extend the pilot by a month.\n",
    "knowledge/office.md": "---\ntitle: Office\n---\n# Office\n\nThe office opens at 08:00 and the kitchen "
                           "closes at 18:00.\n",
}
SALES = f"logs/sessions/agent/{TODAY.isoformat()}-sales-call.md"
SESSION = {"path": SALES, "agent": "hermes", "device": "cli", "session_id": "sales", "status": "done",
           "captured_from": "test", "updated": NOW,
           "content": "# Sales call 2026-12-03: Acme asked for the bulk discount\n\n"
                      "user: Acme asked for a bulk discount on the annual plan.\n\n"
                      "assistant: Noted, Acme wants the bulk discount on the annual plan.\n"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("research-save"), FILES,
                       lambda first: post_ok(first, "/v1/session-ingest", SESSION))
    yield server
    server.stop()


def _answer(d: dict[str, Any]) -> list[str]:
    body = d["research"]["artifact"]["body"]
    part = body.split("## Answer\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.split("\n") if line.strip()]


def _reports(srv: Any) -> list[str]:
    return sorted(p.name for p in (srv.corpus / "references" / "reports").glob("*.md")) \
        if (srv.corpus / "references" / "reports").is_dir() else []


@pytest.mark.parametrize("question", ["What is the name of Leo's dentist?", "Who is Leo's dentist?",
                                      "who is leo's dentist?", "What is the wifi password?"])
def test_research_whose_only_match_is_a_name_saves_nothing(srv: Any, question: str) -> None:
    before = _reports(srv)
    d = post_ok(srv, "/v1/research", {"question": question, "save": True})
    assert d["artifact"] is None, d
    assert _reports(srv) == before
    assert "EpiPen" not in d["research"]["artifact"]["body"], d["research"]["artifact"]["body"]
    assert any("nothing was saved" in w for w in d["warnings"]), d
    if question.casefold().startswith("who is"):  # it says why: memory knows Leo, not his dentist
        assert any("only its names" in w and "dentist" in w for w in d["warnings"]), d["warnings"]


def test_research_that_memory_answers_is_saved(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "When does Leo's EpiPen expire?", "save": True})
    assert d["artifact"] is not None and d["artifact"]["path"].startswith("references/reports/"), d
    assert "March 2027" in _answer(d)[0], d["research"]["artifact"]["body"]
    assert not any("saved" in w or "names" in w for w in d.get("warnings", [])), d
    saved = srv.request("GET", f"/v1/get?path={d['artifact']['path']}", token=srv.token).json()["content"]
    assert "Leo's EpiPen expires in March 2027." in saved
    # A question only about a person is answered by what memory holds about them, and
    # "owns" is answered by "owned" (a word begun by the question's).
    for question, said in (("Who is Leo?", "Sam's son"), ("How is Leo doing?", "Sam's son"),
                           ("who owns harbor?", "owned by the billing team")):
        d = post_ok(srv, "/v1/research", {"question": question, "save": False})
        assert not any("names" in w for w in d.get("warnings", [])), (question, d)
        assert said in d["research"]["artifact"]["body"], (question, d)


@pytest.mark.parametrize("question", ["What changed this week?", "What did Acme ask for on the sales call?"])
def test_an_answer_line_is_no_markdown_heading(srv: Any, question: str) -> None:
    d = post_ok(srv, "/v1/research", {"question": question, "save": False})
    lines = _answer(d)
    assert lines and any("discount" in line or "Globex" in line for line in lines), d["research"]["artifact"]["body"]
    assert not any(line.lstrip("- ").startswith("#") for line in lines), lines
    body = d["research"]["artifact"]["body"]
    assert not any(line.startswith("- ") and ": #" in line for line in body.split("\n")), body
