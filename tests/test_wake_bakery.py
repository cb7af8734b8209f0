"""Wake over a bakery's memory after an agent's day (`wake()` directly): a pinned decision
the project links to keeps its rank, a session line goes under a daily-note fact only
when it is about the same thing, and a project's changed facts keep their place."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Iterator

import pytest
from livedocs import opened

from commonplace.compiler.context.wake import wake

TODAY = dt.date(2026, 12, 4)
CLAIMS = ("\n<!-- commonplace:claims:start -->\n\n## Claims\n\n### Fact\n\n"
          "- The Marchetti wedding headcount is now 135 guests. — recorded 2026-12-04 by api · `c_18dc5446d32751bc`\n\n"
          "<!-- commonplace:claims:end -->\n")
FILES = {
    "projects/marchetti-wedding/state.md": (
        "---\ntitle: Marchetti wedding\ntype: project\n---\n# Marchetti wedding\n\n"
        "Catering for the wedding of Sofia Marchetti and James Doyle at Fernhill Barn.\n\n## Status\n\n"
        "- The Marchetti wedding headcount is now 135 guests.\n"
        + "".join(f"- Canapé {i}: a long line about the canapé number {i}, its pastry, filling and garnish.\n"
                  for i in range(12))
        + "- The whole menu is nut-free ([[decisions/2026-11-20-nut-free-wedding-menu]]).\n" + CLAIMS),
    "decisions/2026-11-20-nut-free-wedding-menu.md": (
        "---\ntitle: Nut-free wedding menu\ntype: decision\npinned: true\n---\n# Nut-free wedding menu\n\n"
        "Decision: the Marchetti wedding menu has no nuts at all, because two guests have nut allergies.\n"),
    "logs/daily/2026-12-04.md": "---\ntitle: 2026-12-04\ntype: daily\n---\n# Friday\n\n"
                                "- Confirm the final wedding headcount with Sofia today.\n",
    "logs/daily/2026-12-03.md": "---\ntitle: 2026-12-03\ntype: daily\n---\n# Thursday\n\n"
                                "- Ruth tasted the gluten-free brioche and loved it; she wants two for Christmas.\n",
    "logs/sessions/claude/2026-12-04-morning.md": (
        "---\ntitle: claude session s1\ntype: session\ncreated: 2026-12-04T09:00:00Z\n"
        "updated: 2026-12-04T09:00:00Z\n---\n\nuser: Sofia just messaged. She wants to switch the wedding cake to "
        "raspberry and vanilla instead of lemon and elderflower.\n\nassistant: Noted.\n"),
}


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[tuple[Path, dict, Any]]:
    with opened(tmp_path, FILES) as c:
        yield c


def _wake(corpus: tuple[Path, dict, Any], **kw: Any) -> Any:
    root, docs, resolver = corpus
    return wake(docs, root=root, today=TODAY, agent="a", resolver=resolver, **kw)


def test_a_pinned_decision_the_project_links_keeps_its_place(corpus) -> None:
    r = _wake(corpus, project="marchetti-wedding", budget_tokens=600)
    assert "decisions/2026-11-20-nut-free-wedding-menu.md" in r.sources, (r.block, r.omitted)
    assert "## Decision: Nut-free wedding menu" in r.block


def test_a_session_about_the_cake_is_not_under_other_notes_facts(corpus) -> None:
    block = _wake(corpus, project="marchetti-wedding", budget_tokens=1200).block
    lines = block.split("\n")
    for fact in ("Confirm the final wedding headcount", "Ruth tasted the gluten-free brioche"):
        at = next(i for i, ln in enumerate(lines) if fact in ln)
        assert not lines[at + 1].startswith("  - newer: "), block


def test_a_projects_changed_fact_keeps_its_place_in_a_tight_wake(corpus) -> None:
    """The claim restating the status bullet stands where the bullet stood, not after the
    dozen canapé lines a tight budget cuts."""
    r = _wake(corpus, project="marchetti-wedding", budget_tokens=400)
    assert "headcount is now 135 guests" in r.block, r.block
