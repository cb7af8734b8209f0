"""`/v1/active-memory`: the memory that bears on the message an agent is about to answer,
in one bounded pass (Dory's clients call it before every turn, with a 1.2 s timeout).

1. The profile: the request's, or for `auto` one read from the prompt (privacy words,
   then personal, writing, coding, else general). Each profile has a source policy:
   which wake profile, whether durable and session evidence may be used, and which paths
   it leaves out (coding leaves out core/user, soul, identity and people/; writing keeps
   people, whose preferences a draft needs; privacy uses nothing but the privacy wake).
2. Durable evidence: one hybrid search with the prompt (thirty results, without
   snippets: `gather` makes one only where it can change the choice), in the engine's
   order nudged by Dory's path weights; tombstones, sessions, superseded, raw and audit
   material (per-write evidence files, inbox, quarantine, saved research, generated wiki
   pages) and logs other than daily and weekly notes are not evidence. A second hop
   (`_second_hop`) searches the names the best source holds and the prompt does not; with
   vectors, the deeper look (`_deeper`). A long prompt (a pasted traceback or draft, then
   the question) is searched for what it asks (`asks.split`); the rest of it gets a
   words-only search of its own, shown after the best three (`_about_the_rest`). A prompt
   that asks several questions (`asks.parts`) gets all of this per question, their
   sources in turn (`_in_turn`).
3. Session evidence: a session search for every prompt (by words; hybrid when the
   prompt asks about recent work). A session line newer than a durable line on the same
   subject goes under it, both dated; other session lines appear only when the prompt
   asks about recent work (today, yesterday, last session, ...), as in Dory, or names a
   span of days (this week, the past 3 days); such a prompt also gets those days' daily
   notes first.
   A second, words-only session search with the best sources' other facts puts the
   sessions that change them beside them (`_updates_of_other_facts`).
4. The block (`compiler/context/active.py`): each source read from disk as facts (claims
   as sentences with their date, no ids, markers or frontmatter), its sentences that share
   the most words with the prompt kept, one line per source:
   `<sentence(s)> (<date>, <path>)`, under `## Active memory` (the best three), then
   `## Durable evidence` (the two best sources' other claims first), `## Session
   evidence` and `## More evidence` (budget left over), each text once, within
   `budget_tokens` by the estimate wake uses. When nothing was found, the wake block
   (with `include_wake`).

The answer is `{kind: memory|none, block, summary, sources}`; debug adds `took_ms`,
`profile` and `confidence` (high with durable evidence and a session line, medium with
either, low when none of it holds a word of the prompt). `rerank` is accepted and ignored.
The prompt used as the query is cut to 2,000 characters: a longer message adds nothing a
search can use, and costs time.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..models import ActiveMemoryRequest, SearchRequest
from . import OpContext
from .query_model import LOADING_WARNING, model_ready
from .people import asked_names, named_people, names_page, people_with_cautions, person_names
from .search import engine_request, run_engine, shape

from commonplace.compiler.context.asks import parts, split
from commonplace.compiler.context.active import EXPAND, EXPAND_UNITS, FULL, render
from commonplace.compiler.context.beside import beside_notes
from commonplace.compiler.context.caution import about_food
from commonplace.compiler.context.recent import notes_in, sessions_in
from commonplace.compiler.context.terms import MEANING_ALONE, shares_a_word
from commonplace.compiler.context.turns import read_on
from commonplace.compiler.context.projects import project_pages
from commonplace.compiler.context.when import asked_window
from commonplace.compiler.search import unique_terms
from commonplace.compiler.context.evidence import (
    Evidence, attach_to_other_facts, attach_updates, disk_reader, gather, hop_names, is_audit, load_page,
    names, query_terms, rerank,
)

DURABLE_K = 30  # results from the search (with snippets); deeper candidates come from `_deeper`
MAX_SOURCES = 50
HEAD = 10  # the search's own top ten lead the block: it is never worse than pasting them
DEEP = 100  # documents from the engine's vector list for the deeper look
# ... while their text lasts: a hundred chat turns are a few pages' worth, a hundred long
# pages (a conversation a file) would be read sentence by sentence for sources the
# search's own results already hold (LoCoMo a file per session: 126 ms a call, and no
# better for it).
DEEP_CHARS = 60_000
SESSION_K = 4
HOP_FROM = 1
HOP_K = 3
HOP_HEAD = True
_QWORDS = {"what", "which", "when", "where", "who", "whom", "why", "how", "is", "are", "did", "does", "do", "the",
           "after", "considering", "for", "on", "around", "since", "in", "i", "a", "an"}
MAX_QUERY = 2000
REST_CHARS, REST_K, REST_AT = 600, 2, 3  # the rest of a long prompt (`_about_the_rest`)
REST_MATCHED = 3.0  # ... and how much of it a source must share to be shown
OTHER_FACTS_QUERY = 800  # characters of the second session search (`_updates_of_other_facts`)
# A person's own daily and weekly notes are memory like any page (Dory's search keeps them);
# the rest of `logs/` (sessions, read on their own; eval and job logs) is not evidence.
NOTES = ("logs/daily/", "logs/weekly/")
WEAK = 0.3  # score_normalized below this, and no word of the prompt: not evidence
TOP_WEAK = 0.1  # the same, for the search's top ten
EXCERPT_READ = 64 * 1024
NARROW, LEAD = 300, 60  # where in a chunk the question's words are (`_around`)
NOTHING = "Nothing in memory matched this prompt"
# The privacy profile reads no evidence, only the boundaries (Dory's rule): say where they go.
PRIVACY_EMPTY = ("the privacy profile reads only privacy boundaries (boundary lines in core/user.md and "
                 "core/identity.md, core/defaults.md, core/soul.md), and none are written; no other memory is used")
NEAR = 0.1  # the nudge a page of the project the agent works in gets (`_ranked`)

_PRIVACY = ("privacy", "private", "sensitive", "boundary", "boundaries", "redact", "public-safe", "do not share")
_PERSONAL = ("who am i", "about me", "my profile", "personal", "preference", "preferences",
             "how should you talk to me")
_WRITING = ("writing", "voice", "draft", "copy", "post", "essay", "tone", "style", "blog")
_CODING = ("code", "coding", "repo", "implementation", "bug", "test", "tests", "api", "integration",
           "integrations", "schema", "mcp", "module")
_RECENT = ("last worked", "worked on last", "what did i work", "what did we work", "recent session",
           "latest session", "last session", "previous session", "left off", "leave off", "last time",
           "session context", "conversation", "yesterday", "today", "this morning", "last night")


@dataclass(frozen=True)
class Policy:
    profile: str
    wake_profile: str
    pinned: bool
    durable: bool
    sessions: bool
    blocked: frozenset[str] = frozenset()
    blocked_prefixes: tuple[str, ...] = ()

    def allows(self, path: str, session: bool) -> bool:
        if session:
            return self.sessions
        return self.durable and path not in self.blocked and not path.startswith(self.blocked_prefixes)


POLICIES = {
    "privacy": Policy("privacy", "privacy", False, False, False),
    "coding": Policy("coding", "coding", False, True, True, frozenset({"core/user.md", "core/soul.md",
                                                                    "core/identity.md"}),
                     ("people/", "knowledge/personal/")),
    # writing keeps people: a draft to someone needs what they prefer (issue 28)
    "writing": Policy("writing", "writing", True, True, True, frozenset({"core/user.md", "core/identity.md"})),
    "personal": Policy("personal", "default", True, True, True),
    "general": Policy("general", "default", True, True, True),
}


@lru_cache(maxsize=16)
def _pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w-])")


def _has(low: str, phrases: tuple[str, ...]) -> bool:
    """Whole words only: "latest" is not "test", "Postgres" is not "post"."""
    return _pattern(phrases).search(low) is not None


# Words a question about recent work is made of; a prompt of nothing else ("What did we
# do today?") has no subject a durable search could match, only noise.
_ABOUT_RECENT = frozenset(query_terms(
    "work worked working happen happened going left leave off last latest recent previous session sessions time "
    "today yesterday morning afternoon evening night tonight conversation context where were week weeks days past "
    "done"))


def only_recent(prompt: str, span: bool = False) -> bool:
    """Nothing but recent work is asked (`span`: the prompt names a span of days, whose
    words and numbers are no subject either)."""
    rest = set(query_terms(prompt)) - _ABOUT_RECENT
    if span:
        rest = {t for t in rest if not t.isdigit() and t not in _SPAN_WORDS}
    return (span or wants_sessions(prompt)) and not rest


_SPAN_WORDS = frozenset(query_terms("this week weeks day days past last one two three four five six seven"))


def profile_for(prompt: str) -> str:
    low = prompt.casefold()
    for name, words in (("privacy", _PRIVACY), ("personal", _PERSONAL), ("writing", _WRITING), ("coding", _CODING)):
        if _has(low, words):
            return name
    return "general"


def wants_sessions(prompt: str) -> bool:
    return _has(prompt.casefold(), _RECENT)


def path_weight(path: str) -> float:
    """Dory's preference among sources for an agent's next turn."""
    if path == "core/active.md":
        return 0.9
    if path in ("core/env.md", "core/defaults.md", "core/user.md", "core/soul.md"):
        return 0.45
    if path.startswith("projects/") and (path.endswith("/state.md") or path.count("/") == 1):
        return 0.65  # a project's page: its state.md, or the one page `projects/<slug>.md` it is kept as
    if path.startswith("decisions/canonical/"):
        return 0.5
    if path.startswith(NOTES):
        return 0.0
    for prefix, weight in (("people/", 0.25), ("knowledge/", 0.15), ("wiki/", -1.0), ("logs/", -0.8),
                           ("inbox/", -0.5), ("archive/", -0.5)):
        if path.startswith(prefix):
            return weight
    return 0.0


def _candidate(r: dict[str, Any], session: bool) -> bool:
    path = str(r.get("path", ""))
    if not path or path.endswith(".tombstone.md"):
        return False
    fm = r.get("frontmatter") if isinstance(r.get("frontmatter"), dict) else {}
    status = str(fm.get("status", "")).strip().lower()
    if status in ("stale", "superseded", "quarantined", "quarantine") or fm.get("superseded_by"):
        return False
    if session:
        return True
    if path.startswith(("logs/", "archive/")) and not path.startswith(NOTES) or status == "raw":
        return False
    return not is_audit(path, fm)


def _search(ctx: OpContext, query: str, k: int, corpus: str,
            warnings: list[str] | None = None, mode: str = "hybrid", deep: int = 0) -> list[dict[str, Any]]:
    """The search's results with their chunk's text (`content`) and no snippet: `gather`
    reads the pages and makes a snippet (`_snippet_of`) only where it needs one. The
    search's warnings are added to `warnings`. `deep`: the vector list is taken to that
    many documents once, here, for `_deeper`."""
    sreq = SearchRequest(query=query, k=k, mode=mode, corpus=corpus, include_content=True, debug=True)
    ereq = dataclasses.replace(engine_request(sreq), snippets=False, vector_depth=deep)
    answer = shape(run_engine(ctx.live, ereq), sreq)
    if warnings is not None:
        warnings += [w for w in answer.get("warnings") or [] if w not in warnings]
    return answer["results"]


def _snippet_of(query: str) -> Callable[[dict[str, Any]], str]:
    """A result's snippet: the part of its chunk's text where the question's words are
    (`_around`)."""
    terms = set(unique_terms(query))
    starts = re.compile(r"\b(?:" + "|".join(sorted(re.escape(t[:4]) for t in terms)) + ")") if terms else None

    def make(r: dict[str, Any]) -> str:
        content = str(r.get("content") or "")
        return content[:NARROW] if starts is None else _around(content, starts)

    return make


def _around(text: str, starts: re.Pattern[str]) -> str:
    """The NARROW characters of a chunk where most of the question's words start (by
    their first four letters: the search's stems are not whole words), as the search's
    snippet would point. Not the snippet itself: it only says where in the page the match
    is (`evidence.pick`), and making one reads every line it is given, which cost a
    quarter of a call on a conversation kept one page a session (24 of 103 ms)."""
    if len(text) <= NARROW:
        return text
    low = text.casefold()
    hits = [(m.start(), m.group(0)) for m in starts.finditer(low)]
    if not hits:
        return text[:NARROW]
    best, at, j = -1, 0, 0
    inside: Counter[str] = Counter()  # the words in the window from hit i (hits are in text order)
    for pos, word in hits:
        while j < len(hits) and hits[j][0] < pos + NARROW - 2 * LEAD:
            inside[hits[j][1]] += 1
            j += 1
        if len(inside) > best:
            best, at = len(inside), max(0, pos - LEAD)
        inside[word] -= 1
        if not inside[word]:
            del inside[word]
    return text[at:at + NARROW]


def _ranked(results: list[dict[str, Any]], policy: Policy, session: bool,
            near: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Search order, nudged by Dory's path weights (a tenth of their size: relevance
    first) and by `near` (the pages of the project the agent works in, `project_pages`),
    stale results after fresh ones."""
    kept = [r for r in results if _candidate(r, session) and policy.allows(str(r["path"]), session)]
    if session:
        return kept
    scored = []
    for i, r in enumerate(kept, start=1):
        s = float(r.get("score_normalized") or 0.0) + 0.1 * path_weight(r["path"]) - i * 0.01
        if r["path"] in near:
            s += NEAR
        if r.get("stale_warning"):
            s -= 0.15
        scored.append((-s, i, r))
    scored.sort(key=lambda x: (x[0], x[1]))
    ordered = [r for _, _, r in scored]
    return [r for r in ordered if not r.get("stale_warning")] + [r for r in ordered if r.get("stale_warning")]


def _deeper(ctx: OpContext, query: str, have: set[str], policy: Policy, read: Any) -> list[dict[str, Any]]:
    """Candidates past the search's results: the engine's vector list taken to DEEP
    documents, for what the fused top results missed (a fact said in other words than the
    question's; the word list is not taken deeper: past its top results it holds pages
    that share only common words, measured on the dialogue corpus). They rank after the
    search's top ten, by the rarer words of the question they hold (`rerank`). Without
    vectors there is no deeper look."""
    from commonplace.compiler.search import open_engine

    if DEEP <= 0:
        return []
    try:
        lists = open_engine(Path(ctx.root)).candidates(query, "durable", DEEP, lists=("vector",))
    except Exception:  # noqa: BLE001 - a deeper look is optional; the search's own answer stands
        return []
    out: list[dict[str, Any]] = []
    chars = 0
    # A vector candidate counts as a match by meaning (score 1e-6, above none).
    for path, score in ((p, 1e-6) for p, _ in lists.get("vector", [])):
        if path in have or not policy.allows(path, False):
            continue
        have.add(path)
        page, _ = load_page(read, path)
        fm = page.meta if page is not None else {}
        chars += sum(len(u.text) for u in page.units) if page is not None else 0
        if chars > DEEP_CHARS:
            break
        r = {"path": path, "frontmatter": fm, "snippet": "", "score_normalized": score}
        if _candidate(r, False):
            out.append(r)
    return out


def _second_hop(ctx: OpContext, query: str, hop: list[str], found: list[Evidence], results: list[dict[str, Any]],
                policy: Policy, read: Any, mode: str = "hybrid") -> list[Evidence]:
    """A second search for the names the best evidence holds and the question does not
    (`hop_names`), with the question's own names: a question whose answer takes two
    sources ("which city will Omar fly to, and which relative lives there?") finds the
    first ("I booked flights to visit Ana") by its words and the second ("My sister Ana is
    moving to Hanoi") only through it. Without vectors no other look finds the second,
    which shares no word with the question but the name. Its new sources go after the
    search's top ten, ranked with the rest (`rerank`)."""
    asked = names(query)
    have = {e.path for e in found} | {str(r["path"]) for r in results}
    more = [r for r in _ranked(_search(ctx, " ".join(hop + asked), HOP_K, "durable", mode=mode), policy, False)
            if r["path"] not in have]
    return gather(more, query + " " + " ".join(hop), read, snippet_of=_snippet_of(query))


def _durable(ctx: OpContext, query: str, policy: Policy, read: Any, mode: str, near: frozenset[str],
             deadline: float, said: list[str]) -> list[Evidence]:
    """The durable evidence for one question, best first (step 2 of the module's list)."""
    words_only = mode == "bm25"
    results = _ranked(_search(ctx, query, DURABLE_K, "durable", said, mode=mode, deep=0 if words_only else DEEP),
                      policy, False, near)
    snippet_of = _snippet_of(query)
    found = _usable(gather(results, query, read, snippet_of=snippet_of)[:MAX_SOURCES])
    head = sum(1 for e in found if e.path in {r["path"] for r in results[:HEAD]})
    if found and not words_only and time.perf_counter() < deadline:  # nothing usable: no deeper look
        deeper = gather(_deeper(ctx, query, {r["path"] for r in results}, policy, read), query, read)
        found += [e for e in deeper if e.score > 0 or e.matched > 0]
    found += gather(named_people(ctx.live.docs, query, {e.path for e in found}, policy.allows), query, read)
    hop = hop_names(found[:HOP_FROM], query) if found and time.perf_counter() < deadline else []
    if hop:
        found = found[:head] + _second_hop(ctx, query, hop, found, results, policy, read, mode) + found[head:]
    return rerank(found, head=head, names_of=person_names(ctx.live.docs, names(query)))


def _in_turn(per: list[list[Evidence]]) -> list[Evidence]:
    """A prompt that asks several questions (`asks.parts`): each one's evidence (its own
    search, deeper look and second hop), their sources in turn, best first. Searched
    whole, the first question's words took the block: on two dialogue questions asked as
    one, the second's evidence was in it for 71% against 91% for the first (81% and 96%
    in turn; adding the whole prompt's own search changed neither, and cost a third)."""
    out: list[Evidence] = []
    seen: dict[str, Evidence] = {}
    for i in range(max(map(len, per), default=0)):
        for found in per:
            if i >= len(found):
                continue
            e = found[i]
            if e.path not in seen:
                seen[e.path] = e
                out.append(e)
                continue
            # The same page answers both ("when is it due, and how many words are left?"):
            # its line says what each question found in it.
            first = seen[e.path]
            new = [u for u in e.units if all(u.text != v.text for v in first.units)]
            if new and i < PART_MERGE:
                first.units = [*first.units, *new]
                first.text = " ".join([first.text, *(u.text for u in new)])
    return out


PART_MERGE = 3  # a later question's lines join a page already shown when among its best three


def _about_the_rest(ctx: OpContext, rest: str, have: set[str], policy: Policy, read: Any) -> list[Evidence]:
    """What memory holds about the rest of a long prompt (the traceback or draft pasted
    before the question): a words-only search of its opening, whose best sources go after
    the question's best three. Words only: the text is long, and its embedding would cost
    more than the rest of the call."""
    query = rest[:REST_CHARS]
    results = [r for r in _ranked(_search(ctx, query, REST_K, "durable", mode="bm25"), policy, False)
               if r["path"] not in have]
    return [e for e in gather(results, query, read, snippet_of=_snippet_of(query)) if e.matched >= REST_MATCHED]


def _updates_of_other_facts(ctx: OpContext, durable: list[Evidence], seen: set[str], read: Any,
                            policy: Policy) -> None:
    """Sessions that change the other facts the block may show of its best sources (the
    milestone on the project page when the prompt asked about the paper): one word search
    of the sessions with those facts' text, each found line put beside the fact it shares
    the most words with (`attach_to_other_facts`). Words only: the text is long, and
    embedding it would cost more than the whole call should."""
    text = " ".join(u.text for e in durable[:EXPAND] for u in e.rest[:EXPAND_UNITS])
    # Each distinct word once: the facts repeat their subject's name, and a word search
    # costs by the words it looks up.
    text = " ".join(dict.fromkeys(w for w in text.split() if len(w) > 2))[:OTHER_FACTS_QUERY]
    if not text.strip():
        return
    more = [r for r in _ranked(_search(ctx, text, SESSION_K, "sessions", mode="bm25"), policy, True)
            if r["path"] not in seen]
    attach_to_other_facts(durable[:EXPAND], gather(more, text, read, session=True, snippet_of=_snippet_of(text)))


def _sessions_about(ctx: OpContext, notes: list[Evidence], seen: set[str], read: Any,
                    policy: Policy) -> list[Evidence]:
    """The sessions whose words the daily notes share, newer ones too (a words-only search
    with the notes' text, as `_updates_of_other_facts`): yesterday's note says the dinner
    is on Saturday, and today's session, outside the day asked about, moved it."""
    text = " ".join(dict.fromkeys(w for n in notes for w in n.text.split() if len(w) > 2))[:OTHER_FACTS_QUERY]
    if not text.strip():
        return []
    more = [r for r in _ranked(_search(ctx, text, SESSION_K, "sessions", mode="bm25"), policy, True)
            if r["path"] not in seen]
    return gather(more, text, read, session=True, snippet_of=_snippet_of(text))


def _recent_work(ctx: OpContext, span: tuple[dt.date, dt.date] | None, read: Any, policy: Policy,
                 have: set[str]) -> list[Evidence]:
    """For a prompt about recent work, the sessions of the days it names (`span`), else
    the newest ones, each as what it did (its summary line), newest first. The session
    search finds sessions by their words, and "What did I work on yesterday?" shares none
    with them (`compiler/context/recent.py`, which research reads a span of days with)."""
    return sessions_in(ctx.live.docs, Path(ctx.root), read, span, SESSION_K, skip=have,
                       allows=lambda rel: policy.allows(rel, True))


def _day_notes(ctx: OpContext, span: tuple[dt.date, dt.date] | None, read: Any, policy: Policy) -> list[Evidence]:
    """For a prompt about recent work, the daily notes of the days it names (else the
    newest one, shown only when no session is newer), read whole as far as DAY_NOTE_CHARS
    go (the rest is its `rest`): "What did I do yesterday?" shares no word with the note
    that says it."""
    return notes_in(ctx.live.docs, Path(ctx.root), read, span,
                    allows=lambda rel: policy.allows(rel, False))


def by_meaning_alone(durable: list[Evidence], sessions: list[Evidence], prompt: str
                     ) -> tuple[list[Evidence], list[Evidence], bool]:
    """When no line shares a content word with the prompt, only strong matches by meaning
    stay (`MEANING_ALONE`); the flag says the block is made of such matches."""
    if not prompt or shares_a_word(prompt, (e.text for e in (*durable, *sessions))):
        return durable, sessions, False
    return [e for e in durable if e.score >= MEANING_ALONE], [e for e in sessions if e.score >= MEANING_ALONE], True


def confidence_of(durable: list[Evidence], sessions: list[Evidence], prompt: str = "",
                  by_date: bool = False) -> str | None:
    """high: durable evidence and a session line (beside it or on its own); medium: either;
    low: none of it holds a content word of the prompt (found by meaning alone: "what's the
    weather in Paris?" and the owner's home town), unless it was found `by_date` (the days
    a prompt about recent work names); None: nothing found."""
    if not durable and not sessions:
        return None
    found = (*durable, *sessions)
    if not by_date and not (shares_a_word(prompt, (e.text for e in found)) if prompt
                            else any(e.matched > 0 for e in found)):
        return "low"
    return "high" if durable and (sessions or any(e.updates for e in durable)) else "medium"


def _usable(items: list[Evidence]) -> list[Evidence]:
    """Evidence that shares a word with the prompt, or that the search scored well (the
    top ten need less: the block is never worse than pasting them)."""
    return [e for i, e in enumerate(items) if e.matched > 0 or e.score >= (TOP_WEAK if i < 10 else WEAK)]



def active_memory(ctx: OpContext, req: ActiveMemoryRequest) -> dict[str, Any]:
    t0 = time.perf_counter()
    deadline = t0 + req.timeout_ms / 1000
    # A long message is read for what it asks: its profile and days too (a pasted class's
    # `private` is no question about privacy).
    asked = split(req.prompt)
    profile = req.profile if req.profile != "auto" else profile_for(asked.focus)
    policy = POLICIES[profile]
    # A span of days ("this week", "the past 3 days") asks about recent work as "yesterday"
    # does: its sessions and daily notes, found by their dates (`asked_window`).
    span = asked_window(asked.focus, dt.datetime.now(dt.timezone.utc).date())
    recent = wants_sessions(asked.focus) or span is not None
    query = " ".join(asked.focus.split())[:MAX_QUERY]
    terms = query_terms(query)
    root = Path(ctx.root)
    read = disk_reader(root, EXCERPT_READ)
    durable: list[Evidence] = []
    sessions: list[Evidence] = []
    said: list[str] = []  # the durable search's warnings
    # The query model still loading: words only this time (`model_ready`).
    words_only = not model_ready(root)
    mode = "bm25" if words_only else "hybrid"
    if query and policy.durable and not only_recent(query, span is not None):
        near = project_pages(ctx.live.docs, req.cwd, ctx.live.resolver, root) if req.cwd else frozenset()
        asks = parts(query) if time.perf_counter() < deadline else []
        if asks:  # each question on its own, their best sources in turn (`_in_turn`)
            durable = _in_turn([_durable(ctx, q, policy, read, mode, near, deadline, said) for q in asks])
        else:
            durable = _durable(ctx, query, policy, read, mode, near, deadline, said)
        if asked.rest and time.perf_counter() < deadline:
            durable[REST_AT:REST_AT] = _about_the_rest(ctx, asked.rest, {e.path for e in durable}, policy, read)
        read_on(durable, query, read, whole=FULL,  # a chat turn with what was said next
                allows=lambda p, fm: policy.allows(p, False) and _candidate({"path": p, "frontmatter": fm}, False))
    # Sessions are read for every prompt the profile allows them for: a newer session
    # line that updates a durable fact is shown beside it; the rest only when the prompt
    # asks about recent work (Dory's rule). Not cut by the time budget: a first call that
    # loads the query model spends it all, and then answered with the stale fact.
    if query and policy.sessions:
        # Words only unless the prompt asks about recent work: a session line goes beside a
        # durable fact only when they share the prompt's words (`attach_updates`), and the
        # sessions' vector list, a small filtered share of a large index, is the slowest
        # step of the call (42 ms of HNSW at 10,000 documents, bench_context --scale).
        results = _ranked(_search(ctx, query, SESSION_K, "sessions", mode=mode if recent else "bm25"),
                          policy, True)
        found = _usable(gather(results, query, read, session=True, snippet_of=_snippet_of(query)))
        left = attach_updates(durable, found, terms)
        sessions = left if recent else []
        if durable and not recent:
            _updates_of_other_facts(ctx, durable, {e.path for e in found}, read, policy)
        if recent:
            seen = {e.path for e in found}
            sessions += _recent_work(ctx, span, read, policy, seen)[: max(0, SESSION_K - len(sessions))]

    if recent and policy.durable:  # "what did I do yesterday?": that day's daily note first
        newest = max((e.date for e in sessions if e.date), default="")
        notes = [n for n in _day_notes(ctx, span, read, policy) if span is not None or n.date >= newest]
        beside_notes(notes, sessions + _sessions_about(ctx, notes, {e.path for e in sessions}, read, policy))
        durable = notes + [e for e in durable if e.path not in {n.path for n in notes}]

    # Nothing shares a word of the prompt: a weak match by meaning is no answer (a made-up
    # word's nearest page is still some page).
    # (A prompt about recent work is answered by its days' sessions and notes, found by date.)
    meaning_only = False
    if not recent:
        durable, sessions, meaning_only = by_meaning_alone(durable, sessions, query)
    # Nothing matched: say so (in the block and in `warnings`), rather than hand over the
    # general context as if it answered the prompt.
    searched = bool(query) and (policy.durable or policy.sessions)
    nothing = searched and not durable and not sessions
    wake_block, wake_sources = "", []
    if req.include_wake and not durable and not sessions:  # Dory shows the wake only when nothing was found
        from commonplace.compiler.context.wake import wake

        w = wake(ctx.live.docs, root=root, budget_tokens=min(req.budget_tokens, 600), profile=policy.wake_profile,
                 agent=req.agent, include_recent_sessions=3 if policy.sessions else 0,
                 include_pinned_decisions=policy.pinned, resolver=ctx.live.resolver,
                 transport=ctx.transport)
        wake_block, wake_sources = w.block.strip(), w.sources

    if wake_block:
        block, sources = wake_block, list(wake_sources)
        summary = next((ln.strip() for ln in wake_block.split("\n") if ln.strip()), "")[:280]
        if nothing:
            block = f"{NOTHING}; the general context (wake) follows.\n\n{block}"
            summary = NOTHING
    else:
        food = about_food(query)
        asked_of = asked_names(query)
        named = frozenset(e.path for e in durable if e.path.startswith("people/") and names_page(asked_of, e.path))
        built = render(durable, sessions, req.budget_tokens, sessions_first=recent, food=food,
                       others=people_with_cautions(ctx.live.docs, durable, policy.allows, read) if food else [], named=named)
        block, sources, summary = built.text, built.sources, built.summary
    # A prompt about recent work is answered by its days' notes and sessions, found by
    # their dates: "What did I do yesterday?" shares no word with them, and is no weak match.
    confidence = confidence_of(durable, sessions, query, by_date=recent)
    answer: dict[str, Any] = {"kind": "memory" if block else "none", "block": block, "summary": summary,
                              "sources": sources}
    if nothing:
        why = next((w.split(": ", 1)[1] for w in said if w.startswith(("nothing matched", "no matches"))), "")
        why = re.sub(r"\s*\(set min_score[^)]*\)", "", why)  # active memory takes no min_score
        answer["warnings"] = [f"nothing matched the prompt: {why or 'no memory shares its words or meaning'}"
                              + ("; the block is the general context (wake)" if wake_block else "")]
    elif meaning_only and block:
        answer["warnings"] = ["no memory shares a word with the prompt: the block holds matches by meaning alone"]
    if profile == "privacy" and not block and req.include_wake:  # (without the wake it reads nothing, as asked)
        answer["warnings"] = [*answer.get("warnings", []), PRIVACY_EMPTY]
    if words_only:
        answer["warnings"] = [*answer.get("warnings", []), LOADING_WARNING]
    if req.debug:
        answer.update(took_ms=max(1, round((time.perf_counter() - t0) * 1000)), profile=profile,
                      confidence=confidence)
    return answer
