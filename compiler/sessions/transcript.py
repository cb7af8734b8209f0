"""A session transcript as turns: who spoke, what was said, and on which lines of the file.

Transcripts arrive in many shapes. Three are recognised, in this order:
- speaker lines: `Alex: ...`, `**Alex**: ...`, `- **assistant:** ...` start a turn; the
  lines after them, up to the next speaker line, continue it;
- headings: `## user`, `### Assistant (10:02)` start a turn (a short heading only);
- otherwise every paragraph (blank-line separated) is a turn of an unknown speaker.
Line numbers are 1-based and count the frontmatter, so `path:start-end` points into the
file as it is on disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEAKER = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)?([A-Za-z][\w.' -]{0,38}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(\S.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class Turn:
    index: int  # 1-based, in file order
    speaker: str | None
    text: str  # the turn's words, lines joined with spaces
    start: int  # first line (1-based, counting frontmatter)
    end: int  # last line

    @property
    def lines(self) -> str:
        return f"{self.start}-{self.end}"

    def sentences(self) -> list[str]:
        return [s.strip() for s in _SENTENCE.split(self.text) if s.strip()]


def body_start(lines: list[str]) -> int:
    """Index of the first body line (after a `---` frontmatter block, if any)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def _speaker_of(line: str) -> tuple[str, str] | None:
    m = _SPEAKER.match(line)
    if not m or len(m.group(1).split()) > 3 or m.group(1).lower().startswith(("http", "note", "source")):
        return None
    return m.group(1).strip(), m.group(2)


def _heading_of(line: str) -> str | None:
    m = _HEADING.match(line)
    if not m or len(m.group(1).split()) > 5:
        return None
    return m.group(1).strip()


def turns(text: str) -> list[Turn]:
    lines = text.split("\n")
    first = body_start(lines)
    body = range(first, len(lines))
    structured = any(_speaker_of(lines[i]) or _heading_of(lines[i]) for i in body)
    out: list[Turn] = []
    cur: dict | None = None

    def close() -> None:
        nonlocal cur
        if cur and cur["parts"]:
            out.append(Turn(len(out) + 1, cur["speaker"], " ".join(cur["parts"]), cur["start"], cur["end"]))
        cur = None

    for i in body:
        line = lines[i]
        if not line.strip():
            if not structured:
                close()
            continue
        sp = _speaker_of(line) if structured else None
        head = _heading_of(line) if structured and sp is None else None
        if sp is not None:
            close()
            cur = {"speaker": sp[0], "parts": [sp[1].strip()], "start": i + 1, "end": i + 1}
        elif head is not None:
            close()
            cur = {"speaker": head, "parts": [], "start": i + 1, "end": i + 1}
        else:
            if cur is None:
                cur = {"speaker": None, "parts": [], "start": i + 1, "end": i + 1}
            cur["parts"].append(line.strip())
            cur["end"] = i + 1
    close()
    return out
