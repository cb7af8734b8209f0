"""How much markdown structure one write may carry, so that no request holds the corpus
lock for long (issue 30 #6: 20,000 reference definitions took a minute to parse, and every
other write waited).

Two checks. `check_structure` counts what makes the parser slow (reference definitions,
links, brackets, character references) outside fenced code, in the document as it will
be, and refuses above fixed caps: cheap and linear, it runs under the lock. `check_parse_time`
parses what the request sent, before the lock is taken, in growing prefixes, and refuses
once a parse takes longer than the budget (COMMONPLACE_WRITE_PARSE_SECONDS, default 2):
it catches whatever the caps do not name, at the cost of the sender's own thread only.
Both refuse with 422 `too_complex`, naming what to change.
"""

from __future__ import annotations

import os
import re
import time

from .errors import WriteError

MAX_REFERENCE_DEFINITIONS = 1_000
MAX_LINKS = 5_000  # wikilinks and markdown links, together
MAX_BRACKETS = 10_000  # '[' outside fenced code
MAX_ENTITIES = 20_000  # character references (&amp; &#123;)
PARSE_SECONDS = 2.0
FIRST_PREFIX = 64 * 1024

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.M | re.S)
_REFDEF = re.compile(r"^ {0,3}\[(?:[^\]\\\n]|\\.){1,999}\]:", re.M)
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


class TooComplex(WriteError):
    status, code, type = 422, "too_complex", "invalid_request_error"


def _budget() -> float:
    try:
        value = float(os.environ.get("COMMONPLACE_WRITE_PARSE_SECONDS", "") or PARSE_SECONDS)
    except ValueError:
        return PARSE_SECONDS
    return value if value > 0 else PARSE_SECONDS


def check_structure(text: str, what: str = "the document") -> None:
    """Refuse (TooComplex) a text whose link structure is above the caps."""
    if "[" not in text and "&" not in text:
        return
    prose = _FENCE.sub("", text)  # code blocks are not parsed for links
    counts = [
        (len(_REFDEF.findall(prose)), MAX_REFERENCE_DEFINITIONS, "reference definitions ('[label]: url')"),
        (prose.count("[[") + prose.count("]("), MAX_LINKS, "links"),
        (prose.count("["), MAX_BRACKETS, "'[' brackets outside code blocks"),
        (len(_ENTITY.findall(prose)), MAX_ENTITIES, "character references ('&amp;')"),
    ]
    for n, cap, name in counts:
        if n > cap:
            raise TooComplex(f"{what} would hold {n:,} {name}, more than the {cap:,} one document may hold; "
                             "split it into several documents (or put data in a code block)")


def check_parse_time(content: str) -> None:
    """Parse `content` in prefixes of 64 KiB, 128 KiB, ... and refuse (TooComplex) as soon
    as one parse takes longer than the budget; a text that parses in time passes."""
    from ..markdown.parse import SkipFile, parse

    budget = _budget()
    size, n = FIRST_PREFIX, len(content)
    while True:
        cut = n if size >= n else (content.rfind("\n", 0, size) + 1 or size)
        t0 = time.perf_counter()
        try:
            parse("budget.md", content[:cut].encode("utf-8", "surrogatepass"))
        except SkipFile:
            return
        took = time.perf_counter() - t0
        if took > budget:
            raise TooComplex(f"the content takes more than {budget:g} s to parse ({took:.1f} s for its first "
                             f"{cut // 1024:,} KiB); simplify its markup (fewer links, brackets or emphasis "
                             "markers) or split it into several documents")
        if cut >= n:
            return
        size *= 2
