"""Embeds: `![[file]]` attachments and `![[Note]]` transclusions, as HTML.

An attachment embed becomes the element that shows it (image, PDF viewer, audio,
video; any other file a link), sized by `|300` or `|300x200`. A note embed shows the
note's text, one heading's section (`#Heading`, nested `#A#B` names the last) or one
block (`#^id`), rendered with links relative to the embedding page. Embeds nest up to
`MAX_DEPTH`; a cycle or a deeper embed shows a link instead, and a missing target shows
a placeholder, never an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from ..corpus.attachments import file_url, kind_of

MAX_DEPTH = 4  # nested transclusions shown; deeper ones are links
MAX_CHARS = 200_000  # of one embedded note's markdown

_PDF_OPT = re.compile(r"\b(page|height)=(\d{1,5})\b")
_SIZE = re.compile(r"^\s*(\d{1,5})(?:\s*x\s*(\d{1,5}))?\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
# A block id ends its line, after a space or right after an embed (`![[x.png]]^id`).
_BLOCK_ID = re.compile(r"(?:^|\s|(?<=\]\]))\^([A-Za-z0-9-]+)\s*$")


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _size_attrs(label: str | None) -> tuple[str, str]:
    """`|300` or `|300x200` -> width/height attributes; anything else is alt text."""
    m = _SIZE.match(label or "")
    if not m:
        return "", label or ""
    # Both sizes given: the page's `height: auto` for images must not undo the height.
    attrs = f' width="{m.group(1)}"' + (f' height="{m.group(2)}" style="height:{m.group(2)}px"' if m.group(2) else "")
    return attrs, ""


def attachment_html(meta: dict, path: str | None, href: str | None) -> str:
    """What `![[file]]` (meta["embed"]) or `[[file]]` shows, `href` its site copy from the page."""
    target = meta["target"]
    if path is None or href is None:
        return (f'<span class="attachment missing" title="Missing attachment: {_esc(target)}">'
                f'{_esc(meta["label"] or target)}</span>')
    name = path.rsplit("/", 1)[-1]
    h = _esc(href)
    if not meta.get("embed"):
        return f'<a class="attachment" href="{h}">{_esc(meta["label"] or target)}</a>'
    kind = kind_of(path)
    size, alt = _size_attrs(meta["label"])
    if kind == "image":
        return f'<img class="attachment" src="{h}" alt="{_esc(alt or name)}"{size} loading="lazy">'
    if kind == "audio":
        return f'<audio class="attachment" controls preload="metadata" src="{h}"></audio>'
    if kind == "video":
        return f'<video class="attachment" controls preload="metadata" src="{h}"{size}></video>'
    if kind == "pdf":
        # Obsidian's `![[doc.pdf#page=3]]` opens at a page, `#height=400` sizes the viewer.
        opts = dict(_PDF_OPT.findall(meta.get("heading") or ""))
        if "height" in opts and not size:
            size = f' height="{opts["height"]}"'
        size = size or ' height="600"'
        src = h + (f"#page={opts['page']}" if "page" in opts else "")
        return (f'<span class="attachment pdf"><iframe src="{src}" title="{_esc(name)}"{size}>'
                f'</iframe><a href="{h}">{_esc(name)}</a></span>')
    return f'<a class="attachment" href="{h}">{_esc(meta["label"] or name)}</a>'


# ---------------------------------------------------------------- transclusion


def _outside_fences(lines: list[str]) -> list[bool]:
    """For each line, whether it lies outside fenced code."""
    out, fence = [], ""
    for line in lines:
        m = _FENCE.match(line)
        if fence:
            out.append(False)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = ""
            continue
        if m:
            fence = m.group(1)
            out.append(False)
            continue
        out.append(True)
    return out


def section(body: str, heading: str | None, slug: Callable[[str], str]) -> str | None:
    """The part of `body` an embed names: all of it, a heading's section (the heading
    and what follows, up to the next heading of the same or a higher level) or a block
    (`^id`: the paragraph or list item that ends with it, or the block before a line
    holding only `^id`). None when the note has no such part."""
    if not heading:
        return body
    lines = body.split("\n")
    plain = _outside_fences(lines)
    name = heading.split("#")[-1].strip()  # nested [[A#B#C]] names C
    if name.startswith("^"):
        want = name[1:]
        for i, line in enumerate(lines):
            m = _BLOCK_ID.search(line) if plain[i] else None
            if not m or m.group(1) != want:
                continue
            text = line[: m.start()].rstrip()
            if text.strip():  # the id ends a paragraph or a list item
                start = i
                if not re.match(r"^\s*([-*+]|\d+[.)])\s", line):
                    while start > 0 and lines[start - 1].strip() and plain[start - 1]:
                        start -= 1
                return "\n".join(lines[start:i] + [text])
            end = i  # `^id` alone: the block just before it
            while end > 0 and not lines[end - 1].strip():
                end -= 1
            start = end
            while start > 0 and lines[start - 1].strip():
                start -= 1
            return "\n".join(lines[start:end]) or None
        return None
    key = slug(name)
    for i, line in enumerate(lines):
        m = _ATX.match(line) if plain[i] else None
        if not m or (slug(m.group(2)) != key and m.group(2).strip() != name):
            continue
        level = len(m.group(1))
        end = len(lines)
        for j in range(i + 1, len(lines)):
            n = _ATX.match(lines[j]) if plain[j] else None
            if n and len(n.group(1)) <= level:
                end = j
                break
        return "\n".join(lines[i:end])
    return None


def _strip_block_ids(text: str) -> str:
    lines = text.split("\n")
    plain = _outside_fences(lines)
    return "\n".join(_BLOCK_ID.sub("", line) if ok else line for line, ok in zip(lines, plain))


def read_body(root: Path | None, path: str) -> str | None:
    """The markdown body of a corpus note, read from disk (workers hold no other page)."""
    if root is None:
        return None
    from .frontmatter import FrontmatterError, split

    try:
        data = (root / path).read_bytes()
        text = data.decode("utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError):
        return None
    from .comments import strip_comments  # an embedded note's %%comments%% stay hidden too

    try:
        return strip_comments(split(text.lstrip("\ufeff"))[1][:MAX_CHARS])
    except FrontmatterError:
        return strip_comments(text[:MAX_CHARS])


def note_html(meta: dict, path: str | None, href: str | None, title: str, chain: tuple[str, ...],
              root: Path | None, render: Callable[[str, str, tuple[str, ...]], str],
              slug: Callable[[str], str]) -> str:
    """`![[Note]]`, `![[Note#Heading]]` or `![[Note#^id]]`: the named text, rendered by
    `render(markdown, source path, chain)` as part of the embedding page."""
    shown = meta["label"] or meta["target"] + (f" › {meta['heading']}" if meta["heading"] else "")
    if path is None or href is None:
        return (f'<span class="embed missing" title="Broken embed: no page matches {_esc(meta["target"])}">'
                f'{_esc(shown)}</span>')
    link = f'<a class="wikilink" href="{_esc(href)}">{_esc(title if not meta["label"] else meta["label"])}</a>'
    if path in chain or len(chain) > MAX_DEPTH:
        why = "embeds itself" if path in chain else "nested too deep"
        return f'<span class="embed stopped" title="Not shown: {why}">{link}</span>'
    body = read_body(root, path)
    part = section(body, meta["heading"], slug) if body is not None else None
    if part is None:
        return (f'<span class="embed missing" title="Broken embed: {_esc(path)} has no '
                f'{_esc(meta["heading"] or "text")}">{_esc(shown)}</span>')
    inner = render(_strip_block_ids(part), path, chain + (path,))
    return (f'<div class="embed" data-embed="{_esc(path)}"><div class="embed-title">{link}</div>'
            f'<div class="embed-body">{inner}</div></div>')


_ID = re.compile(r'(<[a-zA-Z][^<>]*?\sid=")([^"]+)(")')
_LOCAL_HREF = re.compile(r'(\shref="#)([^"]+)(")')


def scope_ids(html: str, prefix: str) -> str:
    """Embedded HTML with every id given `prefix` (and in-embed `#id` links following),
    so a transcluded note's headings, block ids and footnotes never repeat an id of the
    embedding page: its own `#Heading` still lands on its own heading. The prefix holds
    `~`, which no heading slug or block id contains."""
    ids: set[str] = set()

    def rename(m: re.Match) -> str:
        ids.add(m.group(2))
        return f"{m.group(1)}{prefix}{m.group(2)}{m.group(3)}"

    html = _ID.sub(rename, html)
    if not ids:
        return html
    return _LOCAL_HREF.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}{m.group(3)}" if m.group(2) in ids
                           else m.group(0), html)
