"""Obsidian comments: `%%hidden text%%`, inline or over many lines, never published.

They are cut from a document's body before anything else reads it (the markdown parser,
the chunker, the site search), so no output can show them. The raw file keeps them
(`get` returns what the author wrote).

Rules, as Obsidian reads them:
- `%%` opens a comment and the next `%%` closes it, on the same line or a later one;
- inside fenced code and inline code, `%%` is text;
- an opening `%%` with no closing one is text too (Obsidian would hide the rest of the
  note; a stray `%%`, as in "100%%", should not swallow a page).

Each comment is replaced by its own line breaks, so line numbers (chunk ranges, lint
findings) still point at the source.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")


def strip_comments(body: str) -> str:
    """`body` without its `%%comments%%`; unchanged (the same object) when it has none."""
    if "%%" not in body:
        return body
    lines = body.split("\n")
    out: list[str] = []
    fence = ""  # the open fence's marker while inside fenced code
    opened = -1  # index of the line where a comment still open began
    kept_before = 0  # that line's place in `out`
    as_written = ""  # that line as it reads if the comment never closes
    for i, line in enumerate(lines):
        if opened >= 0:
            end = line.find("%%")
            if end < 0:
                out.append("")
                continue
            rest = line[end + 2:]
            line, open_at = _strip_line(rest)
            out.append(line)
            if open_at >= 0:
                opened, kept_before, as_written = i, len(out) - 1, line + rest[open_at:]
            else:
                opened = -1
            continue
        if fence:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                fence = ""
            out.append(line)
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        kept, open_at = _strip_line(line)
        out.append(kept)
        if open_at >= 0:
            opened, kept_before, as_written = i, len(out) - 1, kept + line[open_at:]
    if opened >= 0:
        # Never closed: from its line on, the text stays as written.
        out[kept_before:] = [as_written, *lines[opened + 1:]]
    return "\n".join(out)


def _strip_line(line: str) -> tuple[str, int]:
    """One line outside fenced code without its closed comments, and where a comment
    opens on it that runs past its end (-1: none; then the text before it is returned)."""
    if "%%" not in line:
        return line, -1
    kept: list[str] = []
    pos, n = 0, len(line)
    while pos < n:
        pct = line.find("%%", pos)
        if pct < 0:
            kept.append(line[pos:])
            break
        tick = line.find("`", pos, pct)
        if tick >= 0:
            # Inline code before the comment mark: copy the span whole if it closes.
            run = _TICKS.match(line, tick).group(0)
            close = _close_ticks(line, run, tick + len(run))
            stop = close + len(run) if close >= 0 else tick + len(run)
            kept.append(line[pos:stop])
            pos = stop
            continue
        kept.append(line[pos:pct])
        end = line.find("%%", pct + 2)
        if end < 0:
            return "".join(kept), pct
        pos = end + 2
    return "".join(kept), -1


def _close_ticks(line: str, run: str, pos: int) -> int:
    """Where a code span opened by `run` closes: the next run of exactly that length."""
    while True:
        m = _TICKS.search(line, pos)
        if m is None:
            return -1
        if len(m.group(0)) == len(run):
            return m.start()
        pos = m.end()
