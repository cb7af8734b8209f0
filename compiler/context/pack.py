"""Lines into bounded sections of one block, each distinct text once.

A line is a key (its plain text, what de-duplication compares) and what is shown (the
text with its date and source). A line whose text another line already shows lends that
line its date and source instead (`(d1, a.md; d2, b.md)`); one whose text is a part of
another line's is left out. The budget goes to distinct evidence. Each section may be capped; the block never exceeds the budget by
`estimate_tokens`.
"""

from __future__ import annotations

import re
from typing import Iterable

from .tokens import estimate_tokens

MIN_PIECE = 12  # fewer tokens of room than this: a cut line says too little to be worth it
MERGE_MAX = 2  # sources named on one line; more copies of the same text are only counted


def key_of(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", text.casefold()))


def fact_line(text: str, date: str = "", source: str = "") -> str:
    """`text (date, source)`: how every fact is shown."""
    where = ", ".join(p for p in (date, source) if p)
    return f"{text} ({where})" if where else text


def cut_words(text: str, fits) -> str:
    """The longest word-boundary prefix of `text` (with an ellipsis, unless it ends a
    sentence) that `fits`."""
    words = text.split(" ")

    def cut(n: int) -> str:
        head = " ".join(words[:n])
        return head if head.endswith((".", "!", "?")) else head + "…"

    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(cut(mid)):
            lo = mid
        else:
            hi = mid - 1
    return cut(lo) if lo else ""


class Packer:
    def __init__(self, budget: int) -> None:
        self.budget = max(1, int(budget))
        self.parts: list[list[str]] = []
        self.where: dict[str, tuple[int, int]] = {}  # key -> (part, line) of the line showing it
        self.sources: list[str] = []

    def text(self) -> str:
        return "\n\n".join("\n".join(p) for p in self.parts)

    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def room(self) -> int:
        return self.budget - self.tokens()

    def seen(self, key: str) -> bool:
        return not key or any(key == k or key in k for k in self.where)

    def _source(self, source: str) -> None:
        if source and source not in self.sources:
            self.sources.append(source)

    def _merge(self, key: str, shown: str, source: str) -> None:
        """The same text from another source: its date and path join the line already
        shown, `(d1, a.md; d2, b.md)`, when the budget allows."""
        pi, li = self.where[key]
        old = self.parts[pi][li]
        tail = shown.rsplit(" (", 1)
        if len(tail) != 2 or not old.endswith(")") or not tail[1].endswith(")") or tail[1][:-1] in old:
            return
        # Text repeated across many files (a greeting, a template line) is worth one line,
        # not a list of every path: past MERGE_MAX the copies are counted.
        named = old.rsplit(" (", 1)[-1].count("; ") + 1
        more = re.search(r"; \+(\d+) more\)$", old)
        if more:
            self.parts[pi][li] = old[: more.start()] + f"; +{int(more.group(1)) + 1} more)"
        elif named >= MERGE_MAX:
            self.parts[pi][li] = old[:-1] + "; +1 more)"
        else:
            self.parts[pi][li] = old[:-1] + "; " + tail[1]
        if self.tokens() > self.budget:
            self.parts[pi][li] = old
            return
        self._source(source)

    def section(self, heading: str, lines: Iterable[tuple[str, str, str]], cap: int | None = None,
                bullet: str = "- ", cut_last: bool = True) -> int:
        """Add `heading` and the lines `(key_text, shown, source)` that are new and fit
        (within `cap` tokens for the section, if given). Returns how many went in."""
        base = self.text()
        limit = self.budget if cap is None else min(self.budget, estimate_tokens(base + ("\n\n" if base else "")) + cap)
        part = [heading] if heading else []
        self.parts.append(part)
        pi = len(self.parts) - 1
        added = 0
        for key_text, shown, source in lines:
            key_text, shown = self._unsaid(key_text, shown)
            key = key_of(key_text)
            if not key:
                continue
            if key in self.where:
                self._merge(key, shown, source)
                continue
            if any(key in k for k in self.where):
                continue  # a part of a line already shown
            part.append(f"{bullet}{shown}")
            if self.tokens() <= limit:
                self.where[key] = (pi, len(part) - 1)
                self._source(source)
                added += 1
                continue
            line = part.pop()
            if cut_last and self.tokens() + MIN_PIECE <= limit:
                def fits(t: str) -> bool:
                    part.append(t)
                    ok = self.tokens() <= limit
                    part.pop()
                    return ok

                # The text is cut, not its `(date, source)`: a line without its path is a
                # fact the agent cannot look up (`Ask before booking ... (2026-11-30,…`).
                head, _, subs = line.partition("\n")
                # A fact is not cut from the newer value under it (it would read as current):
                # only a line whose sub-lines are what was said next loses them to be cut.
                line = head if all(x.startswith("  - next:") for x in subs.split("\n") if subs) else ""
                text, cite = line, ""
                if line.endswith(")") and " (" in line:
                    text, cite = line.rsplit(" (", 1)
                    cite = " (" + cite
                piece = cut_words(text, lambda t: fits(t + cite)) if line else ""
                if piece:
                    piece += cite
                if piece and len(piece[len(bullet):].split()) >= 4 + len(cite.split()):  # a few words at least ("Check the…" says nothing)
                    part.append(piece)
                    self.where[key] = (pi, len(part) - 1)
                    self._source(source)
                    added += 1
            break
        if not added:
            self.parts.pop()
        return added

    def _unsaid(self, key_text: str, shown: str) -> tuple[str, str]:
        """A line without its sentences that a line shown already says whole: a person's
        allergy shown on its own, then again joined with their croissant order."""
        if not shown.startswith(key_text) or not any(k in key_of(key_text) for k in self.where):
            return key_text, shown
        parts = re.split(r"(?<=[.!?])\s+", key_text)
        kept = [p for p in parts if key_of(p) not in self.where]
        if not kept or len(kept) == len(parts):
            return key_text, shown
        text = " ".join(kept)
        return text, text + shown[len(key_text):]

    def raw(self, text: str, sources: Iterable[str] = ()) -> bool:
        """Add a whole preformatted part if it fits."""
        base = self.text()
        if not text or estimate_tokens(base + ("\n\n" if base else "") + text) > self.budget:
            return False
        self.parts.append([text])
        for s in sources:
            self._source(s)
        return True
