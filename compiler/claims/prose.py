"""A `replace` makes the page's hand-written prose agree with the new statement (Dory's
section patch, and one step past it): the `## <section>` the statement belongs to is
rewritten to it (`rewrite_section`), and where the page has no such section, the
sentences of its prose that the statement restates with a changed value are
(`rewrite_restated`: "deadline 15 January" becomes "deadline 29 January"); of a sentence
made of clauses ("in beta; the release is planned for 2026-12-15") only the clause it
restates. A `forget` of what only the prose says takes the sentence, clause, list item or
table row that says it out (`forget_sentence`). Lines inside managed sections, code
fences or the frontmatter are never touched."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Iterator

from ..markdown.restate import FLOOR, main_clause, restate_score, restated_by, restates
from .table_rows import rewrite_row
from .canonical import _FENCE, _MARKER, _body_first_line, find_sections
from .text_rules import md_inline

_LEAD = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|\s*)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_JOIN = re.compile(r";\s+|,\s+and\s+")
_AND = re.compile(r"\s+and\s+")
_END = re.compile(r"[.!?]+$")
_NOT_PROSE = ("#", "|", "<", ">")
# A clause that starts the statement with one of these follows a joiner in lower case.
_LOWER = frozenset("the a an this that these those it its there our we each every some".split())


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
    call over email for anything urgent", the other sentences about the person untouched.
    Of a sentence of clauses only the one clause the statement restates is rewritten."""
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


@dataclass
class _Sentence:
    line: int  # the line it starts on
    index: int  # its place among that line's sentences (`parts`)
    parts: list[str]
    lead: str  # what leads them: a list marker, or the end of a sentence wrapped onto the line
    more: list  # [(line, what is left of it or None)]: the lines the sentence wraps onto
    text: str  # the sentence whole


def _sentences(lines: list, hand: list[tuple[int, str]]) -> list[_Sentence]:
    """The sentences of the hand-written prose lines (not headings, tables, HTML, quotes)."""
    free = {i for i, _ in hand}
    out: list[_Sentence] = []
    left: dict[int, "str | None"] = {}  # a line a sentence wrapped onto: what is left of it
    for i, _ in hand:
        line = lines[i]
        if not line.strip() or line.lstrip().startswith(_NOT_PROSE):
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
            out.append(_Sentence(i, j, parts, lead, more if last else [], p + rest if last else p))
    return out


def _rewrite_best(text: str, statement: str, path: str, ignore: frozenset[str]) -> str:
    lines: list = text.split("\n")
    found = _sentences(lines, list(_hand_written(text, path)))
    hit, _ = restated_by(statement, [s.text for s in found], ignore)
    if hit is None:
        return text
    s = found[hit]
    new = md_inline(statement, 2000).strip()
    new = _in_clause(s.text, statement, new, ignore) or new
    lines[s.line] = s.lead + " ".join([*s.parts[:s.index], new, *s.parts[s.index + 1:]])
    for k, tail in s.more:  # the wrapped rest of the sentence goes with it
        lines[k] = tail
    return "\n".join(line for line in lines if line is not None)


def _rewrite_close(text: str, statement: str, path: str) -> str:
    lines = text.split("\n")
    new = md_inline(statement, 2000).strip()
    hand = list(_hand_written(text, path))
    free = {i for i, _ in hand}
    for i, _ in hand:
        line = lines[i]  # the text a wrapped sentence before it left of the line
        if line is None or not line.strip() or line.lstrip().startswith(_NOT_PROSE):
            continue
        lead = _LEAD.match(line).group(1)
        parts = _SENTENCE.split(line[len(lead):])
        rest, more = _wrapped(lines, i, free, parts[-1])
        whole = parts[-1] + rest
        if restates(whole, statement) or rest and _in_clause(whole, statement, new) is not None:
            parts[-1] = whole  # a sentence wrapped onto the next lines is replaced whole
        else:
            more = []
        changed = [new if restates(p, statement) else _in_clause(p, statement, new) or p for p in parts]
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
        if not nxt.strip() or _LEAD.match(nxt).group(1).strip() or nxt.lstrip().startswith(_NOT_PROSE):
            break
        head, *tail = _SENTENCE.split(nxt.strip(), maxsplit=1)
        rest += " " + head
        out.append((j, tail[0] if tail else None))
        j += 1
    return rest, out


# -- clauses ------------------------------------------------------------------------------


def _nested(head: str) -> bool:
    """Whether the end of `head` is inside a parenthesis, a link or a code span."""
    return head.count("(") > head.count(")") or head.count("[") > head.count("]") or head.count("`") % 2 == 1


def _clauses(sentence: str) -> list[str]:
    """`sentence` cut where it joins clauses, the joiners kept: ["A", "; ", "B"] (clauses
    at the even places). A ", and" after another comma of its clause ends a list ("goggles,
    towel, and a coin"), not a clause."""
    out, start = [], 0
    for m in _JOIN.finditer(sentence):
        before = sentence[start:m.start()]
        if _nested(sentence[:m.start()]) or m.group(0).startswith(",") and "," in before:
            continue
        out += [before, m.group(0)]
        start = m.end()
    return out + [sentence[start:]]


def _in_clause(sentence: str, statement: str, new: str, ignore: frozenset[str] | None = None) -> str | None:
    """`sentence` with only the one clause `statement` restates rewritten to `new`: the
    other clauses still hold ("Version 0.9 is in beta; the 0.9.0 release moved to ...").
    With `ignore`, the clause it restates clearly best (`restated_by`) and no other at all;
    without, the one clause it `restates`. None when the sentence is one clause, the
    statement is several, or no one clause is it."""
    pieces = _clauses(sentence)
    if len(pieces) < 3 or len(_clauses(statement)) > 1:
        return None
    clauses = pieces[0::2]
    if ignore is None:
        hits = [k for k, c in enumerate(clauses) if restates(c, statement)]
        if len(hits) != 1:
            return None
        k = hits[0]
    else:
        hit, _ = restated_by(statement, clauses, ignore)
        if hit is None or any(restate_score(c, statement, ignore) >= FLOOR for j, c in enumerate(clauses) if j != hit):
            return None
        k = hit
    text = new.strip()
    first = text.split(" ", 1)[0]
    if k and first.casefold() in _LOWER and first[:1].isupper():
        text = text[0].lower() + text[1:]
    end = _END.search(pieces[-1].rstrip())
    if k < len(clauses) - 1:
        text = _END.sub("", text)  # the sentence's end is after its last clause
    elif end and not _END.search(text):
        text += end.group(0)
    pieces[2 * k] = text
    return "".join(pieces)


# -- forget ---------------------------------------------------------------------------------

_TOKEN = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?|\d+(?:[.,]\d+)+|[\w']+")
_STOP = frozenset("a an and the of to in on at for by is are was were be it its this that with as or from".split())
# Values besides numbers: "within two days" is not "within a day", nor Monday Tuesday.
_VALUES = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday one two three four five six seven eight nine ten
eleven twelve twenty thirty forty fifty hundred thousand half once twice""".split())
MATCH = 0.75  # the share of their words a forget's text and the sentence it takes out have in common
NEAR = 0.3  # the least score of a sentence named as close to what a forget asked for


def _words(text: str, ignore: frozenset[str]) -> frozenset[str]:
    """Words to compare by: no stop words, no name, "Jonas's" as "jonas", "answers" as "answer"."""
    out = set()
    for t in _TOKEN.findall(text):
        t = t.casefold()
        t = t[:-2] if t.endswith(("'s", "’s")) else t
        if t in _STOP or t in ignore:
            continue
        t = t[:-1] if t.isalpha() and len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
        if t not in ignore:
            out.add(t)
    return frozenset(out)


def _value(word: str) -> bool:
    return word in _VALUES or any(ch.isdigit() for ch in word)


def _score(unit: frozenset[str], want: frozenset[str]) -> float:
    shared = len(unit & want)
    return (shared / len(unit | want) + shared / len(want)) / 2 if shared else 0.0


def _says(unit: str, want: frozenset[str], ignore: frozenset[str]) -> float:
    """How closely a unit of the page says what a forget asks for; 0 unless its values
    (numbers, dates, days) are exactly the asked ones and most of the words are shared.
    Compared whole and without its parenthesis or reason (`main_clause`): "Based in
    Berlin (CET, UTC+1)" says "Jonas is based in Berlin"."""
    best = 0.0
    for text in {unit, main_clause(unit)}:
        words = _words(text, ignore)
        if words and {w for w in words if _value(w)} == {w for w in want if _value(w)}:
            best = max(best, len(words & want) / len(words | want))
    return best if best >= MATCH else 0.0


@dataclass
class _Unit:
    key: tuple[int, int]  # (line, sentence) of a sentence; (line, -1) of a table row
    removed: str  # the words taken out, as the page wrote them
    becomes: "str | None"  # what the sentence becomes (None: it goes)
    sentence: "_Sentence | None" = None


def _units(lines: list, hand: list[tuple[int, str]]) -> list[_Unit]:
    """What a forget may take out: every sentence, each clause of one (and the part after
    its last "and": "likes short messages and answers email within a day"), table rows."""
    out: list[_Unit] = []
    for s in _sentences(lines, hand):
        key = (s.line, s.index)
        out.append(_Unit(key, s.text, None, s))
        pieces = _clauses(s.text)
        end = _END.search(s.text.rstrip())
        stop = end.group(0) if end else ""
        for k in range(0, len(pieces), 2):
            clause = _END.sub("", pieces[k].rstrip()) if k == len(pieces) - 1 else pieces[k]
            if len(pieces) > 1:
                rest = pieces[:max(k - 1, 0)] + pieces[k + 1 if k else 2:]
                rest[-1] = _END.sub("", rest[-1].rstrip()) + stop
                out.append(_Unit(key, clause, _upper_first("".join(rest)), s))
            tails = [m for m in _AND.finditer(clause) if not _nested(clause[:m.start()])]
            if tails and len(clause[tails[-1].end():].split()) >= 2:
                m = tails[-1]
                new = pieces[:k] + [clause[:m.start()] + (stop if k == len(pieces) - 1 else "")] + pieces[k + 1:]
                out.append(_Unit(key, clause[m.end():], "".join(new), s))
    for i, line in hand:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if (line.lstrip().startswith("|") and len(cells) >= 2 and not re.match(r"^\s*\|?\s*:?-{2,}", line)
                and not (nxt and re.match(r"^\s*\|?\s*:?-{2,}", nxt))):
            out.append(_Unit((i, -1), " | ".join(cells), None))
    return out


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def forget_sentence(text: str, content: str, path: str = "page",
                    ignore: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """The page without the hand-written sentence, clause, list item or table row that
    says `content` closely (the same values, most of the words; `ignore`: the entity's
    name), and what was taken out; (text, []) when nothing does. The rest of a paragraph
    stays; a list item or row with nothing left goes, and no blank lines pile up."""
    want = _words(content, ignore)
    if not want:
        return text, []
    lines: list = text.split("\n")
    hand = list(_hand_written(text, path))
    best: dict[tuple[int, int], tuple[float, _Unit]] = {}
    for u in _units(lines, hand):
        score = _says(u.removed, want, ignore)
        if score and score > best.get(u.key, (0.0, u))[0]:
            best[u.key] = (score, u)  # one change per sentence; the whole sentence wins a tie
    if not best:
        return text, []
    top = max(score for score, _ in best.values())
    chosen = [u for score, u in best.values() if score == top]
    edits: dict[int, dict[int, "str | None"]] = {}
    gone: set[int] = set()  # lines whose wrapped-on start went with the sentence it ended
    for u in chosen:
        if u.sentence is None:
            lines[u.key[0]] = None
            continue
        edits.setdefault(u.key[0], {})[u.key[1]] = u.becomes
        for k, tail in u.sentence.more:
            lines[k] = tail
            gone.add(k)
    for i, change in edits.items():
        s = next(u.sentence for u in chosen if u.sentence and u.key[0] == i)
        lead = "" if i in gone else s.lead
        body = " ".join(p for p in (change.get(j, p) if j in change else p for j, p in enumerate(s.parts)) if p)
        lines[i] = lead + body if body else (None if _LEAD.fullmatch(lead) else lead.rstrip())
    out: list[str] = []
    for k, line in enumerate(lines):
        if line is None or (not line.strip() and k and lines[k - 1] is None and (not out or not out[-1].strip())):
            continue  # what was taken out leaves no blank line twice
        out.append(line)
    return "\n".join(out), [u.removed.strip() for u in chosen]


def closest_sentences(text: str, content: str, path: str = "page", ignore: frozenset[str] = frozenset(),
                      most: int = 3) -> list[str]:
    """The page's hand-written sentences (or rows) nearest to `content`, best first: what
    a forget that matched nothing names, so the caller can send the right words."""
    want = _words(content, ignore)
    if not want:
        return []
    lines = text.split("\n")
    scores: dict[str, float] = {}
    for u in _units(lines, list(_hand_written(text, path))):
        whole = (u.sentence.text if u.sentence else u.removed).strip()
        score = _score(_words(u.removed, ignore), want)
        if score >= NEAR and score > scores.get(whole, 0.0):
            scores[whole] = score
    return sorted(scores, key=lambda s: -scores[s])[:most]
