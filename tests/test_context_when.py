"""Relative times in what an agent reads are given their day: "yesterday" in a turn said on
6 October 2022 is 5 October 2022, which an agent reading it a year later cannot work out."""

from __future__ import annotations

import datetime as dt

from commonplace.compiler.context.evidence import disk_reader, gather
from commonplace.compiler.context.facts import page_units
from commonplace.compiler.context.when import resolve

WED = dt.date(2023, 6, 21)  # a Wednesday


def test_yesterday_and_last_weekday_get_their_dates() -> None:
    assert resolve("I tried a new recipe yesterday!", dt.date(2022, 10, 6), "dmy") == \
        "I tried a new recipe yesterday (5 October, 2022)!"
    assert resolve("I had a car accident last Friday, no one was hurt.", WED, "dmy") == \
        "I had a car accident last Friday (16 June, 2023), no one was hurt."
    # the weekday of the day itself, said as "last": a week before
    assert resolve("Last Wednesday we met.", WED, "iso") == "Last Wednesday (2023-06-14) we met."


def test_next_weekday_is_in_the_week_after_the_notes_week() -> None:
    """A daily note of Wednesday 2 December 2026 says "swap next Thursday": a reader, British
    or American, means the Thursday of next week (10 December), not the next day. Weeks
    start on Monday; "next <weekday>" is that day of the calendar week after the note's."""
    wed = dt.date(2026, 12, 2)
    assert resolve("swap next Thursday", wed, "iso") == "swap next Thursday (2026-12-10)"
    assert resolve("Next Monday we freeze.", wed, "iso") == "Next Monday (2026-12-07) we freeze."
    assert resolve("next Wednesday", wed, "iso") == "next Wednesday (2026-12-09)"
    assert resolve("next Sunday", wed, "iso") == "next Sunday (2026-12-13)"
    sun = dt.date(2026, 12, 6)  # the last day of its week: next week begins tomorrow
    assert resolve("next Monday", sun, "iso") == "next Monday (2026-12-07)"
    assert resolve("next Sunday", sun, "iso") == "next Sunday (2026-12-13)"
    # "last <weekday>" is still the most recent one before the day, this week's or the last
    assert resolve("last Monday", wed, "iso") == "last Monday (2026-11-30)"
    assert resolve("this past Thursday", wed, "iso") == "this past Thursday (2026-11-26)"


def test_this_or_on_a_weekday_is_the_coming_one() -> None:
    """ "This Thursday" and a bare "on Thursday" are the coming one; "this Wednesday" said
    on a Wednesday is that day. A bare "on Wednesday" said on a Wednesday could be that day
    or a week on, and a sentence in the past tense ("we shipped on Monday") means one gone
    by: both are left as written, as a wrong day is worse than none."""
    wed = dt.date(2026, 12, 2)
    assert resolve("The demo is this Thursday.", wed, "iso") == "The demo is this Thursday (2026-12-03)."
    assert resolve("This Monday the office is shut.", wed, "dmy") == \
        "This Monday (7 December, 2026) the office is shut."
    assert resolve("Ship this Wednesday.", wed, "iso") == "Ship this Wednesday (2026-12-02)."
    assert resolve("We swap on Thursday.", wed, "iso") == "We swap on Thursday (2026-12-03)."
    assert resolve("Pay the invoice on Monday morning.", wed, "iso") == \
        "Pay the invoice on Monday (2026-12-07) morning."
    assert resolve("Ana will call on Tuesday, then Omar.", wed, "iso") == \
        "Ana will call on Tuesday (2026-12-08), then Omar."
    assert resolve("We need to swap on Friday. It went well on Monday.", wed, "iso") == \
        "We need to swap on Friday (2026-12-04). It went well on Monday."
    # a deadline: "by", "before", "until" a weekday is the coming one too
    assert resolve("Tomás says the formula needs the new checksum before Friday.", wed, "iso") == \
        "Tomás says the formula needs the new checksum before Friday (2026-12-04)."
    assert resolve("Send the slides by Monday.", wed, "iso") == "Send the slides by Monday (2026-12-07)."
    # a clause that looks ahead after one in the past: its weekday is still the coming one
    assert resolve("Called Fernhill Barn: they will confirm kitchen access by Friday.", wed, "iso") == \
        "Called Fernhill Barn: they will confirm kitchen access by Friday (2026-12-04)."
    for left in ("The review is on Wednesday.", "We shipped on Monday.", "I went hiking on Sunday with Ana.",
                 "We finished it before Friday.", "The branch is frozen until Wednesday.",
                 "The party on Saturday was fun.", "This Monday we met the auditors.",
                 "The gym is closed on Sundays.", "We meet on Thursday, 3 December."):
        assert resolve(left, wed, "iso") == left, left


def test_spans_are_said_against_the_day_they_were_said() -> None:
    assert resolve("A flood hit my old area last week.", dt.date(2023, 7, 7), "dmy") == \
        "A flood hit my old area last week (the week before 7 July, 2023)."
    assert resolve("I was in the ER last weekend.", dt.date(2023, 10, 17), "dmy") == \
        "I was in the ER last weekend (the weekend before 17 October, 2023)."
    assert resolve("Last month I got hurt.", dt.date(2023, 10, 13), "dmy") == \
        "Last month (September 2023) I got hurt."
    assert resolve("It started last year at a festival.", dt.date(2023, 10, 19), "iso") == \
        "It started last year (2022) at a festival."
    assert resolve("I started surfing five years ago.", dt.date(2023, 7, 16), "dmy") == \
        "I started surfing five years ago (2018)."
    assert resolve("I saw my doctor 3 days ago.", dt.date(2023, 5, 24), "iso") == \
        "I saw my doctor 3 days ago (2023-05-21)."
    assert resolve("We ship next month.", dt.date(2023, 12, 5), "dmy") == "We ship next month (January 2024)."
    assert resolve("The review is tomorrow.", dt.date(2024, 2, 29), "iso") == "The review is tomorrow (2024-03-01)."


def test_text_without_a_relative_time_or_already_dated_is_left_alone() -> None:
    plain = "The nightly job runs at 03:30 UTC."
    assert resolve(plain, WED, "iso") == plain
    # a date right after the phrase: the writer already said it
    said = "The job moved yesterday (2023-06-20) to 03:30."
    assert resolve(said, WED, "iso") == said
    # "a week ago today" or "the last week of August" are not "last week" said on that day
    assert resolve("It was the last week of August.", WED, "dmy") == "It was the last week of August."
    vague = "She's lived there since last year's move, years ago."
    assert resolve(vague, WED, "dmy") == vague


def test_a_chat_turn_is_resolved_against_its_own_day_in_its_own_style(tmp_path) -> None:
    text = ('---\ntitle: "Joanna — 11:15 am on 6 October, 2022"\ndate: 2022-10-06\n---\n'
            "**Joanna** — 11:15 am on 6 October, 2022\n\nYesterday, I tried my newest dairy-free recipe.\n")
    page = page_units("c/D1-2.md", text)
    assert page.units[-1].text == "Yesterday (5 October, 2022), I tried my newest dairy-free recipe."
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "D1-2.md").write_text(text, "utf-8")
    ev = gather([{"path": "c/D1-2.md", "score_normalized": 1.0}], "What did Joanna cook?", disk_reader(tmp_path))
    assert "Yesterday (5 October, 2022), I tried" in ev[0].text


def test_a_page_begun_on_a_day_is_not_a_record_of_that_day() -> None:
    """A note's `date` says when it was begun; a line added to it weeks later says
    "yesterday" about another day, so only records of one day are resolved."""
    page = page_units("notes/plan.md", "---\ntitle: Plan\ndate: 2025-01-01\n---\n# Plan\n\nWe shipped yesterday.\n")
    assert page.units[0].text == "We shipped yesterday."
    meeting = "---\ntitle: Standup\ntype: meeting\ndate: 2025-01-08\n---\nWe shipped yesterday.\n"
    assert page_units("notes/standup.md", meeting).units[0].text == "We shipped yesterday (2025-01-07)."
    titled = "---\ntitle: Standup 2025-01-08\n---\nWe shipped yesterday.\n"
    assert page_units("notes/standup.md", titled).units[0].text == "We shipped yesterday (2025-01-07)."
    # its title's day and its frontmatter's disagree: which one the lines were said on is unknown
    odd = "---\ntitle: Standup 2025-01-08\ndate: 2025-02-01\n---\nWe shipped yesterday.\n"
    assert page_units("notes/standup.md", odd).units[0].text == "We shipped yesterday."


def test_a_page_whose_date_is_only_its_last_edit_is_not_resolved() -> None:
    # `updated` says when the page was last written, not when this line was: its
    # "yesterday" could be any day before
    page = page_units("notes/x.md", "---\nupdated: 2026-11-27\n---\nWe moved the job yesterday.\n")
    assert page.units[0].text == "We moved the job yesterday."
    page = page_units("daily/2026-11-20.md", "# Friday\n\nShipped the fix yesterday.\n")
    assert page.units[0].text == "Shipped the fix yesterday (2026-11-19)."


def test_a_claim_is_resolved_against_the_day_it_was_recorded() -> None:
    text = ("---\ntitle: Ledgerline\nupdated: 2026-11-28\n---\n# Ledgerline\n\n"
            "<!-- commonplace:claims:start -->\n\n## Claims\n\n### Facts\n\n"
            "- The nightly job moved to 03:30 UTC yesterday. — recorded 2026-11-27 by api · `c_bac13b42cf12948a`\n\n"
            "<!-- commonplace:claims:end -->\n")
    page = page_units("projects/ledgerline.md", text)
    assert page.units[0].kind == "claim"
    assert page.units[0].text == "The nightly job moved to 03:30 UTC yesterday (2026-11-26)."


def test_any_text_and_day_resolve_without_an_error() -> None:
    """The calendar's edges and odd text cost the phrase its day, never the page."""
    from hypothesis import given, settings, strategies as st

    phrases = st.sampled_from(["yesterday", "tomorrow", "last Monday", "next Sunday", "this Friday", "on Tuesday",
                               "was", "last week", "next month",
                               "last year", "999 weeks ago", "12 months ago", "0 days ago", "x"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(phrases, st.text(max_size=12)), max_size=6), st.dates())
    def check(parts: list[str], day: dt.date) -> None:
        text = " ".join(parts)
        out = resolve(text, day, "dmy")
        rest = iter(out)
        assert all(ch in rest for ch in text)  # every character kept, in order: only days added

    check()
    assert resolve("see you tomorrow", dt.date.max, "iso") == "see you tomorrow"
    assert resolve("since yesterday", dt.date.min, "dmy") == "since yesterday"


def test_a_question_names_the_span_of_days_it_asks_about() -> None:
    from commonplace.compiler.context.when import asked_window

    sat = dt.date(2026, 11, 28)  # a Saturday
    day = dt.timedelta(days=1)
    assert asked_window("What changed this week?", sat) == (dt.date(2026, 11, 23), sat)  # Monday to today
    assert asked_window("what happened last week", sat) == (dt.date(2026, 11, 16), dt.date(2026, 11, 22))
    assert asked_window("anything new in the past 3 days?", sat) == (sat - 2 * day, sat)
    assert asked_window("the last two weeks", sat) == (sat - 13 * day, sat)
    assert asked_window("What did we do yesterday?", sat) == (sat - day, sat - day)
    assert asked_window("this morning's changes", sat) == (sat, sat)
    assert asked_window("What did I do yesterday, and what's left for today?", sat) == (sat - day, sat)
    for vague in ("What changed recently?", "the last week of August", "What changed on Ledgerline?",
                  "What project did Jolene finish last week before 23 January, 2023?"):  # relative to that day
        assert asked_window(vague, sat) is None, vague


def test_a_fresh_checkout_is_not_read_page_by_page_for_what_changed(tmp_path) -> None:
    """Every file of a fresh checkout changed today, but a page whose frontmatter dates
    are older than the span, with no claim recorded in it, cannot have been written in
    it: research over "this week" opens none of them (opening each of 10,000 took 11 s),
    and a page dated in the span is still found."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.context.evidence import disk_reader
    from commonplace.compiler.context.recent import changed_in

    for i in range(30):
        (tmp_path / "people").mkdir(exist_ok=True)
        (tmp_path / f"people/p{i}.md").write_text(f"---\ntitle: P{i}\ntype: person\ndate: 2024-01-0{1 + i % 9}\n---\n"
                                                  f"# P{i}\n\nP{i} changed teams twice.\n", "utf-8")
    (tmp_path / "notes.md").write_text("---\ntitle: Notes\ndate: 2026-11-27\n---\n# Notes\n\nThe cutover moved to "
                                       "Tuesday.\n", "utf-8")
    docs = {d.path: d for d in load_corpus(tmp_path).docs}
    opened: list[str] = []
    read = disk_reader(tmp_path)

    def counting(path: str):  # noqa: ANN202
        opened.append(path)
        return read(path)

    week = (dt.date(2026, 11, 23), dt.date(2026, 11, 28))
    found = changed_in(docs, tmp_path, counting, week, 10)
    assert [e.path for e in found] == ["notes.md"] and "cutover" in found[0].text
    assert not any(p.startswith("people/") for p in opened), opened


def test_what_changed_in_a_span_keeps_its_first_days_sessions(tmp_path) -> None:
    """Wednesday, "What changed this week?": ten pages written today took all eight
    places, newest first, and Monday's session (the job moved to 03:30) was left out."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.context.evidence import disk_reader
    from commonplace.compiler.context.recent import window_evidence

    wed = dt.date(2026, 12, 2)
    (tmp_path / "logs/sessions/agent").mkdir(parents=True)
    for day, said in (("2026-11-30", "The reconciliation job now runs at 03:30 UTC."),
                      ("2026-12-01", "The Harbor launch moved to 2026-12-17.")):
        (tmp_path / f"logs/sessions/agent/{day}-s.md").write_text(
            f"---\ntitle: s\ntype: session\ncreated: '{day}T10:00:00Z'\n---\n\nuser: {said}\n\nassistant: Noted.\n",
            "utf-8")
    (tmp_path / "notes").mkdir()
    for i in range(10):
        (tmp_path / f"notes/n{i}.md").write_text(f"---\ntitle: N{i}\ndate: {wed.isoformat()}\n---\n# N{i}\n\n"
                                                 f"Note {i} was written today.\n", "utf-8")
    docs = {d.path: d for d in load_corpus(tmp_path).docs}
    window, _, found = window_evidence("What changed this week?", docs, tmp_path, disk_reader(tmp_path), wed, 8)
    paths = [e.path for e in found]
    assert window == (dt.date(2026, 11, 30), wed) and len(found) == 8
    assert "logs/sessions/agent/2026-11-30-s.md" in paths and "logs/sessions/agent/2026-12-01-s.md" in paths, paths
    assert any(p.startswith("notes/") for p in paths)
    assert [e.date for e in found] == sorted((e.date for e in found), reverse=True)


def test_the_day_after_tomorrow_and_in_n_days() -> None:
    fri = dt.date(2026, 12, 4)
    assert resolve("Glossary review with Kenji the day after tomorrow.", fri, "iso") == \
        "Glossary review with Kenji the day after tomorrow (2026-12-06)."
    assert resolve("Call Tom tomorrow.", fri, "iso") == "Call Tom tomorrow (2026-12-05)."
    assert resolve("We meet in 3 days.", fri, "iso") == "We meet in 3 days (2026-12-07)."
    assert resolve("Send a second reminder in two weeks.", fri, "iso") == \
        "Send a second reminder in two weeks (about 2026-12-18)."
    # a deadline someone wants is ahead, whatever the adjective before it ("revised")
    assert resolve("Marisol wants the revised homepage copy by Monday.", fri, "iso") == \
        "Marisol wants the revised homepage copy by Monday (2026-12-07)."
