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
- a line whose words another line of the chunk already holds (a heading
  `Maya — 1:56 pm` above `**Maya** — 1:56 pm: ...`) is dropped, so no text appears twice.
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


def strip_bookkeeping(markdown: str) -> str:
    """The chunk's markdown without the claim store's records (see the module docstring)."""
    if "commonplace:" in markdown:
        first = _MANAGED.search(markdown)
        if first and first.group(2) == "end":  # the chunk starts inside a block
            markdown = markdown[markdown.find("-->", first.end()) + 3:]
        markdown = _BLOCK.sub(" ", markdown)
        markdown = _CLAIMS.sub(lambda m: _HEADING_LINE.sub("", m.group(1)), markdown)
    if "recorded " in markdown:
        markdown = _drop_claim_headings(markdown)
        markdown = _RECORD.sub(r" (\1)", markdown)
    if "_" in markdown:
        markdown = _EMPTY_IDS.sub("", _ID.sub("", markdown))
    return _TITLE_N.sub("", markdown)


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
