"""Which session line is shown as the newer version of a durable fact (`attach_updates`,
`compiler/context/updates.py`): a line about another subject must never be."""

from __future__ import annotations

from commonplace.compiler.context.active import render
from commonplace.compiler.context.evidence import Evidence, attach_updates, query_terms
from commonplace.compiler.context.updates import updates


def test_a_line_sharing_only_a_speech_verb_and_a_weekday_is_no_update() -> None:
    """"Tomás says ... before Friday" and "Jonas says the dinner is now on Friday" share
    "says" and "Friday": nothing about the same subject, so the dinner's move is not shown
    as the newer version of the packaging deadline."""
    fact = Evidence("logs/daily/2026-12-02.md",
                    "Tomás says the Homebrew formula needs the new tarball checksum before Friday.", "2026-12-02")
    dinner = Evidence("logs/sessions/claude-code/2026-12-04-ci.md",
                      "Also, Jonas says the FOSDEM dinner is now on the Friday evening, not Saturday.",
                      "2026-12-04", session=True)
    assert not updates(fact.path, fact.text, dinner.path, dinner.text)
    left = attach_updates([fact], [dinner], query_terms("How should I send Mei feedback on her tutorial draft?"))
    assert fact.updates == [] and left == [dinner]
    assert "newer" not in render([fact], [], 300).text


def test_the_same_dinner_moved_is_still_an_update() -> None:
    fact = Evidence("logs/daily/2026-12-03.md",
                    "Jonas confirmed the maintainers' dinner at FOSDEM is on the Saturday evening.", "2026-12-03")
    moved = Evidence("logs/sessions/claude-code/2026-12-04-ci.md",
                     "Also, Jonas says the FOSDEM dinner is now on the Friday evening, not Saturday.",
                     "2026-12-04", session=True)
    attach_updates([fact], [moved], query_terms("When is the FOSDEM dinner?"))
    assert fact.updates == [moved]
    assert "  - newer: Also, Jonas says the FOSDEM dinner is now on the Friday evening" in render([fact], [], 300).text


def test_another_fact_of_a_note_is_not_updated_by_a_line_about_something_else() -> None:
    """The daily note's other facts (shown under More evidence) get a session line beside
    them only when it is about the same thing: the dinner's move is not the packaging
    deadline's."""
    from commonplace.compiler.context.evidence import attach_to_other_facts
    from commonplace.compiler.context.facts import Unit

    facts = ["Fixed the CNAME file for docs.harbor.dev; the GitHub Pages preview works.",
             "Call with Mei about the tutorial outline. She will send the first draft next Thursday.",
             "Tomás says the Homebrew formula needs the new tarball checksum before Friday."]
    note = Evidence("logs/daily/2026-12-02.md", facts[1], "2026-12-02", units=[Unit(facts[1])],
                    rest=[Unit(facts[0]), Unit(facts[2])])
    text = ("Also, Jonas says the FOSDEM dinner is now on the Friday evening, not Saturday, because the venue "
            "was booked. Got it: the maintainers' dinner at FOSDEM moved to Friday evening. I'll keep in mind "
            "Jonas eats gluten-free when suggesting places.")
    session = Evidence("logs/sessions/claude-code/2026-12-04-ci-cleanup.md", text, "2026-12-04", session=True,
                       units=[Unit(t) for t in text.split(". ")])
    attach_to_other_facts([note], [session])
    assert note.rest_updates == {}


def test_a_project_is_named_by_its_slug_with_spaces() -> None:
    from commonplace.compiler.context.updates import same_subject

    fact = "Three-tier lemon and elderflower cake, made by Lena."
    line = "Noted: the Marchetti wedding cake is now a raspberry and vanilla sponge, no longer lemon."
    assert same_subject("projects/marchetti-wedding/state.md", fact, "logs/sessions/s.md", line,
                        projects=["marchetti-wedding", "new-oven"])
    # another project's page is not changed by it
    assert not same_subject("projects/new-oven.md", "The oven quote is 14,000 GBP.", "logs/sessions/s.md", line,
                            projects=["marchetti-wedding", "new-oven"])


def test_a_session_turn_not_shown_that_names_the_old_value_goes_under_the_fact() -> None:
    """A session of several changes is shown by its cake turn and summary; its balance
    turn, which names the fact's date as the old one, still goes under the balance."""
    from commonplace.compiler.context.facts import Unit

    fact = Evidence("projects/marchetti-wedding/state.md",
                    "Marchetti wedding: Deposit: 50% paid on 2026-11-14; balance of £1,450 due on 2026-12-12.",
                    "2026-12-04")
    cake = "Sofia wants to switch the wedding cake to raspberry and vanilla instead of lemon."
    balance = "Also the balance. Sofia asked if she can pay the £1,450 balance on 2026-12-15 instead of 2026-12-12."
    session = Evidence("logs/sessions/claude/2026-12-04-morning.md", cake, "2026-12-04", session=True,
                       units=[Unit(cake)], rest=[Unit(balance), Unit("Lena can work Saturdays from January.")])
    attach_updates([fact], [session], query_terms("When is the wedding balance due?"))
    assert [u.text for u in fact.updates] == [balance]
    # a turn that names the old value and no new one changes nothing
    again = Evidence("projects/marchetti-wedding/state.md", fact.text, "2026-12-04")
    same = Evidence("logs/sessions/claude/s2.md", cake, "2026-12-04", session=True, units=[Unit(cake)],
                    rest=[Unit("Reminder: the £1,450 balance is due on 2026-12-12.")])
    attach_updates([again], [same], query_terms("When is the wedding balance due?"))
    assert again.updates == []


def test_a_year_alone_is_no_value_two_lines_share() -> None:
    from commonplace.compiler.context.updates import said_values

    assert said_values("the newsletter flat fee is now €270 per issue from January 2027") == frozenset()
    assert "2027-01-15" in said_values("Fixed fee €1,300, due 2027-01-15")


def test_a_fee_is_no_new_word_count() -> None:
    from commonplace.compiler.context.updates import changes_value

    line = "And Tom confirmed the newsletter fee goes up to €270 per issue from January 2027."
    path = "projects/lumen-newsletter.md"
    assert not changes_value("Monthly patient newsletter, about 1,800 words an issue.", line, strict=True,
                             fact_path=path)
    assert changes_value("Flat fee €240 per issue.", line, strict=True, fact_path=path)
