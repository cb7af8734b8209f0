"""Obsidian's inline syntax and block ids, as markdown-it rules.

- `==text==` -> `<mark>text</mark>` (inline markdown inside);
- `#tag`, `#nested/tag` -> a link to the tag's page: a `#` at the start of a line or
  after white space, then letters, digits, `_`, `-`, `/`, at least one of them not a
  digit. In code, headings' `# ` markers, URLs (`a/#x`) and link targets it is text.
  `body_tags` lists them for the document's tags;
- `^block-id` at the end of a paragraph or list item, or alone on the line after a
  table, list or quote, becomes that block's anchor, `id="^block-id"`, and is not
  shown: `[[Page#^block-id]]` lands on it (the caret is part of the id, as in the
  link, so a block id never collides with a heading's slug);
- a fenced code block of language `mermaid` becomes `<pre class="mermaid">`, which the
  page's diagram script draws.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from markdown_it.token import Token

_TAG = re.compile(r"#([\w/-]+)", re.UNICODE)
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")
_ANY_BLOCK_ID = re.compile(r"\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)


# ----------------------------------------------------------------------- highlights


def highlight_rule(state: Any, silent: bool) -> bool:
    src, pos, end = state.src, state.pos, state.posMax
    if src[pos] != "=" or not src.startswith("==", pos) or pos + 2 >= end:
        return False
    if src[pos + 2] in " \t\n=":
        return False
    close = src.find("==", pos + 3)
    while close >= 0 and close < end and src[close - 1] in " \t\n":
        close = src.find("==", close + 2)
    if close < 0 or close + 2 > end:
        return False
    if silent:
        return True
    state.push("mark_open", "mark", 1)
    old_max = state.posMax
    state.pos, state.posMax = pos + 2, close
    state.md.inline.tokenize(state)
    state.pos, state.posMax = close + 2, old_max
    state.push("mark_close", "mark", -1)
    return True


# --------------------------------------------------------------------------- tags


def hashtag_rule(state: Any, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] != "#" or state.linkLevel > 0:
        return False
    if pos > 0 and not src[pos - 1].isspace():
        return False
    m = _TAG.match(src, pos, state.posMax)
    if m is None:
        return False
    tag = m.group(1).rstrip("/")
    if not tag or tag.isdigit() or tag.startswith("/") or "//" in tag:
        return False
    if not silent:
        token = state.push("hashtag", "a", 0)
        token.content = tag
        state.env.setdefault("cp_tags", {})[tag] = None  # read by `body_tags`
    state.pos = pos + 1 + len(tag)
    return True


def render_hashtag(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    tag = tokens[idx].content
    label = self.escape("#" + tag) if hasattr(self, "escape") else "#" + tag
    to_page: Callable[[str], str] | None = env.get("tag_href")
    if to_page is None:
        return f'<span class="tag">{label}</span>'
    return f'<a class="tag" href="{_escape(to_page(tag))}">{label}</a>'


def body_tags(env: dict) -> list[str]:
    """The `#tags` written in the body, in order, each once (from the parse's env)."""
    return list(env.get("cp_tags", ()))


# ------------------------------------------------------------------------ block ids


def block_id_rule(state: Any) -> None:
    """Core rule after inline parsing: move trailing `^ids` onto their blocks."""
    if "^" not in state.src or _ANY_BLOCK_ID.search(state.src) is None:
        return
    tokens = state.tokens
    drop: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.type != "inline" or not tok.children or i == 0 or tokens[i - 1].type != "paragraph_open":
            continue
        last = tok.children[-1]
        if last.type != "text":
            continue
        m = _BLOCK_ID.search(last.content)
        if m is None:
            continue
        if m.start() == 0 and len(tok.children) > 1 and tok.children[-2].type not in ("softbreak", "hardbreak"):
            continue  # `text^id` glued to a link or code: not an id
        block_id = "^" + m.group(1)
        if m.start() == 0 and len(tok.children) == 1:
            # `^id` alone: it names the block before this paragraph, if there is one.
            target = _previous_block(tokens, i - 1)
            if target is not None and target.attrGet("id") is None:
                target.attrSet("id", block_id)
                drop.append(i - 1)
            continue
        last.content = last.content[:m.start()].rstrip()
        if not last.content:
            tok.children.pop()
            while tok.children and tok.children[-1].type in ("softbreak", "hardbreak"):
                tok.children.pop()
        opener = tokens[i - 1]
        if i >= 2 and tokens[i - 2].type == "list_item_open":
            opener = tokens[i - 2]
        if opener.attrGet("id") is None:
            opener.attrSet("id", block_id)
    for start in reversed(drop):
        del tokens[start:start + 3]


def _previous_block(tokens: list, i: int) -> Token | None:
    """The opening token of the block that ends just before index `i`, at its level."""
    if i == 0:
        return None
    closer = tokens[i - 1]
    if not closer.type.endswith("_close") or closer.nesting != -1:
        return None
    opener_type = closer.type[:-6] + "_open"
    depth = 0
    for j in range(i - 1, -1, -1):
        if tokens[j].type == closer.type:
            depth += 1
        elif tokens[j].type == opener_type:
            depth -= 1
            if depth == 0:
                return tokens[j]
    return None


# --------------------------------------------------------------------------- mermaid


def mermaid_fence(default: Callable[..., str]) -> Callable[..., str]:
    def fence(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
        tok = tokens[idx]
        if tok.info.strip().split(maxsplit=1)[:1] == ["mermaid"]:
            return f'<pre class="mermaid">{_escape(tok.content)}</pre>\n'
        return default(tokens, idx, options, env)

    return fence


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
