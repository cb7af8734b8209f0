"""Lines into bounded sections of one block, each distinct text once.

A line is a key (its plain text, what de-duplication compares) and what is shown (the
text with its date and source). A line whose key another line already holds, or is a
part of another line's key, is left out wherever it comes, so the budget goes to
distinct evidence. Each section may be capped; the block never exceeds the budget by
`estimate_tokens`.
"""

from __future__ import annotations

import re
from typing import Iterable

from .tokens import estimate_tokens

MIN_PIECE = 12  # fewer tokens of room than this: a cut line says too little to be worth it


def key_of(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", text.casefold()))


def fact_line(text: str, date: str = "", source: str = "") -> str:
    """`text (date, source)`: how every fact is shown."""
    where = ", ".join(p for p in (date, source) if p)
    return f"{text} ({where})" if where else text


def cut_words(text: str, fits) -> str:
    """The longest word-boundary prefix of `text` (with an ellipsis) that `fits`."""
    words = text.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(" ".join(words[:mid]) + "…"):
            lo = mid
        else:
            hi = mid - 1
    return (" ".join(words[:lo]) + "…") if lo else ""


class Packer:
    def __init__(self, budget: int) -> None:
        self.budget = max(1, int(budget))
        self.parts: list[str] = []
        self.keys: list[str] = []
        self.sources: list[str] = []

    def text(self) -> str:
        return "\n\n".join(self.parts)

    def tokens(self) -> int:
        return estimate_tokens(self.text())

    def room(self) -> int:
        return self.budget - self.tokens()

    def seen(self, key: str) -> bool:
        if not key:
            return True
        return any(key == k or key in k for k in self.keys)

    def remember(self, key: str) -> None:
        self.keys.append(key)

    def section(self, heading: str, lines: Iterable[tuple[str, str, str]], cap: int | None = None,
                bullet: str = "- ", cut_last: bool = True) -> int:
        """Add `heading` and the lines `(key_text, shown, source)` that are new and fit
        (within `cap` tokens for the section, if given). Returns how many went in."""
        base = self.text()
        sep = "\n\n" if base else ""
        limit = self.budget if cap is None else min(self.budget, estimate_tokens(base + sep) + cap)
        body: list[str] = []
        srcs: list[str] = []

        def render(extra: list[str]) -> str:
            head = [heading] if heading else []
            return base + sep + "\n".join([*head, *extra])

        for key_text, shown, source in lines:
            key = key_of(key_text)
            if self.seen(key) or any(key == k for k in body):
                continue
            line = f"{bullet}{shown}"
            if estimate_tokens(render([*body, line])) <= limit:
                body.append(line)
                self.remember(key)
                if source and source not in srcs:
                    srcs.append(source)
                continue
            if cut_last and estimate_tokens(render(body)) + MIN_PIECE <= limit:
                piece = cut_words(line, lambda t: estimate_tokens(render([*body, t])) <= limit)
                if piece and len(piece) > len(bullet) + 8:
                    body.append(piece)
                    self.remember(key)
                    if source and source not in srcs:
                        srcs.append(source)
            break
        if not body:
            return 0
        self.parts.append("\n".join([*([heading] if heading else []), *body]))
        for s in srcs:
            if s not in self.sources:
                self.sources.append(s)
        return len(body)

    def raw(self, text: str, sources: Iterable[str] = ()) -> bool:
        """Add a whole preformatted part if it fits."""
        base = self.text()
        if not text or estimate_tokens(base + ("\n\n" if base else "") + text) > self.budget:
            return False
        self.parts.append(text)
        for s in sources:
            if s not in self.sources:
                self.sources.append(s)
        return True
