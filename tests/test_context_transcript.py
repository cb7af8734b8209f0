"""A conversation kept in one page (`compiler/context/transcript.py`): the speakers' names
are not matched, and the best turn comes with the reply to it."""

from __future__ import annotations

from pathlib import Path

from commonplace.compiler.context.evidence import disk_reader, gather

TALK = """---
title: "Dana and Mel — 8 June, 2023"
date: 2023-06-08
---
# Dana and Mel — 8 June, 2023

**Dana:** Hey Mel! Good to see you.

**Mel:** Hey Dana! Long time no see. The kids keep me busy.

**Dana:** Wow, what a lovely family photo! How long have you been married?

**Mel:** Five years already! We had the wedding on a beach near Lisbon.

**Dana:** That sounds perfect, Mel.

**Mel:** Thanks, Dana! I'm off to pick up the kids from swimming.
"""


def test_the_turn_that_asks_comes_with_the_reply(tmp_path: Path) -> None:
    (tmp_path / "talk.md").write_text(TALK, "utf-8")
    e = gather([{"path": "talk.md"}], "How long have Mel and her husband been married?", disk_reader(tmp_path))[0]
    assert "How long have you been married?" in e.text, e.text
    # the reply opens with three words, so its next sentence comes too
    assert "Mel: Five years already! We had the wedding on a beach near Lisbon." in e.text, e.text
    assert e.text.index("How long") < e.text.index("Five years")
    # a greeting that holds only the name asked about is not the evidence
    assert "Hey Mel" not in e.text and "That sounds perfect" not in e.text, e.text


def test_a_question_of_nothing_but_a_name_still_matches_the_name(tmp_path: Path) -> None:
    (tmp_path / "talk.md").write_text(TALK, "utf-8")
    e = gather([{"path": "talk.md"}], "Dana?", disk_reader(tmp_path))[0]
    assert "Dana" in e.text, e.text


def test_a_page_of_fields_is_not_a_conversation(tmp_path: Path) -> None:
    """"Status:", "Owner:" each said once are fields: "status" is still a word to match,
    and no next line is added as a reply."""
    (tmp_path / "atlas.md").write_text(
        "# Atlas\n\nStatus: paused until the audit is signed off.\n\nOwner: Alex Kim runs it day to day.\n\n"
        "Budget: forty thousand for the year, most of it spent.\n\nDue: the end of March, if the audit clears.\n\n"
        "Notes: the vendor changed twice this year.\n", "utf-8")
    e = gather([{"path": "atlas.md"}], "What is the status of Atlas?", disk_reader(tmp_path))[0]
    assert e.text.startswith("Status: paused until the audit is signed off."), e.text
    assert "Alex Kim" not in e.text, e.text


def test_a_short_plural_is_the_same_word(tmp_path: Path) -> None:
    """"pet" in the question matches "pets" in the turn that asks, so the reply (the answer)
    comes with it; the small talk around it does not."""
    (tmp_path / "talk.md").write_text(
        "# Dana and Mel\n\n**Dana:** Hey Mel! How was the weekend?\n\n**Mel:** Busy, Dana. Lots of errands.\n\n"
        "**Dana:** Do you have any pets at home?\n\n**Mel:** Yes, a guinea pig called Oscar. He loves carrots.\n\n"
        "**Dana:** Cute! See you on Monday.\n\n**Mel:** See you, Dana.\n", "utf-8")
    e = gather([{"path": "talk.md"}], "What pet does Mel have?", disk_reader(tmp_path))[0]
    assert "Do you have any pets at home?" in e.text, e.text
    assert "guinea pig called Oscar" in e.text, e.text
    assert "How was the weekend" not in e.text, e.text
