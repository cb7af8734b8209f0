"""A session transcript as turns: who spoke, what was said, and on which lines of the file.

Transcripts arrive in many shapes. Three are recognised, in this order:
- speaker lines: `Alex: ...`, `**Alex**: ...`, `- **assistant:** ...` start a turn; the
  lines after them, up to the next speaker line, continue it;
- headings: `## user`, `### Assistant (10:02)` start a turn (a short heading only);
- otherwise every paragraph (blank-line separated) is a turn of an unknown speaker.
Line numbers are 1-based and count the frontmatter, so `path:start-end` points into the
file as it is on disk.

Inside a fenced code block (``` or ~~~) no line starts a turn: tool output such as
`AssertionError: expected 3` belongs to the turn that shows it. A turn's `prose` is its
text without its code blocks and tool output (what a digest reads); `text` keeps everything (what a
search of the original reads). A line that looks like a speaker but names an exception
(`KeyError: 'id'`, `Traceback ...`) continues the turn too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEAKER = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)?([A-Za-z][\w.' -]{0,38}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(\S.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Tool output outside a fence: indented code, a traceback and its frames, an exception line.
_OUTPUT = re.compile(r"^(?: {4}|\t)|^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|"
                     r"[\w.]*(?:Error|Exception|Warning)(?::|$))")
_NOT_SPEAKER = re.compile(r"(?:error|exception|warning|traceback)$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class Turn:
    index: int  # 1-based, in file order
    speaker: str | None
    text: str  # the turn's words, lines joined with spaces
    start: int  # first line (1-based, counting frontmatter)
    end: int  # last line
    prose: str = ""  # the text without its fenced code blocks

    @property
    def lines(self) -> str:
        return f"{self.start}-{self.end}"

    def sentences(self) -> list[str]:
        return [s.strip() for s in _SENTENCE.split(self.prose or self.text) if s.strip()]


def body_start(lines: list[str]) -> int:
    """Index of the first body line (after a `---` frontmatter block, if any)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def _speaker_of(line: str) -> tuple[str, str] | None:
    m = _SPEAKER.match(line)
    if not m or len(m.group(1).split()) > 3 or m.group(1).lower().startswith(("http", "note", "source")) \
            or _NOT_SPEAKER.search(m.group(1).strip()):
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
    fence: str | None = None  # the marker of the code block we are in

    def close() -> None:
        nonlocal cur
        if cur and cur["parts"]:
            out.append(Turn(len(out) + 1, cur["speaker"], " ".join(cur["parts"]), cur["start"], cur["end"],
                            " ".join(cur["prose"])))
        cur = None

    for i in body:
        line = lines[i]
        m = _FENCE.match(line)
        in_code = fence is not None or m is not None
        if m is not None:
            fence = None if fence is not None and m.group(1) == fence else fence or m.group(1)
        if not line.strip():
            if not structured and fence is None:
                close()
            continue
        sp = _speaker_of(line) if structured and not in_code else None
        head = _heading_of(line) if structured and sp is None and not in_code else None
        if sp is not None:
            close()
            said = [] if _OUTPUT.match(sp[1]) else [sp[1].strip()]
            cur = {"speaker": sp[0], "parts": [sp[1].strip()], "prose": said, "start": i + 1, "end": i + 1}
        elif head is not None:
            close()
            cur = {"speaker": head, "parts": [], "prose": [], "start": i + 1, "end": i + 1}
        else:
            if cur is None:
                cur = {"speaker": None, "parts": [], "prose": [], "start": i + 1, "end": i + 1}
            cur["parts"].append(line.strip())
            if not in_code and not _OUTPUT.match(line):
                cur["prose"].append(line.strip())
            cur["end"] = i + 1
    close()
    return out
