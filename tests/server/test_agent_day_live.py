"""An agent's day, the calls that went wrong (issue 28), against a live `commonplace serve`
(real sockets) restarted over its build:

- `research` for "what changed this week?" leads with what changed in the window (the
  week's sessions, its daily notes, the claims written in it), not people's biographies;
- a digest proposes a fact about a project to the project, even when the line also names
  the person it was said to;
- a saved research report is purged without `allow_canonical` (it is generated, not
  canonical memory); a person's page still needs it.

The people and project pages were written long before the window: their files and
frontmatter are dated months ago.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

import pytest
from srvkit import post_ok, restarted

TODAY = dt.datetime.now(dt.timezone.utc).date()
LONG_AGO = TODAY - dt.timedelta(days=120)
OLD = f"updated: {LONG_AGO.isoformat()}\n"
BIO_MIRA = "Mira Okafor grew up in Lagos and studied mathematics at Edinburgh."
DASHBOARD = "The Ledgerline dashboard refreshes every hour and pages the billing on-call."
BIO_TOMAS = "Tomas Reyes joined the company in 2019 after a decade in retail banking."
FILES = {
    "people/mira-okafor.md": f"---\ntitle: Mira Okafor\naliases: [Mira]\ntype: person\n{OLD}---\n# Mira Okafor\n\n"
                             f"{BIO_MIRA} She leads the billing team's engineering work.\n",
    "people/tomas-reyes.md": f"---\ntitle: Tomas Reyes\naliases: [Tomas]\ntype: person\n{OLD}---\n# Tomas Reyes\n\n"
                             f"{BIO_TOMAS} He changed teams twice since then.\n",
    "projects/ledgerline/state.md": f"---\ntitle: Ledgerline\ntype: project\n{OLD}---\n# Ledgerline\n\n"
                                    "## Current State\n\nLedgerline is the billing team's ledger service. "
                                    "The Ledgerline reconciliation job runs nightly at 02:00 UTC.\n",
    f"logs/daily/{TODAY.isoformat()}.md": f"---\ntitle: {TODAY.isoformat()}\n---\n# Today\n\n"
                                          "Walked through the Ledgerline cutover checklist with the on-call pair.\n",
    "knowledge/runbook.md": "---\ntitle: Runbook\n---\n# Runbook\n\nRestart the reconciler before paging anyone.\n",
    # two notes that say the same thing (a copy kept in two places)
    "knowledge/notes/dashboard.md": f"---\ntitle: Dashboard\n{OLD}---\n# Dashboard\n\n{DASHBOARD}\n",
    "knowledge/notes/dashboard-copy.md": f"---\ntitle: Dashboard copy\n{OLD}---\n# Dashboard copy\n\n{DASHBOARD}\n",
    f"logs/daily/{LONG_AGO.isoformat()}.md": f"---\ntitle: {LONG_AGO.isoformat()}\n---\n# Then\n\n"
                                             "Archived the quarterly invoice exports.\n",
}
NOW = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
SESSION = f"logs/sessions/agent/{TODAY.isoformat()}-ledgerline.md"
SESSIONS = [
    {"path": f"logs/sessions/agent/{LONG_AGO.isoformat()}-exports.md", "agent": "hermes", "device": "cli",
     "session_id": "old", "status": "done", "captured_from": "test", "updated": f"{LONG_AGO.isoformat()}T09:00:00Z",
     "content": "user: the quarterly invoice exports are archived under finance/2026.\n\n"
                "assistant: Noted, the quarterly invoice exports are archived.\n"},
    {"path": SESSION, "agent": "hermes", "device": "cli", "session_id": "today", "status": "done",
     "captured_from": "test", "updated": NOW,
     "content": "user: Mira says Ledgerline's reconciliation job now runs at 03:30 UTC, the old slot clashed "
                "with the backups.\n\n"
                "assistant: Noted: the Ledgerline reconciliation job now runs at 03:30 UTC.\n\n"
                "user: Mira is moving to the Porto office in January.\n\n"
                "assistant: Noted, Mira moves to the Porto office in January.\n"},
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("agent-day")

    def setup(first: Any) -> None:
        post_ok(first, "/v1/memory-write", {"action": "write", "allow_canonical": True, "subject": "Tomas Reyes",
                                            "kind": "fact", "content": "Tomas now owns the payments on-call rota."})
        for body in SESSIONS:
            post_ok(first, "/v1/session-ingest", body)

    # The pages were written long ago: their files say so too.
    old = time.mktime(LONG_AGO.timetuple())
    corpus = base / "corpus"
    for rel in FILES:
        if not rel.startswith("logs/daily/" + TODAY.isoformat()):
            path = corpus / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(FILES[rel], encoding="utf-8")
            os.utime(path, (old, old))
    server = restarted(base, {k: v for k, v in FILES.items() if not (corpus / k).exists()}, setup)
    yield server
    server.stop()


def _section(body: str, name: str) -> str:
    return body.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0] if f"## {name}\n" in body else ""


def test_research_on_this_week_leads_with_what_changed(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "What changed this week?", "save": False})
    body = d["research"]["artifact"]["body"]
    # No biographies: nothing about them changed this week.
    assert "Lagos" not in body and "retail banking" not in body, body
    answer = _section(body, "Answer")
    first = answer.strip().split("\n")[0]
    # The answer leads with the window's changes, each dated today.
    assert TODAY.isoformat() in first, body
    changed = [line for line in answer.split("\n") if line.strip()]
    assert any("03:30" in line for line in changed), body
    # The week's session, its daily note and the claim written this week are evidence;
    # the old session and the old daily note are not.
    assert "03:30 UTC" in _section(body, "Session Evidence"), body
    evidence = _section(body, "Evidence")
    assert "Ledgerline cutover checklist" in evidence, body
    assert "Tomas now owns the payments on-call rota." in evidence, body
    assert "invoice exports" not in body, body
    assert SESSION in d["research"]["sources"] and f"logs/daily/{TODAY.isoformat()}.md" in d["research"]["sources"]
    assert "people/tomas-reyes.md" in d["research"]["sources"]
    assert "people/mira-okafor.md" not in d["research"]["sources"], d["research"]["sources"]


def test_research_on_a_subject_this_week_keeps_to_the_subject(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "What changed on Ledgerline this week?", "save": False})
    body = d["research"]["artifact"]["body"]
    first = _section(body, "Answer").strip().split("\n")[0]
    assert "03:30" in first and TODAY.isoformat() in first, body
    assert "Tomas now owns" not in _section(body, "Answer") and "Lagos" not in body, body
    # The page's old value is not given alone: the week's session that changed it is beside it.
    page = next(line for line in _section(body, "Evidence").split("\n") if "projects/ledgerline/state.md" in line)
    assert "02:00" in page and "Newer (" in page and "03:30" in page, body


def test_research_says_a_session_fact_once(srv: Any) -> None:
    # The session that moved the job is said beside the page's old time; it is not listed
    # again under Session Evidence, and a text two notes share is one evidence line.
    d = post_ok(srv, "/v1/research", {"question": "What time does the Ledgerline reconciliation job run now? "
                                                  "How often does the dashboard refresh?", "save": False})
    body = d["research"]["artifact"]["body"]
    evidence = _section(body, "Evidence") + _section(body, "Session Evidence")
    assert evidence.count("now runs at 03:30 UTC") == 1, body
    page = next(line for line in _section(body, "Evidence").split("\n") if "projects/ledgerline/state.md" in line)
    assert "Newer (" in page and "03:30" in page, body
    assert evidence.count(DASHBOARD) == 1, body
    shared = next(line for line in evidence.split("\n") if DASHBOARD in line)
    assert "knowledge/notes/dashboard.md" in shared and "knowledge/notes/dashboard-copy.md" in shared, body
    assert SESSION in d["research"]["sources"], d["research"]["sources"]
    # Active memory says it once too: the chat's "Noted: ..." repeats what was said.
    block = post_ok(srv, "/v1/active-memory", {"prompt": "What time does the Ledgerline reconciliation job run now?",
                                               "agent": "test", "budget_tokens": 600})["block"]
    assert block.count("now runs at 03:30 UTC") == 1 and "02:00" in block, block


def test_research_on_an_empty_span_says_so_and_saves_nothing(srv: Any) -> None:
    # Nothing was said or written last week (the old pages are months old).
    d = post_ok(srv, "/v1/research", {"question": "What changed last week?", "save": True})
    assert d["artifact"] is None and "Lagos" not in d["research"]["artifact"]["body"], d
    monday = TODAY - dt.timedelta(days=TODAY.weekday())
    span = f"from {(monday - dt.timedelta(days=7)).isoformat()} to {(monday - dt.timedelta(days=1)).isoformat()}"
    assert any(span in w for w in d["warnings"]), d["warnings"]


def test_a_digest_proposes_a_project_fact_to_the_project(srv: Any) -> None:
    d = post_ok(srv, "/v1/digest", {"session": SESSION, "save": False})
    assert any("03:30" in it["text"] and it["section"] == "fact" for it in d["digest"]["items"]), d["digest"]
    listed = post_ok(srv, "/v1/proposals", {})["proposals"]
    job = next(p for p in listed if "03:30" in p["content"])
    # The job is Ledgerline's: the proposal goes to the project page, not to Mira's.
    assert job["subject"] == "project:ledgerline", job
    shown = post_ok(srv, "/v1/proposals/show", {"id": job["id"]})
    assert shown["planned"]["target_path"] == "projects/ledgerline/state.md", shown
    # A fact about Mira still goes to her page.
    move = next(p for p in listed if "Porto" in p["content"])
    assert move["subject"] == "person:mira-okafor", move


def _hash(srv: Any, rel: str) -> str:
    r = srv.request("GET", f"/v1/get?path={rel}&debug=true", token=srv.token)
    assert r.status == 200, r.text
    return r.json()["hash"]


def test_a_saved_report_is_purged_without_allow_canonical(srv: Any) -> None:
    d = post_ok(srv, "/v1/research", {"question": "When does the Ledgerline reconciliation job run?", "save": True})
    rel = d["artifact"]["path"]
    assert rel.startswith("references/reports/"), d
    dry = post_ok(srv, "/v1/purge", {"target": rel})
    assert dry["action"] == "would_purge" and dry["paths"] == [rel], dry
    done = post_ok(srv, "/v1/purge", {"target": rel, "dry_run": False, "reason": "a draft I no longer need",
                                      "expected_hash": _hash(srv, rel)})
    assert done["action"] == "purged" and done["indexed"] is True, done
    assert srv.request("GET", f"/v1/get?path={rel}", token=srv.token).status == 404
    # Canonical memory keeps its gate.
    r = srv.request("POST", "/v1/purge", {"target": "people/mira-okafor.md"}, token=srv.token)
    assert r.status == 400 and "allow_canonical" in r.json()["error"]["message"], r.text


def test_a_report_marked_canonical_keeps_the_gate(srv: Any) -> None:
    # A report someone marked canonical: true is canonical memory, wherever it lies.
    d = post_ok(srv, "/v1/research", {"question": "Who leads the Ledgerline engineering work?", "save": True})
    rel = d["artifact"]["path"]
    text = srv.request("GET", f"/v1/get?path={rel}&debug=true", token=srv.token).json()
    content = text["content"].replace("source_kind: generated", "source_kind: generated\ncanonical: true", 1)
    post_ok(srv, "/v1/write", {"kind": "replace", "target": rel, "content": content, "expected_hash": text["hash"]})
    r = srv.request("POST", "/v1/purge", {"target": rel}, token=srv.token)
    assert r.status == 400 and "allow_canonical" in r.json()["error"]["message"], r.text


def test_a_page_made_to_look_like_a_report_keeps_the_gate(srv: Any) -> None:
    """A token holder rewrites a hand-written page's frontmatter to read as a generated
    report (`source_kind: generated` and a `question`): it is still not a saved report
    (those lie under references/reports/ or references/briefings/), so purging it still
    needs allow_canonical."""
    rel = "knowledge/runbook.md"
    page = srv.request("GET", f"/v1/get?path={rel}&debug=true", token=srv.token).json()
    forged = page["content"].replace("title: Runbook", "title: Runbook\nsource_kind: generated\n"
                                     "question: How do we restart?", 1)
    post_ok(srv, "/v1/write", {"kind": "replace", "target": rel, "content": forged, "expected_hash": page["hash"]})
    r = srv.request("POST", "/v1/purge", {"target": rel, "dry_run": False, "reason": "gone",
                                          "expected_hash": _hash(srv, rel)}, token=srv.token)
    assert r.status == 400 and "allow_canonical" in r.json()["error"]["message"], r.text
    assert srv.request("GET", f"/v1/get?path={rel}", token=srv.token).status == 200
