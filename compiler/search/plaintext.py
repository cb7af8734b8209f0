"""Markdown -> the plain text a reader sees, for search snippets.

What goes: HTML comments (the claim section markers), HTML tags, heading hashes,
blockquote and list markers, task boxes, table rule rows and cell pipes (cells are joined
with " · "), code fences, emphasis markers (`**`, `__`, `*`, `_`, `~~`) and the backticks
of code spans, and the backslash of an escaped character (`\\*` is `*`); Obsidian's callout
openings (`[!note]`), block ids (`^ref`), footnote marks (`[^1]`) and highlights
(`==text==`). Links become their labels; a wikilink without a label becomes its target's
title when `titles` knows it (`[[rank-fusion]]` -> "Rank fusion"), else the last part of
its target. Code spans keep their text exactly (no link or emphasis handling inside).
Lines are joined with single spaces.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

TitleOf = Callable[[str], Optional[str]]

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?=\s|$)\s*(.*?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
# A number that wraps onto the next line of a paragraph or bullet continues its sentence
# ("grabs\n  8001. Updated"): only "1.", a number after a blank line or one inside a
# numbered list starts a list item there (CommonMark).
_GOES_ON = re.compile(r"^(\s*(?!1[.)])\d{1,9})(?=[.)]\s)")
_NUMBERED = re.compile(r"^\s*\d{1,9}[.)]\s")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_WIKILINK = re.compile(r"!?\[\[([^\]\|#]*)(?:#([^\]\|]*))?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_MDLINK_PARTS = re.compile(r"!?\[([^\]]*)\]\(((?:[^()\s]|\([^()]*\))*)(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_HIGHLIGHT = re.compile(r"==(?=[^\s=])(.+?)(?<=[^\s=])==")  # Obsidian's ==marked== text
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_WS = re.compile(r"\s+")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
# Obsidian's: a callout's `[!type]` opening (its title stays; without one, the type), a
# block id ending a line (`^hotel-ref`), a footnote's `[^1]` (its text stays).
_CALLOUT = re.compile(r"^\s*\[!([A-Za-z][\w-]*)\][+-]?[ \t]*")
_BLOCK_ID = re.compile(r"(?:^|(?<=\s))\^[A-Za-z0-9-]+\s*$")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]+\](?::\s*)?")
_HOLD = 0xF0000  # a private-use plane: never in real text
_HELD = re.compile("[\U000F0021-\U000F007E]")


def _wikilink(m: re.Match, titles: TitleOf | None) -> str:
    target, heading, label = (m.group(1) or "").strip(), (m.group(2) or "").strip(), m.group(3)
    if label and label.strip():
        return label.strip()
    name = titles(target) if titles and target else None
    if not name:
        name = target.rsplit("/", 1)[-1]
        if name.lower().endswith(".md"):
            name = name[:-3]
    if heading:
        return f"{name} › {heading}" if name else heading
    return name


def _inline(text: str, titles: TitleOf | None) -> str:
    # A backslash-escaped character is that character, never markup: held aside as a
    # private-use character while the markup goes, then put back without its backslash.
    text = _ESCAPED.sub(lambda m: chr(_HOLD + ord(m.group(1))), text)
    text = _FOOTNOTE.sub("", text) if "[^" in text else text
    text = _WIKILINK.sub(lambda m: _wikilink(m, titles), text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    text = _TAG.sub(" ", text)
    text = _STRONG.sub(lambda m: m.group(2), text)
    text = _STRIKE.sub(lambda m: m.group(1), text)
    text = _HIGHLIGHT.sub(lambda m: m.group(1), text) if "==" in text else text
    text = _EM_STAR.sub(lambda m: m.group(1), text)
    text = _EM_UNDER.sub(lambda m: m.group(1), text)
    return _HELD.sub(lambda m: chr(ord(m.group(0)) - _HOLD), text)


def inline_plain(text: str, titles: TitleOf | None = None, ticks: bool = False) -> str:
    """One line of markdown inline syntax -> plain text (code spans kept verbatim, with
    their backticks when `ticks`: the context builder keeps them, since a code span in a
    note is text its author wrote)."""
    if "[!" in text:
        m = _CALLOUT.match(text)
        text = (text[m.end():] or m.group(1).capitalize()) if m else text
    if "^" in text:
        text = _BLOCK_ID.sub("", text)
    out = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_inline(text[pos:m.start()], titles))
        out.append(m.group(0) if ticks else m.group(2).strip() if m.group(2).strip() else m.group(2))
        pos = m.end()
    out.append(_inline(text[pos:], titles))
    return "".join(out)


def _line(line: str, titles: TitleOf | None) -> str:
    hm = _HEADING.match(line)
    if hm:
        line = hm.group(1)
    elif _SETEXT.match(line) or (_TABLE_RULE.match(line) and "-" in line):
        return ""
    else:
        line = _LIST.sub("", _QUOTE.sub("", line))
        s = line.strip()
        if s.startswith("|") and s.endswith("|") and len(s) > 1:
            line = " · ".join(c.strip() for c in s[1:-1].split("|") if c.strip())
    return inline_plain(line, titles)


def plain_text(markdown: str, titles: TitleOf | None = None) -> str:
    """A chunk of markdown as one line of plain text (see the module docstring)."""
    text = _COMMENT.sub(" ", markdown)
    out = []
    fence: str | None = None
    prev, numbered = "", False
    for line in text.split("\n"):
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence):
                fence = None
            else:
                out.append(line)  # code stays as written
            continue
        if fm:
            fence = fm.group(1)
            continue
        goes_on = bool(prev.strip()) and not numbered and _GOES_ON.match(line) is not None
        out.append(_line(_GOES_ON.sub(r"\1\\", line) if goes_on else line, titles))
        if _NUMBERED.match(line) and not goes_on:
            numbered = True
        elif line.strip() and not line[:1].isspace():
            numbered = False
        prev = line
    return _WS.sub(" ", " ".join(out)).strip()


def split_links(markdown: str) -> tuple[str, str]:
    """(the text without its links, the links' text): wikilinks and markdown links, label
    and target both, go to the second part. The BM25 index weighs a page's own words above
    the words of its outgoing links, so a stub that only links to a page does not outrank it."""
    links: list[str] = []

    def take(m: re.Match) -> str:
        links.append(" ".join(g for g in m.groups() if g))
        return " "

    own = _WIKILINK.sub(take, markdown)
    own = _MDLINK_PARTS.sub(take, own)
    return own, " ".join(links)
