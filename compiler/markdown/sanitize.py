"""Raw HTML in a page, kept but made safe with `nh3` (ammonia) and an allow-list.

A corpus may hold text written by agents or copied from the web, so HTML is never
trusted: a page with raw HTML has its whole rendered body cleaned, after its links are
filled in. What survives is the tags and attributes below; scripts, styles, event
handlers, forms, frames and `javascript:`/`data:` URLs never do. Pages without raw HTML
(most) are not touched: their HTML is all the renderer's own.

The list also covers everything the renderer itself writes (callouts, footnotes, task
lists, math, block ids, links), so cleaning a page changes only its raw HTML.
"""

from __future__ import annotations

import nh3

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "input", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
    "section", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "tr", "u", "ul", "var", "wbr", "audio", "video", "source", "picture", "center",
    "font", "ruby", "rt", "rp", "time", "aside", "header", "footer", "nav", "article", "hgroup",
}
_GENERIC = {"class", "id", "title", "lang", "dir", "style", "align", "role", "aria-label", "aria-hidden"}
_ATTRIBUTES = {
    "*": _GENERIC,
    "a": {"href", "name"},
    "img": {"src", "alt", "width", "height", "loading"},
    "audio": {"src", "controls", "loop", "muted", "preload"},
    "video": {"src", "controls", "loop", "muted", "preload", "poster", "width", "height"},
    "source": {"src", "type", "srcset", "media"},
    "input": {"type", "checked", "disabled"},
    "details": {"open"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "col": {"span"},
    "colgroup": {"span"},
    "font": {"color"},
    "time": {"datetime"},
}
# Text layout only: nothing that positions, overlays or loads anything.
_STYLE = {
    "color", "background-color", "text-align", "font-weight", "font-style", "font-size",
    "text-decoration", "vertical-align", "white-space", "width", "height",
}
_SCHEMES = {"http", "https", "mailto", "tel"}


def sanitize(html: str) -> str:
    """`html` with anything outside the allow-list removed (tags dropped keep their text,
    except scripts and styles, which go whole)."""
    return nh3.clean(
        html,
        tags=_TAGS,
        clean_content_tags={"script", "style"},
        attributes=_ATTRIBUTES,
        generic_attribute_prefixes={"data-"},
        url_schemes=_SCHEMES,
        # Every link of a cleaned page, the renderer's too: no Referer, no window.opener.
        link_rel="noopener noreferrer",
        strip_comments=True,
        filter_style_properties=_STYLE,
    )


# The task-list plugin writes its checkboxes as `html_inline` tokens: not the author's HTML.
_CHECKBOXES = {
    '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox">',
    '<input class="task-list-item-checkbox" checked="checked" disabled="disabled" type="checkbox">',
}


RAW = "cp_raw_html"  # set in the render env when the page had HTML of the author's


def render_html_block(self: object, tokens: list, idx: int, options: object, env: dict) -> str:
    env[RAW] = True
    return tokens[idx].content


def render_html_inline(self: object, tokens: list, idx: int, options: object, env: dict) -> str:
    content = tokens[idx].content
    if content not in _CHECKBOXES:
        env[RAW] = True
    return content
