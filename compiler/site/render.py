"""Stage 5, render: a parsed document's tokens -> HTML body, with links resolved.

Every href is relative to the page being rendered, so the site works opened from
disk (file://), from any static host path, and from the server.
"""

from __future__ import annotations

import html as html_lib
import re
from functools import lru_cache
from typing import Callable
from urllib.parse import quote

from pathlib import Path

from ..markdown import embeds
from . import textscan
from ..corpus.attachments import file_url, is_attachment_target
from ..corpus.links import Resolver, _md_target, file_target
from ..markdown.mdit import fill_links, parse_tokens, render_draft, render_tokens, slugify
from ..model import Document, page_url
from .model import tag_url


def href(from_url: str, to_url: str) -> str:
    """Relative href from one site file to another (both site-relative).

    Always up to the site root and down again: correct from disk and from any host
    path, and far cheaper than posixpath.relpath (measured: a tenth of render time)."""
    return "../" * from_url.count("/") + quote_url(to_url)


@lru_cache(maxsize=65536)
def quote_url(url: str) -> str:
    return quote(url, safe="/#.-_~")


_TAG_RE = re.compile(r"<[^>]+>")


def _folded_text_py(html: str) -> str:
    return " ".join(html_lib.unescape(_TAG_RE.sub(" ", html)).split())


def _folded_text(html: str) -> str:
    if textscan.fold is not None and (text := textscan.fold(html)) is not None:
        return text
    return _folded_text_py(html)


def plain_text(html: str, limit: int) -> str:
    """Visible text of rendered HTML, whitespace folded, cut at `limit` characters.

    Only as much of the page as the excerpt needs is read (the whole page took 15% of
    rendering). A prefix ending just after a `>` gives a prefix of the full answer:
    every tag it starts also ends in it, no entity spans the cut, and the last tag
    becomes a space, so its last word is whole."""
    size = 2 * limit
    while size < len(html):
        cut = html.find(">", size)
        if cut < 0:
            break
        text = _folded_text(html[:cut + 1])
        if len(text) >= limit:
            return text[:limit]
        size *= 2
    return _folded_text(html)[:limit]


_HEADING_RE = re.compile(r'<h([1-6])\b[^>]*?\bid="([^"]*)"[^>]*>(.*?)</h\1>', re.S)


def text_sections(html: str, fold: Callable[[str], str] = _folded_text) -> list[tuple[str, str, str]]:
    """All visible text of a rendered body by section, for the site's search: (anchor,
    heading, text), whitespace folded; the part before the first heading has no anchor,
    and a section with neither heading nor text is left out. See `site_search`;
    `textscan.page` does the same in C."""
    parts = []
    pos, anchor, heading = 0, "", ""
    for m in _HEADING_RE.finditer(html):
        text = fold(html[pos:m.start()])
        if text or heading:
            parts.append((anchor, heading, text))
        anchor, heading, pos = html_lib.unescape(m.group(2)), fold(m.group(3)), m.end()
    text = fold(html[pos:])
    if text or heading:
        parts.append((anchor, heading, text))
    return parts


def sections_excerpt(sections: list[tuple[str, str, str]], limit: int) -> str:
    """`plain_text(html, limit)` from the body's `text_sections`: the same words in the
    same order (heading tags fold to a space like any tag; anchors are attributes, not
    text), without reading the HTML again."""
    return " ".join([x for _, heading, text in sections for x in (heading, text) if x])[:limit]


def root_prefix(from_url: str) -> str:
    # "./" at the top: `{{ root }}{{ url }}` must never start with a corpus folder name,
    # which could read as a URL scheme (a folder named `javascript:alert(1)`).
    depth = from_url.count("/")
    return "../" * depth if depth else "./"


def draft_document(doc: Document) -> None:
    """Render everything but the links now (`markdown.render_draft`) and drop the parse
    tree: `doc.draft` and `doc.deferred` replace `doc.tokens` and `doc.md_env`."""
    tokens, env = doc.tokens, doc.md_env
    if tokens is None:
        tokens, env = parse_tokens(doc.body)
    root = root_prefix(doc.url)
    env = {**(env or {}), "tag_href": lambda tag: root + quote_url(tag_url(tag))}
    doc.draft, doc.deferred = render_draft(_drop_title_heading(doc, tokens), env)
    doc.tokens = doc.md_env = None


def render_document(doc: Document, resolver: Resolver, titles: dict[str, str], root: Path | None = None) -> str:
    """Render `doc` to HTML. `titles` maps paths to titles for wikilink text; `root` is
    the corpus, where embedded notes are read. Uses (and uses up) the document's draft
    when it has one."""
    if doc.draft is None:
        draft_document(doc)
    assert doc.draft is not None and doc.deferred is not None
    draft, deferred = doc.draft, doc.deferred
    doc.draft = doc.deferred = None  # a link's rendering changes its token: one use only
    return fill_links(draft, deferred, link_env(doc, resolver, titles, root))


def heading_anchor(heading: str | None) -> str:
    """`#anchor` for what a link names after `#`: a block (`^id`, kept as written, as
    the block's anchor is), else a heading's slug; nested `A#B#C` names the last."""
    if not heading:
        return ""
    last = heading.split("#")[-1].strip() or heading
    return f"#{last}" if last.startswith("^") else f"#{slugify(last)}"


def link_env(doc: Document, resolver: Resolver, titles: dict[str, str], root: Path | None = None,
             chain: tuple[str, ...] = (), source: str | None = None) -> dict:
    """What the link rules need to render `doc`'s links (`markdown._wikilink_html`,
    `markdown._render_link_open`, `markdown._render_image`): hrefs relative to its page,
    titles for link text. Text embedded from another note (`source`, with the `chain`
    of notes embedding it) resolves its links from that note, as it would there."""
    here = doc.url
    source = source or doc.path
    # The build resolved every link of the page already (the parent, against the whole
    # corpus; `state` keeps them current, as the link graph needs): reuse those answers
    # instead of asking the resolver again (5% of rendering). A target resolves the same
    # wherever it stands in one page; unresolved ones are asked again.
    known = {l.target: (l.resolved, len(l.candidates) > 1) for l in doc.links
             if l.kind in ("wiki", "embed") and l.resolved is not None} if source == doc.path else {}

    def resolve_path(target: str) -> tuple[str | None, bool]:
        got = known.get(target)
        if got is None:
            res = resolver.resolve_wiki(target, source)
            got = (res.path, len(res.candidates) > 1)
        return got

    def resolve_wikilink(target: str, heading: str | None) -> tuple:
        path, ambiguous = resolve_path(target)
        if path is None:  # with the pages a tie is between, so the link says so (as lint does)
            return None, "", "wikilink broken", tuple(resolver.resolve_wiki(target, source).candidates)
        css = "wikilink ambiguous" if ambiguous else "wikilink"
        anchor = heading_anchor(heading)
        if path == doc.path:
            return anchor or "#", titles.get(path, ""), css
        return href(here, page_url(path)) + anchor, titles.get(path, path), css

    def file_href(target: str) -> tuple[str | None, str | None]:
        path = resolver.resolve_file(target, source).path
        return path, (href(here, file_url(path)) if path is not None else None)

    def rewrite_href(raw: str) -> tuple[str | None, str | None]:
        parsed = _md_target(raw)
        if parsed is None:
            target = file_target(raw)
            if target is None:
                return raw, None
            path, new = file_href(target)
            return (new, "attachment") if new is not None else (None, "broken")
        target, heading = parsed
        res = resolver.resolve_md(target, source)
        if res.path is None:
            return None, "broken"
        return href(here, page_url(res.path)) + heading_anchor(heading), "ambiguous" if len(res.candidates) > 1 else None

    def rewrite_src(raw: str) -> tuple[str | None, str | None]:
        target = file_target(raw)
        if target is None:
            return raw, None
        path, new = file_href(target)
        return (new, None) if new is not None else (None, "attachment missing")

    embedded = [0]  # embeds rendered so far on this page (or in this embed)

    def render_embedded(text: str, path: str, inner: tuple[str, ...]) -> str:
        tokens, env = parse_tokens(text)
        embedded[0] += 1
        html = render_tokens(tokens, {**env, **link_env(doc, resolver, titles, root, inner, path)})
        return embeds.scope_ids(html, f"e{embedded[0]}~")

    def special_wikilink(meta: dict) -> str | None:
        target = meta["target"]
        if is_attachment_target(target):
            path, new = file_href(target)
            return embeds.attachment_html(meta, path, new)
        if not meta.get("embed") or not target:
            return None
        path = resolve_path(target)[0]
        new = None if path is None else href(here, page_url(path)) + heading_anchor(meta["heading"])
        return embeds.note_html(meta, path, new, titles.get(path or "", target), chain or (doc.path,), root,
                                render_embedded, slugify)

    return {"resolve_wikilink": resolve_wikilink, "rewrite_href": rewrite_href, "rewrite_src": rewrite_src,
            "special_wikilink": special_wikilink}


def _drop_title_heading(doc: Document, tokens: list) -> list:
    """A body that opens with `# <title>` would show the title twice: the page shows
    it once, keeping the heading's anchor so `[[page#Title]]` still lands."""
    if (len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1"
            and tokens[1].content.strip() == doc.title):
        doc.title_anchor = str(tokens[0].attrGet("id") or "")
        return tokens[3:]
    doc.title_anchor = ""
    return tokens
