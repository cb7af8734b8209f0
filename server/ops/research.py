"""`/v1/research`: search memory for a question and compile a markdown artifact.

Dory's flow (`dory-contract.md` §1.5): a hybrid search (`corpus`, default all; `limit`
results; short snippets), then an artifact whose body has `## Question`, `## Answer` (up
to three distinct lines: the evidence holding most of the question's rarer words, the best
source's claims that bear on it after the first), `## Evidence` (durable results, `- path: snippet`) and, when
sessions answered, `## Session Evidence`. The answer is
`{"artifact": {path, kind, bytes_written} | null, "research": {"artifact": {kind, title,
question, body, sources, target, status}, "sources": [...]}}`.

With `save` (the default) the artifact is written through the safe write path (atomic,
content checks, the site and index refreshed before the answer) to
`references/reports/<date>-<slug>.md`, `references/briefings/<date>-<slug>.md`,
`wiki/concepts/<slug>.md` (wiki-note) or `inbox/proposed/<date>-<slug>.md` (proposal),
with frontmatter title, created, type (the kind), status draft, source_kind generated,
temperature warm and the question, and a `## Sources` list. Where Dory overwrites a file of
the same name, commonplace writes `<slug>-2.md` (and so on): an earlier report is never
lost. Content the write checks refuse (a snippet quoting a prompt-injection marker, say)
is quarantined under inbox/quarantine/ as a soft write would, and the answer says so.

Evidence is what the search found minus earlier research output (saved reports,
briefings, proposals, generated wiki notes: `is_report`), and nothing when nothing
matched well. A name says whom a question is about, not what it asks (as in `rerank`, a
name is a filter, not a word to match): when the question has words besides its names
(capitalised ones, and the person and project pages found under theirs), stop words and
words that ask about a thing as a whole ("name", "status", "work": `GENERAL`), the
evidence must share one of them. "What is the name of Leo's dentist?" is not answered by
"Leo's EpiPen expires in March 2027"; "When does Leo's EpiPen expire?" and "Who is Leo?"
are. With no evidence, `save` writes nothing: `artifact` is null and `warnings` says why.
An answer or evidence line never starts with a markdown heading's marks (a session
file's first line `# Sales call ...`).

A question about food (a meal, a restaurant, a diet, an allergy: `caution.about_food`)
is answered with the people's facts that could hurt them if missed (coeliac, allergic,
vegetarian: `caution.cautions`), read from the people pages whether the search found
them or not: the people the question names first, then those whose pages the evidence
holds, then those it names, then the rest, six lines at most (`people_cautions`). They
follow the answer's lines and the evidence's first three; with no other evidence, only
the people the question names are said.

A question that names a span of days ("What changed this week?", "what did we do
yesterday?", "the past 3 days") leads with what changed in it, newest first
(`compiler/context/recent.py`): the sessions of those days (the lines a digest keeps),
their daily notes, the claims and pages written in them; each answer line says its day
and source. Without other words the search is not asked (it matched pages that only
share "changed" or "week": people's biographies); with a subject ("on Ledgerline"), the
span's items about it lead and the search's results for the subject alone follow.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from pathlib import Path
from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError, from_write_error
from ..models import ResearchRequest
from . import OpContext
from .refresh import refresh
from .search import engine_request, run_engine, shape, worded

from commonplace.compiler.context.caution import about_food, cautions
from commonplace.compiler.context.entity import named as led_by_name
from commonplace.compiler.context.evidence import (
    Evidence, attach_updates, disk_reader, gather, is_audit, load_page, names, overlap, query_terms, rerank,
)
from commonplace.compiler.context.pack import fact_line
from commonplace.compiler.context.plain import STOP, words
from commonplace.compiler.context.recent import subject_query, window_evidence
from commonplace.compiler.context.terms import MEANING_ALONE, shares_a_word, stem
from commonplace.compiler.context.turns import next_line, read_on

MAX_TITLE = 120
MAX_SUFFIX = 50
ANSWER_LINES = 3
_SAVED = ("references/reports/", "references/briefings/", "inbox/proposed/")


def slug(text: str) -> str:
    """A lowercase ASCII slug for a file name (write paths are `[a-z0-9_.-/]`)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    s = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    return s[:80].strip("-") or "research"


def target_for(kind: str, title: str, day: str) -> str:
    s = slug(title)
    return {"report": f"references/reports/{day}-{s}.md", "briefing": f"references/briefings/{day}-{s}.md",
            "wiki-note": f"wiki/concepts/{s}.md", "proposal": f"inbox/proposed/{day}-{s}.md"}[kind]


# Words that ask about a named thing as a whole, or for its name ("What is the name of
# Leo's dentist?" asks about a dentist; "How does Ledgerline work?" about Ledgerline).
GENERAL = frozenset(query_terms("name named called work works working status state new latest news update "
                                "updates overview summary doing going happening happened"))
_NAMED_TYPES = ("person", "project")
_NAMED_FOLDERS = ("people/", "projects/")
_HEADING = re.compile(r"^\s*#{1,6}\s+")


def _no_heading(text: str) -> str:
    """`text` without the marks of a markdown heading it starts with."""
    return _HEADING.sub("", text)


def _names_found(results: list[dict[str, Any]], docs: Any) -> set[str]:
    """The stems of the names of the person and project pages among `results` (title and
    aliases): "leo" in "who is leo's dentist?" is a name, though not capitalised."""
    out: set[str] = set()
    for r in results:
        path = str(r.get("path", ""))
        doc = (docs or {}).get(path)
        meta = getattr(doc, "frontmatter", None) or {}
        kind = str(meta.get("type") or "").casefold()
        if not (kind in _NAMED_TYPES or path.startswith(_NAMED_FOLDERS)):
            continue
        aliases = meta.get("aliases") if isinstance(meta.get("aliases"), list) else []
        for n in [getattr(doc, "title", "") or str(r.get("title") or ""), *(a for a in aliases if isinstance(a, str))]:
            out |= set(query_terms(n))
    return out


def beside_names(query: str, results: list[dict[str, Any]], read: Any,
                 docs: Any = None) -> tuple[list[str], list[str]]:
    """(the words of `query` no result holds, its names) when it asks something besides
    its names and no result holds any of that; `([], [])` when found, or when it asks
    nothing but names. A name is whom the question is about (`names`, and the person and
    project pages found), not what it asks: "Leo" matched Leo's page for "What is the name
    of Leo's dentist?", which says nothing of a dentist. Stop words and `GENERAL` words
    ask nothing by themselves. A result holds a word in its title, snippet or page text."""
    said = re.findall(r"[\w']+", query)  # as `query_terms` reads it, "Leo's" one word
    capitalised, found = set(names(query)), _names_found(results, docs)
    named = {stem(w.casefold()) for w in said
             if (base := w.removesuffix("'s")) in capitalised or stem(base.casefold()) in found}
    asked = {k for k in query_terms(query) if k not in named and k not in GENERAL}
    if not asked or not results:
        return [], []
    texts = [f"{r.get('title') or ''} {r.get('snippet') or ''}" for r in results]
    for r in results:
        page, _ = load_page(read, str(r.get("path", "")))
        if page is not None:
            texts.append(" ".join([page.title, *(u.text for u in page.units)]))
    have = {stem(w) for t in texts for w in words(t) if len(w) > 2 and w.casefold() not in STOP}
    # A word's stem, or one begun by it: "owns" is "own", and the page says "owned"
    # (short words keep their -ed: `stem`).
    if any(h.startswith(a) or a.startswith(h) for a in asked for h in have):
        return [], []
    return (list(dict.fromkeys(w for w in said if stem(w.casefold()) in asked)),
            list(dict.fromkeys(w.removesuffix("'s") for w in said if stem(w.casefold()) in named)))


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return out


def _one_line(text: str) -> str:
    return " ".join(str(text or "").split())


def _with_updates(e: Evidence) -> str:
    return e.text + "".join(f" Newer ({u.date}, {u.path}): {u.text}" for u in e.updates)


_PREFERS = re.compile(r"\b(?:prefer\w*|like[sd]?|want[s]?|favou?rite|dislike[sd]?|rather)\b", re.I)


def _bears_on(question: str, u: Any) -> bool:
    """A claim that answers the question though its words may not match: a preference
    for a question about what someone prefers ("What does Priya prefer?" and "Priya wants
    the summary as three bullets"), else a claim that shares a word with it besides the
    names every claim of the page holds."""
    if u.kind != "claim":
        return False
    if _PREFERS.search(question) and u.heading.casefold().startswith("preference"):
        return True
    named = {k for n in names(question) for k in query_terms(n)}
    terms = {k: v for k, v in query_terms(question).items() if k not in named}
    return overlap(terms, u.text) > 0


CAUTION_LINES = 6  # people's diets and allergies said for a question about food, at most
PEOPLE_READ = 2000  # people pages read for them, at most (as active memory)


def _name_stems(text: str) -> set[str]:
    """The stems of the capitalised words of `text` (its names), without a possessive."""
    return {k for w in re.findall(r"\b[A-Z][\w'’-]*", text or "") for k in query_terms(re.sub(r"['’]s$", "", w))}


def people_cautions(question: str, people: list[str], found: list[str], said: str,
                    read: Any) -> list[tuple[str, str, str]]:
    """For a question about food (`caution.about_food`, or a diet or an allergy), each
    person's facts that could hurt them if missed (`caution.cautions`), as (path, text,
    date): the people the question names first, then those whose pages the evidence holds
    (in its order), then those it names (`said`), then the rest. "Where is the
    maintainers' dinner, and what dietary needs matter?" names nobody, and the search's
    lines about the dinner do not say that Jonas is coeliac; his page does."""
    if not about_food(question):
        return []
    asked, named = _name_stems(question), _name_stems(said)
    ranked = []
    for n, path in enumerate(people[:PEOPLE_READ]):
        page, mdate = load_page(read, path)
        facts = [u for u in (page.units if page is not None else []) if cautions(u.text)]
        if not facts:
            continue
        aliases = page.meta.get("aliases") if isinstance(page.meta.get("aliases"), list) else []
        who = {k for t in [page.title, *(a for a in aliases if isinstance(a, str))] for k in query_terms(t)}
        rank = (0 if who & asked else 1 if path in found else 2 if who & named else 3,
                found.index(path) if path in found else n)
        ranked.append((rank, [(path, led_by_name(page, u.text), u.date or page.date or mdate) for u in facts]))
    ranked.sort(key=lambda x: x[0])
    if not found:  # nothing else answers: only the people the question names
        ranked = [r for r in ranked if r[0][0] == 0]
    return [row for _, rows in ranked for row in rows][:CAUTION_LINES]


def findings(question: str, results: list[dict[str, Any]], read: Any = None,
             lead: list[Evidence] | None = None, also: list[str] | None = None,
             people: list[str] | None = None) -> str:
    """The artifact's body. With `read` (path -> (text, date)), the evidence is packed by
    the context builder: each source's sentences that bear on the question, with date
    and path, no markup or bookkeeping; audit material (per-write evidence, inbox, saved
    research, generated pages) is not evidence. `lead`: what changed in the span of days
    the question names (`window_evidence`, newest first); it leads the answer and both
    evidence lists, and the search's results follow it. A best source that is a chat turn
    is said with the turns after it (`read_on`), whose paths are added to `also`.
    `people`: the people pages; for a question about food, their diets and allergies
    (`people_cautions`) follow the answer and the evidence's first three lines, and
    their paths are added to `also`."""
    if read is not None:
        lead = lead or []
        led = {e.path for e in lead}
        durable = gather([r for r in results if not str(r.get("path", "")).startswith("logs/sessions/")
                          and r.get("path") not in led], question, read)
        sessions = gather([r for r in results if str(r.get("path", "")).startswith("logs/sessions/")
                           and r.get("path") not in led], question, read, session=True)
        # A session newer than a durable line about the same thing is said with it, as in
        # active memory: a report must not state the old value as the answer.
        # (the span's sessions too: a page's fact they changed is not shown alone)
        # A session said beside a durable line is not listed again under Session Evidence.
        left = attach_updates(durable, list(sessions), query_terms(question))
        lead_left = attach_updates(durable, [e for e in lead if e.session], query_terms(question))
        items = {"durable": [(e.path, e.text, e.date) for e in lead if not e.session]
                 + [(e.path, _with_updates(e), e.date) for e in durable],
                 "sessions": [(e.path, e.text, e.date) for e in [*lead_left, *left]]}
        # The answer is the evidence that holds most of the question's rarer words, as in
        # active memory (`rerank`); the search's order alone put a page that shares only
        # "model" ahead of the note that says how the calibration went.
        # After the best line, that source's claims that bear on the question (`_bears_on`).
        ranked = rerank([*durable, *left], names_of=names(question))
        read_on(ranked, question, read, whole=ANSWER_LINES)
        then = [a for e in ranked[:1] for a in e.after]
        items["durable"] += [(a.path, a.text, a.date) for a in then]
        if also is not None:
            also += [a.path for a in then]
        # each led by the page's name when it does not say it ("Owns the Kestrel Café" is about whom?)
        first = load_page(read, ranked[0].path)[0] if ranked else None
        claims = [led_by_name(first, u.text) if first is not None else u.text for u in ranked[0].rest
                  if _bears_on(question, u)][:ANSWER_LINES - 1] if ranked else []
        answers = _dedupe([_with_updates(e) + "".join(f" Next ({a.path}): {next_line(a, e.date)}" for a in e.after)
                           for e in ranked[:1]] + claims
                          + [_with_updates(e) for e in ranked[1:]])[:ANSWER_LINES]
        if lead:  # what changed in the span, newest first, each with its day and source
            answers = _dedupe([fact_line(e.text, e.date, e.path) for e in lead] + answers)[:ANSWER_LINES]
        # A safety fact the question asks for in other words ("dietary needs" and "coeliac")
        # is said, not left to a line that shares the question's words.
        found = [p for p, _, _ in items["durable"]] + [p for p, _, _ in items["sessions"]]
        said = " ".join(t for rows in items.values() for _, t, _ in rows)
        safety = [row for row in people_cautions(question, people or [], list(dict.fromkeys(found)), said, read)
                  if not any(row[1].casefold() in a.casefold() for a in answers)]
        if safety:
            answers = _dedupe(answers + [row[1] for row in safety])
            at = ANSWER_LINES
            items["durable"][at:at] = [row for row in safety
                                       if not any(row[1].casefold() in t.casefold() for _, t, _ in items["durable"])]
            if also is not None:
                also += [p for p, _, _ in safety]
    else:
        items = {"durable": [(str(r["path"]), _one_line(r.get("snippet")), "")
                             for r in results if not str(r.get("path", "")).startswith("logs/sessions/")],
                 "sessions": [(str(r["path"]), _one_line(r.get("snippet")), "")
                              for r in results if str(r.get("path", "")).startswith("logs/sessions/")]}
        answers = _dedupe([_one_line(r.get("snippet")) for r in results])[:ANSWER_LINES]
    if not items["durable"] and not items["sessions"]:
        return "## Answer\nNo grounded findings.\n"

    def evidence(rows: list[tuple[str, str, str]]) -> list[str]:
        # The same text in several files (a note kept in two places) is one line naming
        # them all, with the first one's date.
        lines: dict[str, tuple[list[str], str]] = {}
        for path, text, date in rows:
            lines.setdefault(text.casefold() if text else "\0" + path, ([], fact_line(text, date)))[0].append(path)
        return [f"- {', '.join(dict.fromkeys(ps))}" + (f": {shown}" if shown else "") for ps, shown in lines.values()]

    # (a session file's first line, `# Sales call ...`, is no heading in a list)
    items = {k: [(p, _no_heading(t), d) for p, t, d in rows] for k, rows in items.items()}
    answers = _dedupe([_no_heading(a) for a in answers])
    lines = ["## Question", _one_line(question), "", "## Answer", *([f"- {a}" for a in answers] or
                                                                   ["- No grounded answer."]),
             "", "## Evidence", *(evidence(items["durable"]) or ["- None"])]
    if items["sessions"]:
        lines += ["", "## Session Evidence", *evidence(items["sessions"])]
    return "\n".join(lines).strip() + "\n"


def _save(ctx: OpContext, artifact: dict[str, Any], day: str) -> dict[str, Any]:
    sources = "\n".join(f"- {s}" for s in artifact["sources"]) or "- None"
    content = f"# {artifact['title']}\n\n{artifact['body'].rstrip()}\n\n## Sources\n{sources}\n"
    meta = {"title": artifact["title"], "created": day, "type": artifact["kind"], "status": artifact["status"],
            "source_kind": "generated", "temperature": "warm", "question": artifact["question"]}
    base = target_for(artifact["kind"], artifact["title"], day)
    for n in range(1, MAX_SUFFIX + 1):
        target = base if n == 1 else base.removesuffix(".md") + f"-{n}.md"
        wr = w.WriteRequest(kind="create", target=target, content=content, frontmatter=meta, soft=True,
                            actor=ctx.actor)
        try:
            res = w.apply_write(ctx.root, wr, ctx.excluded)
        except w.Conflict:
            continue  # a report of that name exists: never overwrite it
        except w.WriteError as exc:
            raise from_write_error(exc) from None
        indexed, note = refresh(ctx.live, [res.path])
        out: dict[str, Any] = {"path": res.path, "kind": artifact["kind"], "bytes_written": res.bytes_written,
                               "indexed": indexed}
        if res.quarantined:
            out["quarantined"] = True
            out["message"] = res.message or "the artifact failed the content checks and was quarantined"
        if note:
            out["message"] = note
        return out
    raise ApiError(409, "conflict", f"{base} and {MAX_SUFFIX - 1} numbered variants exist; research saved nothing")


def is_report(r: dict[str, Any]) -> bool:
    """A saved research report (or briefing, proposal, wiki note) among search results:
    what research wrote is not evidence for new research."""
    from commonplace.compiler.search import audit_kind

    path = str(r.get("path", ""))
    return audit_kind(path, r.get("frontmatter") or {}) == "report" or path.startswith(_SAVED)


def research(ctx: OpContext, req: ResearchRequest) -> dict[str, Any]:
    from ..models import SearchRequest

    read = disk_reader(Path(ctx.root))
    # "What changed this week?": what was said and written in those days leads, found by
    # its day (compiler/context/recent.py, as active memory finds "yesterday"); the
    # search's words ("changed", "week") matched only pages that were there all along.
    window, subject, lead = window_evidence(req.question, ctx.live.docs, Path(ctx.root), read,
                                            dt.datetime.now(dt.timezone.utc).date(), req.limit,
                                            sessions=req.corpus != "durable", durable=req.corpus != "sessions")
    results: list[dict[str, Any]] = []
    warnings: list[str] = []
    if window is None or subject:  # a question of the span alone has no words a search could use
        query = req.question if window is None else subject_query(req.question)
        sreq = SearchRequest(query=query, k=min(50, req.limit + 5), mode="hybrid", corpus=req.corpus,
                             include_content=False)
        answer = run_engine(ctx.live, engine_request(sreq, debug=True))
        warnings = worded(list(answer.get("warnings") or []), ctx.transport)
        answer["results"] = [r for r in answer.get("results") or [] if not is_report(r)]
        results = shape(answer, sreq)["results"]  # (debug off: the engine's frontmatter goes)
        results = [r for r in results if not is_audit(str(r.get("path", "")))][: req.limit]  # never evidence
        if any(w.startswith("nothing matched the query well") for w in warnings):
            results = []  # weak matches are no evidence
        elif results and not shares_a_word(query, (f"{r.get('title') or ''} {r.get('snippet') or ''}"
                                                   for r in results)):
            # No result shares a word of the question: only a strong match by meaning is
            # evidence (a made-up question's nearest pages are still some pages).
            results = [r for r in results if float(r.get("score_normalized") or 0.0) >= MEANING_ALONE]
            if not results:
                warnings.append("nothing matched the question well: no memory shares its words or is close "
                                "in meaning")
        missing, named = beside_names(query, results, read, ctx.live.docs)
        if missing:
            # Only the question's names matched: the page about the person is no answer to
            # what is asked about them (nor is a match by meaning: the name made it).
            results = []
            warnings.append(f"nothing in memory is about what the question asks ({', '.join(missing)}): "
                            f"the results share only its names ({', '.join(named)})")
    if window is not None and not lead:
        warnings.append(f"nothing was said or written from {window[0].isoformat()} to {window[1].isoformat()}"
                        + (" about the question's subject" if subject else ""))
    also: list[str] = []  # the turns said after a best source that is a chat turn
    people = [p for p in sorted(ctx.live.docs) if p.startswith("people/")] if req.corpus != "sessions" else []
    body = findings(req.question, results, read, lead, also, people)
    sources = _dedupe([e.path for e in lead] + [str(r.get("path", "")) for r in results] + also)
    title = _one_line(req.question).rstrip("?").strip()[:MAX_TITLE] or "Research"
    artifact = {"kind": req.kind, "title": title, "question": req.question.strip(),
                "body": body, "sources": sources, "target": None, "status": "draft"}
    saved = None
    out: dict[str, Any] = {"artifact": None, "research": {"artifact": artifact, "sources": sources}}
    if req.save and not sources:
        out["warnings"] = warnings + ["no evidence found for the question; nothing was saved"]
        return out
    if req.save:
        saved = _save(ctx, artifact, w.today())
        artifact["target"] = saved["path"]
    out["artifact"] = saved
    if warnings:
        out["warnings"] = warnings
    return out
