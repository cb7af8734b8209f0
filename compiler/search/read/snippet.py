"""Snippets: the best short window of a chunk, with matched terms marked.

Snippets are plain text (`plaintext.plain_text`: no markdown syntax, no HTML comments,
link labels or the linked pages' titles instead of slugs), without the claim store's
bookkeeping and without repeating a line (`snippet_clean`). The window is the one whose
matched terms weigh most (each distinct term counted once, by the query weight given,
usually its idf), then the one with most matches, then the earliest. Matches are
marked according to the request's `snippet_marks`:

- `markdown` (default for API clients and `--json`): `**term**`
- `brackets` (the site's search page): `[[term]]`; literal `[[`/`]]` in the text are
  neutralised first, so every bracket pair in a snippet is a mark
- `html`: text HTML-escaped, matches in `<mark>...</mark>`
- `none`: no marks
"""

from __future__ import annotations

import html
from typing import Iterable, Mapping, Sequence

from ..plaintext import TitleOf, plain_text
from .snippet_clean import drop_repeats, strip_bookkeeping
from ..text import analyze

WIDTH = 240
LEAD = 60


def _term_spans(text: str, terms: set[str], prefixes: Sequence[str]) -> list[tuple[int, int, str]]:
    spans = []
    for t in analyze(text):
        if t.text in terms or any(t.text.startswith(p) for p in prefixes):
            spans.append((t.start, t.end, t.text))
    return spans


def _substring_spans(text: str, needle: str) -> list[tuple[int, int, str]]:
    if not needle:
        return []
    hay = text.casefold()
    ndl = needle.casefold()
    if len(hay) != len(text):  # casefold changed lengths (e.g. ß): fall back to lower()
        hay, ndl = text.lower(), needle.lower()
        if len(hay) != len(text):
            return []
    out = []
    i = hay.find(ndl)
    while i >= 0 and len(out) < 100:
        out.append((i, i + len(ndl), ndl))
        i = hay.find(ndl, i + max(1, len(ndl)))
    return out


def _merge(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e, _ in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _window(text: str, spans: list[tuple[int, int, str]], width: int,
            weights: Mapping[str, float] | None = None) -> tuple[int, int]:
    if len(text) <= width:
        return 0, len(text)
    if not spans:
        start = 0
    else:
        best: tuple = (-1.0, -1, 0)
        for s, _e, _t in spans:
            lo = max(0, s - LEAD)
            hi = lo + width
            inside = [t for (a, b, t) in spans if a >= lo and b <= hi]
            distinct = set(inside)
            weight = sum(weights.get(t, 1.0) for t in distinct) if weights else float(len(distinct))
            score = (round(weight, 9), len(inside), -lo)
            if score > best:
                best = score
                start = lo
        start = min(start, max(0, len(text) - width))
    end = min(len(text), start + width)
    if start > 0:
        sp = text.find(" ", start)
        if 0 <= sp < start + 20:
            start = sp + 1
    if end < len(text):
        sp = text.rfind(" ", start, end)
        if sp > start + width // 2:
            end = sp
    return start, end


def _render(text: str, marks: list[tuple[int, int]], style: str) -> str:
    def plain(s: str) -> str:
        if style == "html":
            return html.escape(s, quote=False)
        if style == "brackets":
            return s.replace("[[", "[ [").replace("]]", "] ]")
        return s

    def mark(s: str) -> str:
        if style == "html":
            return f"<mark>{html.escape(s, quote=False)}</mark>"
        if style == "brackets":
            return f"[[{plain(s).replace('[', '(').replace(']', ')')}]]"
        if style == "markdown":
            return f"**{s}**"
        return s

    out = []
    pos = 0
    for s, e in marks:
        out.append(plain(text[pos:s]))
        out.append(mark(text[s:e]))
        pos = e
    out.append(plain(text[pos:]))
    return "".join(out)


def make_snippet(text: str, terms: Iterable[str] = (), prefixes: Sequence[str] = (), needle: str | None = None,
                 style: str = "markdown", width: int = WIDTH, titles: TitleOf | None = None,
                 weights: Mapping[str, float] | None = None) -> str:
    """A plain-text window of markdown `text` around its best-matching passage, marks
    applied. `titles` maps a wikilink target to its page title; `weights` weighs terms."""
    clean = readable(text, titles)
    if needle is not None:
        spans = _substring_spans(clean, needle)
    else:
        spans = _term_spans(clean, set(terms), [p for p in prefixes if len(p) >= 3])
    start, end = _window(clean, spans, width, weights)
    piece = clean[start:end]
    marks = _merge((s - start, e - start, t) for s, e, t in spans if s >= start and e <= end)
    body = _render(piece, marks, style)
    if start > 0:
        body = "…" + body
    if end < len(clean):
        body = body + "…"
    return body


def readable(markdown: str, titles: TitleOf | None = None) -> str:
    """A chunk's markdown as the plain text a snippet is cut from: bookkeeping left out,
    no line repeated."""
    lines = strip_bookkeeping(markdown).split("\n")
    if len(lines) > 1:
        lines = drop_repeats(lines, [plain_text(line) for line in lines])
    return plain_text("\n".join(lines), titles)
