"""The context builder's pieces (compiler/context/): pages as facts, lines without
bookkeeping, packing within a budget. The routes that use them are tested live in
tests/server/test_context_live.py."""

from __future__ import annotations

from pathlib import Path

from commonplace.compiler.context.active import render
from commonplace.compiler.context.evidence import (
    BRIEF_CHARS, Evidence, attach_updates, disk_reader, gather, hop_names, names, query_terms, rerank,
)
from commonplace.compiler.context.facts import Unit, page_units, session_summary
from commonplace.compiler.context.pack import Packer
from commonplace.compiler.context.plain import plain_line, sentences
from commonplace.compiler.context.tokens import estimate_tokens
from commonplace.compiler.context.turns import read_on

PAGE = """---
title: Alex Kim
aliases: [Alex]
---
# Alex Kim

Alex runs the **billing** migration. See [[projects/atlas/state.md|Atlas]].

<!-- commonplace:claims:start -->

## Claims

### Facts

- Alex is allergic to peanuts. — recorded 2026-11-27 by api · `c_bac13b42cf12948a`

### State

- Alex is back from leave. — since 2026-11-20 · recorded 2026-11-27 by api · `c_f08f81f06cb8695d`

<!-- commonplace:details:start History: 1 superseded, retired or ended claim -->

- *replaced 2026-11-27:* Alex is on leave. — state · recorded 2026-11-27 by api · `c_f08f81f06cb8695d`

<!-- commonplace:details:end -->

<!-- commonplace:claims:end -->

<!-- commonplace:timeline:start -->

## Timeline

- 2026-11-27 11:06 UTC · added fact `c_bac13b42cf12948a`: Alex is allergic to peanuts. (by api)

<!-- commonplace:timeline:end -->

<!-- commonplace:evidence:start -->

## Evidence

- [[sources/semantic/2026/11/27/alex-110636-add.md|2026-11-27 11:06 UTC · add]] — `c_bac13b42cf12948a`

<!-- commonplace:evidence:end -->
"""


def test_page_units_are_facts_without_bookkeeping() -> None:
    page = page_units("people/alex.md", PAGE)
    texts = [(u.kind, u.text, u.date) for u in page.units]
    assert page.title == "Alex Kim"
    assert texts == [("prose", "Alex runs the billing migration. See Atlas.", ""),
                     ("claim", "Alex is allergic to peanuts.", "2026-11-27"),
                     ("claim", "Alex is back from leave.", "2026-11-20")]  # since beats recorded
    joined = " ".join(t for _, t, _ in texts)
    assert "on leave." not in joined.replace("back from leave", "")  # the replaced claim is history
    assert "c_" not in joined and "sources/semantic" not in joined


def test_plain_line_cuts_markup_and_repeats() -> None:
    assert plain_line("**Maya** — 1:56 pm we adopted a puppy **Maya** — 1:56 pm we adopted a puppy") == \
        "Maya — 1:56 pm we adopted a puppy"
    assert plain_line("See [[people/alex.md|Alex]] and [[atlas]] <!-- commonplace:x --> `c_0123456789abcdef`") == \
        "See Alex and atlas"
    assert plain_line("It rained. It rained. Then sun.") == "It rained. Then sun."
    assert plain_line("keep `decisions/` as written") == "keep `decisions/` as written"


def test_session_summary_is_not_the_first_message() -> None:
    text = "---\ntitle: s\n---\nuser: can you look at the job?\n\nassistant: Moved the job to 03:30 UTC.\n"
    assert session_summary(text) == "Moved the job to 03:30 UTC."
    # An answer that names nothing is led by the ask that did: which jobs were checked
    vague = "---\ntitle: s\n---\nuser: can you check the Quillstone jobs?\n\nassistant: Looked at the queue and the alerts.\n"
    assert "Quillstone" in session_summary(vague) and "Looked at the queue" in session_summary(vague)
    assert session_summary("---\nsummary: Shipped the fix.\n---\nuser: hi\n") == "Shipped the fix."
    # A few words say nothing without their ask; a session of several asks is said by what
    # each answer settled, the last ones that fit
    assert session_summary("user: what's the weather?\n\nassistant: I can't check that.\n") == \
        "What's the weather? I can't check that."
    several = ("user: can you look at why the Ledgerline reconciliation failed again?\n\nassistant: It hit a table "
               "lock; I opened PR #482.\n\nuser: Dana says the deadline moved.\n\nassistant: Noted: the Ledgerline "
               "launch deadline is now 2026-12-19.\n")
    assert session_summary(several) == ("It hit a table lock; I opened PR #482. Noted: the Ledgerline launch "
                                        "deadline is now 2026-12-19.")
    assert session_summary(several, 70) == "Noted: the Ledgerline launch deadline is now 2026-12-19."
    # too long for both: the ask is cut, not the answer (cut at its sentence, only the ask was left)
    two = ("user: Quick one, Dana told me she prefers Slack messages now, not email.\n\nassistant: Got it.\n\n"
           "user: also I reviewed PR #482 and merged it.\n\nassistant: Merged PR #482 (advisory locks for the "
           "Ledgerline reconciliation).\n")
    short = session_summary(two, limit=120)
    assert short.startswith("Quick one, Dana") and short.endswith("Merged PR #482 (advisory locks for the "
                                                                   "Ledgerline reconciliation).") and len(short) <= 120
    assert session_summary("# S\n\nStarted the plan.\nStopped at: write the runbook.\n") == \
        "Stopped at: write the runbook."


def test_packer_keeps_each_text_once_and_the_budget() -> None:
    pack = Packer(60)
    lines = [("Alex is allergic to peanuts.", "Alex is allergic to peanuts. (2026-11-27, people/alex.md)", "people/alex.md"),
             ("alex is allergic to peanuts", "alex is allergic to peanuts (x.md)", "x.md"),
             ("A long line " * 30, "A long line " * 30, "y.md")]
    assert pack.section("## Active memory", lines) == 2  # the repeat is left out, the long one cut
    assert estimate_tokens(pack.text()) <= 60 and pack.text().count("allergic") == 1
    assert pack.sources == ["people/alex.md", "y.md"]


def test_a_line_cut_for_the_budget_keeps_its_date_and_path() -> None:
    """The last line that only partly fits loses words of its text, never its `(date,
    path)`: the agent can still look the fact up."""
    pack = Packer(45)
    lines = [("Keep patient data out of chat logs.", "Keep patient data out of chat logs. (core/rules.md)", "core/rules.md"),
             ("Ask before booking", "Ask before booking anything that costs money, and say what it costs and why "
                                    "it is worth it. (2026-11-30, core/working-agreements.md)",
              "core/working-agreements.md")]
    assert pack.section("## Rules", lines) == 2
    last = pack.text().split("\n")[-1]
    assert last.startswith("- Ask before booking") and last.endswith("… (2026-11-30, core/working-agreements.md)"), last
    assert estimate_tokens(pack.text()) <= 45


def test_a_fact_with_a_newer_value_under_it_is_not_cut_from_it() -> None:
    """The last line does not fit whole: a fact with the newer value under it is left out
    rather than shown without that value (or with the value's path on the fact's text)."""
    pack = Packer(40)
    lines = [("Keep experiment logs in the repository.", "Keep experiment logs in the repository. (core/rules.md)",
              "core/rules.md"),
             ("Check the overnight sweep results on kestrel.", "Check the overnight sweep results on kestrel every "
              "morning before the group meeting. (2026-12-03, logs/daily/2026-12-03.md)\n  - newer: the sweep now "
              "runs at 02:30 instead of 01:00. (2026-12-03, logs/sessions/s.md)", "logs/daily/2026-12-03.md")]
    assert pack.section("## Rules", lines) == 1
    assert "kestrel" not in pack.text() and "sessions/s.md" not in pack.text()


def test_gather_picks_the_answering_sentence_and_skips_audit(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "people/alex.md").write_text(PAGE)
    (tmp_path / "sources/semantic").mkdir(parents=True)
    (tmp_path / "sources/semantic/a.md").write_text("---\nsource_kind: semantic\n---\nRaw input: peanuts\n")
    results = [{"path": "sources/semantic/a.md", "snippet": "Raw input", "score_normalized": 1.0},
               {"path": "people/alex.md", "snippet": "Alex", "score_normalized": 0.9}]
    got = gather(results, "Is Alex allergic to anything?", disk_reader(tmp_path))
    assert [e.path for e in got] == ["people/alex.md"]
    assert got[0].text == "Alex is allergic to peanuts." and got[0].date == "2026-11-27"
    assert [u.text for u in got[0].rest][0] == "Alex is back from leave."  # claims first for the budget left


def test_a_line_does_not_say_a_fact_twice_but_keeps_a_changed_value(tmp_path: Path) -> None:
    """A chat's "Noted: ..." restating the sentence before it is left out of the line; a
    sentence with another value (02:00, not 03:30) is not a restatement and stays."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/job.md").write_text(
        "# Job\n\nMira says the reconciliation job now runs at 03:30 UTC, the old slot clashed with the backups.\n\n"
        "Noted: the reconciliation job now runs at 03:30 UTC.\n")
    (tmp_path / "notes/move.md").write_text(
        "# Move\n\nThe reconciliation job ran nightly at 02:00 UTC.\n\n"
        "The reconciliation job runs nightly at 03:30 UTC since the move.\n")
    results = [{"path": "notes/job.md", "snippet": "", "score_normalized": 1.0},
               {"path": "notes/move.md", "snippet": "", "score_normalized": 0.9}]
    got = {e.path: e.text for e in gather(results, "When does the reconciliation job run?", disk_reader(tmp_path))}
    assert got["notes/job.md"].count("03:30") == 1 and "old slot clashed" in got["notes/job.md"], got
    assert "02:00" in got["notes/move.md"] and "03:30" in got["notes/move.md"], got


def test_a_session_beside_a_fact_shows_only_what_bears_on_it() -> None:
    """A short session is evidence whole, but beside the page's old time only its lines
    about that job are shown: not the question that opened it or the small talk."""
    said = ["can you check the Tidewell jobs?", "Looked at the queue and the alerts.",
            "we moved the Tidewell reconciliation job from 04:15 to 00:45 UTC today.",
            "Noted: the Tidewell reconciliation job now runs at 00:45 UTC."]
    units = [Unit(t) for t in said]
    fact = Evidence("projects/tidewell/state.md", "The Tidewell reconciliation job runs nightly at 04:15 UTC.",
                    "2026-11-16")
    session = Evidence("logs/sessions/t.md", " ".join(said), "2026-11-19", session=True, units=units)
    left = attach_updates([fact], [session], query_terms("What time does the Tidewell reconciliation job run now?"))
    assert left == [] and len(fact.updates) == 1
    shown = fact.updates[0].text
    assert "00:45" in shown and "now runs at 00:45" in shown, shown
    assert "queue" not in shown and "can you check" not in shown, shown
    block = render([fact], [], 300).text
    assert "queue" not in block and "00:45 UTC today" in block, block


def test_newer_session_goes_beside_the_fact() -> None:
    fact = Evidence("projects/l/state.md", "The reconciliation job runs nightly at 02:00 UTC.", "2026-11-16")
    newer = Evidence("logs/sessions/s.md", "The reconciliation job now runs at 03:30 UTC.", "2026-11-26", session=True)
    older = Evidence("logs/sessions/o.md", "The reconciliation job ran at 01:00 UTC.", "2026-11-01", session=True)
    left = attach_updates([fact], [newer, older], query_terms("When does the reconciliation job run?"))
    assert fact.updates == [newer] and left == [older]
    block = render([fact], [], 300).text
    assert ("- The reconciliation job runs nightly at 02:00 UTC. (2026-11-16, projects/l/state.md)\n"
            "  - newer: The reconciliation job now runs at 03:30 UTC. (2026-11-26, logs/sessions/s.md)") in block
    # the summary (all some hosts show) says the change too, not the old time alone
    assert "02:00" in render([fact], [], 300).summary and "Newer (2026-11-26): " in render([fact], [], 300).summary


def test_a_session_goes_under_the_fact_it_restates_not_a_longer_line_sharing_more_words() -> None:
    """A note of two sentences about jobs in general shares more words with the session
    than the project's one-sentence fact does, but fewer with any one of its sentences:
    the update goes under the fact it changes."""
    tips = ["A nightly job should log its start time and exit code.",
            "Run heavy sync jobs after 22:00 so they avoid the evening backups."]
    note = Evidence("notes/cron-tips.md", " ".join(tips), "2026-09-12", units=[Unit(t) for t in tips])
    fact_text = "The nightly roster sync job runs at 22:00 UK time."
    fact = Evidence("projects/bedrota.md", fact_text, "2026-11-25", units=[Unit(fact_text)])
    session = Evidence("logs/sessions/ops.md", "The nightly roster sync job moves from 22:00 to 23:30 UK time, "
                       "because the 22:00 slot clashed with the pharmacy backups. It runs at 23:30 starting tonight.",
                       "2026-12-03", session=True)
    left = attach_updates([fact, note], [session], query_terms("When does the nightly job run?"))
    assert left == [] and len(fact.updates) == 1 and note.updates == []


def test_an_update_is_newer_than_the_fact_it_changes_not_a_claim_beside_it() -> None:
    """A line joins the page's 22:00 (written in November) and a claim recorded today; a
    session today moving the job to 23:30 is newer than the 22:00, not "same day"."""
    units = [Unit("The nightly roster sync job runs at 22:00 UK time.", date="2026-11-25"),
             Unit("The roster sync job takes about 40 minutes.", date="2026-12-03")]
    fact = Evidence("projects/bedrota.md", " ".join(u.text for u in units), "2026-12-03", units=units)
    session = Evidence("logs/sessions/ops.md", "The nightly roster sync job moves from 22:00 to 23:30 UK time.",
                       "2026-12-03", session=True)
    assert attach_updates([fact], [session], query_terms("When does the roster sync job run now?")) == []
    block = render([fact], [], 300).text
    assert "  - newer: The nightly roster sync job moves" in block and "same day" not in block, block


def test_an_update_naming_the_old_value_goes_under_the_fact_that_holds_it() -> None:
    """"Now due 2027-03-03, not 2027-02-10" changes the line that says 2027-02-10, not a
    daily note that names the same advisor and chapter."""
    note = Evidence("logs/daily/2026-12-02.md", "Sent the chapter 3 outline to Prof. Okonkwo.", "2026-12-02")
    fact = Evidence("projects/thesis.md", "Chapter 3 of the thesis is due 2027-02-10.", "2026-11-20")
    session = Evidence("logs/sessions/s.md", "Prof. Okonkwo agreed to push chapter 3: it is now due 2027-03-03, "
                       "not 2027-02-10.", "2026-12-03", session=True)
    assert attach_updates([note, fact], [session], query_terms("When is chapter 3 due for Prof. Okonkwo?")) == []
    assert len(fact.updates) == 1 and note.updates == []


def test_a_line_naming_a_person_does_not_change_every_fact_of_theirs() -> None:
    """Her palette preference has no value to change: a session naming her with a new date
    (a chapter's deadline) is not its update; one that says her preference changed is."""
    def pref() -> Evidence:
        return Evidence("people/okonkwo.md", "Prof. Okonkwo prefers figures with colour-blind-safe palettes.",
                        "2026-11-20")

    other = Evidence("logs/sessions/s.md", "Prof. Okonkwo agreed to push chapter 3: it is now due 2027-03-03.",
                     "2026-12-03", session=True)
    fact = pref()
    attach_updates([fact], [other], query_terms("What does Prof. Okonkwo prefer in figures?"))
    assert fact.updates == []
    change = Evidence("logs/sessions/t.md", "Prof. Okonkwo now prefers figures in greyscale instead.", "2026-12-03",
                      session=True)
    fact = pref()
    attach_updates([fact], [change], query_terms("What does Prof. Okonkwo prefer in figures?"))
    assert fact.updates == [change]


def test_a_match_by_meaning_shows_the_page_not_its_timeline(tmp_path: Path) -> None:
    """A result that shares no word with the question (found by vectors) shows the page's
    own facts, never the snippet the engine cut from its Timeline."""
    (tmp_path / "people").mkdir()
    (tmp_path / "people/alex.md").write_text(PAGE)
    results = [{"path": "people/alex.md", "snippet": "Timeline 2026-11-27 11:06 UTC · added fact", "score_normalized": 0.8}]
    got = gather(results, "Whom should I invite to dinner?", disk_reader(tmp_path))
    assert got[0].text == "Alex is allergic to peanuts." and got[0].matched == 0


def test_the_same_text_from_two_sources_is_one_line_with_both() -> None:
    pack = Packer(200)
    pack.section("## Active memory", [("We adopted a puppy.", "We adopted a puppy. (2023-01-02, a.md)", "a.md"),
                                      ("We adopted a puppy!", "We adopted a puppy! (2023-05-06, b.md)", "b.md")])
    assert pack.text() == "## Active memory\n- We adopted a puppy. (2023-01-02, a.md; 2023-05-06, b.md)"
    assert pack.sources == ["a.md", "b.md"]


NOTE = """---
title: Billing notes
---
# Billing notes

The invoice export runs on Mondays, after the weekly ledger close.

Alex moved the invoice export to the new queue in March.

Refunds are reviewed by Dana.
"""


def test_a_snippet_is_made_only_when_it_can_change_the_choice(tmp_path: Path) -> None:
    """A result without a snippet gets one from `snippet_of` only for a page where two or
    more sentences share words with the question (or none does); then it still picks the
    sentence the snippet points at."""
    (tmp_path / "a.md").write_text("---\ntitle: a\n---\nThe invoice export runs on Mondays.\n")
    (tmp_path / "b.md").write_text(NOTE)
    asked: list[str] = []

    def snippet_of(r: dict) -> str:
        asked.append(r["path"])
        return "Alex moved the invoice export to the new queue in March."

    results = [{"path": "a.md", "score_normalized": 0.9}, {"path": "b.md", "score_normalized": 0.8}]
    got = gather(results, "Where is the invoice export now?", disk_reader(tmp_path), per_source=1,
                 snippet_of=snippet_of)
    assert asked == ["b.md"]  # a.md has one matching sentence: no snippet needed
    assert got[0].text == "The invoice export runs on Mondays."
    assert got[1].text == "Alex moved the invoice export to the new queue in March."  # where the snippet points


def test_names_and_the_names_a_second_hop_looks_up() -> None:
    assert names("Considering what Elif enjoys in Lisbon. Then NASA and Omar.") == ["Elif", "Lisbon", "NASA", "Omar"]
    best = Evidence("t.md", "", units=[page_units("t.md", "Omar: I booked flights to visit Ana in the spring, "
                                                          "I miss Ana so much.").units[0]])
    # the question's own names and the sentence's opening word are not looked up again
    assert hop_names([best], "Which city will Omar be flying to in the spring?") == ["Ana"]
    assert hop_names([best], "Which city will Omar fly to to see Ana?") == []


def test_a_line_of_links_only_is_a_pointer_not_a_fact() -> None:
    page = page_units("projects/atlas/state.md", (
        "---\ntitle: Atlas\ntype: project\n---\n# Atlas\n\n## Current State\n\nThe cutover is on 14 December.\n\n"
        "## Key Decisions\n\n- [[decisions/atlas.md|Atlas migration]]\n- [[A]], [[B]]\n- [notes](notes.md)\n"
        "- See [[decisions/atlas.md|the rollback decision]] before the cutover.\n"))
    texts = [u.text for u in page.units]
    assert texts == ["The cutover is on 14 December.", "See the rollback decision before the cutover."]


def test_a_chat_turn_is_one_line_its_header_leading(tmp_path: Path) -> None:
    """A chat export's turn (who and when, then the message) is shown whole, the header once
    and leading, without the date again when the header says it; its short form keeps the
    speaker and the day, and the whole message when it fits in a short line's room."""
    (tmp_path / "t.md").write_text("---\ntitle: \"Maya — 4:10 pm on 2 March, 2024\"\ndate: 2024-03-02\n---\n"
                                   "**Maya** — 4:10 pm on 2 March, 2024\n\nI went hiking yesterday. "
                                   "We saw a heron by the lake.\n", "utf-8")
    e = gather([{"path": "t.md"}], "Where did Maya spot the heron?", disk_reader(tmp_path))[0]
    assert e.text == "Maya, 2 March, 2024: I went hiking yesterday (1 March, 2024). We saw a heron by the lake."
    assert e.dated and e.brief == e.text
    line = render([e], [], 200).text
    assert line.endswith("by the lake. (t.md)") and "2024-03-02" not in line


def test_a_chat_turn_found_by_meaning_is_shown_with_its_message(tmp_path: Path) -> None:
    """A turn that shares no word with the question (a vector match) is its header and its
    message, not the header alone (`John — 2:47 pm on 12 June, 2023` says nothing)."""
    (tmp_path / "t.md").write_text("---\ntitle: \"John — 2:47 pm on 12 June, 2023\"\ndate: 2023-06-12\n---\n"
                                   "**John** — 2:47 pm on 12 June, 2023\n\nThat waterfall and bridge look amazing!\n",
                                   "utf-8")
    e = gather([{"path": "t.md", "snippet": "John — 2:47 pm on 12 June, 2023 That waterfall"}],
               "What area was hit by a flood?", disk_reader(tmp_path))[0]
    assert e.text == "John, 12 June, 2023: That waterfall and bridge look amazing!"
    assert e.brief == "John, 12 June, 2023: That waterfall and bridge look amazing!"


def test_names_in_the_question_filter_the_candidates() -> None:
    """Someone else's line that shares the question's other words goes after the lines
    that name the person asked about."""
    def ev(path: str, text: str) -> Evidence:
        u = page_units(path, text).units
        return Evidence(path, text, units=u, terms=query_terms("What food did Maya bring to the party?"))

    other = ev("b.md", "Jon brought food to the party.")
    hers = ev("a.md", "Maya made lemon bars.")
    assert [e.path for e in rerank([other, hers], names_of=["Maya"])] == ["a.md", "b.md"]
    assert [e.path for e in rerank([other, hers], names_of=["Zed"])][0] == "b.md"  # nobody named: no filter


def test_a_line_by_the_person_asked_about_goes_before_one_that_only_names_them(tmp_path: Path) -> None:
    """"Why did John run again?" is answered by John's turn, not by Maria's turn asking him
    about it, though both name John and share the question's words."""
    for name, who, body in (("a.md", "Maria", "Congrats, John! What made you decide to run again for office?"),
                            ("b.md", "John", "After my last run, I saw the impact I could make for office.")):
        (tmp_path / name).write_text(f"---\ntitle: \"{who} — 8:55 pm on 25 February, 2023\"\ndate: 2023-02-25\n"
                                     f"---\n**{who}** — 8:55 pm on 25 February, 2023\n\n{body}\n", "utf-8")
    q = "Why did John decide to run for office again?"
    got = gather([{"path": "a.md"}, {"path": "b.md"}], q, disk_reader(tmp_path))
    assert [e.path for e in rerank(got, names_of=["John"])] == ["b.md", "a.md"]


def test_the_sentence_after_the_one_that_matches_goes_with_it(tmp_path: Path) -> None:
    """A question restates the setting ("last weekend") and the answer is what the speaker
    said next: a long turn's line keeps the sentence after its best one."""
    (tmp_path / "t.md").write_text(
        "---\ntitle: \"Maria — 12:24 am on 7 April, 2023\"\ndate: 2023-04-07\n---\n"
        "**Maria** — 12:24 am on 7 April, 2023\n\nWow, John! You're doing great things with the kids at the "
        "center and I love hearing about it. Last weekend I did something new that had an impact on me. "
        "I participated in a 5K charity run for a homeless shelter. It was awesome being surrounded by people "
        "all there for the same cause, and I would do it again next spring if they hold it.\n", "utf-8")
    e = gather([{"path": "t.md"}], "What did Maria do last weekend?", disk_reader(tmp_path))[0]
    assert "5K charity run" in e.text and "great things" not in e.text


def test_a_short_line_for_a_question_about_time_keeps_the_sentence_that_says_when(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("---\ntitle: \"Maya — 4:10 pm on 2 March, 2024\"\ndate: 2024-03-02\n---\n"
                                   "**Maya** — 4:10 pm on 2 March, 2024\n\nHiking with Maya's dog Rex is the best. "
                                   "We went hiking last weekend. The lake was frozen and the trail was icy all the way "
                                   "up, so we turned back early and had cocoa at the hut.\n", "utf-8")
    when = gather([{"path": "t.md"}], "When did Maya go hiking?", disk_reader(tmp_path))[0]
    assert when.brief == "Maya, 2 March, 2024: We went hiking last weekend (the weekend before 2 March, 2024)."
    what = gather([{"path": "t.md"}], "Who does Maya go hiking with?", disk_reader(tmp_path))[0]
    assert what.brief.startswith("Maya, 2 March, 2024: Hiking with Maya's dog Rex is the best.")


def _turn(tmp_path: Path, who: str, body: str) -> Path:
    (tmp_path / "t.md").write_text(f"---\ntitle: \"{who} — 6:29 pm on 7 July, 2023\"\ndate: 2023-07-07\n---\n"
                                   f"**{who}** — 6:29 pm on 7 July, 2023\n\n{body}\n", "utf-8")
    return tmp_path


def test_a_short_line_is_the_run_of_sentences_that_holds_the_question(tmp_path: Path) -> None:
    """A line cut short keeps the run of whole sentences holding most of the question's
    words: here two short ones, each with half of them, where one sentence alone misses
    what the question asks."""
    _turn(tmp_path, "Maria", "For sure! We can keep doing great stuff and making a difference, and I am so proud "
          "of the whole team. I ran the 5K race. It raised money for the animal shelter. Talk soon!")
    e = gather([{"path": "t.md"}], "Which race did Maria do for the shelter?", disk_reader(tmp_path))[0]
    assert len(e.brief) <= BRIEF_CHARS
    assert "I ran the 5K race. It raised money for the animal shelter." in e.brief


def test_a_short_line_picks_the_photo_a_turn_shares_when_it_is_what_was_asked(tmp_path: Path) -> None:
    """"shares" and "share" are one word, and a photo's caption is a sentence of its own."""
    _turn(tmp_path, "Evan", "It's been great! I find painting to be a great stress reliever. Here's what I did "
          "last week. [shares a photo of a painting of a cactus in the desert]")
    e = gather([{"path": "t.md"}], "What painting did Evan share with Sam in October?", disk_reader(tmp_path))[0]
    assert "a painting of a cactus in the desert" in e.brief and len(e.brief) <= BRIEF_CHARS


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    assert sentences('We used to rock a song by Tupac and Dr. Dre called "California Love". Ah, those were '
                     "the days! J. K. Rowling wrote it.") == [
        'We used to rock a song by Tupac and Dr. Dre called "California Love".', "Ah, those were the days!",
        "J. K. Rowling wrote it."]


def test_a_sentence_wrapped_over_lines_is_one_unit() -> None:
    """Most hand-written markdown is wrapped at 80-100 columns; a fact cut at the wrap
    ("...; dislikes" / "slide decks for ...") reads as nonsense in a block."""
    text = (
        "---\ntitle: Priya\n---\n# Priya\n\n"
        "PI of the lab. Prefers a short email summary every Monday morning; dislikes\n"
        "slide decks for progress updates.\n"
        "Reviews drafts only as PDF.\n\n"
        "- Paper deadline for Ecological Modelling is\n  15 January 2027.\n"
        "- Next: sensitivity analysis\n\n"
        "**User:** can you fix the chains\n**Assistant:** lowering the step size\n\n"
        "Line one with a hard break  \nline two stays apart\n\n"
        "Plugins written for\nDory can point at commonplace unchanged: its plugin works.\n\n"
        "Maya: I went hiking\nJon Silva: where to\n\n"
        "The docs preview now also grabs\n8001. Updated the Procfile.\n\n"
        "- Moved the dev server from 8000 to\n8001. Updated the Procfile.\n\n"
        "1. first step\n2. second step\n"
    )
    units = [u.text for u in page_units("people/priya.md", text).units]
    assert units == [
        "PI of the lab. Prefers a short email summary every Monday morning; dislikes slide decks for progress updates.",
        "Reviews drafts only as PDF.",
        "Paper deadline for Ecological Modelling is 15 January 2027.",
        "Next: sensitivity analysis",
        "User: can you fix the chains",
        "Assistant: lowering the step size",
        "Line one with a hard break",
        "line two stays apart",
        "Plugins written for Dory can point at commonplace unchanged: its plugin works.",
        "Maya: I went hiking",
        "Jon Silva: where to",
        "The docs preview now also grabs 8001. Updated the Procfile.",
        "Moved the dev server from 8000 to 8001. Updated the Procfile.",  # a bullet's wrapped line, too
        "first step",
        "second step",
    ]


def test_a_claim_hides_the_prose_it_restates_with_a_change() -> None:
    text = ("---\ntitle: Kelp\n---\n# Kelp\n\nWritten in R. Deadline for the paper is 15 January 2027.\n\n"
            "- Calibration data: the 2019-2025 transects.\n\n<!-- commonplace:claims:start -->\n\n## Claims\n\n"
            "- Deadline for the paper is 29 January 2027. — recorded 2026-11-28 by a · `c_0123456789abcdef`\n\n"
            "<!-- commonplace:claims:end -->\n")
    units = [u.text for u in page_units("projects/kelp.md", text).units]
    # the claim takes the place of the sentence it restates
    assert units == ["Written in R.", "Deadline for the paper is 29 January 2027.",
                     "Calibration data: the 2019-2025 transects."]


def test_an_entity_pages_line_says_whom_it_is_about(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "people/tomas.md").write_text("---\ntitle: Tomás Ibarra\ntype: person\naliases: [Tomas]\n---\n"
                                              "# Tomás Ibarra\n\nField technician. Collects the urchin transects.\n\n"
                                              "Tomás runs the dive boat on Fridays.\n")
    read = disk_reader(tmp_path)
    [e] = gather([{"path": "people/tomas.md"}], "Who collects the urchin transects?", read)
    assert e.text == "Tomás Ibarra: Field technician. Collects the urchin transects."
    [e] = gather([{"path": "people/tomas.md"}], "Who runs the dive boat?", read)
    assert e.text == "Tomás runs the dive boat on Fridays."  # it says whom already


def test_a_command_in_a_code_block_is_shown_as_code() -> None:
    """"How do I make a token?" is answered by the fenced command; in ticks it reads as a
    command, not as a sentence of the prose around it."""
    text = "---\ntitle: Start\n---\nMake a token:\n\n```sh\ncommonplace token new my-agent -C my-notes\n```\n"
    assert [u.text for u in page_units("start.md", text).units] == [
        "Make a token:", "`commonplace token new my-agent -C my-notes`"]


def test_plain_text_keeps_code_spans_as_written() -> None:
    """A working agreement's example commit message is text to copy, not prose to tidy."""
    from commonplace.compiler.context.plain import plain_line
    assert plain_line("Conventional commits (`fix(parser): ...`) , always .") == \
        "Conventional commits (`fix(parser): ...`), always."


def test_a_page_that_opens_with_a_numbered_item_is_read() -> None:
    """A list that starts at 2 on the page's first line is a list, not a crash."""
    assert [u.text for u in page_units("steps.md", "2. second step\n3. third step\n").units] == [
        "second step", "third step"]


def test_a_claim_hides_the_prose_it_restates_when_the_prose_adds_code_or_a_reason() -> None:
    text = ("---\ntitle: Harbormaster\n---\n# Harbormaster\n\n## Status\n\nWorking on the invoicing rewrite. "
            "The dev server runs on port 8001\n(`python manage.py runserver 8001`) because 8000 is taken by the "
            "docs preview.\n\n<!-- commonplace:claims:start -->\n\n## Claims\n\n"
            "- The dev server runs on port 8002. — recorded 2026-11-28 by a · `c_0123456789abcdef`\n\n"
            "<!-- commonplace:claims:end -->\n")
    units = [u.text for u in page_units("projects/harbormaster/state.md", text).units]
    assert not [u for u in units if "8001" in u], units
    assert "The dev server runs on port 8002." in units and any("invoicing rewrite" in u for u in units)


def test_a_day_of_the_week_is_not_a_name_but_a_month_is_kept() -> None:
    """"my Friday update to Otto" is about Otto: a filter on "Friday" put every note about
    Friday updates ahead of Otto's page, and his preference fell out of the block. A month
    stays: it matches the dated header of the turns said in it."""
    assert names("Draft my Friday update to Otto: how does Otto like updates?") == ["Otto"]
    assert names("What did Maria plan on 7 July, 2023?") == ["Maria", "July"]


def _chat(tmp_path: Path, turns: list[tuple[str, str]], name: str = "D3-{}.md") -> None:
    for i, (who, body) in enumerate(turns, start=1):
        (tmp_path / name.format(i)).write_text(
            f"---\ntitle: \"{who} — 6:29 pm on 7 July, 2023\"\ndate: 2023-07-07\n---\n"
            f"**{who}** — 6:29 pm on 7 July, 2023\n\n{body}\n", "utf-8")


def test_a_chat_turn_is_shown_with_the_turns_said_after_it(tmp_path: Path) -> None:
    """The turn that matches a question is often the one asking it; the answer is the next
    turn, in its own file, sharing no word with the question. A best source that is a chat
    turn is shown with the two turns after it, each as a short line under it."""
    _chat(tmp_path, [("Caroline", "Thanks, Melanie! Appreciate it. You play any instruments?"),
                     ("Melanie", "Yeah, I play clarinet! Started when I was young."),
                     ("Caroline", "That's lovely. I'm learning the guitar, slowly."),
                     ("Melanie", "Keep at it!")])
    q = "What instruments does Melanie play?"
    read = disk_reader(tmp_path)
    found = gather([{"path": "D3-1.md"}], q, read)
    read_on(found, q, read)
    block = render(found, [], 600).text
    lines = block.split("\n")
    asked = next(i for i, ln in enumerate(lines) if "You play any instruments?" in ln)
    assert "clarinet" in lines[asked + 1] and "(D3-2.md)" in lines[asked + 1]
    assert "guitar" in lines[asked + 2] and "(D3-3.md)" in lines[asked + 2]
    assert "Keep at it" not in block  # two turns on, no more
    assert lines[asked + 1].startswith("  - next: Melanie: Yeah")  # the day is said once, above


def test_the_reply_to_a_question_keeps_more_of_itself(tmp_path: Path) -> None:
    """A next turn that answers a question (the turn before it asks one) is the answer: its
    short line keeps more of it than a next turn said after a statement."""
    reply = ("We'll be discussing various aspects of the Harry Potter universe, like characters, "
             "spells, and magical creatures. It's great to see fans coming together for this.")
    _chat(tmp_path, [("John", "Loving it when people are passionate. What kind of collaborations are you in for "
                              "the fan project? I love talking about my sneaker collection."),
                     ("Tim", reply), ("John", reply.replace("We'll", "They'll"))])
    q = "What aspects of the fan project will John's collaborations discuss?"
    read = disk_reader(tmp_path)
    found = gather([{"path": "D3-1.md"}], q, read)
    read_on(found, q, read)
    answer, after_a_statement = found[0].after
    assert "magical creatures" in answer.brief, answer.brief
    assert len(after_a_statement.brief) < len(answer.brief)


def test_numbered_notes_that_are_not_chat_turns_are_not_read_on(tmp_path: Path) -> None:
    """`note-014.md` and `note-015.md` are two notes, not a conversation."""
    (tmp_path / "note-014.md").write_text("# Backups\n\nThe backup job runs at 02:00 UTC.\n", "utf-8")
    (tmp_path / "note-015.md").write_text("# Lunch\n\nThe canteen closes at 14:00.\n", "utf-8")
    q = "When does the backup job run?"
    read = disk_reader(tmp_path)
    found = gather([{"path": "note-014.md"}], q, read)
    read_on(found, q, read)
    assert "canteen" not in render(found, [], 600).text


def test_the_turns_after_a_turn_keep_its_numbering(tmp_path: Path) -> None:
    """Zero-padded turn numbers (`turn-009.md`, `turn-010.md`) and a speaker named in the
    frontmatter (`Aiko: ...` lines) are a conversation too; a turn already among the best
    sources is not shown twice: it moves under the turn it follows, whole."""
    for i, (who, body) in enumerate([("Theo", "Did you book anything for the spring?"),
                                     ("Aiko", "Flights to Lisbon, for the third week of April."),
                                     ("Theo", "Lisbon in April sounds perfect.")], start=9):
        (tmp_path / f"turn-{i:03d}.md").write_text(
            f"---\ntitle: \"Session 2, turn {i}: {who}\"\ndate: 2024-05-04\nspeaker: {who}\n---\n{who}: {body}\n",
            "utf-8")
    q = "What did Aiko book for the spring?"
    read = disk_reader(tmp_path)
    found = gather([{"path": "turn-009.md"}, {"path": "turn-011.md"}], q, read)
    read_on(found, q, read)
    block = render(found, [], 600).text
    assert "Lisbon, for the third week of April" in block and "(2024-05-04, turn-010.md)" in block
    assert block.count("turn-011.md") == 1
    assert block.index("turn-010.md") < block.index("turn-011.md")


def test_a_persons_page_brings_its_other_sentences_before_weaker_sources(tmp_path: Path) -> None:
    """"Anything to know before dinner with Tomasz?" matches his page by his name and a
    restaurant note by its words; his allergy, a sentence of his page's prose that shares
    no word with the prompt, comes before the weaker sources, not after them."""
    (tmp_path / "people").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "people/tomasz.md").write_text(
        "---\ntitle: Tomasz\ntype: person\n---\n# Tomasz\n\nTomasz is the clinical operations manager at St. "
        "Brigid's Hospital and has run its night rosters, its bed planning and its ward audits since 2019.\n\n"
        "Tomasz books the team's Friday dinner once a month, usually somewhere near the hospital.\n\n"
        "Tomasz is allergic to shellfish, including prawns and crab.\n", "utf-8")
    notes = {"a": "Book a dinner table two days ahead at the Crab Shack.", "b": "Friday dinner at Ostra is calmer.",
             "c": "Dinner menus change on Fridays.", "d": "Booking dinners for a team takes a deposit.",
             "e": "The garden needs seed potatoes by January."}
    for name, text in notes.items():
        (tmp_path / f"notes/{name}.md").write_text(f"# {name}\n\n{text}\n", "utf-8")
    q = "I'm booking dinner with Tomasz on Friday, anything to know?"
    found = gather([{"path": "people/tomasz.md"}, *({"path": f"notes/{n}.md"} for n in notes)], q,
                   disk_reader(tmp_path))
    block = render(found, [], 600).text
    assert block.index("allergic to shellfish") < block.index("deposit"), block


def test_a_persons_safety_facts_go_before_their_other_facts(tmp_path: Path) -> None:
    """Of a person's other facts, what could hurt them if missed (an allergy, a condition,
    a diet they keep) comes first, ahead of their job: "anything to know before dinner"
    is answered by the allergy, and a short budget keeps it."""
    (tmp_path / "people").mkdir()
    (tmp_path / "people/tomasz.md").write_text(
        "---\ntitle: Tomasz\ntype: person\n---\n# Tomasz\n\nTomasz is the clinical operations manager at St. "
        "Brigid's Hospital and has run its night rosters, its bed planning and its ward audits since 2019.\n\n"
        "Tomasz books the team's Friday dinner once a month, usually somewhere near the hospital.\n\n"
        "Tomasz plays the cello in a quartet on Sundays.\n\n"
        "Tomasz is allergic to shellfish, including prawns and crab.\n", "utf-8")
    q = "I'm booking dinner with Tomasz on Friday, anything to know?"
    found = gather([{"path": "people/tomasz.md"}], q, disk_reader(tmp_path))
    block = render(found, [], 600).text
    assert block.index("allergic to shellfish") < block.index("clinical operations manager"), block
    assert block.index("allergic to shellfish") < block.index("cello"), block
    short = render(found, [], 70).text
    assert "allergic to shellfish" in short, short


def test_a_call_between_named_speakers_is_summed_up_by_what_it_settled() -> None:
    """A transcript of people talking (`Ana: ...`, `Priya: ...`, no user or assistant):
    its summary is the last line that says something specific, with its speaker, not the
    greeting it opens with."""
    text = ("# Sales call 2026-12-03: Northwind renewal\n\nAna: Priya, thanks for taking the call. Where are we "
            "on the Northwind renewal?\n\nPriya: Legal is still reading the data processing terms.\n\n"
            "Priya: Realistically the close date moves to 2027-01-15, legal needs two more weeks.\n\n"
            "Ana: Understood, thanks.\n\nPriya: Talk soon!\n")
    line = session_summary(text, 160)
    assert line == "Priya: Realistically the close date moves to 2027-01-15, legal needs two more weeks.", line


def test_a_session_of_several_asks_is_summed_up_by_what_each_settled() -> None:
    """Three asks, three answers: the summary says the answers that settled something (the
    pickup, the finish date), not the first ask and the last answer; a cut ends at a
    clause, not inside one ("so she can no…" read as its opposite)."""
    text = ("user: Priya just texted. Her college timetable changed, so she can no longer do Thursdays from next "
            "week.\n\nassistant: Oh no. Who could cover Thursday pickup instead?\n\nuser: Oma said she'll do "
            "Thursday pickup at 15:15 from now on instead of Priya, and Priya keeps Mondays.\n\nassistant: Noted: "
            "from next week Oma does the Thursday pickup at 15:15; Priya still does Mondays.\n\nuser: And Dave "
            "rang. The worktops are delayed, so Baker & Sons now finish by 2027-02-05 instead of 2027-01-22."
            "\n\nassistant: Got it, the kitchen finish date moved to 2027-02-05.\n")
    line = session_summary(text, 160)
    assert line == ("Noted: from next week Oma does the Thursday pickup at 15:15; Priya still does Mondays. "
                    "Got it, the kitchen finish date moved to 2027-02-05."), line
    for limit in range(60, 260, 7):
        assert "can no…" not in session_summary(text, limit) and len(session_summary(text, limit)) <= limit


def test_a_session_summary_is_cut_between_words() -> None:
    """A long ask before the answer is cut at a word, not inside one ("this mor…")."""
    text = ("user: Quick Bedrota update from this morning's ops call with Tomasz and the night nurses, "
            "who want the rota sooner.\n\nassistant: Noted, thanks.\n")
    line = session_summary(text, 73)
    ask = line.split("…")[0]
    assert "…" in line and text.split("user: ", 1)[1].startswith(ask), line
    assert line.endswith("… Noted, thanks.") and ask.endswith(("call", "with", "Tomasz")), line


def test_wake_puts_each_session_line_under_the_one_fact_it_changes() -> None:
    """A project kept as one page: the advisor agreeing to push chapter 3 goes under the
    chapter's deadline, not under the line that names the advisor."""
    from commonplace.compiler.context.sections import page_section
    from commonplace.compiler.context.wake import _beside_sessions

    rel = "projects/thesis.md"
    text = ("---\ntitle: Thesis\ntype: project\n---\n# Thesis\n\nAdvisor: Prof. Okonkwo. Labmate: Tomás Reyes.\n\n"
            "Chapter 3 (the sensitivity analysis) is due 2027-02-10.\n"
            "The experiments run on the kestrel cluster nightly at 01:00.\n")
    session = ("**User:** Also Prof. Okonkwo agreed to push chapter 3: it is now due 2027-03-03, not 2027-02-10.\n\n"
               "**User:** I moved the kestrel job: it now runs nightly at 02:30 instead of 01:00.\n")
    sec = page_section("project", rel, text)
    _beside_sessions(sec, rel, text, [("logs/sessions/a/2026-12-03-thesis.md", session)])
    lines = sec.lines
    deadline = next(i for i, ln in enumerate(lines) if "is due 2027-02-10" in ln)
    assert "2027-03-03" in lines[deadline + 1] and "newer" in lines[deadline + 1], lines
    assert not any("2027-03-03" in ln for ln in lines[:deadline]), lines
    job = next(i for i, ln in enumerate(lines) if "nightly at 01:00." in ln)
    assert "02:30" in lines[job + 1], lines


def test_a_name_typed_without_its_accent_is_the_name() -> None:
    """"lunch with Tomas" shares its name with "Tomás Ibarra is vegan": active memory said
    no memory shared a word with the prompt (matches by meaning alone) over the right block."""
    from commonplace.compiler.context.terms import shares_a_word, stem

    assert stem("Tomas") == stem("Tomás") and stem("Muller") == stem("Müller")
    assert shares_a_word("lunch with Tomas, anything to avoid?", ["Tomás Ibarra is vegan."])


def test_recent_sessions_go_by_the_day_their_name_says(tmp_path: Path) -> None:
    """Yesterday's transcript ingested after today's was listed first (by modification time)."""
    import os

    from commonplace.compiler.context.wake import recent_sessions

    d = tmp_path / "logs/sessions/claude-code"
    d.mkdir(parents=True)
    today, yesterday, unnamed = d / "2026-12-02-morning.md", d / "2026-12-01-harbor.md", d / "notes.md"
    for i, f in enumerate((today, yesterday, unnamed)):
        f.write_text("---\ntitle: s\ntype: session\n---\n\nuser: hi\n", "utf-8")
        os.utime(f, (1_764_000_000 + i * 60, 1_764_000_000 + i * 60))  # 2025-11-24: the unnamed one is oldest by day
    got = recent_sessions({}, tmp_path, 3)
    assert got == ["logs/sessions/claude-code/2026-12-02-morning.md", "logs/sessions/claude-code/2026-12-01-harbor.md",
                   "logs/sessions/claude-code/notes.md"], got


def test_a_persons_line_keeps_only_what_shares_more_than_their_name(tmp_path: Path) -> None:
    """"Picking a restaurant for lunch with Dana, what can she eat?": every claim on her page
    says "Dana", and the line joined her allergy with "Dana wants updates as short emails"."""
    (tmp_path / "people").mkdir()
    (tmp_path / "people/dana.md").write_text(
        "---\ntitle: Dana Whitfield\ntype: person\naliases: [Dana]\n---\n# Dana Whitfield\n\n"
        "<!-- commonplace:claims:start -->\n\n## Claims\n\n### Preferences\n\n"
        + "".join(f"- {c} — recorded 2026-11-27 by agent · `c_{i:016x}`\n" for i, c in enumerate((
            "Dana is allergic to peanuts.", "Dana wants updates as short bullet-point emails.",
            "Dana is pescatarian.", "Dana runs finance operations.", "Dana is on leave in January.")))
        + "\n<!-- commonplace:claims:end -->\n")
    results = [{"path": "people/dana.md", "snippet": "Dana", "score_normalized": 0.9}]
    got = gather(results, "Picking a restaurant for lunch with Dana, what can she eat?", disk_reader(tmp_path))
    assert got and got[0].text == "Dana is allergic to peanuts.", got[0].text  # her other claims follow it
    assert "Dana is pescatarian." in [u.text for u in got[0].rest]


def test_a_rule_that_names_no_one_is_not_pushed_back_by_the_name_filter(tmp_path: Path) -> None:
    """"What discount can I offer Northwind?": the pages naming Northwind go first, but a
    working agreement ("Never offer more than 15% discount without asking Ana") applies to
    every customer and names none; it keeps its place among them, within a short budget."""

    files = {"core/working-agreements.md": "# Working agreements\n\nThese are the rules Ana and I agreed on.\n\n"
                                           "- Never offer more than 15% discount without asking Ana first.\n",
             "decisions/northwind-renewal.md": "# Northwind renewal\n\nOffer Northwind 12% off for a two-year "
                                               "prepay.\n",
             "projects/northwind-renewal.md": "# Northwind renewal\n\nAnnual renewal of the Northwind contract, "
                                              "revised quote due Friday, close date 2026-12-18.\n",
             "logs/daily/2026-12-01.md": "# 2026-12-01\n\nCalled Priya (Northwind): she wants the revised quote "
                                         "before Friday and the CFO is nervous about the price.\n",
             "people/priya-raman.md": "# Priya Raman\n\nVP Operations at Northwind Logistics, our largest "
                                      "customer, prefers calls to email.\n",
             "people/soren.md": "# Soren\n\nIncoming CFO of Northwind Logistics from January, works with Priya.\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    q = "What discount can I offer Northwind?"
    order = ["decisions/northwind-renewal.md", "projects/northwind-renewal.md", "core/working-agreements.md",
             "logs/daily/2026-12-01.md", "people/priya-raman.md", "people/soren.md"]
    found = gather([{"path": p} for p in order], q, disk_reader(tmp_path))
    ranked = rerank(found, head=3, names_of=["Northwind"])
    block = render(ranked, [], 150).text
    assert "Never offer more than 15% discount" in block, block


def test_a_project_kept_as_one_page_weighs_as_its_state_page() -> None:
    from commonplace.server.ops.active_memory import path_weight

    assert path_weight("projects/northwind-renewal.md") == path_weight("projects/ledgerline/state.md") > 0
    assert path_weight("projects/ledgerline/calls.md") == 0.0


def test_a_prompt_about_food_brings_every_candidates_allergy_up_named(tmp_path: Path) -> None:
    """"What can I put in the kids' lunchboxes?" names no child; the lunchbox note and the
    family's pages are the candidates, and the allergy on one child's page comes right
    after the best lines, led by his name (its sentence says "He")."""
    files = {"notes/lunchbox-ideas.md": "# Lunchbox ideas\n\nPesto pasta salad (the shop pesto has cashews in it).\n\n"
                                        "Almond butter and banana wraps.\n",
             "people/ingrid-nilsson.md": "# Ingrid Nilsson\n\nThe kids call her Oma. Oma picks up the kids on "
                                         "Wednesdays.\n",
             "core/identity.md": "# Identity\n\nI am the household assistant of the Berg family: the kids Leo and "
                                 "Ada.\n",
             "notes/school.md": "# School\n\nThe kids' school trip to the museum is on Friday.\n",
             "people/leo-berg.md": "# Leo Berg\n\nLeo is seven and in Year 3.\n\nHe has a tree-nut allergy and "
                                   "carries an EpiPen in his school bag.\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    q = "What can I put in the kids' lunchboxes?"
    found = gather([{"path": p} for p in files], q, disk_reader(tmp_path))
    block = render(found, [], 200, food=True).text
    assert "Leo Berg: He has a tree-nut allergy" in block, block
    # A search that did not find his page (by words only, while the query model loads):
    # the people pages it did not find are read for it.
    unfound = [e for e in found if e.path != "people/leo-berg.md"]
    leo = [e for e in found if e.path == "people/leo-berg.md"]
    assert "tree-nut allergy" not in render(unfound, [], 200, food=True).text
    assert "Leo Berg: He has a tree-nut allergy" in render(unfound, [], 200, food=True, others=leo).text



def test_an_entity_pages_own_name_does_not_pick_its_line(tmp_path: Path) -> None:
    """"When does the Northwind renewal close?" on the project's own page: every line is
    about the renewal, and the one that answers is the close date, not the line that says
    the name again."""
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects/northwind-renewal.md").write_text(
        "---\ntitle: Northwind renewal\ntype: project\n---\n# Northwind renewal\n\nAnnual renewal of the "
        "Northwind renewal contract for six warehouses, the Northwind renewal being our largest.\n\n"
        "| field | value |\n|---|---|\n| stage | Negotiation |\n| close date | 2026-12-18 |\n"
        "| owner | Ana |\n| next step | revised quote |\n", "utf-8")
    found = gather([{"path": "projects/northwind-renewal.md"}], "When does the Northwind renewal close?",
                   disk_reader(tmp_path))
    assert "2026-12-18" in found[0].text, found[0].text


def test_a_session_line_goes_under_the_fact_whose_date_it_repeats_not_a_wordier_one(tmp_path: Path) -> None:
    """The call says "now closes on 2027-01-15 instead of 2026-12-18" and, in the same
    breath, the order form and legal review; the close date goes with the fact that says
    that date, not under the stage claim that shares more words."""
    (tmp_path / "projects").mkdir()
    (tmp_path / "logs/sessions").mkdir(parents=True)
    (tmp_path / "projects/northwind-renewal.md").write_text(
        "---\ntitle: Northwind renewal\ntype: project\ndate: 2026-12-03\n---\n# Northwind renewal\n\n"
        "The Northwind renewal close date is now 2027-01-15.\n\nThe Northwind renewal is now in the Contract "
        "stage (legal review of the order form).\n", "utf-8")
    (tmp_path / "logs/sessions/2026-12-03-call.md").write_text(
        "---\ntitle: call\ndate: 2026-12-03\n---\nAna: Where are we on the Northwind renewal?\n\nPriya: Legal has "
        "to review the order form.\n\nAna: Understood: the Northwind renewal now closes on 2027-01-15 instead of "
        "2026-12-18. I'll send the order form to your legal team today.\n", "utf-8")
    q = "When does the Northwind renewal close?"
    read = disk_reader(tmp_path)
    durable = gather([{"path": "projects/northwind-renewal.md"}], q, read)
    sessions = gather([{"path": "logs/sessions/2026-12-03-call.md"}], q, read, session=True)
    attach_updates(durable, sessions, query_terms(q))
    assert durable[0].updates and "2027-01-15" in durable[0].text, (durable[0].text, durable[0].rest_updates)
    assert not durable[0].rest_updates
