"""Text rules for claims: what a statement may contain, how it is compared, and how it
is written into markdown so that it can never break the page it is compiled into.

Statements are stored exactly as given (trimmed). On pages they are shown on one line
with every markdown-active character backslash-escaped, so a statement holding
`**bold**`, `[[links]]`, `<!-- commonplace:claims:end -->`, `# heading`, `$math$`,
HTML or newlines renders as the literal text and cannot open or close a section.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .errors import InvalidClaim

MAX_STATEMENT = 2000  # characters; claims are atomic facts, not documents
MAX_REASON = 2000
MAX_RAW_INPUT = 256 * 1024
MAX_DISPLAY = 500  # a statement longer than this is shortened on pages (full text in the log)

# Bidirectional controls can make text read differently than it is stored.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s+")
# Escaped everywhere: inline constructs (code, emphasis, links, wikilinks, footnotes,
# autolinks/HTML, entities, tables, strikethrough, math, hard breaks) and `#`/`!`.
_ESCAPE = set("\\`*_[]<>|~$&#!")
# Escaped only at the start of a line: block constructs (lists, headings, quotes,
# thematic breaks, setext underlines).
_LEADING = set("+-=:")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")


def check_text(value: object, what: str, limit: int, required: bool = True) -> str | None:
    """Validate user text; return it trimmed. Raises InvalidClaim."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidClaim(f"{what} is empty")
        return None
    if not isinstance(value, str):
        raise InvalidClaim(f"{what} must be text, not {type(value).__name__}")
    text = value.strip()
    if len(text) > limit:
        raise InvalidClaim(f"{what} is {len(text):,} characters; the limit is {limit:,}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidClaim(f"{what} is not valid Unicode (lone surrogate)") from None
    m = _CONTROL.search(text)
    if m:
        raise InvalidClaim(f"{what} contains a control character (U+{ord(m.group()):04X})")
    m = _BIDI.search(text)
    if m:
        raise InvalidClaim(f"{what} contains a bidirectional control character (U+{ord(m.group()):04X})")
    return text


def one_line(text: str) -> str:
    """Whitespace (including newlines, U+2028) collapsed; control characters dropped."""
    text = _CONTROL.sub("", _BIDI.sub("", text))
    return _SPACE.sub(" ", text).strip()


def normalize(text: str) -> str:
    """Comparison key: Unicode-normalized, case-folded, spaces collapsed, no final period."""
    text = unicodedata.normalize("NFKC", one_line(text)).casefold()
    return text.rstrip(" .!;")


def shorten(text: str, limit: int = MAX_DISPLAY) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_ESCAPE_RE = re.compile(r"([\\`*_\[\]<>|~$&#!])")


@functools.lru_cache(maxsize=65536)
def md_inline(text: str, limit: int = MAX_DISPLAY, start: bool = False) -> str:
    """User text -> markdown that renders as exactly that text, on one line.

    `start=True` when the text begins a block (a list item's content, a heading), where
    `-`, `+`, `=`, `1.` would otherwise start a list or an underline.
    """
    text = shorten(one_line(text), limit)
    escaped = _ESCAPE_RE.sub(r"\\\1", text)
    if start and escaped[:1] in _LEADING:
        escaped = "\\" + escaped
    m = _ORDERED.match(escaped) if start else None
    if m:  # "1. foo" would start an ordered list
        escaped = m.group(1) + "\\" + m.group(2) + escaped[m.end():]
    return escaped


def md_code(text: str) -> str:
    """An identifier (claim id, path) as an inline code span."""
    text = one_line(text)
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str) -> str:
    """Raw text as a fenced code block no line of it can close."""
    longest = max((len(r) for r in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}text\n{body}{fence}\n"


_WIKI_UNSAFE = re.compile(r"[\[\]|#\n\r]")


def wikilink(path: str, label: str | None = None) -> str:
    """`[[path|label]]` when the path can be written as a wikilink, else a code span."""
    if _WIKI_UNSAFE.search(path) or not path.strip():
        return md_code(path) + (f" ({md_inline(label)})" if label else "")
    if label is None:
        return f"[[{path}]]"
    clean = re.sub(r"[\[\]|]", "", one_line(label)).strip() or path
    return f"[[{path}|{clean}]]"
