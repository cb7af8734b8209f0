"""A `replace` makes the page's hand-written prose agree with the new statement (Dory's
section patch, and one step past it): the `## <section>` the statement belongs to is
rewritten to it (`rewrite_section`), and where the page has no such section, the
sentences of its prose that the statement restates with a changed value are
(`rewrite_restated`: "deadline 15 January" becomes "deadline 29 January"). Lines inside
managed sections, code fences or the frontmatter are never touched."""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ..markdown.restate import restated_by, restates
from .table_rows import rewrite_row
from .canonical import _FENCE, _MARKER, _body_first_line, find_sections
from .text_rules import md_inline

_LEAD = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|\s*)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _hand_written(text: str, path: str) -> Iterator[tuple[int, str]]:
    """(index, line) of the body's lines outside managed sections and code fences."""
    spans = find_sections(text, path)
    first = _body_first_line(text)
    pos, fence = 0, None
    for i, line in enumerate(text.split("\n")):
        offset, pos = pos, pos + len(line) + 1
        if i < first:
            continue
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)[0]
            continue
        if not any(s.start <= offset <= s.end for s in spans.values()):
            yield i, line


def rewrite_section(text: str, name: str, statement: str, path: str = "page") -> str:
    """Give a hand-written `## <name>` section the one statement (Dory's section patch on
    replace). A page without the heading is returned as it is."""
    lines = text.split("\n")
    start = None
    for i, line in _hand_written(text, path):
        if start is None:
            if re.match(r"^##[ \t]+" + re.escape(name) + r"[ \t#]*\r?$", line):
                start = i
            continue
        if re.match(r"^#{1,2}[ \t]", line) or _MARKER.match(line) or line.strip() == "---":
            return _swap(lines, start, i, statement)
    return _swap(lines, start, len(lines), statement) if start is not None else text


def _swap(lines: list[str], start: int, end: int, statement: str) -> str:
    new = [md_inline(statement, 2000, start=True), ""]
    tail = lines[end:]
    return "\n".join(lines[: start + 1] + [""] + new + tail)


def rewrite_restated(text: str, statement: str, path: str = "page", ignore: frozenset[str] | None = None) -> str:
    """Every sentence of the page's prose that `statement` restates (`restates`) becomes
    the statement; a list item keeps its marker. Headings are left alone. With `ignore`
    (the words of the entity's name), when no sentence restates it so closely, the one
    sentence it restates clearly best (`restated_by`, as a replace picks among claims) is
    rewritten: "prefers a Signal message for anything urgent" replaces "prefers a phone
    call over email for anything urgent", the other sentences about the person untouched."""
    done = _rewrite_close(text, statement, path)
    if done != text:
        return done
    # A two-column table row whose key the statement names (`table_rows`): precise enough
    # to rewrite whether or not a claim of the kind exists.
    lines = text.split("\n")
    slug = frozenset(posixpath.splitext(posixpath.basename(path))[0].casefold().split("-"))
    if rewrite_row(lines, {i for i, _ in _hand_written(text, path)}, statement, (ignore or frozenset()) | slug):
        return "\n".join(lines)
    if ignore is None:
        return text
    return _rewrite_best(text, statement, path, ignore)


def _rewrite_best(text: str, statement: str, path: str, ignore: frozenset[str]) -> str:
    lines: list = text.split("\n")
    hand = list(_hand_written(text, path))
    free = {i for i, _ in hand}
    # (line, sentence, the line's sentences, what leads them, the lines a last sentence wraps onto)
    found: list[tuple[int, int, list[str], str, list]] = []
    texts: list[str] = []
    left: dict[int, "str | None"] = {}  # a line a sentence wrapped onto: what is left of it
    for i, _ in hand:
        line = lines[i]
        if not line.strip() or line.lstrip().startswith(("#", "|", "<", ">")):
            continue
        if i in left:
            if left[i] is None:
                continue  # all of it is the end of the sentence before
            body = str(left[i])
            lead = line[: line.rfind(body)]  # the wrapped sentence's end stays as it is
        else:
            lead = _LEAD.match(line).group(1)
            body = line[len(lead):]
        parts = _SENTENCE.split(body)
        rest, more = _wrapped(lines, i, free, parts[-1])
        for j, tail in more:
            left[j] = tail
        for j, p in enumerate(parts):
            last = j == len(parts) - 1
            found.append((i, j, parts, lead, more if last else []))
            texts.append(p + rest if last else p)
    hit, _ = restated_by(statement, texts, ignore)
    if hit is None:
        return text
    i, j, parts, lead, more = found[hit]
    lines[i] = lead + " ".join([*parts[:j], md_inline(statement, 2000).strip(), *parts[j + 1:]])
    for k, tail in more:  # the wrapped rest of the sentence goes with it
        lines[k] = tail
    return "\n".join(line for line in lines if line is not None)


def _rewrite_close(text: str, statement: str, path: str) -> str:
    lines = text.split("\n")
    new = md_inline(statement, 2000).strip()
    hand = list(_hand_written(text, path))
    free = {i for i, _ in hand}
    for i, _ in hand:
        line = lines[i]  # the text a wrapped sentence before it left of the line
        if line is None or not line.strip() or line.lstrip().startswith(("#", "|", "<", ">")):
            continue
        lead = _LEAD.match(line).group(1)
        parts = _SENTENCE.split(line[len(lead):])
        rest, more = _wrapped(lines, i, free, parts[-1])
        if restates(parts[-1] + rest, statement):
            parts[-1] += rest  # a sentence wrapped onto the next lines is replaced whole
        else:
            more = []
        changed = [new if restates(p, statement) else p for p in parts]
        if changed != parts:
            kept = [p for j, p in enumerate(changed) if p != new or new not in changed[:j]]
            lines[i] = lead + " ".join(kept)
            for j, tail in more:
                lines[j] = tail
    return "\n".join(line for i, line in enumerate(lines) if line is not None)


def _wrapped(lines: list, i: int, free: set[int], last: str) -> tuple[str, list]:
    """When line `i` ends inside a sentence that goes on in the paragraph's next lines:
    (the rest of that sentence, [(line index, what is left of the line or None)])."""
    rest, out = "", []
    j = i + 1
    while not re.search(r"[.!?:]\s*$", last + rest) and j in free and lines[j] is not None:
        nxt = lines[j]
        if not nxt.strip() or _LEAD.match(nxt).group(1).strip() or nxt.lstrip().startswith(("#", "|", "<", ">")):
            break
        head, *tail = _SENTENCE.split(nxt.strip(), maxsplit=1)
        rest += " " + head
        out.append((j, tail[0] if tail else None))
        j += 1
    return rest, out
