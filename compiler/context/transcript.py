"""A conversation kept in one page: each paragraph a turn led by its speaker
(`Caroline: ...`, `**Melanie:** ...` as the plain text shows it).

Two things change when evidence picks such a page's sentences (`evidence.pick`):

- The speakers' names are not words to match. Every turn starts with one, so "What did
  Melanie paint?" would otherwise pick "Melanie: Hey Caroline!" over the sentence about the
  painting. (When the question has no other word, the names stay.)
- The reply goes with the best sentence: the opening of the next turn is shown after it.
  A question's words match the turn that asks ("How long have you been married?") and the
  answer is the reply ("5 years already!"), as with a chat kept one file per turn
  (`turns.py`). A reply that opens with a few words ("Thanks, Mel!") goes on to its next
  sentence, until it holds REPLY_CHARS.

Measured with bench_context on LoCoMo built a file per session (`--layout session`, 600
tokens, 2026-11-29): answers 31.8 → 35.1 held out and 34.0 → 39.5 on the tuning half
(pasting the search's top ten: 31.3 and 32.6). Evidence fell 1.6 points held out (95.8 →
94.2; paste 91.5): a line with the reply holds fewer other pages. Not matching names alone
gave 35.6 on the tuning half; the reply's first sentence only, 39.1.
(docs/decisions/2026-11-29-one-page-conversations.md)
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from .terms import stem

# A turn's speaker: one to three capitalised words, then a colon (what `**Name:**` reads as).
LABEL = re.compile(r"^([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s")
MIN_TURNS = 4  # fewer paragraphs are a note with a "Name:" line, not a conversation
LABELLED = 0.6  # the share of paragraphs that must open with a speaker
MAX_SPEAKERS = 6
REPLY_CHARS = 40


def speakers(units: list[Any]) -> frozenset[str]:
    """The speakers of a page written as a conversation (at least two of them speak more
    than once, and most paragraphs open with a speaker), or none.
    `units` are evidence units: a paragraph's later sentences have `follows` set."""
    heads = [u.text for u in units if not u.follows]
    if len(heads) < MIN_TURNS:
        return frozenset()
    said = Counter(m.group(1) for m in map(LABEL.match, heads) if m)
    # People speak more than once; a page of fields ("Status: ...", "Owner: ...") names
    # each once and is no conversation.
    again = {who: n for who, n in said.items() if n > 1}
    if len(again) < 2 or sum(again.values()) < LABELLED * len(heads) or len(said) > MAX_SPEAKERS:
        return frozenset()
    return frozenset(said)


def without(terms: dict[str, float], who: frozenset[str]) -> dict[str, float]:
    """The question's words less the speakers' names, unless nothing else is left."""
    names = {stem(w.casefold()) for n in who for w in n.split()}
    rest = {t: w for t, w in terms.items() if t not in names}
    return rest or terms


def with_reply(units: list[Any], kept: list[Any], best: Any) -> list[Any]:
    """`kept` (in page order) with the opening of the turn after `best`'s turn."""
    i = next((k for k, u in enumerate(units) if u is best), -1)
    if i < 0:
        return kept
    j = i + 1
    while j < len(units) and units[j].follows:
        j += 1
    reply: list[Any] = []
    while j < len(units) and (not reply or units[j].follows) and sum(len(u.text) for u in reply) < REPLY_CHARS:
        reply.append(units[j])
        j += 1
    if not reply or not LABEL.match(reply[0].text):
        return kept  # the page's end, or a paragraph that is no one's turn
    order = {id(u): k for k, u in enumerate(units)}
    got = kept + [u for u in reply if all(u is not x for x in kept)]
    return sorted(got, key=lambda u: order[id(u)])
