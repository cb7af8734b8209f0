"""What a long prompt asks (`compiler/context/asks.py`): the part active memory searches
first, and the rest, searched on its own."""

from __future__ import annotations

from commonplace.compiler.context.asks import split

LOG = "\n".join(f'  File "/srv/app/worker/step_{i}.py", line {i * 7}, in run x = a ? b : c  # ?q={i}'
                for i in range(12))


def test_a_short_prompt_is_searched_whole() -> None:
    prompt = "We moved the export. When does it run now?"
    assert split(prompt).focus == prompt and split(prompt).rest == ""


def test_the_question_after_a_paste() -> None:
    got = split(f"Hit this again:\n\n{LOG}\n\nQuick one while I remember: what is Dana allergic to?")
    assert got.focus == "Quick one while I remember: what is Dana allergic to?"
    assert "step_3.py" in got.rest and "Dana" not in got.rest


def test_the_question_before_a_paste() -> None:
    """The last paragraph that asks, wherever it is; the "?" of code is not a question."""
    got = split(f"Why does the ingest worker time out on Mondays?\n\n{LOG}")
    assert got.focus == "Why does the ingest worker time out on Mondays?"


def test_a_question_without_its_subject_takes_the_sentence_before() -> None:
    got = split("We moved the nightly reconciliation export to the new queue. " * 8
                + "\n\nWe moved the export to Hetzner. When does it run now?")
    assert got.focus == "We moved the export to Hetzner. When does it run now?"


def test_an_instruction_without_a_question_mark() -> None:
    got = split("Here is my draft:\n\n" + "The quarterly numbers are in and look fine. " * 12
                + "\n\nDraft my Friday update to Dana about the billing migration.")
    assert got.focus == "Draft my Friday update to Dana about the billing migration."
    assert got.rest.startswith("Here is my draft: The quarterly numbers")


def test_a_question_about_the_paste_keeps_the_prompt_whole() -> None:
    prompt = f"Hit this again:\n\n{LOG}\n\nWhat does this mean?"
    assert split(prompt).focus == prompt.strip() and split(prompt).rest == ""


def test_an_instruction_after_a_pasted_email_that_asks() -> None:
    email = ("Hi team, the March invoices for the Lisbon office are still open and the auditors are waiting. "
             "Finance says the export failed twice last week and nobody has looked at the logs yet. " * 3)
    got = split(f"This came in this morning:\n\n{email}\nCan you confirm the totals by Friday?\n\n"
                "Draft a reply to Dana's billing team about it.")
    assert got.focus.endswith("Draft a reply to Dana's billing team about it.")
    assert "Can you confirm the totals by Friday?" in got.focus
    assert "Dana" not in got.rest and "auditors" in got.rest


def test_a_pasted_log_after_the_question_is_not_an_instruction() -> None:
    got = split(f"Why does the ingest worker time out on Mondays?\n\n{LOG}\n\nsee above")
    assert got.focus == "Why does the ingest worker time out on Mondays?"


def test_a_paste_with_nothing_asked_of_it_is_searched_whole() -> None:
    prompt = f"{LOG}\n{LOG}"
    assert split(prompt).focus == prompt.strip() and split(prompt).rest == ""


def test_a_prompt_asking_two_things_is_two_questions() -> None:
    from commonplace.compiler.context.asks import parts

    assert parts("What is Priya allergic to, and when does the Ledgerline launch?") == \
        ["What is Priya allergic to", "when does the Ledgerline launch"]
    assert parts("Is Marco vegetarian? Also what language is Atlas written in?") == \
        ["Is Marco vegetarian", "what language is Atlas written in"]
    # the later question's "her" is about the name the first one said
    assert parts("When is Mei's tutorial draft due and how should I ping her?") == \
        ["When is Mei's tutorial draft due", "how should I ping her Mei"]
    assert parts("Where is Caleb's brother relocating to, and does Caleb plan to visit?") == \
        ["Where is Caleb's brother relocating to", "does Caleb plan to visit"]
    # a later question that refers to no one is not given the first one's names
    assert parts("How much is the Rofco oven, and when is the wedding balance due?") == \
        ["How much is the Rofco oven", "when is the wedding balance due"]


def test_one_question_with_an_and_is_one_question() -> None:
    from commonplace.compiler.context.asks import parts

    for one in ("What does Nate do that he loves and can make money from?",
                "What type of ice cream does Joanna mention that Nate makes and is delicious?",
                "What do Caroline and Melanie have in common?", "Did Joanna and Nate go camping?",
                "Who is Sam and what does he do?"):  # (its second half has nothing to search for)
        assert parts(one) == [], one


def test_a_later_question_that_names_nothing_gets_the_first_ones_subject() -> None:
    from commonplace.compiler.context.asks import parts

    got = parts("When is the game localisation due and how many words are left?")
    assert got[0] == "When is the game localisation due" and "localisation" in got[1] and "words" in got[1]


def test_one_page_answering_both_questions_says_what_each_found() -> None:
    from commonplace.compiler.context.evidence import Evidence
    from commonplace.compiler.context.facts import Unit
    from commonplace.server.ops.active_memory import _in_turn

    due, left = Unit("Deadline: 2027-01-08."), Unit("Words left: 12,500.")
    page = "projects/starfall/state.md"
    first = [Evidence(page, due.text, units=[due]), Evidence("people/kenji.md", "Kenji runs it.")]
    second = [Evidence(page, left.text, units=[left]), Evidence("projects/verde.md", "About 9,500 words.")]
    got = _in_turn([first, second])
    assert [e.path for e in got] == [page, "people/kenji.md", "projects/verde.md"]
    assert got[0].text == "Deadline: 2027-01-08. Words left: 12,500."
