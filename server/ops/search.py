"""Search (`/v1/search`): Dory's request and result fields over the compiler's engine.

What this layer adds to the engine's answer (`compiler/search/read/engine.py`):

- mode `recall` is Dory's session search: hybrid over `corpus: sessions`, whatever corpus
  was asked for; text/keyword/lexical and semantic are the engine's aliases.
- `evidence_class` in Dory's values (`dory_class`), checked in Dory's order: a session,
  inbox, archive, raw status, generated, canonical, else other. `debug` keeps the
  engine's finer class as `evidence_detail`.
- snippets at most 700 characters with `include_content` (Dory's default), 240 without,
  plain text (no marks unless `snippet_marks` asks); `content` (the chunk's text) only with
  `include_content`.
- `debug` adds `rank_score` (min-max of `score` over the returned rows; position-based
  when all are equal) and `frontmatter`. `score` and `score_normalized` (0-1) are always
  there: commonplace returned them before debug existed.
- `min_score` (or Dory's newer name, `min_relevance_score`) goes to the engine only when
  the client sent it: it applies to the normalised score, and its absence lets hybrid leave
  out weak meaning-only hits.
- `rerank` is accepted and ignored (no reranker).
- a hybrid query of stop words or symbols only says what bm25 says about its words, and
  does not search by meaning unless `min_score` asks to see what is there
  (`stop_words_only`); a page with no text never outranks one with text when it matched
  by meaning alone (`text_first`).

The wire model (`models.SearchRequest`) is the one place a request is validated; the
engine's own `SearchRequest` is built from it directly (`engine_request`) and is not
checked again. Only what pydantic leaves as text, the scope's dates, is read here (by the
compiler's `iso_date`, so a bad date is the same 400 as before).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from commonplace.compiler.live.contract import LiveContract
from commonplace.compiler import search as engine_query

from ..errors import ApiError
from ..models import SearchRequest
from . import OpContext
from .query_model import LOADING_WARNING, model_ready

SNIPPET_WITH_CONTENT = 700
SNIPPET_WITHOUT_CONTENT = 240
DORY_CLASSES = ("canonical", "generated", "inbox", "session", "raw", "archive", "other")
_ENGINE_DEBUG = ("frontmatter", "heading", "chunk_id", "ranks")


def dory_class(path: str, fm: dict[str, Any] | None, detail: str | None = None) -> str:
    """Dory's evidence class of a result, from its path and frontmatter."""
    fm = fm if isinstance(fm, dict) else {}
    if path.startswith("logs/sessions/") or detail == "session":
        return "session"
    if path.startswith("inbox/"):
        return "inbox"
    if path.startswith("archive/"):
        return "archive"
    if str(fm.get("status", "")).strip().lower() == "raw":
        return "raw"
    kind = str(fm.get("source_kind", "")).strip().lower()
    if kind == "generated":
        return "generated"
    canonical = fm.get("canonical")
    if canonical is True or str(canonical).strip().lower() == "true" or kind == "canonical":
        return "canonical"
    return "other"


def engine_request(req: SearchRequest, *, debug: bool = True) -> engine_query.SearchRequest:
    """The engine's request for a validated `/v1/search` body, built directly. The wire
    model checked every field but the scope's dates, which it keeps as text: they are read
    here, once (a bad one is the 400 `invalid_parameter`)."""
    mode, corpus = req.mode, req.corpus
    if mode == "recall":
        mode, corpus = "hybrid", "sessions"
    try:
        scope, as_of = engine_query.Scope(), None
        if req.scope is not None:
            s = req.scope
            scope = engine_query.make_scope(s.path_glob, s.type, s.status, s.tags, s.since, s.until)
            as_of = engine_query.iso_date(s.as_of, "as_of") if s.as_of else None
    except engine_query.InvalidRequest as exc:
        raise ApiError(400, "invalid_parameter", str(exc)) from None
    if "min_score" in req.model_fields_set:
        min_score = req.min_score
    else:
        min_score = req.min_relevance_score
    return engine_query.SearchRequest(
        query=req.query, k=req.k, mode=engine_query.MODES[mode], corpus=corpus, scope=scope,
        min_score=None if min_score is None else float(min_score), include_content=req.include_content,
        debug=debug, snippet_marks=req.snippet_marks or "none", as_of=as_of)  # an agent reads plain text


def cut_snippet(text: str, limit: int) -> str:
    if not isinstance(text, str) or len(text) <= limit:
        return text
    piece = text[: limit - 1].rstrip()
    if piece.count("**") % 2:  # do not leave a bold mark open
        piece = piece[: piece.rfind("**")].rstrip()
    return piece + "…"


def _rank_scores(results: list[dict[str, Any]]) -> list[float]:
    scores = [float(r.get("score") or 0.0) for r in results]
    n = len(scores)
    if n == 0:
        return []
    lo, hi = min(scores), max(scores)
    if hi > lo:
        return [round((s - lo) / (hi - lo), 4) for s in scores]
    return [1.0 if n == 1 else round(1 - i / (n - 1), 4) for i in range(n)]


def shape(answer: dict[str, Any], req: SearchRequest) -> dict[str, Any]:
    """Dory's fields on each result of an engine answer made with debug=True."""
    limit = SNIPPET_WITH_CONTENT if req.include_content else SNIPPET_WITHOUT_CONTENT
    results = answer.get("results") or []
    ranks = _rank_scores(results) if req.debug else []
    for i, r in enumerate(results):
        detail = r.get("evidence_class")
        fm = r.get("frontmatter")
        r["evidence_class"] = dory_class(str(r.get("path", "")), fm, detail)
        r["snippet"] = cut_snippet(r.get("snippet", ""), limit)
        if r.get("confidence") not in ("low", "medium", "high"):
            r["confidence"] = None
        r.setdefault("stale_warning", None)
        if not req.include_content:
            r.pop("content", None)
        if req.debug:
            r["rank_score"] = ranks[i]
            r["evidence_detail"] = detail
            r.setdefault("frontmatter", {})
            r.setdefault("score_normalized", None)
        else:
            for key in _ENGINE_DEBUG:
                r.pop(key, None)
    answer["count"] = len(results)
    return answer


def search(ctx: OpContext, req: SearchRequest) -> dict[str, Any]:
    ereq = engine_request(req)
    if ereq.mode == "hybrid" and stop_words_only(ereq.query):
        answer = _stop_words(ctx, ereq)
    else:
        answer = _hybrid_or_asked(ctx, ereq)
    answer["results"] = _dated(ctx, text_first(answer.get("results") or [], ereq.mode))
    if req.originals:  # compacted sessions by their original text too (ops/compaction.py)
        from .compaction import with_originals

        answer = with_originals(ctx, req, answer)
    answer["warnings"] = worded(answer.get("warnings") or [], ctx.transport)
    return shape(answer, req)


def _dated(ctx: OpContext, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Snippets with each relative time given its day, as active memory gives it, in the
    records of one day (a daily note, a session, a chat turn that says its day): "Finish
    them tomorrow (2026-12-04)." An agent reading a note from Wednesday on Friday cannot
    tell which day its "tomorrow" was."""
    from commonplace.compiler.context.facts import said_on
    from commonplace.compiler.context.when import resolve, style_of

    for r in results:
        doc = ctx.live.docs.get(str(r.get("path", "")))
        if doc is None or not r.get("snippet"):
            continue
        title = str(getattr(doc, "title", "") or "")
        said = said_on(r["path"], doc.frontmatter or {}, title)
        if said is not None:
            r["snippet"] = resolve(r["snippet"], said, style_of(title))
    return results


def _hybrid_or_asked(ctx: OpContext, ereq: engine_query.SearchRequest) -> dict[str, Any]:
    # A hybrid search while the query model loads (just after a restart) is a search by
    # words, said in its warnings, not a wait of a second and a half (`query_model`).
    loading = ereq.mode == "hybrid" and not model_ready(Path(ctx.root))
    if loading:
        ereq = dataclasses.replace(ereq, mode="bm25")
    answer = run_engine(ctx.live, ereq)
    if loading:
        answer["warnings"] = [*(answer.get("warnings") or []), LOADING_WARNING]
    return answer


# A hybrid query of stop words and symbols only ("the and of to is"): bm25 has no word to
# look for, and the query's embedding means nothing in particular, so its nearest pages are
# noise. Hybrid says what bm25 says about the words (the engine's own verdict: the same
# search by words is run) and what it did about meaning: without `min_score` it does not
# search by meaning; with it (the client asked to see what is there), the matches by meaning
# alone are returned and said to be that.
MEANING_NOT_RUN = ("hybrid search did not search by meaning either: a query of only stop words or symbols has "
                   "nothing to mean, and its nearest pages would be noise (send min_score to get matches by "
                   "meaning alone anyway)")
MEANING_ONLY = ("every result is a match by meaning alone (min_score was sent): a query of only stop words or "
                "symbols has nothing to mean, so these are the pages nearest to nothing in particular")
_MEANING_ALONE = "no result shares a word with the query"  # the engine's MEANING_ALONE_WARNING


def stop_words_only(query: str) -> bool:
    """Whether `query` has text but no index term: every word a stop word, one letter long,
    or a symbol (the analysis the index and the engine's query parser use, `text.analyze`).
    Field syntax (`type:x`, `title:x`) has terms here: such queries are left to the engine."""
    return bool(query.strip()) and not engine_query.unique_terms(query)


def _stop_words(ctx: OpContext, ereq: engine_query.SearchRequest) -> dict[str, Any]:
    by_words = run_engine(ctx.live, dataclasses.replace(ereq, mode="bm25"))
    said = list(by_words.get("warnings") or [])
    if ereq.min_score is None:
        by_words["warnings"] = [*said, MEANING_NOT_RUN]
        return by_words
    answer = _hybrid_or_asked(ctx, ereq)
    rest = [w for w in answer.get("warnings") or [] if w not in said and not w.startswith(_MEANING_ALONE)]
    meaning = [MEANING_ONLY] if answer.get("results") else []
    answer["warnings"] = [*said, *meaning, *rest]
    return answer


def text_first(results: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """Results with text before a page with none that matched by meaning alone (its
    snippet is empty: a page of frontmatter only, embedded as its title). Dory returns such a
    page, and so does this; it just never outranks a page with something to read. A moved
    result is demoted, as default search demotes audit material (`audit.py`): its `score`
    and `score_normalized` are lowered to the last text result's, so both still follow the
    ranking (and `min_score`, already applied, still holds)."""
    def meaning_alone(r: dict[str, Any]) -> bool:
        ranks = r.get("ranks")
        return mode == "vector" or (mode == "hybrid" and isinstance(ranks, dict) and bool(ranks)
                                    and "bm25" not in ranks)

    empty = [r for r in results if not str(r.get("snippet") or "").strip() and meaning_alone(r)]
    text = [r for r in results if not any(r is e for e in empty)]
    if not empty or not text or all(any(r is e for e in empty) for r in results[len(text):]):
        return results  # nothing to move: every empty page is below the pages with text already
    last = text[-1]
    for r in empty:
        for key in ("score", "score_normalized"):
            if isinstance(r.get(key), (int, float)) and isinstance(last.get(key), (int, float)):
                r[key] = min(r[key], last[key])
    return text + empty
def worded(warnings: list[str], transport: str) -> list[str]:
    """The engine's warnings with how to act on them in the caller's terms: an MCP agent
    is told the tool to call, an HTTP client the route."""
    from commonplace.compiler.search import NO_SESSIONS

    how = "the dory_session_ingest tool" if transport == "mcp" else "POST /v1/session-ingest"
    return [f"{w}; store a session with {how}" if w == NO_SESSIONS else w for w in warnings]


def run_engine(live: LiveContract, req: engine_query.SearchRequest) -> dict[str, Any]:
    """The live corpus's search (it holds the engine and the model), its errors as API errors."""
    from commonplace.compiler.search import IndexNotReady

    try:
        return live.search(req)  # a typed request: the engine checks nothing in it
    except IndexNotReady:
        raise ApiError(503, "index_not_ready", "the search index is not built yet; try again shortly") from None
