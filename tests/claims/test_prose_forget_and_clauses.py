"""Day-7 defects of the prose edits (`claims/prose.py`, `server/ops/elsewhere.py`):
a forget takes a hand-written sentence (or clause, bullet, table row) out of a page; a
replace rewrites only the clause it restates; the "still says" warning is only about the
values the replace changed."""

from __future__ import annotations

from commonplace.compiler.claims.prose import closest_sentences, forget_sentence, rewrite_restated
from commonplace.server.ops.elsewhere import changed_values

JONAS = ("---\ntitle: Jonas Weber\ntype: person\n---\n\n# Jonas Weber\n\n"
         "Maintainer of the Harbor project. Based in Berlin (CET, UTC+1).\n"
         "Jonas has coeliac disease and eats strictly gluten-free.\n"
         "He likes short, bullet-point messages and answers email within a day.\n"
         "Jonas is organising the maintainers' dinner at FOSDEM in Brussels.\n")
NAME = frozenset({"jonas", "weber", "he", "his", "him", "she", "her", "they", "their", "them", "it", "its"})
LANTERN = ("---\ntitle: lanternfish\ntype: project\n---\n\n# lanternfish\n\nA log tailing tool.\n\n## Status\n\n"
           "- Version 0.9 is in beta; the 0.9.0 release is planned for 2026-12-15.\n"
           "- The nightly fuzz job runs at 01:00 UTC.\n\n## People\n\n- Priya\n")
RELEASE = "The 0.9.0 release moved to 2026-12-18 because #212 needs another review round."


def forget(text: str, content: str) -> tuple[str, list[str]]:
    return forget_sentence(text, content, "people/jonas-weber.md", NAME)


def test_forget_takes_the_clause_out_and_keeps_the_rest_of_the_sentence() -> None:
    out, removed = forget(JONAS, "Jonas answers email within a day.")
    assert removed == ["answers email within a day"], removed
    assert "He likes short, bullet-point messages.\n" in out, out
    assert "coeliac disease" in out and "FOSDEM" in out and "Maintainer of the Harbor project." in out


def test_forget_takes_a_whole_sentence_out_of_its_paragraph() -> None:
    out, removed = forget(JONAS, "Jonas is based in Berlin (CET, UTC+1).")
    assert removed == ["Based in Berlin (CET, UTC+1)."], removed
    assert "\nMaintainer of the Harbor project.\nJonas has coeliac" in out, out
    out, removed = forget(JONAS, "Jonas is based in Berlin.")  # its parenthesis aside
    assert removed == ["Based in Berlin (CET, UTC+1)."], removed
    out, removed = forget(JONAS, "Jonas is organising the maintainers' dinner at FOSDEM in Brussels.")
    assert removed and "FOSDEM" not in out and out.endswith("within a day.\n"), out


def test_forget_takes_a_bullet_or_a_table_row_out_whole() -> None:
    text = "# Ada\n\n## Notes\n\n- Ada has swimming on Tuesdays at 17:00.\n- Ada loves drawing horses.\n"
    out, removed = forget_sentence(text, "Ada has swimming on Tuesdays at 17:00.", "people/ada.md", frozenset({"ada"}))
    assert removed and out == "# Ada\n\n## Notes\n\n- Ada loves drawing horses.\n", out
    table = "# Northwind\n\n| field | value |\n|---|---|\n| stage | Negotiation |\n| close date | 2026-12-18 |\n"
    out, removed = forget_sentence(table, "The Northwind close date is 2026-12-18.", "projects/northwind.md",
                                   frozenset({"northwind"}))
    assert removed and "2026-12-18" not in out and "| stage | Negotiation |" in out, out


def test_forget_of_a_different_value_or_an_unrelated_text_removes_nothing() -> None:
    assert forget(JONAS, "Jonas answers email within a week.") == (JONAS, [])
    assert forget(JONAS, "Jonas answers email within two days.") == (JONAS, [])
    assert forget(JONAS, "Jonas has coeliac disease.") == (JONAS, [])  # half a sentence whose other half needs it
    assert forget(JONAS, "Jonas is vegetarian.") == (JONAS, [])
    text = "# Jonas\n\nJonas reviews PRs on Mondays and Tuesdays.\n"
    assert forget(text, "Jonas reviews PRs on Tuesdays.") == (text, [])  # it says more than that


def test_closest_sentences_name_what_the_page_says_about_it() -> None:
    near = closest_sentences(JONAS, "Jonas replies to email within two days.", "people/jonas-weber.md", NAME)
    assert near and "answers email within a day" in near[0], near
    assert closest_sentences(JONAS, "Completely unrelated words here.", "people/jonas-weber.md", NAME) == []


def test_a_replace_rewrites_only_the_clause_holding_the_old_value() -> None:
    out = rewrite_restated(LANTERN, RELEASE, "projects/lanternfish/state.md", frozenset({"lanternfish"}))
    assert ("- Version 0.9 is in beta; the 0.9.0 release moved to 2026-12-18 because \\#212 needs another review "
            "round.\n") in out, out
    assert "2026-12-15" not in out and "- The nightly fuzz job runs at 01:00 UTC." in out


def test_a_comma_and_clause_is_rewritten_alone_and_a_list_is_not_split() -> None:
    text = "# Ops\n\nThe backup runs at 03:00 UTC, and the deploy window opens on Fridays.\n"
    out = rewrite_restated(text, "The backup now runs at 04:30 UTC.", "projects/ops.md")
    assert "The backup now runs at 04:30 UTC, and the deploy window opens on Fridays." in out, out
    # ", and" after an earlier comma ends a list, not a clause: the sentence is rewritten whole
    text = "# Ada\n\nAda has swimming on Tuesdays at 17:00 at Elm Park, bring goggles, and a pound coin.\n"
    out = rewrite_restated(text, "Ada has swimming on Wednesdays at 17:30 at Elm Park now.", "people/ada.md",
                           frozenset({"ada"}))
    assert "pound coin" not in out and "Wednesdays at 17:30" in out, out


def test_still_says_only_the_values_the_replace_changed() -> None:
    removed = ["- Version 0.9 is in beta; the 0.9.0 release is planned for 2026-12-15."]
    added = ["- Version 0.9 is in beta; the 0.9.0 release moved to 2026-12-18 because \\#212 needs another review "
             "round."]
    assert changed_values(removed, added, RELEASE) == ["2026-12-15"]
    # even when the page's line was rewritten whole, a version the new value's version
    # extends (0.9 of 0.9.0) names the subject, it is not an old value
    assert changed_values(removed, ["- " + RELEASE], RELEASE) == ["2026-12-15"]
    assert changed_values(["Ada has swimming on Tuesdays at 17:00."], ["Ada has swimming on Wednesdays at 17:30 now."],
                          "Ada has swimming on Wednesdays at 17:30 now.") == ["17:00", "Tuesdays"]
