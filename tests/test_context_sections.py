"""A question that names a section of a page ("the status of lanternfish") is answered by
the lines under that heading, which need not repeat its word."""

from __future__ import annotations

from commonplace.compiler.context.evidence import pick, query_terms
from commonplace.compiler.context.facts import page_units

PAGE = """---
title: lanternfish
type: project
---
# lanternfish

A command-line tool for tailing structured logs, written in Python.

## Status

- The nightly fuzz job runs at 01:00 UTC on the CI runner Tomás hosts.
- Open blocker: issue #212, timestamps with nanosecond precision are truncated.
- Supported Python versions: 3.9 to 3.13.

## People

- Priya Raman (co-maintainer, plugin API)
"""


def test_the_status_of_a_project_is_its_status_section() -> None:
    page = page_units("projects/lanternfish/state.md", PAGE)
    got = [u.text for u in pick(page, query_terms("What's the status of lanternfish?"), "", False)]
    assert any("Open blocker" in t for t in got) and any("fuzz job" in t for t in got), got
    assert any("Supported Python" in t for t in got) and not any("Priya" in t for t in got), got


def test_current_state_names_a_status_section_too() -> None:
    page = page_units("projects/lanternfish/state.md", PAGE)
    got = [u.text for u in pick(page, query_terms("What is the current state of lanternfish?"), "", False)]
    assert any("Open blocker" in t for t in got), got


def test_a_question_about_one_line_still_gets_that_line() -> None:
    page = page_units("projects/lanternfish/state.md", PAGE)
    got = [u.text for u in pick(page, query_terms("Which Python versions does lanternfish support?"), "", False)]
    assert got[0].startswith("Supported Python versions") and not any("fuzz" in t for t in got), got


def test_list_items_joined_in_one_line_stay_apart() -> None:
    from commonplace.compiler.context.evidence import joined
    from commonplace.compiler.context.facts import Unit

    text, _ = joined([Unit("Priya Raman (co-maintainer, plugin API)"), Unit("The 0.9.0 release moved to 2026-12-18.")],
                     [], "")
    assert text == "Priya Raman (co-maintainer, plugin API). The 0.9.0 release moved to 2026-12-18."


def test_a_sentence_shown_alone_is_not_shown_again_inside_a_longer_line() -> None:
    from commonplace.compiler.context.pack import Packer

    p = Packer(300)
    allergy = "Daniel has a severe tree-nut allergy and carries an EpiPen."
    p.section("## Durable evidence", [(allergy, f"{allergy} (people/daniel.md)", "people/daniel.md"),
                                       (f"{allergy} He orders croissants on Fridays.",
                                        f"{allergy} He orders croissants on Fridays. (people/daniel.md)",
                                        "people/daniel.md")])
    assert p.text().count("EpiPen") == 1 and "- He orders croissants on Fridays. (people/daniel.md)" in p.text()


def test_a_session_line_cut_at_a_semicolon_says_it_goes_on() -> None:
    from commonplace.compiler.context.facts import _clip

    text = ("Got it. Summary: cake flavour changed to raspberry and vanilla; balance now due 2026-12-15; "
            "Lena can work Saturdays from January, and the oven rep comes on Tuesday at eleven.")
    assert _clip(text, 110) == "Got it. Summary: cake flavour changed to raspberry and vanilla; balance now due 2026-12-15…"


def test_when_something_is_due_is_answered_by_its_deadline() -> None:
    text = ("---\ntitle: Starfall\ntype: project\n---\n# Starfall\n\nGerman localisation of a fantasy game.\n\n"
            "| field | value |\n|---|---|\n| Client | Hoshizora |\n| Rate | 0.12 EUR a word |\n| Format | XLIFF |\n"
            "| Deadline | 2027-01-08 |\n| Words left | 12,500 |\n")
    page = page_units("projects/starfall.md", text)
    got = [u.text for u in pick(page, query_terms("When is the Starfall work due?"), "", False)]
    assert any("2027-01-08" in t for t in got), got
