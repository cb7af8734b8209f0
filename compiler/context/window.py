"""The part of a line that answers, when the line has to be cut short.

A line past the block's first sources gets a few dozen characters. Its best single
sentence by shared words is often not the best cut: two short sentences may each hold part
of the question's words, and a photo a chat turn shares ("[shares a photo of a painting of
a cactus]") is a sentence of its own. So the cut is a window: the run of whole sentences,
within the room, that holds the most distinct words of the question (each word once, by
its weight), earliest first on a tie. A sentence longer than the room is cut around its
matching words instead (`…` marks what was left out).

Room left over is not filled with the neighbouring sentences: that read better ("…to have
dinner with some friends from the gym. Talk to you later!") but fewer sources fit, and
LoCoMo's held-out evidence fell by 0.8 to 1.0 points (bench_context, 2026-11-28).
"""

from __future__ import annotations

from typing import Callable

from .plain import sentences, words

Stemmer = Callable[[str], str]


def _weight(text: str, terms: dict[str, float], stem: Stemmer) -> dict[str, float]:
    have = {stem(w) for w in words(text)}
    return {t: wt for t, wt in terms.items() if t in have}


def best_window(text: str, terms: dict[str, float], room: int, stem: Stemmer,
                bonus: Callable[[str], float] | None = None) -> str:
    """`text` whole when it fits in `room` characters, else its best window (see the module)."""
    if len(text) <= room:
        return text
    parts = sentences(text) or [text]
    found = [_weight(p, terms, stem) for p in parts]
    best, best_score = "", -1.0
    for i in range(len(parts)):
        got: dict[str, float] = {}
        length = -1
        for j in range(i, len(parts)):
            length += len(parts[j]) + 1
            if length > room:
                break
            got.update(found[j])
            span = " ".join(parts[i:j + 1])
            score = sum(got.values()) + (bonus(span) if bonus else 0.0)
            if score > best_score:
                best, best_score = span, score
        if length > room and j == i:  # one sentence longer than the room: cut inside it
            span = _cut(parts[i], terms, room, stem)
            score = sum(_weight(span, terms, stem).values()) + (bonus(span) if bonus else 0.0)
            if score > best_score:
                best, best_score = span, score
    return best


def _cut(sentence: str, terms: dict[str, float], room: int, stem: Stemmer) -> str:
    """The `room` characters of one long sentence around most of its matching words."""
    toks = sentence.split()
    stems = [{stem(w) for w in words(t)} for t in toks]
    best_i, best_score = 0, -1.0
    for i in range(len(toks)):
        got: set[str] = set()
        length = -1
        for j in range(i, len(toks)):
            length += len(toks[j]) + 1
            if length > room - 2:
                break
            got |= stems[j] & terms.keys()
        score = sum(terms[t] for t in got)
        if score > best_score:
            best_i, best_score = i, score
    out, length = [], -1
    for t in toks[best_i:]:
        if length + len(t) + 1 > room - 2:
            break
        out.append(t)
        length += len(t) + 1
    cut = " ".join(out)
    lead = "…" if best_i else ""
    tail = "…" if best_i + len(out) < len(toks) else ""
    return lead + cut + tail


RESTATED = 0.8  # the share of a sentence's words another kept sentence of the line holds
RESTATED_MIN = 3  # shorter sentences ("Thanks!") are left alone: they say too little to tell


def drop_restated(kept: list, content: Callable[[object], frozenset[str]]) -> list:
    """`kept` (a line's units, in order) without a unit that another says again: most of
    its content words are in a longer one (the earlier, if equal). A chat's "Noted: the job
    now runs at 03:30 UTC." after "Mira says the job now runs at 03:30 UTC, the old slot
    clashed with the backups." repeats it: the line's room goes to what is new. Every number
    it holds must be in the other too: "runs at 02:00" is not restated by "runs at 03:30"."""
    if len(kept) < 2:
        return kept
    sets = [content(u) for u in kept]
    out = []
    for i, u in enumerate(kept):
        mine = sets[i]
        values = {w for w in mine if any(c.isdigit() for c in w)}
        if len(mine) >= RESTATED_MIN and any(
                j != i and (len(sets[j]) > len(mine) or (len(sets[j]) == len(mine) and j < i))
                and len(mine & sets[j]) >= RESTATED * len(mine) and values <= sets[j] for j in range(len(kept))):
            continue
        out.append(u)
    return out
