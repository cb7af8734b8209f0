"""Wake and research defects from an agent's day (2026-12-04), against `wake()` and
research's `findings()` directly over a small maintainer's memory:

- the `coding` profile left out the pinned `core/user.md` that holds the working agreements;
- a tight budget dropped today's and yesterday's daily notes and the pinned decision, cut
  the working agreements after their third rule, and kept stubs of the people pages; a
  daily note was shown as its heading and a truncation line only;
- the truncation note named the MCP tool (`dory_get`) whatever the transport;
- research for "when and where is the dinner, and what dietary needs matter?" left out
  that Jonas is coeliac.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Iterator

import pytest
from livedocs import opened

from commonplace.compiler.context.evidence import disk_reader
from commonplace.compiler.context.sections import Section
from commonplace.compiler.context.tokens import estimate_tokens
from commonplace.compiler.context.wake import wake
from commonplace.compiler.context.wakefit import fit, note, visible
from commonplace.compiler.markdown.parse import parse
from commonplace.server.ops.research import findings, people_cautions

TODAY = dt.date(2026, 12, 4)
AGREEMENTS = ["Never push directly to `main`", "Draft messages to collaborators", "Keep release notes in plain",
              "Sam does not work on weekends", "Ask before adding a new runtime dependency"]
FILES = {
    "core/user.md": "---\ntitle: User\ntype: core\npinned: true\n---\n# User\n\n"
                    "Sam Okafor is an independent open-source maintainer living in Lisbon (Europe/Lisbon).\n"
                    "Sam maintains lanternfish, a command-line tool for tailing structured logs, and the Harbor "
                    "docs site.\n\n## Working agreements\n\n"
                    "- Never push directly to `main`; every change goes through a pull request, even one-line fixes.\n"
                    "- Draft messages to collaborators for Sam to review; never send them on Sam's behalf.\n"
                    "- Keep release notes in plain English, no marketing words like \"blazing\".\n"
                    "- Sam does not work on weekends; don't schedule anything for Saturday or Sunday.\n"
                    "- Ask before adding a new runtime dependency to lanternfish.\n",
    "core/identity.md": "---\ntitle: Identity\ntype: core\n---\n# Identity\n\n"
                        "You are Sam's coding and maintainer assistant. You help triage issues, review pull "
                        "requests and draft release notes.\nBe concise. Prefer concrete next steps.\n",
    "projects/lanternfish/state.md": "---\ntitle: lanternfish\ntype: project\nupdated: 2026-11-30\n---\n"
                                     "# lanternfish\n\nA command-line tool for tailing and filtering structured "
                                     "(JSON and logfmt) logs. Written in Python, with a Rust parser in progress.\n\n"
                                     "## Status\n\n- Version 0.9 is in beta; the 0.9.0 release is planned for "
                                     "2026-12-15.\n- The nightly fuzz job runs at 01:00 UTC on the CI runner Tomás "
                                     "hosts.\n- Open blocker: issue #212, timestamps with nanosecond precision are "
                                     "truncated.\n- Supported Python versions: 3.9 to 3.13.\n\n## People\n\n"
                                     "- [[Priya Raman]] (co-maintainer, plugin API)\n- [[Tomás Ruiz]] (packaging, "
                                     "CI)\n\n## Decisions\n\n- [[decisions/2026-11-20-drop-python-38]]\n",
    "people/priya-raman.md": "---\ntitle: Priya Raman\ntype: person\naliases: [Priya]\n---\n# Priya Raman\n\n"
                             "Co-maintainer of lanternfish since 2025. Lives in Bengaluru (IST, UTC+5:30).\n"
                             "Priya prefers asynchronous review comments on GitHub over calls.\n"
                             "She does not take calls before 10:00 IST.\n",
    "people/tomas-ruiz.md": "---\ntitle: Tomás Ruiz\ntype: person\naliases: [Tomás]\n---\n# Tomás Ruiz\n\n"
                            "Packages lanternfish for Debian and Homebrew. Lives in Buenos Aires (ART, UTC-3).\n"
                            "Tomás needs release tarballs signed with Sam's GPG key three days before a release.\n",
    "people/jonas-weber.md": "---\ntitle: Jonas Weber\ntype: person\naliases: [Jonas]\n---\n# Jonas Weber\n\n"
                             "Maintainer of the Harbor project. Based in Berlin (CET, UTC+1).\n"
                             "Jonas has coeliac disease and eats strictly gluten-free.\n"
                             "He likes short, bullet-point messages.\n"
                             "Jonas is organising the maintainers' dinner at FOSDEM in Brussels.\n",
    "people/mei-lin.md": "---\ntitle: Mei Lin\ntype: person\naliases: [Mei]\n---\n# Mei Lin\n\n"
                         "Docs contributor on the Harbor docs site. Lives in Vancouver.\n"
                         "Mei is vegetarian.\n",
    "decisions/2026-11-20-drop-python-38.md": "---\ntitle: Drop Python 3.8 in lanternfish\ntype: decision\n"
                                              "date: 2026-11-20\n---\n# Drop Python 3.8 in lanternfish\n\n"
                                              "Decision: lanternfish 0.9 drops support for Python 3.8.\n\n"
                                              "Why: Python 3.8 reached end of life in October 2024.\n",
    "decisions/2026-11-25-docs-hosting.md": "---\ntitle: Host the Harbor docs on GitHub Pages\ntype: decision\n"
                                            "date: 2026-11-25\npinned: true\n---\n"
                                            "# Host the Harbor docs on GitHub Pages\n\n"
                                            "Decision: the Harbor docs site moves from Read the Docs to GitHub "
                                            "Pages.\n\nWhy: Read the Docs' ads on the free tier bothered Jonas, and "
                                            "the build already runs in GitHub Actions.\nAlternatives considered: "
                                            "Netlify (rejected: another account to manage).\n",
    "logs/daily/2026-12-04.md": "---\ntitle: '2026-12-04'\ntype: daily\n---\n# Friday 2026-12-04\n\n"
                                "- Merged the fix for #212 after Priya's review this morning.\n"
                                "- Need to send Tomás the signed tarball by next Monday.\n"
                                "- Jonas asked for the FOSDEM dinner headcount by tomorrow.\n",
    "logs/daily/2026-12-03.md": "---\ntitle: '2026-12-03'\ntype: daily\n---\n# Thursday 2026-12-03\n\n"
                                "- Found the cause of #212: the logfmt parser casts timestamps to float. Started a "
                                "fix on branch fix/212-nanos.\n- Paired with Priya for an hour on the Rust parser "
                                "benchmarks; the Rust parser is 4x faster on 1 GB files.\n"
                                "- Jonas confirmed the maintainers' dinner at FOSDEM is on the Saturday evening.\n",
    "logs/sessions/claude-code/2026-12-04-ci-cleanup.md": "---\ntitle: CI cleanup\ntype: session\n"
                                                          "summary: Cleaned up the CI jobs of lanternfish.\n---\n"
                                                          "user: can you clean up the CI jobs?\n\n"
                                                          "assistant: Cleaned up the CI jobs of lanternfish.\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[tuple[Path, dict, Any]]:
    """The files on disk and the live corpus's documents (links resolved), no index."""
    with opened(tmp_path, FILES) as c:
        yield c


def _wake(corpus: tuple[Path, dict, Any], **kw):
    root, docs, resolver = corpus
    return wake(docs, root=root, today=TODAY, agent="claude-code", resolver=resolver, **kw)


def _section(block: str, path: str) -> list[str]:
    """The lines of the block's section headed with `path`."""
    lines = block.split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("## ") and f"({path})" in ln)
    end = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [ln for ln in lines[at + 1:end] if ln.strip()]


# ------------------------------------------------------------------ 2: pinned pages in coding


def test_coding_wake_shows_the_pinned_user_page_with_the_working_agreements(corpus) -> None:
    r = _wake(corpus, profile="coding", project="lanternfish", budget_tokens=800)
    assert "core/user.md" in r.sources, r.block
    assert all(a in r.block for a in AGREEMENTS), r.block
    assert "core/identity.md" not in r.sources  # unpinned: coding leaves it out, as Dory's profile does


def test_coding_wake_leaves_out_an_unpinned_user_page(corpus) -> None:
    root, docs, _ = corpus
    text = FILES["core/user.md"].replace("pinned: true\n", "")
    (root / "core/user.md").write_text(text)
    docs = {**docs, "core/user.md": parse("core/user.md", text.encode())[0]}
    r = wake(docs, root=root, today=TODAY, profile="coding", budget_tokens=800)
    assert "core/user.md" not in r.sources and "Never push directly" not in r.block


def test_privacy_wake_shows_no_pinned_page_whole(corpus) -> None:
    r = _wake(corpus, profile="privacy", budget_tokens=800)
    assert "Never push directly" not in r.block and "core/user.md" not in r.sources


# ------------------------------------------------------------------ 3: a tight budget's priorities


@pytest.mark.parametrize("budget", [500, 600])
def test_a_tight_wake_keeps_todays_and_yesterdays_notes_and_the_pinned_decision(corpus, budget: int) -> None:
    r = _wake(corpus, project="lanternfish", budget_tokens=budget)
    assert r.tokens_estimated == estimate_tokens(r.block) <= budget
    for path, first in (("logs/daily/2026-12-04.md", "Merged the fix for #212"),
                        ("logs/daily/2026-12-03.md", "Found the cause of #212"),
                        ("decisions/2026-11-25-docs-hosting.md", "Decision: the Harbor docs site moves")):
        assert path in r.sources and path not in r.omitted, (path, r.block)
        assert _section(r.block, path)[0].startswith(first), r.block
    # the working agreements whole, the project's first fact, the session line
    assert all(a in r.block for a in AGREEMENTS) and "core/user.md" not in r.truncated, r.block
    assert "A command-line tool for tailing" in r.block and "## Recent sessions" in r.block


def test_a_tight_wake_drops_people_stubs_before_rules_and_notes(corpus) -> None:
    r = _wake(corpus, project="lanternfish", budget_tokens=500)
    # a low-priority page is whole lines or nothing, never a stub cut in its words
    for path in ("people/priya-raman.md", "people/tomas-ruiz.md"):
        if path in r.sources:
            assert not any(ln.endswith("…") for ln in _section(r.block, path)), r.block
        else:
            assert path in r.omitted
    assert "Lives in Buenos Aires…" not in r.block


def test_people_pages_come_back_when_there_is_room(corpus) -> None:
    r = _wake(corpus, project="lanternfish", budget_tokens=1500)
    assert {"people/priya-raman.md", "people/tomas-ruiz.md", "decisions/2026-11-20-drop-python-38.md"} \
        <= set(r.sources) and not r.omitted and not r.truncated, r.block


@pytest.mark.parametrize("budget", [1, 40, 100, 150, 250, 300, 400, 700, 1000, 1500])
def test_every_budget_is_kept_and_no_section_is_a_heading_alone(corpus, budget: int) -> None:
    for kw in ({"project": "lanternfish"}, {}, {"profile": "coding", "cwd": "/home/sam/code/lanternfish"}):
        r = _wake(corpus, budget_tokens=budget, include_recent_sessions=3, **kw)
        assert estimate_tokens(r.block) <= budget
        for part in r.block.split("\n\n"):
            body = [ln for ln in part.split("\n")[1:] if ln.strip()]
            if part.startswith("## "):
                facts = [ln for ln in body if not ln.startswith("[wake excerpt truncated")]
                assert facts and not all(ln.endswith(":") for ln in facts), (budget, kw, r.block)
        assert not set(r.sources) & set(r.omitted)


def test_a_section_cut_to_its_labels_is_left_out() -> None:
    """The fallback wake showed `## Daily note: 2026-12-03` with its day's label and a
    truncation line only."""
    sec = Section("daily", ["logs/daily/2026-12-03.md"], "## Daily note: 2026-12-03 (logs/daily/2026-12-03.md)",
                  ["Thursday:", "Found the cause of #212: the logfmt parser casts timestamps to float. Started a "
                                "fix on branch fix/212-nanos, and paired with Priya on the Rust parser benchmarks."],
                  ["", "found the cause"])
    pairs = visible(sec, set())
    room = estimate_tokens(sec.text(["Thursday:"]) + "\n" + note(sec.paths)) + 1
    assert fit(sec, pairs, room, stub=False) == ("", True)
    text, cut = fit(sec, pairs, room + 4)  # a stub of words is allowed: the fact's first words, not the label
    assert cut and "Thursday:" not in text and "Found the cause" in text


def test_a_daily_note_does_not_repeat_its_day_as_a_label(corpus) -> None:
    r = _wake(corpus, budget_tokens=1500)
    assert "Friday 2026-12-04:" not in r.block and "Thursday 2026-12-03:" not in r.block
    assert _section(r.block, "logs/daily/2026-12-04.md")[0].startswith("Merged the fix")


# ------------------------------------------------------------------ 4: the truncation note


def test_the_truncation_note_names_the_callers_transport(corpus) -> None:
    plain = _wake(corpus, project="lanternfish", budget_tokens=300)
    assert plain.truncated and "dory_get" not in plain.block
    cut = plain.truncated[0]
    assert f"[wake excerpt truncated; get path={cut} for the rest]" in plain.block
    http = _wake(corpus, project="lanternfish", budget_tokens=300, transport="http")
    assert f"GET /v1/get?path={cut}" in http.block and "dory_get" not in http.block
    mcp = _wake(corpus, project="lanternfish", budget_tokens=300, transport="mcp")
    assert f"dory_get path={cut}" in mcp.block
    assert estimate_tokens(http.block) <= 300 and estimate_tokens(mcp.block) <= 300


# ------------------------------------------------------------------ 1: research's safety facts

QUESTION = "When and where is the FOSDEM maintainers' dinner, and what dietary needs matter?"
PEOPLE = sorted(p for p in FILES if p.startswith("people/"))


def _results(*paths: str) -> list[dict]:
    return [{"path": p, "title": p, "snippet": "", "score_normalized": 0.5} for p in paths]


def test_research_about_a_dinner_says_who_is_coeliac(corpus) -> None:
    root = corpus[0]
    also: list[str] = []
    # what the search found: the dinner's lines, and off-topic pages
    body = findings(QUESTION, _results("logs/daily/2026-12-03.md", "people/tomas-ruiz.md", "core/user.md"),
                    disk_reader(root), [], also, PEOPLE)
    answer = body.split("## Answer\n", 1)[1].split("\n## ", 1)[0]
    evidence = body.split("## Evidence\n", 1)[1]
    assert "Jonas has coeliac disease and eats strictly gluten-free." in answer, body
    assert "people/jonas-weber.md: Jonas has coeliac disease" in evidence, body
    assert "people/jonas-weber.md" in also
    # the one the evidence names (Jonas) before one it does not (Mei)
    assert answer.index("coeliac") < answer.index("vegetarian"), body


def test_research_names_the_asked_person_first(corpus) -> None:
    root = corpus[0]
    rows = people_cautions("What can Mei eat at the dinner?", PEOPLE, ["people/jonas-weber.md"], "Jonas",
                           disk_reader(root))
    assert [p for p, _, _ in rows] == ["people/mei-lin.md", "people/jonas-weber.md"]
    assert rows[0][1] == "Mei is vegetarian."


def test_research_not_about_food_adds_no_cautions(corpus) -> None:
    root = corpus[0]
    assert people_cautions("When is the 0.9.0 release?", PEOPLE, ["people/jonas-weber.md"], "",
                           disk_reader(root)) == []
    body = findings("When is the 0.9.0 release?", _results("projects/lanternfish/state.md"), disk_reader(root),
                    [], [], PEOPLE)
    assert "coeliac" not in body and "vegetarian" not in body


def test_research_with_no_evidence_says_only_the_named_persons_diet(corpus) -> None:
    root = corpus[0]
    assert people_cautions("What should I cook tonight?", PEOPLE, [], "", disk_reader(root)) == []
    rows = people_cautions("What should I cook for Jonas?", PEOPLE, [], "", disk_reader(root))
    assert [p for p, _, _ in rows] == ["people/jonas-weber.md"]
