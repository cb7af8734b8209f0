"""Stage 2, parse: bytes of one file -> `Document`.

Decoding problems (invalid UTF-8, binary content) skip the file with a warning;
frontmatter problems keep the document with empty frontmatter and a warning.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from . import frontmatter as fm
from ..corpus.links import extract_links
from .mdit import parse_tokens, split_wikilink
from .comments import strip_comments
from .obsidian import body_tags
from ..model import STATUS_ALIASES, STATUSES, Document, Link, Warning_, content_hash, type_for_path

_DAILY = re.compile(r"(\d{4}-\d{2}-\d{2})")


class SkipFile(Exception):
    """The file cannot be a document (binary or undecodable)."""


def decode(path: str, data: bytes) -> str:
    if b"\x00" in data:
        raise SkipFile("binary content (NUL bytes); skipped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not valid UTF-8 (byte {exc.start}); skipped") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def _str_list(value: Any) -> list[str]:
    """Tags/aliases may be a list or a comma-separated string; always strings out."""
    if value is None:
        return []
    if isinstance(value, str):
        items = [v for v in re.split(r"[,\n]", value)]
    elif isinstance(value, list):
        items = [v if isinstance(v, str) else str(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    else:
        items = [str(value)]
    out: list[str] = []
    for item in items:
        item = item.strip()
        if item and item not in out:
            out.append(item)
    return out


def _tags(value: Any) -> list[str]:
    return [t.lstrip("#").strip() for t in _str_list(value) if t.lstrip("#").strip()]


def _date(value: Any, field: str, path: str, warnings: list[Warning_]) -> str | None:
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text).isoformat()
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return parsed.isoformat()
    except ValueError:
        warnings.append(Warning_(path, f"`{field}` is not an ISO date: {text[:40]!r}", code="bad-date"))
        return None


def parse(path: str, data: bytes, titles: str = "heading") -> tuple[Document, list[Warning_]]:
    """Parse one file. Raises SkipFile when it cannot be a document at all. `titles` is
    the corpus's `site.titles` rule (`site.TITLE_RULES`)."""
    warnings: list[Warning_] = []
    text = decode(path, data)
    meta: dict[str, Any] = {}
    try:
        raw, body, body_line = fm.split(text)
        if raw is not None:
            meta = fm.load(raw)
    except fm.FrontmatterError as exc:
        warnings.append(Warning_(path, f"malformed frontmatter: {exc}", line=1, code="frontmatter"))
        meta = {}
        try:
            _, body, body_line = fm.split(text)
        except fm.FrontmatterError:
            body, body_line = text, 1

    body = strip_comments(body)  # `%%comments%%` reach no output; `text` keeps them
    tokens, env = parse_tokens(body)
    title_fm = meta.get("title")
    title_from_fm = isinstance(title_fm, (str, int, float)) and str(title_fm).strip() != ""
    if title_from_fm:
        title = str(title_fm).strip()
    elif titles == "filename":
        title = path.rsplit("/", 1)[-1][:-3]
    else:
        title = first_h1(tokens) or path.rsplit("/", 1)[-1][:-3]

    doc_type = meta.get("type")
    doc_type = str(doc_type).strip().lower() if isinstance(doc_type, str) and doc_type.strip() else type_for_path(path)

    status = meta.get("status")
    if status is not None:
        status = str(status).strip().lower()
        if status not in STATUSES and status not in STATUS_ALIASES and not status.startswith("ready-to-"):
            warnings.append(Warning_(path, f"unknown status {status!r} (expected one of {', '.join(STATUSES)})", code="status"))

    date = _date(meta.get("date"), "date", path, warnings)
    if date is None and doc_type == "daily":
        m = _DAILY.search(path.rsplit("/", 1)[-1])
        if m:
            try:
                date = dt.date.fromisoformat(m.group(1)).isoformat()
            except ValueError:
                date = None

    doc = Document(
        path=path,
        text=text,
        body=body,
        body_line=body_line,
        frontmatter=meta,
        title=title,
        type=doc_type,
        status=status,
        tags=_merge(_tags(meta.get("tags")), body_tags(env)),
        aliases=_str_list(meta.get("aliases")),
        created=_date(meta.get("created"), "created", path, warnings),
        updated=_date(meta.get("updated"), "updated", path, warnings),
        date=date,
        hash=content_hash(data),
        title_from_frontmatter=title_from_fm,
    )
    doc.links = extract_links(tokens, body_line)
    sup = meta.get("superseded_by")
    if isinstance(sup, str) and sup.strip():
        # A supersession is a link: resolved, graphed and linted like any other.
        target, heading, label = split_wikilink(sup.strip().removeprefix("[[").removesuffix("]]"))
        doc.links.insert(0, Link(target, label, heading, 1, "meta"))
    doc.headings = headings(tokens)
    doc.tokens, doc.md_env = tokens, env
    return doc, warnings


def first_h1(tokens: list) -> str:
    """The text of the first top-level `# heading` (never a line of fenced code)."""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h1" and tok.level == 0:
            return tokens[i + 1].content.strip()
    return ""


def _merge(meta_tags: list[str], body: list[str]) -> list[str]:
    """Frontmatter tags, then the body's `#tags` not already among them."""
    if not body:
        return meta_tags
    return meta_tags + [t for t in body if t not in meta_tags]


def headings(tokens: list) -> list[tuple[int, str, str]]:
    """(level, text, anchor) for each heading, in order."""
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            out.append((int(tok.tag[1]), inline.content, str(tok.attrGet("id") or "")))
    return out
