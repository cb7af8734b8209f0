"""Session updates beside the facts they change, and only those (issue 28), against a live
`commonplace serve` restarted over an existing build: a session whose turns move a port
and a deadline shows beside the project's stale facts in wake although its last line is
about something else; one project's session never shows under another project's fact.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from srvkit import post_ok, restarted

SESSION_FM = "---\ntitle: {t}\ntype: session\ncreated: {d}\nagent: claude-code\n{p}---\n\n"
FILES = {
    "core/user.md": "---\ntitle: Dana Okafor\ntype: core\n---\n# Dana Okafor\n\nSenior backend developer. Based in "
                    "Lisbon, timezone Europe/Lisbon (UTC+0, UTC+1 in summer).\n\n- Do not schedule anything before "
                    "10:00 Lisbon time.\n",
    "people/lena-fischer.md": "---\ntitle: Lena Fischer\ntype: person\nupdated: 2026-11-20\n---\n# Lena Fischer\n\n"
                              "Product manager for harbormaster. Berlin (Europe/Berlin). Wants a weekly status update "
                              "on Fridays by 16:00, by email.\n",
    "projects/tidepool/state.md": "---\ntitle: Tidepool\ntype: project\nupdated: 2026-11-24\n---\n# Tidepool\n\n"
                                  "A Rust CLI that tails structured logs.\n\n## Next milestone\n\n"
                                  "v0.9.0 — streaming mode for `tidepool tail --follow`, due 2026-12-05.\n",
    # no `updated:`: its facts are as new as its file, newer than the harbormaster session
    "projects/harbormaster/state.md": "---\ntitle: Harbormaster\ntype: project\n---\n# Harbormaster\n\n"
                                      "Django app for berth bookings.\n\n## Next milestone\n\n"
                                      "Invoicing v2 beta to three pilot marinas, due 2026-12-12.\n",
    "projects/ferry/state.md": "---\ntitle: Ferry\ntype: project\nupdated: 2026-11-20\n---\n# Ferry\n\n"
                               "Ferry schedules crossings for small harbours.\n\n## Status\n\n"
                               "The ferry dev server runs on port 8001 because 8000 is taken by the docs preview.\n\n"
                               "## Next milestone\n\nFerry booking beta to two pilot harbours, due 2026-12-12.\n",
    "logs/sessions/claude-code/2026-11-26-harbormaster-invoicing.md":
        SESSION_FM.format(t="Harbormaster invoicing session", d="2026-11-26", p="project: harbormaster\n")
        + "user: Lena just told me the invoicing v2 beta moved. It is now due 2026-12-19, not 2026-12-12, "
          "because Porto Azul needs another week.\n\n"
          "assistant: Noted: invoicing v2 beta is now due 2026-12-19.\n\n"
          "user: We decided to keep Celery for reminders.\n\nassistant: Recorded: Celery stays for reminders.\n",
    # the session's turns move the port and the deadline; its last line is about neither
    "logs/sessions/claude-code/2026-11-27-ferry-week.md":
        SESSION_FM.format(t="Ferry session", d="2026-11-27", p="project: ferry\n")
        + "user: The ferry booking beta moved: it is now due 2026-12-19 instead of 2026-12-12.\n\n"
          "assistant: Noted, the ferry booking beta is due 2026-12-19.\n\n"
          "user: Also the ferry dev server now runs on port 8002, the docs preview took 8001.\n\n"
          "assistant: Understood, port 8002 from now on.\n\n"
          "user: Thanks, that is all.\n\nassistant: Recorded: nothing else to change today.\n",
    "logs/sessions/claude-code/2026-11-28-tidepool-milestone.md":
        SESSION_FM.format(t="Tidepool session", d="2026-11-28", p="")
        + "user: Maya moved the tidepool v0.9.0 milestone. It is now due 2026-12-12 instead of 2026-12-05, "
          "because streaming mode needs a security review.\n\n"
          "assistant: Got it: tidepool v0.9.0 is now due 2026-12-12.\n",
    # an update said in words, no number: beside "Wants a weekly status update on Fridays"
    "logs/sessions/claude-code/2026-11-29-lena-status.md":
        SESSION_FM.format(t="Status update session", d="2026-11-29", p="")
        + "user: Lena Fischer now wants the weekly status update as a short Slack message instead of email.\n\n"
          "assistant: Noted.\n",
    "logs/sessions/claude-code/2026-11-30-priya-status.md":
        SESSION_FM.format(t="Priya's update", d="2026-11-30", p="")
        + "user: Priya now wants the weekly status update by email instead of a Slack message.\n\n"
          "assistant: Noted for Priya.\n",
    "people/omar-haddad.md": "---\ntitle: Omar Haddad\ntype: person\nupdated: 2026-11-20\n---\n# Omar Haddad\n\n"
                             "Designer for harbormaster. Wants the weekly status update as a Slack message.\n",
    # shares "ferry", "dev" and "server" with the session that moves the port, fewer words than the port's line
    "decisions/ferry.md": "---\ntitle: Ferry\ntype: decision\nupdated: 2026-11-20\n---\n# Ferry\n\n"
                          "We decided to keep the ferry dev server on the docs preview machine.\n",
    # a pull request's number is no new value of the harbormaster milestone
    "logs/sessions/claude-code/2026-11-29-harbormaster-locks.md":
        SESSION_FM.format(t="Harbormaster locks", d="2026-11-29", p="project: harbormaster\n")
        + "user: Merged PR #482: the invoicing v2 beta reminders for the pilot marinas take advisory locks.\n\n"
          "assistant: Good, the reminders no longer double-send.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def setup(first: Any) -> Any:
        post_ok(first, "/v1/memory-write", {"action": "write", "kind": "state", "subject": "harbormaster",
                                            "content": "Invoicing v2 beta is due 2026-12-19.", "allow_canonical": True})
        # recorded today: the ferry page's line a Postgres question matches is newer than the port's session
        post_ok(first, "/v1/memory-write", {"action": "write", "kind": "fact", "subject": "ferry",
                                            "content": "The ferry dev server now runs on Postgres 16.",
                                            "allow_canonical": True})

    server = restarted(tmp_path_factory.mktemp("context-updates"), FILES, setup)
    yield server
    server.stop()


def _under(block: str, fact: str) -> list[str]:
    """The `newer` lines right under the line that holds `fact`."""
    lines = block.split("\n")
    at = next(i for i, ln in enumerate(lines) if fact in ln)
    out = []
    for ln in lines[at + 1:]:
        if not ln.startswith("  - "):
            break
        out.append(ln)
    return out


def test_wake_shows_a_sessions_turns_beside_the_facts_they_change(srv: Any) -> None:
    block = post_ok(srv, "/v1/wake", {"agent": "claude-code", "project": "ferry", "budget_tokens": 1500})["block"]
    port = _under(block, "runs on port 8001")
    assert port and "8002" in port[0] and "2026-11-27-ferry-week.md" in port[0], block
    due = _under(block, "due 2026-12-12")
    assert due and "2026-12-19" in due[0] and "2026-11-27-ferry-week.md" in due[0], block


def test_a_projects_session_does_not_attach_to_another_projects_fact(srv: Any) -> None:
    block = post_ok(srv, "/v1/active-memory", {"prompt": "when is tidepool v0.9.0 due?", "agent": "claude-code",
                                               "include_wake": False})["block"]
    under = _under(block, "tidepool tail --follow")
    assert any("2026-12-12" in ln and "tidepool-milestone" in ln for ln in under), block
    lines = block.split("\n")
    for i, ln in enumerate(lines):  # every newer line sits under a fact of its own session's project
        fact = re.search(r"projects/(\w+)/state\.md\)$", ln)
        if not fact:
            continue
        for newer in _under("\n".join(lines[i:]), ln):
            project = re.search(r"logs/sessions/claude-code/[\d-]+-(\w+)-\w+\.md\)$", newer)
            assert project and project.group(1) == fact.group(1), (ln, newer)



def test_evidence_found_only_by_meaning_is_low_confidence() -> None:
    """"what's the weather in Paris?" found the owner's page by meaning (Lisbon, a
    timezone) and was answered with confidence medium; no word of the prompt is in it."""
    from commonplace.compiler.context.evidence import Evidence
    from commonplace.server.ops.active_memory import confidence_of

    by_meaning = Evidence("core/user.md", "Based in Lisbon.", score=0.4, matched=0.0)
    worded = Evidence("projects/ferry/state.md", "Ferry booking beta due 2026-12-12.", score=0.4, matched=2.0)
    session = Evidence("logs/sessions/x.md", "The beta moved.", session=True, matched=1.0)
    assert confidence_of([by_meaning], []) == "low"
    assert confidence_of([worded], []) == "medium"
    assert confidence_of([worded], [session]) == "high"
    assert confidence_of([], []) is None
    # with the prompt: its content words, not "what" of "what's"
    who = Evidence("core/identity.md", "Who keeps this memory and what it is for.", matched=1.0)
    assert confidence_of([who], [], "what's the weather in Paris?") == "low"
    assert confidence_of([worded], [], "when is the ferry booking beta due?") == "medium"


def test_only_a_strong_match_by_meaning_alone_is_evidence() -> None:
    """No line shares a content word with the prompt: "who handles the money side of
    things" and the finance lead's page (0.88) is an answer; a made-up prompt's nearest
    pages (0.45) are not. A line that shares a word keeps every weaker match."""
    from commonplace.compiler.context.evidence import Evidence
    from commonplace.server.ops.active_memory import by_meaning_alone

    finance = Evidence("people/dana.md", "Dana runs finance operations.", score=0.88)
    near = Evidence("projects/harbor/state.md", "The Harbor app launch is due 2026-12-12.", score=0.45)
    durable, sessions, alone = by_meaning_alone([finance, near], [], "who handles the money side of things")
    assert alone and durable == [finance] and sessions == []
    durable, _, alone = by_meaning_alone([near], [], "flibber quantum marmalade zebra")
    assert alone and durable == []
    durable, _, alone = by_meaning_alone([near, finance], [], "when is the Harbor launch?")
    assert not alone and durable == [near, finance]


def test_an_off_topic_prompt_is_not_answered_with_medium_confidence(srv: Any) -> None:
    # this server runs without embeddings, so nothing is found by meaning (the test above)
    d = post_ok(srv, "/v1/active-memory", {"prompt": "what's the weather in Paris?", "agent": "claude-code",
                                           "include_wake": False, "debug": True})
    assert d["confidence"] in ("low", None), d
    on_topic = post_ok(srv, "/v1/active-memory", {"prompt": "when is the ferry booking beta due?",
                                                  "agent": "claude-code", "include_wake": False, "debug": True})
    assert on_topic["confidence"] in ("medium", "high"), on_topic


def test_a_change_said_in_words_goes_beside_the_fact_it_changes(srv: Any) -> None:
    """"Lena now wants the update as a Slack message instead of email" has no number; the
    page's "weekly status update on Fridays" was shown alone, as if current."""
    block = post_ok(srv, "/v1/active-memory", {"prompt": "How does Lena want her weekly status update?",
                                               "agent": "claude-code", "include_wake": False})["block"]
    under = _under(block, "weekly status update on Fridays by 16:00")
    assert any("Slack" in ln and "2026-11-29-lena-status.md" in ln for ln in under), block


def test_a_pull_request_number_is_no_newer_value(srv: Any) -> None:
    """"Merged PR #482: the invoicing v2 beta reminders ..." went under "Invoicing v2 beta
    ..., due 2026-12-12" in wake as `newer`, telling the agent the milestone changed."""
    block = post_ok(srv, "/v1/wake", {"agent": "claude-code", "project": "harbormaster",
                                      "budget_tokens": 1500})["block"]
    assert "#482" not in "\n".join(ln for ln in block.split("\n") if ln.startswith("  - ")), block


def test_a_session_line_goes_under_the_fact_it_shares_most_with(srv: Any) -> None:
    """The ferry page's line a Postgres question matches was recorded today, after the
    session that moved the port; "the ferry dev server now runs on port 8002" then went
    under a decision sharing "ferry dev server", and the page's "runs on port 8001" was
    shown with nothing under it."""
    block = post_ok(srv, "/v1/active-memory", {"prompt": "Which Postgres does the ferry dev server run on?",
                                               "agent": "claude-code", "include_wake": False})["block"]
    assert "runs on port 8001" in block, block
    assert any("8002" in ln for ln in _under(block, "runs on port 8001")), block
    if "docs preview machine" in block:
        assert not any("8002" in ln for ln in _under(block, "docs preview machine")), block


def test_a_persons_fact_is_not_changed_by_a_line_about_someone_else(srv: Any) -> None:
    """"Priya now wants the weekly status update by email instead of a Slack message" went
    under Omar's "Wants the weekly status update as a Slack message": the same words,
    another person."""
    block = post_ok(srv, "/v1/active-memory", {"prompt": "How does Omar want his weekly status update?",
                                               "agent": "claude-code", "include_wake": False})["block"]
    assert "Omar Haddad" in block, block
    assert not any("Priya" in ln for ln in _under(block, "as a Slack message.")), block


@pytest.mark.parametrize("budget", [100, 120, 160, 200, 260])
def test_a_tight_wake_never_shows_a_fact_without_its_update(srv: Any, budget: int) -> None:
    """At 120 tokens the project's "due 2026-12-12" was shown and the `newer` line under
    it cut off: the stale value read as current."""
    block = post_ok(srv, "/v1/wake", {"agent": "claude-code", "project": "ferry", "budget_tokens": budget})["block"]
    for stale, new in (("runs on port 8001", "8002"), ("due 2026-12-12", "2026-12-19")):
        if stale in block:
            assert any(new in ln for ln in _under(block, stale)), (budget, block)
