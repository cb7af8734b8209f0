"""A chat kept one file per turn, read as a conversation by active memory (issue 28),
against a live `commonplace serve` restarted over its build: the best turn comes with what
was said next, which shares none of the question's words. The same for a conversation
kept in one page (`compiler/context/transcript.py`)."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, restarted

TURNS = [
    ("Caroline", "Thanks, Melanie! Appreciate it. You play any instruments?"),
    ("Melanie", "Yeah, since I was seven! Every Sunday, with my granddad."),
    ("Caroline", "Lovely. I'm learning the guitar, slowly."),
    ("Melanie", "Keep at it, it gets easier."),
    ("Caroline", "Did you see the parade downtown last Friday?"),
    ("Melanie", "No, we were away at the lake with the kids all weekend."),
]

OTHER_DAY = [
    "Morning! The kids start school on Monday, so we are sorting out uniforms.",
    "Good luck with that. I signed up for a pottery class at the community center.",
    "Pottery sounds fun. Did you make a bowl yet?",
    "Not yet, we only practised centring the clay on the wheel.",
    "We want to play some board games at the weekend, any tips?",
    "Try Ticket to Ride, the kids will love it and it is quick to learn.",
    "My brother plays in a band and keeps asking me to come to a gig.",
    "You should go, live shows are the best way to unwind.",
    "I finished the painting of the sunset over the lake.",
    "Send me a picture, I bet the colours came out great.",
    "The adoption agency called back about the next interview.",
    "That is big news, tell me how it goes.",
]


def _files() -> dict[str, str]:
    files = {}
    for i, (who, body) in enumerate(TURNS, start=1):
        # The third turn was superseded: not evidence, though it follows the best turn
        status = "status: superseded\n" if i == 3 else ""
        files[f"chats/session-15/D15-{i}.md"] = (
            f"---\ntitle: \"{who} — 3:19 pm on 28 August, 2023\"\ndate: 2023-08-28\n{status}---\n"
            f"**{who}** — 3:19 pm on 28 August, 2023\n\n{body}\n")
    # Another day's talk, so that the reply is not among the best sources on its own
    for i, body in enumerate(OTHER_DAY, start=1):
        who = ("Caroline", "Melanie")[i % 2]
        files[f"chats/session-16/D16-{i}.md"] = (
            f"---\ntitle: \"{who} — 9:02 am on 4 September, 2023\"\ndate: 2023-09-04\n---\n"
            f"**{who}** — 9:02 am on 4 September, 2023\n\n{body}\n")
    files["chats/2023-06-08-dana-and-mel.md"] = (
        "---\ntitle: Dana and Mel\ndate: 2023-06-08\n---\n# Dana and Mel\n\n"
        "**Dana:** Hey Mel! Good to see you.\n\n**Mel:** Hey Dana! Long time no see. The kids keep me busy.\n\n"
        "**Dana:** Wow, what a lovely family photo! How long have you been married?\n\n"
        "**Mel:** Five years already! We had the wedding on a beach near Lisbon.\n\n"
        "**Dana:** That sounds perfect, Mel.\n\n**Mel:** Thanks, Dana! Off to pick up the kids from swimming.\n")
    files["knowledge/notes/note-014.md"] = "# Backups\n\nThe backup job runs at 02:00 UTC.\n"
    files["knowledge/notes/note-015.md"] = "# Canteen\n\nThe canteen closes at 14:00.\n"
    return files


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = restarted(tmp_path_factory.mktemp("chat-turns"), _files())
    yield server
    server.stop()


def test_the_best_turn_comes_with_the_reply_to_it(srv: Any) -> None:
    got = post_ok(srv, "/v1/active-memory", {"prompt": "Does anyone play instruments?", "agent": "a",
                                             "budget_tokens": 600})
    lines = got["block"].split("\n")
    asked = next(i for i, ln in enumerate(lines) if "You play any instruments?" in ln)
    assert asked + 1 < len(lines), got["block"]
    assert lines[asked + 1].startswith("  - next: Melanie: Yeah, since I was seven!"), got["block"]
    assert "chats/session-15/D15-2.md" in got["sources"]
    assert "learning the guitar" not in got["block"], got["block"]


def test_numbered_notes_are_not_read_as_a_conversation(srv: Any) -> None:
    got = post_ok(srv, "/v1/active-memory", {"prompt": "When does the backup job run?", "agent": "a",
                                             "budget_tokens": 600})
    assert "02:00 UTC" in got["block"] and "- next:" not in got["block"], got["block"]


def test_research_answers_with_the_reply_too(srv: Any) -> None:
    """Research reads the chat the same way: its answer says what was said next, and the
    reply is among its sources."""
    got = post_ok(srv, "/v1/research", {"question": "Does anyone play instruments?", "save": False})
    body = got["research"]["artifact"]["body"]
    answer = body.split("## Answer", 1)[1].split("## Evidence", 1)[0]
    assert "You play any instruments?" in answer and "Yeah, since I was seven!" in answer, body
    assert answer.index("You play any instruments?") < answer.index("Yeah, since I was seven!")
    assert "chats/session-15/D15-2.md" in got["research"]["sources"]


def test_a_conversation_in_one_page_answers_with_the_reply(srv: Any) -> None:
    """The question's words are in the turn that asks; the answer is the reply, and a
    greeting that only names Mel is not the best line."""
    got = post_ok(srv, "/v1/active-memory", {"prompt": "How long have Mel and her husband been married?",
                                             "agent": "a", "budget_tokens": 600})
    first = got["block"].split("\n")[1]  # the block's best line
    assert "chats/2023-06-08-dana-and-mel.md" in first, got["block"]
    assert "How long have you been married? Mel: Five years already!" in first, got["block"]
    assert "Hey Mel" not in first, got["block"]
    assert "chats/2023-06-08-dana-and-mel.md" in got["sources"]
