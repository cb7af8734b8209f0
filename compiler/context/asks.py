"""The part of a long prompt that asks, and the rest of it.

An agent host sends the user's whole message as the prompt, and a message is often a
pasted traceback or draft followed by the question. Searched whole, its sixty words bury
the question's five: on the dialogue corpus at 10,000 documents, a question after a
1,100-character traceback found none of its evidence (it finds 89 % alone), and the call
took 300 ms instead of 50. So a long prompt is searched for what it asks; the rest is
searched on its own, for the memory about what was pasted (`active_memory`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .terms import query_terms

LONG = 400  # characters: a prompt up to this is searched whole
MOST = 400  # characters of the part that asks
PROSE = 300  # characters of a last paragraph that may be an instruction after the question
BACK = 3  # sentences before the question it may take to name its subject
# A question's mark follows a word ("ready?"), which the "?" of code (`a ? b : c`, `?q=`)
# does not.
_ASKS = re.compile(r"\w[\"')\]]*\?+[\"')\]]*$")


@dataclass(frozen=True)
class Split:
    focus: str  # what is searched first: the whole prompt when it is short
    rest: str = ""  # the rest of a long prompt ("" when the prompt is searched whole)


def _sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences, its lines joined (prose is often wrapped)."""
    return [s for s in re.split(r"(?<=[.!?])[\"')\]]*\s+", " ".join(paragraph.split())) if s]


def _prose(paragraph: str) -> bool:
    """A line or two of words, not a pasted log or code: "Draft a reply to Dana's team"."""
    letters = sum(c.isalpha() or c.isspace() for c in paragraph)
    return paragraph.count("\n") < 2 and len(paragraph) <= PROSE and letters >= 0.85 * len(paragraph)


def _enough(sentences: list[str]) -> bool:
    return len(query_terms(" ".join(sentences))) >= 2


def split(prompt: str) -> Split:
    """A long prompt's last paragraph that asks a question gives its question sentences,
    with as many sentences before them as it takes to hold two words to search for
    ("We moved the export. When does it run now?"). With no question mark, the last
    paragraph does when it is a line of prose (an instruction: "Draft my Friday update to
    Dana."); a line of prose after the question goes with it ("Reply to Dana's team about
    it."). The prompt stays whole when it is short, when it is a paste with nothing asked
    of it, or when the part that asks holds fewer than two words to search for ("what does
    this mean?" is about what was pasted)."""
    text = prompt.strip()
    if len(text) <= LONG:
        return Split(text)
    raw = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    paragraphs = [_sentences(p) for p in raw]
    at = next((i for i in range(len(paragraphs) - 1, -1, -1) if any(_ASKS.search(s) for s in paragraphs[i])), -1)
    said = paragraphs[at]
    if at >= 0:
        asks = [i for i, s in enumerate(said) if _ASKS.search(s)]
        first, last = asks[0], asks[-1]
    elif _prose(raw[-1]):  # an instruction: "Draft my Friday update to Dana."
        first = last = len(said) - 1
    else:  # a paste and nothing asked of it: all of it is what to search for
        return Split(text)
    while first > 0 and last - first < BACK and not _enough(said[first:last + 1]):
        first -= 1
    focus = " ".join(said[first:last + 1])
    # A question in what was pasted (an email's "Can you confirm?"), then what the user
    # asks of it: the last paragraph, a line of prose, goes with it.
    told = 0 <= at < len(raw) - 1 and _prose(raw[-1]) and _enough(paragraphs[-1])
    if told:
        focus += " " + " ".join(paragraphs[-1])
    if len(focus) > MOST:  # the end of it: the question comes last
        focus = focus[-MOST:].split(" ", 1)[-1]
    if not _enough([focus]) or len(focus) >= len(text) * 0.8:
        return Split(text)
    rest = [" ".join(p if p is not said else p[:first] + p[last + 1:]) for p in paragraphs[:-1 if told else None]]
    return Split(focus, " ".join(r for r in rest if r))


# Where a second question starts: after "and", "also", a "?" or ";", a question word, or
# a verb that asks with its subject after it ("and does Caleb plan to visit?"; "and is
# delicious" goes on the first question).
_ASKING = (r"(?:what|when|where|who|whom|whose|which|why|how)\b"
           r"|(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have)\s+"
           r"(?:(?-i:[A-Z][\w'’-]+)|he|she|they|it|we|you|i)\b")
_SECOND = re.compile(r"(?:,?\s+and\s+(?:also\s+)?|[?;]\s+(?:and\s+|also,?\s+)?|,\s+also,?\s+|\.\s+also,?\s+)"
                     r"(?=" + _ASKING + ")", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")
MAX_PARTS = 3


def parts(question: str) -> list[str]:
    """The questions a prompt asks, when it asks more than one ("When is Mei's draft due,
    and how should I ping her?"); else []. Searched whole, the first question's words
    took the block: on two dialogue questions asked as one, the second's evidence was in
    it for 71% against 91% for the first. A later question that says "her" is about the
    names the first one said: they go with it (not with one that says no "her": "and when
    is the balance due?" is not about the oven the first one named)."""
    found = [p.strip(" ?.,;") for p in _SECOND.split(question.strip())]
    if len(found) < 2 or not _enough(found[:1]):
        return []
    names = " ".join(dict.fromkeys(re.sub(r"['’]s$", "", n) for n in _NAME.findall(found[0])
                                   if n.casefold() not in _QWORDS))
    subject = " ".join(w for w in re.findall(r"[\w'’-]+", found[0]) if w.casefold() not in _QWORDS)
    found = [found[0]] + [_with_subject(p, names, subject) for p in found[1:]]
    found = [p for p in found if _enough([p])][:MAX_PARTS]
    return found if len(found) > 1 else []


def _with_subject(part: str, names: str, subject: str) -> str:
    """A later question with what it leaves to the first: its names for a "her", its
    words for one that names nothing of its own ("…due, and how many words are left?"
    asks about the game the first one named)."""
    if _NAME.search(part):
        return part
    if _PRONOUN.search(part):
        return f"{part} {names}".strip()
    return f"{part} {subject}" if len(query_terms(part)) <= 2 else part


_PRONOUN = re.compile(r"\b(?:he|she|him|her|his|hers|they|them|their)\b", re.I)  # about someone already named
_QWORDS = {"what", "when", "where", "who", "which", "why", "how", "is", "are", "does", "do", "did", "can", "i"}
