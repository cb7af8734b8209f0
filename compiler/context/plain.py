"""One line of markdown as plain text for an agent, without bookkeeping.

Links become their labels, emphasis and escapes go, marker comments and claim or event
ids go. Code spans keep their backticks: `decisions/` in a working agreement is text a
person wrote, not markup the compiler added. A line that holds its own text twice (a
search snippet of a transcript whose speaker line repeats) is cut to one copy.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..search import inline_plain

# Words too common to tell what a line is about (the question words among them).
STOP = set("""a an and are as at be been being but by can could did do does doing for from had has have having
he her hers him his how i if in into is it its just me my no nor not of on or our ours she should so some such
than that the their them then there these they this those to too us very was we were what when where which while
who whom why will with would you your yours about above after again all am any because before below between both
down during each few further here just more most off once only other out over own same under until up also
anything something know tell please thing things get got really much many any ever now
""".split())
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_IMAGE = re.compile(r"!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\)")
_IDS = re.compile(r"`?\b[ce]_[0-9a-f]{12,}\b`?")
_MARKUP = re.compile(r"[\[\]*_`<>\\~=!&^]")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[\w']+")
_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])")
_CODE_SPLIT = re.compile(r"(`[^`]*`)")
_TOKEN = re.compile(r"\S+")
_NONWORD = re.compile(r"\W+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
# A full stop after these ends no sentence ("a song by Tupac and Dr. Dre"), nor after one
# capital letter (an initial: "J. K. Rowling").
_ABBREV = frozenset("dr mr mrs ms mx st jr sr prof rev gen capt lt col sgt fr vs etc inc ltd co no approx dept".split())
_LAST_WORD = re.compile(r"(\w+)\.$")


def plain_line(text: str) -> str:
    """Markup and bookkeeping out of `text`, whitespace collapsed (the markup rules are
    the search snippets', `search/plaintext.inline_plain`; code spans keep their ticks)."""
    s = _COMMENT.sub(" ", str(text or ""))
    s = _IMAGE.sub(" ", s)
    s = _IDS.sub("", s)
    if _MARKUP.search(s):  # most prose lines have no markup: skip the markup rules
        s = inline_plain(s, ticks=True).replace("**", "")
    s = _SPACE.sub(" ", s).strip()
    if "`" in s:  # not inside code spans: `fix(parser): ...` is text to keep as written
        s = "".join(p if i % 2 else _BEFORE_PUNCT.sub(r"\1", p) for i, p in enumerate(_CODE_SPLIT.split(s)))
    else:
        s = _BEFORE_PUNCT.sub(r"\1", s)
    return cut_repeat(s)


def words(text: str) -> list[str]:
    return list(_words(text))


@lru_cache(maxsize=1 << 15)
def _words(text: str) -> tuple[str, ...]:  # the same lines are compared many times a call
    return tuple(w.casefold() for w in _WORD.findall(text))


def cut_repeat(line: str) -> str:
    """`line` without a second copy of itself: a line whose words start over from the
    beginning is cut where they do; repeated sentences are kept once."""
    toks = list(_TOKEN.finditer(line))
    n = len(toks)
    first = _NONWORD.sub("", toks[0].group(0)).casefold() if n >= 6 else ""
    opening = "".join(_NONWORD.sub("", t.group(0)) for t in toks[:3]).casefold() if n >= 6 else ""
    # A copy needs at least three words after at least three, so the first three words'
    # letters occur twice in the line's letters (one pass, before a pass per word).
    if n >= 6 and (not opening or _NONWORD.sub("", line.casefold()).count(opening) >= 2):
        norm = [_NONWORD.sub("", t.group(0)).casefold() for t in toks]
        for p in range(3, n // 2 + 1):
            if norm[p] != first:  # cheap test first: most lines never start over
                continue
            k = min(p, n - p)
            if norm[p:p + k] == norm[:k]:
                line = line[: toks[p].start()].rstrip(" -—,;")
                break
    parts = sentences(line)
    if len(parts) > 1:
        seen: set[str] = set()
        kept = []
        for part in parts:
            key = " ".join(words(part))
            if key and key in seen:
                continue
            seen.add(key)
            kept.append(part)
        line = " ".join(kept)
    return line


def sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE.finditer(text):
        w = _LAST_WORD.search(text, max(start, m.start() - 12), m.start())
        if w and (w.group(1).casefold() in _ABBREV or (len(w.group(1)) == 1 and w.group(1).isupper())):
            continue
        out.append(text[start:m.start()])
        start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]
