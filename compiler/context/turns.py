"""A chat kept one file per turn is read as a conversation: a turn with what was said next.

A question's words often match the turn that asks it ("You play any instruments?") or
the one that sets the scene, and the answer is the next turn, in a file of its own that
shares none of them ("Yeah, I play clarinet!"). So the block's best source, when it is a
chat turn, brings the two turns after it, as short lines under it (`- next:`), found by
the file name's turn number in the same folder: `D15-25.md` then `D15-26.md`,
`turn-009.md` then `turn-010.md`.

A page is a turn when it is one short message with its speaker: a `Name — <time>` header
(a chat export), a `speaker` in its frontmatter, or a `Name: message` line. Numbered notes
that are not turns (`note-014.md`, `note-015.md`) are not read together, and the reading
stops where the conversation does (no next file, or one that is not a turn).

Measured with bench_context (600 tokens, 2026-11-28). On LoCoMo, the best source with two
turns after it: evidence 75.5 → 77.2 held out and 74.0 → 77.0 on the tuning half, answers
42.7 → 43.6 and 47.0 → 48.3. The two best sources gained half a point more there but cost
up to 5 points on the synthetic dialogues, whose turns are shuffled filler with nothing to
say about the turn before (one source: up to 2). Five sources, or three turns on, gained
less: the short lines push out deeper sources that held the answer. Moving a reply that
was among the best sources under its question scored the same (+0.1 on answers) and reads
as the conversation did. Showing a next turn only when it shares a word with the turn or
the question kept the synthetic scores but lost most of LoCoMo's gain: real replies often
share none. (docs/decisions/2026-11-28-what-was-said-next.md)

A next turn that answers a question (the turn before it asks one) keeps 150 characters
instead of 90: LoCoMo answers +1.3 tuning, +1.2 held out, evidence −0.2 and −0.3 (the
longer line pushes a deeper source out); the synthetic dialogues did not move
(docs/decisions/2026-12-03-a-reply-keeps-more.md).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .evidence import BRIEF_CHARS, CHAT_HEADER, Evidence, Reader, asks_when, briefly, gather, load_page, names, query_terms
from .facts import Page
from .transcript import LABEL

FIRST = 1  # the best sources read on
AHEAD = 2  # turns after each
TURN_CHARS = 1200  # a page longer than this is not one message
REPLY_CHARS = 150  # the short line of a next turn that answers a question (the turn before asks one)
FILL = 0.5  # a next turn's short line: the fuller window of two that hold as much (`briefly`)

_NUMBERED = re.compile(r"^(?P<stem>.*?)(?P<n>\d+)(?P<ext>\.md)$")
_DAY_LED = re.compile(r"^(?P<who>[^,:]{1,40}), [^:]*\d{4}: ")


def next_line(a: Evidence, date: str) -> str:
    """A next turn's short text as it goes under a turn of `date`: its speaker, and its
    day only when the conversation went on to another day."""
    text = a.brief or a.text
    return _DAY_LED.sub(r"\g<who>: ", text, count=1) if a.dated and a.date == date else text


def is_turn(page: Page) -> bool:
    """One short message with its speaker (see the module)."""
    units = page.units
    if not units or len(units) > 4 or sum(len(u.text) for u in units) > TURN_CHARS:
        return False
    speaker = page.meta.get("speaker")
    return (isinstance(speaker, str) and bool(speaker.strip())) or bool(CHAT_HEADER.match(units[0].text)) \
        or bool(LABEL.match(units[0].text))


def following(path: str, ahead: int = AHEAD) -> list[str]:
    """The paths the next `ahead` turns after `path` have, keeping its zero-padding."""
    m = _NUMBERED.match(path)
    if not m:
        return []
    n, width = int(m["n"]), len(m["n"])
    return [f"{m['stem']}{str(n + k).zfill(width)}{m['ext']}" for k in range(1, ahead + 1)]


def read_on(items: list[Evidence], query: str, read: Reader, first: int = FIRST, ahead: int = AHEAD,
            whole: int = 5, allows: Callable[[str, dict[str, Any]], bool] | None = None) -> None:
    """Give each of the first `first` items that is a chat turn the turns said after it
    (`Evidence.after`), each cut short. A next turn already among the first `whole` items
    (shown in full) moves from its place to under this one, still in full: the reply is
    read with the question it answers. `allows(path, frontmatter)`: the caller's rule for
    what may be evidence (a profile's blocked paths, a superseded page), which a next turn
    must pass as the search's results did."""
    shown = {e.path for e in items[:whole]}
    # The names of the people talking are in every turn's greeting ("Wow, Caroline!"):
    # a next turn's short line is the part that holds the question's other words.
    asked = " ".join(w for w in query.split() if w.strip("?!.,'\"") not in names(query))
    terms, when = query_terms(asked), asks_when(query)
    for e in items[:first]:
        page, _ = load_page(read, e.path)
        if page is None or not is_turn(page):
            continue
        before = page
        for path in following(e.path, ahead):
            nxt, _ = load_page(read, path)
            if nxt is None or not is_turn(nxt):
                break  # the conversation ends here
            prior, before = before, nxt
            if allows is not None and not allows(path, nxt.meta):
                continue
            if path in shown:  # already among the best: moved under this turn, whole
                moved = next((x for x in items if x.path == path and x is not e), None)
                if moved is not None:
                    items.remove(moved)
                    moved.brief = moved.text
                    e.after.append(moved)
                continue
            got: list[Any] = gather([{"path": path, "score_normalized": e.score}], asked, read)
            if got:
                # Its short line is cut from the whole message, not from the part that
                # shares the question's words: a reply often shares none. A reply to a
                # question is the answer, and gets more room.
                room = REPLY_CHARS if any("?" in u.text for u in prior.units) else BRIEF_CHARS
                got[0].brief = briefly(nxt.units, nxt.units, terms, when, room=room, fill=FILL)
                e.after.append(got[0])
                shown.add(path)
