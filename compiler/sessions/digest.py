"""Extractive digests of session transcripts: the decisions, facts, open questions and
follow-ups a session (or a day of sessions) contains, each with the turn it came from.

Deterministic: sentences are classified by fixed patterns and ranked by how much they
carry (content words, names, numbers), and the digest keeps the best of them within a
token budget for the whole page (`budget_ratio` of the session's tokens, the title,
source line, headings, speakers and line references included), in file order. Code
blocks are not read (a digest keeps what was said, not tool output). The same input
gives the same bytes: no clock, no randomness, no model (the optional rewrite is
`llm.py`'s, and falls back to this).

A digest also suggests proposals (decisions, and facts about a known entity); they are
stored for review, never written to durable memory directly (`proposals.py`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..markdown import frontmatter as fm
from .transcript import Turn, body_start, turns

SECTIONS = (("decision", "Decisions"), ("fact", "Facts"), ("question", "Open questions"),
            ("followup", "Follow-ups"))
GENERATOR = "extractive-v1"
BUDGET_RATIO = 0.25  # of the session's tokens, for the whole page body
MIN_BUDGET = 64  # tokens: a short session keeps its few points whatever the ratio (mean page ratio 21%, max 28%)

_DECISION = re.compile(r"\b(?:we|i|they|the team)\s+(?:have\s+)?(?:decided|agreed|chose|settled on|are going with|"
                       r"will go with|went with)\b|\bdecision\b|\blet'?s go with\b|\bwe'?ll use\b|\bwe will use\b",
                       re.IGNORECASE)
_FOLLOWUP = re.compile(r"\b(?:todo|to-do|follow[- ]up|next step|action item|remind me|don'?t forget|"
                       r"need to|needs to|have to|i'?ll|we'?ll|i will|we will|booked|by (?:monday|tuesday|"
                       r"wednesday|thursday|friday|tomorrow|next week|end of (?:day|week)))\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d.,:/-]*")
# Words that carry little on their own: function words and the small talk of chats.
STOP = frozenset("""
a about above after again against all almost also always am an and any are aren't as at be because been before
being below between both but by can can't could couldn't did didn't do does doesn't doing don't down during each
even ever every few for from further get gets getting got had hadn't has hasn't have haven't having he he'd he'll
he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
itself just let let's like lot lots me more most much must my myself no nor not now of off oh on once one only or
other ought our ours ourselves out over own really same she she'd she'll she's should shouldn't so some still such
than that that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those though through to too under until up us very was wasn't way we we'd we'll we're we've well were weren't
what what's when when's where where's which while who who's whom why why's will with won't would wouldn't yeah yes
yet you you'd you'll you're you've your yours yourself yourselves okay ok haha wow hey hi hello thanks thank
great good nice fun amazing awesome cool glad happy sorry sounds sound hope feel feeling know think thing things
lately today tonight soon talk talked catching anything everything something sure totally honestly seriously
pretty bit kind sort maybe tell told said say says mean means seems want wanted love loved guess lol
""".split())
_NAMEY = re.compile(r"^[A-Z][a-z]+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+")
# A statement ending in a tag question is still a statement ("I start Monday, can you believe it?").
_TAG_QUESTION = re.compile(r",\s*(?:can you believe it|right|you know|isn'?t it|don'?t you think|guess what)\?\s*$",
                           re.IGNORECASE)
# Saying something about oneself (what one did, has, is), the stuff facts are made of.
_SELF = re.compile(r"^(?:\w+\s+){0,3}?(?:i|we|my|our|me)\b(?!'d)", re.IGNORECASE)
# Wishes, plans "one day", and hearsay: about nothing that happened.
_SPECULATIVE = re.compile(r"\b(?:thinking about|someday|one day|i'?d love to|always wanted|should find|if my|"
                          r"i wonder|maybe|told me a|sounds rewarding|i'?m not really)\b", re.IGNORECASE)


# An assistant narrating its own work ("let me look", "I've updated", "running the tests"):
# the work's results are what a digest keeps, not its steps.
_NARRATION = re.compile(r"^(?:\w+[.!,]?\s+){0,2}?(?:let me|i'?ll (?:look|check|dig|take|patch|run|try|start|fix)|"
                        r"i'?ve (?:updated|changed|added|run|fixed|patched)|running|looking at|checking)\b",
                        re.IGNORECASE)
_LEAD = re.compile(r"^(?:(?:guess what|honestly|oh|wow|haha|ha|yeah|so|well|anyway|okay|ok|hey|actually|"
                   r"you know what)\b[,!.]?\s+)+", re.IGNORECASE)
_CODE_SPAN = re.compile(r"`[^`\n]+`")


def estimate_tokens(text: str) -> int:
    """The token estimate wake uses (characters / 4, or 4/3 per word, whichever is more)."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 4), math.ceil(len(_WORD.findall(text)) * 4 / 3))


@dataclass(frozen=True)
class Item:
    section: str  # decision | fact | question | followup
    text: str
    path: str
    start: int
    end: int
    speaker: str | None = None
    score: float = 0.0

    @property
    def lines(self) -> str:
        return f"L{self.start}" if self.start == self.end else f"L{self.start}-{self.end}"

    @property
    def source(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"

    def as_dict(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.text, "speaker": self.speaker, "path": self.path,
                "lines": f"{self.start}-{self.end}", "source": self.source}


@dataclass
class Digest:
    target: str  # corpus path of the digest page
    title: str
    sources: list[str]  # session paths
    source_hashes: dict[str, str]
    date: str | None
    items: list[Item] = field(default_factory=list)
    session_tokens: int = 0
    generator: str = GENERATOR
    body_override: str | None = None  # an LLM stage's rewrite of the item sections

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"title": self.title, "type": "digest-daily", "status": "done", "canonical": False,
                                "source_kind": "generated", "temperature": "cold", "generator": self.generator,
                                "digest_of": list(self.sources), "source_hashes": dict(self.source_hashes)}
        if self.date:
            meta["created"] = self.date
        return meta

    def sections_markdown(self) -> str:
        parts = []
        for key, heading in SECTIONS:
            chosen = [i for i in self.items if i.section == key]
            if not chosen:
                continue
            parts.append(f"## {heading}\n")
            parts += [item_line(it, len(self.sources) == 1) for it in chosen]
            parts.append("")
        return "\n".join(parts).rstrip() + "\n" if parts else "Nothing to keep: no decisions, facts, open " \
                                                              "questions or follow-ups were found.\n"

    def head(self) -> str:
        # The title is the frontmatter's (the site shows it; a `# title` line would be
        # said twice); one session's path is said once here, each item names its lines.
        return f"Session: `{self.sources[0]}`\n\n" if len(self.sources) == 1 else ""

    def body(self) -> str:
        return self.head() + (self.body_override if self.body_override is not None else self.sections_markdown())

    def text(self) -> str:
        from ..writes.compose import compose

        return compose(self.meta(), self.body())

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.target, "title": self.title, "sources": self.sources, "generator": self.generator,
                "items": [i.as_dict() for i in self.items], "session_tokens": self.session_tokens,
                "digest_tokens": estimate_tokens(self.body())}


def content_words(sentence: str) -> list[str]:
    return [w for w in _WORD.findall(sentence) if w.lower().strip("'’") not in STOP and len(w) > 2]


def score(sentence: str) -> float:
    """How much a sentence carries: content words, plus names and numbers."""
    sentence = _CODE_SPAN.sub("code", sentence)  # an identifier or path is one thing, however many parts
    words = _WORD.findall(sentence)
    content = content_words(sentence)
    # A capital after a sentence's end is the next sentence's first word, not a name.
    starts = {m.end() for m in _SENTENCE_END.finditer(sentence)}
    names = sum(1 for m in _WORD.finditer(sentence) if m.start() > 0 and m.start() not in starts
                and _NAMEY.match(m.group(0)) and m.group(0).lower() not in STOP)
    numbers = sum(1 for w in words if w[0].isdigit())
    return len(content) + 1.5 * names + 1.5 * numbers


def classify(sentence: str) -> str:
    if _DECISION.search(sentence):
        return "decision"
    sentence = _TAG_QUESTION.sub(".", sentence.rstrip())
    if sentence.endswith("?") and "?" not in sentence.rstrip()[:-1]:
        return "question"
    if _FOLLOWUP.search(sentence):
        return "followup"
    return "fact"


_PRIORITY = {"decision": 3.0, "followup": 1.0, "fact": 0.0, "question": -1.0}
MIN_SCORE = 4.0
FILLER_SCORE = 2.0  # a sentence of a short turn that carries less is small talk
LONG_TURN_WORDS = 60


def candidates(path: str, turn_list: Iterable[Turn]) -> list[Item]:
    out = []
    for t in turn_list:
        # A short turn is one unit (a fact often spans "We adopted a kitten. We named her
        # Olive."); a long one (an assistant's answer) is taken sentence by sentence.
        if not t.prose.strip():
            continue  # code only
        if len(t.prose.split()) <= LONG_TURN_WORDS:
            # its small talk ("Thank you.", "Ha!") and leading interjections left out
            said = [_LEAD.sub("", x) or x for x in t.sentences() if score(x) >= FILLER_SCORE]
            units = [" ".join(said)] if said else []
        else:
            units = t.sentences()
        for s in units:
            sc = score(s)
            if sc < MIN_SCORE:
                continue
            section = classify(s)
            sc += _PRIORITY[section] + (2.0 if _SELF.match(s) else 0.0) - (4.0 if _SPECULATIVE.search(s) else 0.0) \
                - (4.0 if _NARRATION.search(s) else 0.0)
            out.append(Item(section, s, path, t.start, t.end, t.speaker, sc))
    return out


def item_line(it: Item, one_source: bool) -> str:
    """An item as the page shows it (one session: its path is said once, above)."""
    who = f"{it.speaker}: " if it.speaker else ""
    return f"- {who}{it.text} ({it.lines if one_source else f'{it.path}:{it.lines}'})"


def select(items: list[Item], budget: int, one_source: bool = True) -> list[Item]:
    """The best items whose lines, with the headings of their sections, fit in `budget`
    tokens; back in file order (stable ties)."""
    ranked = sorted(enumerate(items), key=lambda p: (-p[1].score, p[0]))
    kept, used, sections, seen = [], 0, set(), []
    for pos, it in ranked:
        words = {w.lower() for w in content_words(it.text) if not w[0].isdigit()}
        if any(len(words & s) >= 0.8 * len(words) for s in seen):
            continue  # said again (the same step repeated): once is enough
        cost = estimate_tokens(item_line(it, one_source))
        if it.section not in sections:
            cost += estimate_tokens(f"## {dict(SECTIONS)[it.section]}")
        if used + cost > budget:
            continue
        kept.append((pos, it))
        used += cost
        sections.add(it.section)
        seen.append(words)
    return [it for _, it in sorted(kept, key=lambda p: p[0])]


def session_meta(data: bytes) -> dict[str, Any]:
    try:
        raw, _, _ = fm.split(data.decode("utf-8", "replace"))
        return fm.load(raw) if raw is not None else {}
    except fm.FrontmatterError:
        return {}


def session_date(meta: dict[str, Any]) -> str | None:
    for key in ("created", "date", "updated"):
        value = meta.get(key)
        if value:
            return str(value)[:10]
    return None


def build(target: str, title: str, sessions: list[tuple[str, bytes]], date: str | None,
          budget_ratio: float | None = None) -> Digest:
    """The digest of `sessions` ((path, bytes) in the order given) at `target`."""
    from ..model import content_hash

    budget_ratio = BUDGET_RATIO if budget_ratio is None else budget_ratio
    d = Digest(target, title, [p for p, _ in sessions], {p: content_hash(b) for p, b in sessions}, date)
    texts = [(path, data.decode("utf-8", "replace")) for path, data in sessions]
    sizes = []
    for _, text in texts:
        lines = text.split("\n")
        sizes.append(estimate_tokens("\n".join(lines[body_start(lines):])))
    d.session_tokens = sum(sizes)
    head = estimate_tokens(d.head())
    for (path, text), tokens in zip(texts, sizes):
        # each session pays its share of the page's title and source line
        share = head * tokens // max(1, d.session_tokens)
        # -1: estimates of parts do not add up; the floor keeps a short session's few points
        budget = max(MIN_BUDGET, int(tokens * budget_ratio) - share - 1)
        d.items.extend(select(candidates(path, turns(text)), budget, len(sessions) == 1))
    return d


# A name that only says who spoke or was spoken to ("Mira says ...", "Thanks, Mira: ...",
# "told Mira that ...") is not what the statement is about.
_REPORTER = re.compile(r"^\s+(?:also |just )?(?:says?|said|told|tells|mentioned|mentions|thinks|thought|asked|asks|"
                       r"wrote|writes|confirmed|confirms|reported|reports|noted|notes|pointed out|explained|"
                       r"explains)\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*[:—]")  # "Mira: ..." at the start of the line (a list "Alex, Sam and I" is not)
_ADDRESSED = re.compile(r"\b(?:to|with|from|by|thanks|thank you|told|tell|asked|ask|per|according to|hey|hi)\s*,?\s*$",
                        re.IGNORECASE)


def subject_of(text: str, names: list[tuple[re.Pattern[str], str]]) -> str | None:
    """The entity a statement is about, among the known ones it names (`names`: a
    pattern per entity name and the entity's id): the first one named, past a name that
    only says who spoke or was spoken to. "Mira says Ledgerline's reconciliation job now
    runs at 03:30 UTC" is Ledgerline's fact, not Mira's; "Alex owns the Atlas migration"
    is Alex's. A statement that names nobody else is about the one it names."""
    found: list[tuple[int, str, bool]] = []
    for pat, eid in names:
        for m in pat.finditer(text):
            before, after = text[:m.start()], text[m.end():]
            reporter = bool(_REPORTER.match(after) or _ADDRESSED.search(before)
                            or (not before.strip() and _LABEL.match(after)))
            found.append((m.start(), eid, reporter))
    if not found:
        return None
    found.sort(key=lambda f: f[0])
    return next((eid for _, eid, reporter in found if not reporter), found[0][1])


def digest_path(session: str) -> str:
    """logs/sessions/<x>.md -> logs/digests/sessions/<x>.md"""
    return "logs/digests/sessions/" + session.removeprefix("logs/sessions/")


def day_path(day: str) -> str:
    return f"logs/digests/daily/{day}.md"
