"""Markdown: markdown-it-py configured for the corpus, plus the `[[wikilink]]` rule and
Obsidian's syntax (`md_callouts`, `md_obsidian`; comments go before parsing, see
`md_comments`).

Raw HTML is parsed and a page that has any is cleaned with an allow-list
(`md_sanitize`): a corpus may hold text written by agents. Links are rewritten at render
time from `env["resolve"]`, so parsing needs no knowledge of the rest of the corpus and
its tokens can be kept between the parse and render stages.
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
import unicodedata
from typing import Any, Callable

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from . import callouts as md_callouts, obsidian as md_obsidian
from . import sanitize as md_sanitize
from .sanitize import sanitize

_WIKI_MAX = 512  # a wikilink longer than this is text, not a link


def slugify(text: str) -> str:
    """GitHub-style heading slug; also used to match `[[page#Heading]]`."""
    text = unicodedata.normalize("NFKC", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """`target#heading|label` -> (target, heading, label)."""
    label = None
    if "|" in inner:
        inner, label = inner.split("|", 1)
        label = label.strip() or None
    heading = None
    if "#" in inner:
        inner, heading = inner.split("#", 1)
        heading = heading.strip() or None
    return inner.strip(), heading, label


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] != "[" and src[pos] != "!":  # cheap exit: this runs at every `*`, `_`, `$`...
        return False
    embed = src.startswith("![[", pos)
    start = pos + (3 if embed else 2)
    if not (embed or src.startswith("[[", pos)):
        return False
    end = src.find("]]", start)
    if end < 0 or end - start > _WIKI_MAX:
        return False
    inner = src[start:end]
    if not inner.strip() or "\n" in inner or "[" in inner:
        return False
    if not silent:
        target, heading, label = split_wikilink(inner)
        token = state.push("wikilink", "a", 0)
        token.meta = {"target": target, "heading": heading, "label": label, "embed": embed}
        token.content = inner
    state.pos = end + 2
    return True


# Stands in a draft for a link whose HTML depends on the rest of the corpus (see
# `fill_links`). Documents never hold NUL: decoding refuses it and normalize replaces it.
_MARK = "\x00\x00"


def _render_wikilink(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    defer = env.get("defer")
    if defer is not None:
        defer.append(("wiki", tokens[idx].meta))
        return _MARK
    return _wikilink_html(self, tokens[idx].meta, env)


_AMBIGUOUS = "Ambiguous link: several pages have this name; this is the nearest"


def broken_tip(target: str, candidates: tuple[str, ...] = ()) -> str:
    """The hover text of a link that resolves to no page: none has its name, or several
    match it equally (`candidates`), worded as `commonplace lint` reports it."""
    if len(candidates) > 1:
        return f"Ambiguous link: [[{target}]] matches several pages, none nearest: {', '.join(candidates)}"
    return f"Broken link: no page matches {target}"


def _wikilink_html(self: Any, meta: dict, env: dict) -> str:
    special = env.get("special_wikilink")  # attachments and transclusions: `embeds`
    if special is not None and (html := special(meta)) is not None:
        kept = env.get(_KEPT)
        return kept.hold(html) if kept is not None else html
    # (href, title, css), or (href, title, css, candidates): the pages an unresolved
    # name matches equally, when that is why it is unresolved (a tie for nearest).
    resolve: Callable[..., tuple] | None = env.get("resolve_wikilink")
    escape = self.escape if hasattr(self, "escape") else _escape
    text = meta["label"] or (meta["target"] + (f" › {meta['heading']}" if meta["heading"] else "")) or (meta["heading"] or "")
    if resolve is None:
        return f'<span class="wikilink">{escape(text)}</span>'
    got = resolve(meta["target"], meta["heading"])
    href, title, css = got[0], got[1], got[2]
    if meta["label"] is None and href is not None and meta["target"]:
        text = title + (f" › {meta['heading']}" if meta["heading"] else "")
    if href is None:
        candidates = got[3] if len(got) > 3 else ()
        return f'<a class="wikilink broken" title="{escape(broken_tip(meta["target"], candidates))}">{escape(text)}</a>'
    tip = f' title="{_AMBIGUOUS}"' if "ambiguous" in css else ""
    return f'<a class="{css}" href="{escape(href)}"{tip}>{escape(text)}</a>'


_KEPT = "cp_kept"  # the render env's `Kept`, on pages whose HTML is cleaned


class Kept:
    """Our own embed markup (a PDF's `<iframe>`, a transcluded note, already cleaned on
    its own) set aside while a page with the author's raw HTML is cleaned, then put
    back: the allow-list is for the author's HTML, not for what the renderer writes.

    Each piece stands in the page as a word made with a random nonce, which no
    document can contain on purpose; the nonce never reaches the output."""

    def __init__(self) -> None:
        self.nonce = "cpkept" + secrets.token_hex(8)
        self.items: list[str] = []

    def hold(self, html: str) -> str:
        self.items.append(html)
        return f"{self.nonce}x{len(self.items) - 1}y"

    def restore(self, html: str) -> str:
        if not self.items:
            return html
        return re.sub(self.nonce + r"x(\d+)y", lambda m: self.items[int(m.group(1))], html)


_MARKER = re.compile(r"^<!-- commonplace:([a-z0-9_:-]+)(?: (.*?))? -->[ \t]*$")


def _marker_rule(state: Any, start: int, end: int, silent: bool) -> bool:
    """Marker comments that delimit sections commonplace manages (see claims).

    Without this rule raw-HTML cleaning would drop the markers. A
    `details:start Summary` / `details:end` pair becomes a collapsed <details> block.
    """
    pos = state.bMarks[start] + state.tShift[start]
    if not state.src.startswith("<!-- commonplace:", pos):  # cheap exit: runs at every line
        return False
    line = state.src[pos : state.eMarks[start]]
    m = _MARKER.match(line)
    if not m or state.sCount[start] - state.blkIndent >= 4:
        return False
    if silent:
        return True
    token = state.push("cp_marker", "", 0)
    token.meta = {"name": m.group(1), "arg": m.group(2) or ""}
    token.map = [start, start + 1]
    state.line = start + 1
    return True


def _balance_details(state: Any) -> None:
    """Drop stray `details:end` markers and close any left open, so HTML stays well-formed."""
    depth = 0
    kept = []
    for tok in state.tokens:
        if tok.type == "cp_marker":
            if tok.meta["name"] == "details:start":
                depth += 1
            elif tok.meta["name"] == "details:end":
                if depth == 0:
                    continue
                depth -= 1
        kept.append(tok)
    for _ in range(depth):
        closer = Token("cp_marker", "", 0)
        closer.meta = {"name": "details:end", "arg": ""}
        kept.append(closer)
    state.tokens = kept


def _render_marker(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    meta = tokens[idx].meta
    if meta["name"] == "details:start":
        return f'<details class="managed"><summary>{_escape(meta["arg"] or "Details")}</summary>\n'
    if meta["name"] == "details:end":
        return "</details>\n"
    return ""


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _render_link_open(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    defer = env.get("defer")
    if defer is not None:
        defer.append(("link", token))
        return _MARK
    rewrite = env.get("rewrite_href")
    href = token.attrGet("href")
    if rewrite is not None and isinstance(href, str):
        new_href, css = rewrite(href)
        if new_href is None:
            token.attrs.pop("href", None)
        else:
            token.attrSet("href", new_href)
        if css:
            token.attrSet("class", css)
            if css == "ambiguous" and token.attrGet("title") is None:
                token.attrSet("title", _AMBIGUOUS)
    href = token.attrGet("href")
    if isinstance(href, str) and re.match(r"^(?:[a-z][a-z0-9+.-]*:|//)", href, re.I):
        # Outgoing links never leak the reader's page through Referer.
        token.attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


def _render_image(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    defer = env.get("defer")
    if defer is not None:
        defer.append(("image", token))
        return _MARK
    rewrite = env.get("rewrite_src")
    src = token.attrGet("src")
    if rewrite is not None and isinstance(src, str):
        new_src, css = rewrite(src)  # an attachment: its copy in the site, from this page
        if new_src is not None:
            token.attrSet("src", new_src)
        if css:
            token.attrSet("class", css)
    return self.image(tokens, idx, options, env)


def _heading_label(text: str) -> str:
    return slugify(text)


class _QuietLogger:
    """Stands in for markdown-it's module loggers: its block rules call
    `LOGGER.debug(...)` on entry, 600k times for 2,000 pages (3% of parse time).
    `"".format` swallows any arguments in C, without a Python frame."""

    debug = "".format


_LOGGED_RULES = ("blockquote", "code", "fence", "heading", "hr", "html_block", "lheading", "list",
                 "paragraph", "reference")


def _silence_rule_logging() -> None:
    if logging.getLogger("markdown_it").isEnabledFor(logging.DEBUG):
        return  # someone wants these messages
    for name in _LOGGED_RULES:
        module = sys.modules.get(f"markdown_it.rules_block.{name}")
        if module is not None and hasattr(module, "LOGGER"):
            module.LOGGER = _QuietLogger


def _prose_rule(md: MarkdownIt) -> Callable[..., bool]:
    """A shortcut for block lines that start with a letter (most of a corpus).

    markdown-it tries every block rule in turn on each block; of ours only table,
    lheading and paragraph can match a line whose first character (below code
    indentation) is a letter: every other rule needs a marker character first
    (`#`, `>`, `-`, `*`, `+`, a digit, `` ` ``, `~`, `$`, `[`, `<`, `|`). Calling those
    three directly, in chain order, gives the same tokens without the failed calls.
    """
    rules = md.block.ruler.__rules__
    by_name = {r.name: r.fn for r in rules}
    table, lheading, paragraph = by_name["table"], by_name["lheading"], by_name["paragraph"]

    def prose(state: Any, start: int, end: int, silent: bool) -> bool:
        pos = state.bMarks[start] + state.tShift[start]
        if silent or pos >= state.eMarks[start] or not state.src[pos].isalpha() or state.is_code_block(start):
            return False
        return table(state, start, end, False) or lheading(state, start, end, False) or paragraph(state, start, end, False)

    return prose


def _normalize(state: Any) -> None:
    """markdown-it's `normalize` (CRLF and CR to LF, NUL to U+FFFD) without its regex,
    which matched every line ending only to put it back: 5% of parse time."""
    src = state.src
    if "\r" in src:
        src = src.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in src:
        src = src.replace("\0", "\ufffd")
    state.src = src


# A task item's inline content starts with `[ ]`, `[x]` or `[X]`, copied from the source.
_TASK_MARK = re.compile(r"\[[ xX]\]")


def _only_with_task_marks(rule: Callable[[Any], None]) -> Callable[[Any], None]:
    """The task-list rule visits every token of every page; without a marker in the
    source it can change nothing."""

    def tasklists(state: Any) -> None:
        if _TASK_MARK.search(state.src):
            rule(state)

    return tasklists


def _plain_inline(md: MarkdownIt) -> Callable[[Any], None]:
    """markdown-it's core `inline` rule, but an inline run without a single character
    at which any inline rule can start (a heading, a table cell, a plain list item or
    sentence: half the runs of a corpus) becomes its one `text` token directly.

    That is what the inline parser gives it: the text rule, first in the chain, takes
    everything up to the first terminator (none), the post-processing rules find no
    delimiters, and the pending text becomes a single `text` token of level 0. Skipping
    the parser state and rule chains saves ~10% of inline time. Exact only while the
    terminator set covers every rule's first character (see `make_markdown`)."""
    terminators = md.inline.terminator_re
    parse = md.inline.parse

    def inline(state: Any) -> None:
        for token in state.tokens:
            if token.type == "inline":
                if token.children is None:
                    token.children = []
                content = token.content
                if content and terminators.search(content) is None:
                    text = Token("text", "", 0)
                    text.content = content
                    token.children.append(text)
                else:
                    parse(content, state.md, state.env, token.children)

    return inline


def make_markdown(shortcuts: bool = True) -> MarkdownIt:
    """The corpus's parser. `shortcuts=False` leaves out the speed-ups that must not
    change any output (tests compare the two)."""
    _silence_rule_logging()
    md = MarkdownIt("commonmark", {"html": True, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin)
    md.use(footnote_plugin)
    md.use(tasklists_plugin)
    # As Obsidian: no space inside the dollars and no digit after the closing one, so
    # "$5 and $10" stays text.
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False)
    md.use(anchors_plugin, min_level=1, max_level=6, slug_func=_heading_label)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "obs_mark", md_obsidian.highlight_rule)
    md.inline.ruler.before("link", "obs_tag", md_obsidian.hashtag_rule)
    md.core.ruler.before("inline", "obs_callouts", md_callouts.callout_rule)
    md.core.ruler.after("inline", "obs_block_ids", md_obsidian.block_id_rule)
    md.block.ruler.before(
        "table", "cp_marker", _marker_rule, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )
    # The text rule stops at every character some inline rule *could* start at, e.g.
    # `-`, `:` and `+`, then tries every rule there in vain. Stop only where one of
    # ours can start (the others off: linkify, typographer) and at `]`, which
    # link labels look for. Same pending text, same tokens; a third of inline time.
    if shortcuts and hasattr(md.inline, "terminator_re"):
        md.inline.terminator_re = re.compile(r"[\n!#$&*<=\[\\\]^_`~]")
    # First in the chain and in no terminator list; see _prose_rule for why it is exact.
    if shortcuts:
        md.block.ruler.before("front_matter", "cp_prose", _prose_rule(md))
        md.core.ruler.at("normalize", _normalize)
        md.core.ruler.at("inline", _plain_inline(md))
        tasks = next(r.fn for r in md.core.ruler.__rules__ if r.name == "github-tasklists")
        md.core.ruler.at("github-tasklists", _only_with_task_marks(tasks))
    md.core.ruler.push("cp_balance_details", _balance_details)
    md.add_render_rule("cp_marker", _render_marker)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    for name in md_callouts.CALLOUT_TOKENS:
        md.add_render_rule(name, md_callouts.render_callout)
    md.add_render_rule("hashtag", md_obsidian.render_hashtag)
    md.add_render_rule("html_block", md_sanitize.render_html_block)
    md.add_render_rule("html_inline", md_sanitize.render_html_inline)
    md.add_render_rule("fence", md_obsidian.mermaid_fence(md.renderer.rules["fence"]))
    return md


_MD: MarkdownIt | None = None


def markdown() -> MarkdownIt:
    """One shared parser per process (building it costs more than parsing a page)."""
    global _MD
    if _MD is None:
        _MD = make_markdown()
    return _MD


def parse_tokens(body: str) -> tuple[list, dict]:
    """Tokens plus the parse env (footnotes live there and are needed to render)."""
    env: dict = {}
    return markdown().parse(body, env), env


def _render(tokens: list, env: dict) -> str:
    md = markdown()
    return md.renderer.render(tokens, md.options, env)


def render_tokens(tokens: list, env: dict) -> str:
    kept = Kept()
    env = {**env, _KEPT: kept}
    html = _render(tokens, env)
    return kept.restore(sanitize(html) if env.get(md_sanitize.RAW) else html)


# The last item of a draft's links when its page has raw HTML: `fill_links` cleans the
# page once its links are in (cleaning a draft would lose the markers and orphan the
# closing tags of the links they stand for).
_SANITIZE = ("sanitize", None)


def render_draft(tokens: list, env: dict) -> tuple[str, list]:
    """HTML with a marker for every link, plus what each marker stands for.

    Everything but the links is known once a page is parsed, so a build renders the
    draft right away and drops the parse tree (holding 10,000 trees until the links
    were resolved made parsing and rendering 10% slower, measured); `fill_links`
    completes it later."""
    defer: list = []
    env = {**env, "defer": defer}
    draft = _render(tokens, env)
    if env.get(md_sanitize.RAW):
        draft += _MARK
        defer.append(_SANITIZE)
    return draft, defer


def fill_links(draft: str, deferred: list, env: dict) -> str:
    """The draft with each marker replaced by its link, rendered with `env`'s
    `resolve_wikilink` and `rewrite_href`: the same bytes `render_tokens` gives."""
    pieces = draft.split("\x00")
    if len(pieces) != 2 * len(deferred) + 1 or any(pieces[1::2]):
        raise ValueError("a rendered draft does not match its links")
    md = markdown()
    out = [pieces[0]]
    clean = False
    if deferred and deferred[-1] == _SANITIZE:
        kept = Kept()
        env = {**env, _KEPT: kept}
    for i, (kind, item) in enumerate(deferred):
        if kind == "sanitize":
            clean = True
        elif kind == "wiki":
            out.append(_wikilink_html(md.renderer, item, env))
        elif kind == "image":
            out.append(_render_image(md.renderer, [item], 0, md.options, env))
        else:
            out.append(_render_link_open(md.renderer, [item], 0, md.options, env))
        out.append(pieces[2 * i + 2])
    return kept.restore(sanitize("".join(out))) if clean else "".join(out)
