"""The bookkeeping a snippet leaves out, and the text it never repeats.

A snippet is evidence an agent reads, so it carries facts, not the claim store's
records of them. From a chunk's markdown, before it becomes plain text:

- the managed Timeline, Evidence and claim History blocks of an entity page (between
  `<!-- commonplace:timeline|evidence|details:start -->` and `...:end -->`: they repeat
  the Claims, or hold replaced statements) and the headings over claim lines;
- a claim line's record (` — recorded 2026-11-27 by agent · `c_1a2b...``) becomes its
  date: `Dana is allergic to peanuts. (2026-11-27)`;
- claim and event ids (`` `c_...` ``, `` `e_...` ``) and the `#2`-style suffixes of
  evidence titles;
- a heading with no text below it in the chunk (the chunk ends with it: the section it
  opens is the next chunk);
- a line whose words another line of the chunk already holds (a heading
  `Maya — 1:56 pm` above `**Maya** — 1:56 pm: ...`) is dropped, so no text appears twice.

`clean_content` is the same for a result's `content`, which stays markdown: no marker
comments, managed blocks or claim ids, a claim's record as its date, and no backslash
escapes (the claim store escapes every markdown-active character of a statement; outside
code, `dw\\_42` is `dw_42`).
"""

from __future__ import annotations

import re

_BLOCK = re.compile(
    r"<!-- commonplace:(timeline|evidence|details):start[^>]*-->.*?(?:<!-- commonplace:\1:end -->|\Z)", re.DOTALL)
_MANAGED = re.compile(r"<!-- commonplace:(timeline|evidence|details):(start|end)")
_CLAIMS = re.compile(r"<!-- commonplace:claims:start -->(.*?)(?:<!-- commonplace:claims:end -->|\Z)", re.DOTALL)
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:\s.*)?$", re.M)
_RECORD = re.compile(r" — (?:[^\n]*? · )?recorded (\d{4}-\d{2}-\d{2})(?: by [^\n]*?)? · `+ ?[ce]_[0-9a-f]{6,} ?`+[^\n]*$",
                     re.M)
_ID = re.compile(r"`+ ?[ce]_[0-9a-f]{6,} ?`+")
_EMPTY_IDS = re.compile(r" ?Claims?: [,\s]*\.")  # "Claims: `c_...`." once the ids are gone
_TITLE_N = re.compile(r" #\d+(?=\))")
_NORM = re.compile(r"[\W_]+")
_MARKER_LINE = re.compile(r"^ {0,3}<!-- commonplace:[a-z0-9_-]+:(?:start|end)\b[^>]*-->[ \t]*$\n?", re.M)
_COMMENT_LINE = re.compile(r"^ {0,3}<!--.*?-->[ \t]*$\n?", re.M)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


NO_CLAIMS = "*No current claims.*"  # what an entity page's claims section says when it has none


def strip_bookkeeping(markdown: str) -> str:
    """The chunk's markdown without the claim store's records (see the module docstring)."""
    if "commonplace:" in markdown:
        first = _MANAGED.search(markdown)
        if first and first.group(2) == "end":  # the chunk starts inside a block
            markdown = markdown[markdown.find("-->", first.end()) + 3:]
        markdown = _BLOCK.sub(" ", markdown)
        markdown = _CLAIMS.sub(lambda m: _HEADING_LINE.sub("", m.group(1)), markdown)
        markdown = markdown.replace(NO_CLAIMS, "")  # the claims section's placeholder says nothing
    if "recorded " in markdown:
        markdown = _drop_claim_headings(markdown)
        markdown = _RECORD.sub(r" (\1)", markdown)
    if "_" in markdown:
        markdown = _EMPTY_IDS.sub("", _ID.sub("", markdown))
    return _drop_trailing_headings(_TITLE_N.sub("", markdown))


def _drop_trailing_headings(markdown: str) -> str:
    """Without the heading lines that end the chunk, when it has other text."""
    lines = markdown.rstrip().split("\n")
    end = len(lines)
    while end > 0 and (not lines[end - 1].strip() or _HEADING_LINE.match(lines[end - 1])):
        end -= 1
    if end == 0 or end == len(lines):
        return markdown
    return "\n".join(lines[:end])


def clean_content(markdown: str) -> str:
    """A chunk's markdown as a result's `content` (see the module docstring)."""
    if "commonplace:" in markdown:
        first = _MANAGED.search(markdown)
        if first and first.group(2) == "end":  # the chunk starts inside a block
            markdown = markdown[markdown.find("-->", first.end()) + 3:]
        markdown = _MARKER_LINE.sub("", _BLOCK.sub("", markdown)).replace(NO_CLAIMS, "")
    if "<!--" in markdown:
        markdown = _COMMENT_LINE.sub("", markdown)
    if "recorded " in markdown:
        markdown = _RECORD.sub(r" (\1)", markdown)
    if "_" in markdown:
        markdown = _EMPTY_IDS.sub("", _ID.sub("", markdown))
    if "\\" in markdown:
        markdown = _unescape(markdown)
    return _BLANKS.sub("\n\n", markdown).strip("\n")


def _unescape(markdown: str) -> str:
    """Backslash escapes dropped outside fenced code and code spans."""
    out, fence = [], None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if "\\" in line:
            parts, pos = [], 0
            for span in _CODE_SPAN.finditer(line):
                parts.append(_ESCAPED.sub(r"\1", line[pos:span.start()]))
                parts.append(span.group(0))
                pos = span.end()
            parts.append(_ESCAPED.sub(r"\1", line[pos:]))
            line = "".join(parts)
        out.append(line)
    return "\n".join(out)


def _drop_claim_headings(markdown: str) -> str:
    """Headings over claim lines (`## Claims`, `### Facts`), also in a chunk that starts
    after the Claims block's marker: a heading goes when the next line with text is a
    claim line or another heading that goes."""
    lines = markdown.split("\n")
    drop_next = False  # whether the next line with text (below) is claim bookkeeping
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not line.strip():
            continue
        if _HEADING_LINE.match(line):
            if drop_next:
                lines[i] = ""
            continue
        drop_next = bool(_RECORD.search(line))
    return "\n".join(lines)


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.casefold()).strip()


def drop_repeats(lines: list[str], plain: list[str]) -> list[str]:
    """`lines` without those whose plain text (`plain`, same order) another kept line
    holds already: an exact repeat goes, and so does a line contained in a longer one."""
    norms = [_norm(p) for p in plain]
    keep = []
    for i, n in enumerate(norms):
        if not n:
            keep.append(lines[i])
            continue
        padded = f" {n} "
        dup = any(j != i and norms[j] and padded in f" {norms[j]} " and (len(norms[j]) > len(n) or j < i)
                  for j in range(len(norms)))
        if not dup:
            keep.append(lines[i])
    return keep
