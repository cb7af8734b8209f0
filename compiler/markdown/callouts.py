"""Obsidian callouts: a blockquote whose first line is `[!type]`, `[!type]+` or `[!type]-`,
optionally followed by a title.

    > [!tip]- Read this later
    > The body, any markdown, other callouts nested with `> >`.

A plain callout becomes `<div class="callout" data-callout="tip">`; a foldable one
(`+` open, `-` closed) becomes `<details>`/`<summary>`, which folds without scripts and
from file://. The type is lower-cased and kept as written in `data-callout` (the
stylesheet colours the known types and their aliases; any other type looks like `note`).
Without a title the type, capitalised, is the title.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it.token import Token

_HEAD = re.compile(r"^\[!([A-Za-z0-9_-]+)\]([+-]?)[ \t]*(.*)$")
_ANY = re.compile(r">[ \t]*\[!")


def callout_rule(state: Any) -> None:
    """Core rule, after block parsing and before inline parsing: rewrite the tokens of
    each blockquote that opens with a callout line (nested ones too)."""
    if "[!" not in state.src or _ANY.search(state.src) is None:  # cheap exit: most pages have none
        return
    tokens = state.tokens
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if (tok.type == "blockquote_open" and i + 3 < len(tokens) and tokens[i + 1].type == "paragraph_open"
                and tokens[i + 2].type == "inline"):
            inline = tokens[i + 2]
            first, _, rest = inline.content.partition("\n")
            m = _HEAD.match(first)
            if m:
                i = _rewrite(tokens, i, m, rest)
                continue
        i += 1


def _rewrite(tokens: list, i: int, m: re.Match, rest: str) -> int:
    kind = m.group(1).lower()
    fold = m.group(2)
    title = m.group(3).strip() or kind[:1].upper() + kind[1:].replace("-", " ").replace("_", " ")
    opener = tokens[i]
    close = _matching_close(tokens, i)
    meta = {"kind": kind, "fold": fold}
    opener.type, opener.tag, opener.meta = "callout_open", "div", meta
    tokens[close].type, tokens[close].tag, tokens[close].meta = "callout_close", "div", meta

    title_inline = Token("inline", "", 0)
    title_inline.content, title_inline.map, title_inline.level = title, opener.map, opener.level + 1
    title_inline.children = []
    head = [_token("callout_title_open", meta, opener), title_inline, _token("callout_title_close", meta, opener),
            _token("callout_body_open", meta, opener)]
    para_open, inline = tokens[i + 1], tokens[i + 2]
    if rest.strip():
        inline.content = rest
        if para_open.map:
            para_open.map = [para_open.map[0] + 1, para_open.map[1]]
        tokens[i + 1:i + 1] = head
        close += len(head)
    else:  # the paragraph held only the callout line
        tokens[i + 1:i + 4] = head
        close += len(head) - 3
    tokens.insert(close, _token("callout_body_close", meta, opener))
    return i + 1


def _token(kind: str, meta: dict, like: Token) -> Token:
    tok = Token(kind, "div", 0)
    tok.meta, tok.map, tok.level, tok.block = meta, like.map, like.level, True
    return tok


def _matching_close(tokens: list, i: int) -> int:
    depth = 0
    for j in range(i, len(tokens)):
        kind = tokens[j].type
        if kind == "blockquote_open":
            depth += 1
        elif kind == "blockquote_close":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("a blockquote without its end")  # markdown-it always closes them


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_callout(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    tok = tokens[idx]
    kind, fold = tok.meta["kind"], tok.meta["fold"]
    foldable = bool(fold)
    if tok.type == "callout_open":
        tag = "details" if foldable else "div"
        is_open = " open" if fold == "+" else ""
        return f'<{tag} class="callout" data-callout="{_escape(kind)}"{is_open}>\n'
    if tok.type == "callout_close":
        return "</details>\n" if foldable else "</div>\n"
    if tok.type == "callout_title_open":
        return '<summary class="callout-title">' if foldable else '<div class="callout-title">'
    if tok.type == "callout_title_close":
        return "</summary>\n" if foldable else "</div>\n"
    if tok.type == "callout_body_open":
        return '<div class="callout-content">\n'
    return "</div>\n"  # callout_body_close


CALLOUT_TOKENS = ("callout_open", "callout_close", "callout_title_open", "callout_title_close",
                  "callout_body_open", "callout_body_close")
