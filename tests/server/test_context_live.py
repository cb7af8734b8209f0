"""What an agent reads (issue 28), against a live `commonplace serve` (real sockets),
restarted over an existing build: wake and active memory pack facts, not files.

The corpus is written the way an agent writes it: pages a person wrote, then, through the
first server, memory-writes (facts, a preference, a replaced state, a forgotten fact, a
decision about a project) and a session whose update changes a durable fact. The server
is stopped and started again over the same build before any test reads.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from srvkit import post_ok, restarted

from commonplace.compiler.context.tokens import estimate_tokens

TODAY = dt.datetime.now(dt.timezone.utc).date()
YESTERDAY = TODAY - dt.timedelta(days=1)
CLAIM_ID = re.compile(r"\b[ce]_[0-9a-f]{12,}\b")
FACT = re.compile(r"Mira is allergic to peanuts\. \(\d{4}-\d{2}-\d{2}, people/mira-okafor\.md\)")

FILES = {
    "core/identity.md": "---\ntitle: Identity\ntype: core\npinned: true\n---\n# Identity\n\n"
                        "This memory belongs to the billing team's assistant.\n",
    "core/working-agreements.md": "---\ntitle: Working agreements\ntype: core\npinned: true\n---\n"
                                  "# Working agreements\n\n- Decisions go in `decisions/`.\n",
    "core/user.md": "---\ntitle: User\ntype: core\n---\n# User\n\nSam leads the billing team.\n\n"
                    "## Boundaries\n\n- Keep health details private.\n",
    "people/mira-okafor.md": "---\ntitle: Mira Okafor\naliases: [Mira]\ntype: person\n---\n# Mira Okafor\n\n"
                             "Mira is the tech lead of the billing team.\n",
    "projects/ledgerline/state.md": "---\ntitle: Ledgerline\ntype: project\nupdated: 2026-11-16\n---\n"
                                    "# Ledgerline\n\n## Current State\n\nLedgerline is owned by [[Mira Okafor]]. "
                                    "The Ledgerline reconciliation job runs nightly at 02:00 UTC.\n\n"
                                    "## Plan\n\n- The Ledgerline cutover is planned for 9 March 2027.\n",
    f"logs/daily/{TODAY.isoformat()}.md": f"---\ntitle: {TODAY.isoformat()}\n---\n# Today\n\n"
                                          "Planning the Ledgerline cutover with the billing team.\n",
    f"logs/daily/{YESTERDAY.isoformat()}.md": f"---\ntitle: {YESTERDAY.isoformat()}\n---\n# Yesterday\n\n"
                                              "Reviewed the invoice backlog.\n",
}
WRITES: list[dict[str, Any]] = [
    {"subject": "Mira Okafor", "kind": "fact", "content": "Mira is allergic to peanuts."},
    {"subject": "Mira Okafor", "kind": "preference", "content": "Mira prefers async updates, a Friday summary."},
    {"subject": "Mira Okafor", "kind": "state", "content": "Mira works from the Lisbon office."},
    {"action": "replace", "subject": "Mira Okafor", "kind": "state", "content": "Mira works from the Porto office."},
    {"subject": "Mira Okafor", "kind": "fact", "content": "Mira mentioned an interview at a rival firm."},
    {"action": "forget", "subject": "Mira Okafor", "kind": "fact", "content": "an interview at a rival firm",
     "reason": "asked to forget"},
    {"subject": "Ledgerline", "kind": "decision", "scope": "project", "content": "Ledgerline stores its ledger in Postgres."},
    # The name now has a decision page too; it must still name the project (no scope sent)
    {"subject": "Ledgerline", "kind": "fact", "content": "Ledgerline on-call rotates weekly."},
    {"subject": "Ledgerline", "kind": "decision", "content": "Ledgerline keeps seven years of history."},
    # A fact the page's prose states, changed: the prose line is rewritten, nothing else
    {"action": "replace", "subject": "Ledgerline", "kind": "fact",
     "content": "The Ledgerline cutover is planned for 23 March 2027."},
]
SESSION = {
    "path": "logs/sessions/agent/2026-11-26-ledgerline.md", "agent": "hermes", "device": "cli", "session_id": "s1",
    "status": "done", "captured_from": "test", "updated": "2026-11-26T10:00:00Z",
    "content": "user: we moved the Ledgerline reconciliation job from 02:00 to 03:30 UTC today, the old slot "
               "clashed with backups.\n\nassistant: Noted: the Ledgerline reconciliation job now runs at 03:30 UTC.\n",
}


# A note the agent keeps through /v1/write: Dory's defaults make it `source_kind: generated`.
NOTE = {"kind": "create", "target": "notes/call-recap-northwind.md",
        "content": "---\ntitle: Call recap, Northwind\ntype: note\n---\n# Call recap, Northwind\n\n"
                   "Priya agreed to the two-year prepay option on the renewal call.\n"}


def clean(block: str) -> None:
    """No bookkeeping: no frontmatter fence, no marker comment, no claim id, no audit line."""
    assert not re.search(r"(?m)^---\s*$", block), block
    assert "<!--" not in block and not CLAIM_ID.search(block), block
    assert "sources/semantic/" not in block and "Raw input" not in block and "Claim add" not in block, block


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def setup(first: Any) -> Any:
        for body in WRITES:
            r = first.request("POST", "/v1/memory-write", {"action": "write", "allow_canonical": True, **body},
                              token=first.token)
            assert r.status == 200 and r.json()["result"] in ("written", "replaced", "forgotten"), r.text
        post_ok(first, "/v1/session-ingest", SESSION)
        post_ok(first, "/v1/write", NOTE)
        return post_ok(first, "/v1/wake", {"agent": "a", "project": "ledgerline"})

    server = restarted(tmp_path_factory.mktemp("context-live"), FILES, setup)
    yield server
    server.stop()


def test_wake_packs_facts_not_files(srv: Any) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline", "debug": True, "budget_tokens": 900})
    block = d["block"]
    clean(block)
    assert "Timeline" not in block and "## Evidence" not in block and "title:" not in block
    assert "This memory belongs to the billing team's assistant." in block  # core, frontmatter stripped
    assert "## Project: Ledgerline (projects/ledgerline/state.md)" in block
    assert FACT.search(block), block  # the person the project links to, as a dated sentence
    assert "Mira works from the Porto office." in block and "Lisbon" not in block  # replaced: only the new one
    assert "rival firm" not in block  # forgotten
    assert "Ledgerline stores its ledger in Postgres." in block  # the decision a memory-write routed
    assert "Ledgerline on-call rotates weekly." in block and "Ledgerline keeps seven years of history." in block, block
    assert "Planning the Ledgerline cutover" in block and "Reviewed the invoice backlog" in block  # daily notes
    # the project's state as the page says it, and the session that changed it beside it
    lines = block.split("\n")
    at = next(i for i, ln in enumerate(lines) if "runs nightly at 02:00 UTC" in ln)
    assert lines[at + 1].startswith("  - newer: ") and "03:30" in lines[at + 1] and "(2026-11-26, logs/sessions/" in lines[at + 1]
    session = next(ln for ln in block.split("\n") if ln.startswith("- logs/sessions/agent/2026-11-26"))
    assert "now runs at 03:30" in session and "we moved" not in session  # a summary, not the first message
    assert d["tokens_estimated"] == estimate_tokens(block) <= 900
    assert "decisions/ledgerline.md" in d["sources"] and "people/mira-okafor.md" in d["sources"]


def test_wake_is_stable_across_restarts(srv: Any) -> None:
    again = post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline"})
    assert again["block"] == srv.before["block"]
    assert post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline"})["block"] == again["block"]


def test_wake_cwd_names_the_project(srv: Any) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "a", "cwd": "/home/sam/src/ledgerline", "debug": True})
    assert "projects/ledgerline/state.md" in d["sources"] and not d.get("warnings")


@pytest.mark.parametrize("budget", [100, 150])
def test_a_tight_wake_keeps_the_project_asked_for(srv: Any, budget: int) -> None:
    """At 120 tokens the core files took the room and the project asked for was omitted."""
    d = post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline", "budget_tokens": budget, "debug": True})
    assert "## Project: Ledgerline (projects/ledgerline/state.md)" in d["block"], d
    assert "projects/ledgerline/state.md" not in d.get("omitted", []) and estimate_tokens(d["block"]) <= budget


@pytest.mark.parametrize("budget", [60, 150, 300, 600])
def test_wake_sections_within_budget(srv: Any, budget: int) -> None:
    d = post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline", "budget_tokens": budget, "debug": True})
    assert estimate_tokens(d["block"]) <= budget
    clean(d["block"])
    if budget >= 300:  # each section is bounded: the recent sessions still have room
        assert "## Recent sessions" in d["block"]


def test_active_memory_answers_with_the_fact(srv: Any) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "I am ordering lunch for the billing team, anything I should "
                                                  "know about Mira?", "agent": "a", "budget_tokens": 600})
    block = d["block"]
    clean(block)
    assert block.startswith("## Active memory\n- ")
    assert FACT.search(block), block
    assert "people/mira-okafor.md" in d["sources"]
    lines = [ln for ln in block.split("\n") if ln.startswith("- ")]
    texts = [ln.rsplit(" (", 1)[0] for ln in lines]
    assert len(texts) == len(set(texts)), block  # no snippet twice


def test_active_memory_shows_only_the_current_claim(srv: Any) -> None:
    block = post_ok(srv, "/v1/active-memory", {"prompt": "Which office does Mira work from these days?",
                                            "agent": "a"})["block"]
    assert "Porto" in block and "Lisbon" not in block
    forgotten = post_ok(srv, "/v1/active-memory", {"prompt": "Did Mira mention an interview at a rival firm?",
                                                "agent": "a"})["block"]
    assert "rival firm" not in forgotten


def test_active_memory_puts_a_newer_session_beside_the_fact(srv: Any) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "What time does the Ledgerline reconciliation job run now?",
                                        "agent": "a", "debug": True})
    block = d["block"]
    clean(block)
    fact = next(i for i, ln in enumerate(block.split("\n")) if "02:00 UTC. (2026-11-16, projects/ledgerline" in ln)
    update = block.split("\n")[fact + 1]
    assert update.startswith("  - newer: ") and "03:30" in update and "(2026-11-26, logs/sessions/agent/" in update
    assert SESSION["path"] in d["sources"] and d["confidence"] == "high"


def test_active_memory_writing_keeps_people_privacy_keeps_its_boundary(srv: Any) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "Draft my Friday update to Mira about the Ledgerline cutover",
                                        "agent": "a", "debug": True})
    assert d["profile"] == "writing" and "async updates" in d["block"], d["block"]
    p = post_ok(srv, "/v1/active-memory", {"prompt": "what is private about Mira?", "agent": "a", "debug": True})
    assert p["profile"] == "privacy" and "Keep health details private." in p["block"]
    assert "peanuts" not in p["block"] and "## Durable evidence" not in p["block"]


@pytest.mark.parametrize("budget", [100, 250, 600, 1200])
def test_active_memory_within_budget(srv: Any, budget: int) -> None:
    d = post_ok(srv, "/v1/active-memory", {"prompt": "Mira Ledgerline billing team lunch office updates",
                                        "agent": "a", "budget_tokens": budget})
    assert estimate_tokens(d["block"]) <= budget
    clean(d["block"])


def test_research_evidence_is_facts(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "What is Mira allergic to?", "save": False})
    body = d["research"]["artifact"]["body"]
    clean(body)
    assert "Mira is allergic to peanuts." in body
    assert not any(s.startswith("sources/semantic/") for s in d["research"]["sources"])


def test_a_replaced_fact_leaves_the_page_and_stays_in_history(srv: Any) -> None:
    """The replace went through the first server's memory-write; this server was started
    over that build. The entity page (source and HTML), wake and active memory show only
    the current statement; the claim log keeps the old one (`claim list --history`)."""
    import json
    import subprocess
    import sys

    r = srv.request("GET", "/v1/get?path=people/mira-okafor.md", token=srv.token)
    assert r.status == 200, r.text
    page = r.json()["content"]
    assert "Mira works from the Porto office." in page and "Lisbon" not in page  # Claims, History, Timeline
    assert "(since replaced)" in page  # the Timeline keeps the event, without the old text
    html = srv.request("GET", "/people/mira-okafor/", token=srv.token)
    assert html.status == 200 and "Porto office" in html.text and "Lisbon" not in html.text
    for path, body in (("/v1/wake", {"agent": "a", "project": "ledgerline", "budget_tokens": 1200}),
                       ("/v1/active-memory", {"prompt": "Where does Mira work from?", "agent": "a"})):
        block = post_ok(srv, path, body)["block"]
        assert "Porto" in block and "Lisbon" not in block, block
    out = subprocess.run([sys.executable, "-c", "from commonplace.server.cli import main; main()", "claim", "list",
                          "Mira Okafor", "--history", "--json", "--corpus", str(srv.corpus)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    statements = [v["statement"] for c in json.loads(out.stdout)["claims"] for v in c["versions"]]
    assert "Mira works from the Lisbon office." in statements and "Mira works from the Porto office." in statements


def test_active_memory_says_when_nothing_matched(srv: Any) -> None:
    """A prompt nothing in memory answers gets the general context with a line and a
    warning that say nothing matched, as hybrid search warns for the same words; a prompt
    that matches gets neither."""
    prompt = "What did we decide about the cache eviction policy?"
    d = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a", "budget_tokens": 600})
    assert d["block"].startswith("Nothing in memory matched this prompt"), d["block"]
    assert "This memory belongs to the billing team's assistant." in d["block"]  # the wake follows
    assert len(d["warnings"]) == 1 and d["warnings"][0].startswith("nothing matched the prompt"), d
    assert d["summary"].startswith("Nothing in memory matched")
    clean(d["block"])
    s = post_ok(srv, "/v1/search", {"query": prompt, "k": 5, "mode": "hybrid"})
    assert any(w.startswith(("nothing matched", "no matches")) for w in s.get("warnings", [])) \
        or not s["results"], s
    found = post_ok(srv, "/v1/active-memory", {"prompt": "What is Mira allergic to?", "agent": "a"})
    assert "warnings" not in found and "Nothing in memory matched" not in found["block"]
    quiet = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a", "include_wake": False})
    assert quiet["kind"] == "none" and quiet["block"] == "" and quiet["warnings"][0].startswith("nothing matched")


def test_a_replaced_fact_is_the_only_one_the_page_and_contexts_show(srv: Any) -> None:
    page = (srv.corpus / "projects/ledgerline/state.md").read_text("utf-8")
    assert "- The Ledgerline cutover is planned for 23 March 2027." in page and "9 March" not in page
    assert "runs nightly at 02:00 UTC" in page  # the rest of the page is untouched
    wake = post_ok(srv, "/v1/wake", {"agent": "a", "project": "ledgerline", "budget_tokens": 900})["block"]
    am = post_ok(srv, "/v1/active-memory", {"prompt": "When is the Ledgerline cutover?", "agent": "a"})["block"]
    for block in (wake, am):
        assert "23 March 2027" in block and "9 March" not in block, block


def test_research_answers_with_the_claim_the_question_means(srv: Any) -> None:
    """The question's words find Mira's page by "billing team"; the preference that
    answers it shares none of them. A question about what someone would like gets the
    best source's preferences after its best line, and no other claim of the page."""
    d = post_ok(srv, "/v1/research", {"question": "What would Mira like for billing team status reports?", "save": False})
    answer = d["research"]["artifact"]["body"].split("## Answer", 1)[1].split("## Evidence", 1)[0]
    assert "- Mira prefers async updates, a Friday summary." in answer, answer
    assert "allergic" not in answer, answer  # a claim that shares no word with the question


@pytest.mark.parametrize("prompt", ["Draft a note to Mira on the Ledgerline cutover plan", "When is the cutover planned?"])
def test_a_session_update_goes_beside_any_fact_shown_not_only_the_one_asked(srv: Any, prompt: str) -> None:
    """The prompt is about the cutover; the page's other fact, the 02:00 job, is shown
    further down, and the session that moved it to 03:30 must sit under it there too: an
    agent drafting from the block would otherwise repeat the old time. The second prompt
    shares no word with the session."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": prompt, "agent": "a", "budget_tokens": 600})
    block = d["block"]
    lines = block.split("\n")
    old = next((i for i, ln in enumerate(lines) if "runs nightly at 02:00 UTC" in ln), None)
    if old is not None:
        assert "03:30" in lines[old + 1] and lines[old + 1].startswith("  - "), block
        assert "logs/sessions/agent/2026-11-26-ledgerline.md" in d["sources"]
    assert old is not None or "03:30" in block, block


def test_research_says_the_session_that_changed_the_fact_with_it(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "When does the Ledgerline reconciliation job run?", "save": False})
    body = d["research"]["artifact"]["body"]
    answer = body.split("## Answer", 1)[1].split("## Evidence", 1)[0]
    first = answer.strip().split("\n")[0]
    assert "03:30" in first, body  # never the old time alone
    if "02:00" in first:
        assert first.index("02:00") < first.index("Newer (2026-11-26, logs/sessions/agent/") < first.index("03:30")


def test_a_note_the_agent_wrote_is_evidence(srv: Any) -> None:
    """A note written through /v1/write is memory the agent kept, not generated audit
    material, although Dory's defaults mark it `source_kind: generated`."""
    page = srv.request("GET", "/v1/get?path=notes/call-recap-northwind.md", token=srv.token).json()
    assert "source_kind: generated" in page["content"], page
    block = post_ok(srv, "/v1/active-memory", {"prompt": "Did Priya agree to the two-year option?",
                                                "agent": "a"})["block"]
    assert "two-year prepay option" in block and "notes/call-recap-northwind.md" in block, block


def test_a_prompt_about_food_shows_the_allergy_of_whoever_it_may_concern(srv: Any) -> None:
    """The issue's lunch order: the prompt names the team, not Mira; her allergy is there."""
    block = post_ok(srv, "/v1/active-memory", {"prompt": "I'm ordering lunch for the billing team, anything I "
                                                          "should know?", "agent": "a"})["block"]
    assert "allergic to peanuts" in block and "people/mira-okafor.md" in block, block
