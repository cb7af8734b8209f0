"""Search requests and query strings. Parsing never raises: any string is a query.

Query string syntax (all optional; everything else is free text, OR semantics):

- `"exact phrase"`: its words are query terms, and chunks containing the phrase get a bonus.
  An unbalanced quote is just ignored.
- `word*`: prefix match (at least 3 characters before the `*`).
- `title:x`, `heading:x`, `body:x`, `path:x`, `tag:x`: terms restricted to a field
  (`field:"two words"` works too); `type:x`, `status:x` narrow the scope like the
  request's `scope` filters. Unknown `name:value` pairs are plain text.
- `AND`, `OR`, `NOT`, `+`, `-`, parentheses, emoji, code: plain text (stop words and
  punctuation fall away in analysis). Nothing is ever an implicit AND.

A `SearchRequest` is what the engine is asked, already valid: the engine checks nothing in
it. Whoever takes a request from outside builds it once: the server from its validated
wire model (`server/ops/search.py`), Python callers and the command line from a dict
(`normalize_request`). `make_scope` and `iso_date` are the rules both share.
`InvalidRequest` is what a server answers with 400 (bad mode, corpus, scope or dates;
never the query text).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

MODES = {
    "hybrid": "hybrid", "bm25": "bm25", "text": "bm25", "keyword": "bm25", "lexical": "bm25",
    "vector": "vector", "semantic": "vector", "exact": "exact",
}
CORPORA = ("durable", "sessions", "all")
SNIPPET_MARKS = ("markdown", "brackets", "html", "none")
MAX_K = 50
MAX_QUERY_CHARS = 20_000

TEXT_FIELDS = {"title", "heading", "headings", "body", "path", "tag", "tags"}
SCOPE_FIELDS = {"type", "status"}

_FIELDED = re.compile(r'(?<![\w:])([A-Za-z_]+):(?:"([^"]*)"|([^\s"]+))')
_PHRASE = re.compile(r'"([^"]*)"')
_PREFIX = re.compile(r"(?<![\w*])(\w[\w\-.]*)\*")


class InvalidRequest(ValueError):
    """A request field (not the query text) is invalid: HTTP 400."""


@dataclass
class ParsedQuery:
    raw: str
    words: str  # free text (also what is embedded for vector search)
    phrases: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    fielded: list[tuple[str, str]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)

    @property
    def semantic_text(self) -> str:
        """What to embed: the query as a person wrote it, minus scope syntax."""
        parts = [self.words.strip(), *self.phrases, *(v for _, v in self.fielded)]
        return " ".join(p for p in parts if p).strip()


def parse_query(text: Any) -> ParsedQuery:
    """Split a query string into free text, phrases, prefixes and field terms. Never raises."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    raw = text[:MAX_QUERY_CHARS]
    # Drop characters that are not text (control chars, lone surrogates).
    clean = "".join(c if (c.isprintable() or c in "\t\n") and not 0xD800 <= ord(c) <= 0xDFFF else " " for c in raw)
    pq = ParsedQuery(raw=raw, words="")

    def fielded(m: re.Match) -> str:
        name = m.group(1).lower()
        value = m.group(2) if m.group(2) is not None else m.group(3)
        value = value.strip()
        if not value:
            return " "
        if name in TEXT_FIELDS:
            pq.fielded.append((name, value))
            return " "
        if name in SCOPE_FIELDS:
            (pq.types if name == "type" else pq.statuses).append(value.lower())
            return " "
        return m.group(0).replace(":", " ")

    rest = _FIELDED.sub(fielded, clean)

    def phrase(m: re.Match) -> str:
        p = " ".join(m.group(1).split())
        if p:
            pq.phrases.append(p)
        return " "

    rest = _PHRASE.sub(phrase, rest)

    def prefix(m: re.Match) -> str:
        pq.prefixes.append(m.group(1))
        return " "

    rest = _PREFIX.sub(prefix, rest)
    pq.words = " ".join(rest.replace('"', " ").split())
    return pq


# --------------------------------------------------------------------------- requests


@dataclass
class Scope:
    path_glob: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    since: str | None = None
    until: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.path_glob or self.types or self.statuses or self.tags or self.since or self.until)

    def key(self) -> tuple:
        return (tuple(self.path_glob), tuple(self.types), tuple(self.statuses), tuple(self.tags), self.since, self.until)


@dataclass
class SearchRequest:
    query: str
    k: int = 10
    mode: str = "hybrid"
    corpus: str = "durable"
    scope: Scope = field(default_factory=Scope)
    min_score: float | None = None
    include_content: bool = False
    debug: bool = False
    snippet_marks: str = "markdown"
    as_of: str | None = None
    # Internal (not on the wire): no snippets (`snippet` is empty). Active memory reads the
    # pages itself and makes a snippet only for a page whose sentences it cannot otherwise
    # tell apart; making one for every result was a third of its time at 10k documents.
    snippets: bool = True
    # Internal: documents the vector list is taken to and kept for `candidates` with the
    # same query (active memory's deeper look); 0: only what fusion uses.
    vector_depth: int = 0


def _bool(v: Any, name: str) -> bool:
    if isinstance(v, bool):
        return v
    if v is None:
        return False
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in {"true", "1", "yes", "on", "false", "0", "no", "off", ""}:
        return v.strip().lower() in {"true", "1", "yes", "on"}
    raise InvalidRequest(f"`{name}` must be a boolean")


def _str_list(v: Any, name: str) -> list[str]:
    if v is None or v == "":
        return []
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            if not isinstance(x, (str, int, float)) or isinstance(x, bool):
                raise InvalidRequest(f"`{name}` must be a list of strings")
            if str(x).strip():
                out.append(str(x).strip())
        return out
    raise InvalidRequest(f"`{name}` must be a string or a list of strings")


def iso_date(v: Any, name: str) -> str | None:
    """An ISO date (or date-time) in its canonical form; None for nothing. `name` says
    which field in the error."""
    if v is None or v == "":
        return None
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if not isinstance(v, str):
        raise InvalidRequest(f"`{name}` must be an ISO date (YYYY-MM-DD)")
    s = v.strip()
    try:
        if len(s) == 10:
            return dt.date.fromisoformat(s).isoformat()
        return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).isoformat()
    except ValueError:
        raise InvalidRequest(f"`{name}` must be an ISO date (YYYY-MM-DD), got {s[:40]!r}") from None


def normalize_mode(mode: Any) -> str:
    if mode is None or mode == "":
        return "hybrid"
    if not isinstance(mode, str) or mode.strip().lower() not in MODES:
        raise InvalidRequest(f"unknown mode {mode!r}: use one of hybrid, bm25, vector, exact "
                             "(aliases text, keyword, lexical, semantic)")
    return MODES[mode.strip().lower()]


def make_scope(path_glob: Any = None, type: Any = None, status: Any = None, tags: Any = None,
               since: Any = None, until: Any = None) -> Scope:
    """The scope filters: a comma-separated string or a list each, types and statuses in
    lower case, dates checked (`InvalidRequest` names the field)."""
    return Scope(
        path_glob=_str_list(path_glob, "scope.path_glob"),
        types=[t.lower() for t in _str_list(type, "scope.type")],
        statuses=[s.lower() for s in _str_list(status, "scope.status")],
        tags=_str_list(tags, "scope.tags"),
        since=iso_date(since, "scope.since"),
        until=iso_date(until, "scope.until"),
    )


def request_warnings(req: SearchRequest) -> list[str]:
    """What the engine says about a request it answers anyway (k brought into 1-50, as_of)."""
    warnings = []
    if req.k < 1 or req.k > MAX_K:
        warnings.append(f"k={req.k} is outside 1-{MAX_K}; using {min(max(req.k, 1), MAX_K)}")
        req.k = min(max(req.k, 1), MAX_K)
    if req.as_of:
        warnings.append("as_of is not supported by search yet; results reflect the current corpus")
    return warnings


def normalize_request(data: Mapping[str, Any] | SearchRequest) -> tuple[SearchRequest, list[str]]:
    """A request from a dict (the Python API and the command line; unknown fields ignored),
    checked here; a `SearchRequest` is taken as it is. Returns (request, warnings)."""
    if isinstance(data, SearchRequest):
        req = data
    else:
        if not isinstance(data, Mapping):
            raise InvalidRequest("the request body must be a JSON object")
        q = data.get("query", "")
        if q is None:
            q = ""
        if not isinstance(q, (str, int, float)) or isinstance(q, bool):
            raise InvalidRequest("`query` must be a string")
        req = SearchRequest(query=str(q))
        req.mode = normalize_mode(data.get("mode"))
        corpus = data.get("corpus") or "durable"
        if not isinstance(corpus, str) or corpus.strip().lower() not in CORPORA:
            raise InvalidRequest(f"unknown corpus {corpus!r}: use durable, sessions or all")
        req.corpus = corpus.strip().lower()
        k = data.get("k", 10)
        try:
            k_int = int(k) if not isinstance(k, bool) else None
        except (TypeError, ValueError):
            k_int = None
        if k_int is None or (isinstance(k, float) and not k.is_integer()):
            raise InvalidRequest("`k` must be an integer from 1 to 50")
        req.k = k_int
        scope = data.get("scope") or {}
        if not isinstance(scope, Mapping):
            raise InvalidRequest("`scope` must be an object")
        req.scope = make_scope(scope.get("path_glob"), scope.get("type"), scope.get("status"), scope.get("tags"),
                               scope.get("since"), scope.get("until"))
        ms = data.get("min_score")
        if ms is not None:
            if isinstance(ms, bool):
                raise InvalidRequest("`min_score` must be a number")
            try:
                req.min_score = float(ms)
            except (TypeError, ValueError):
                raise InvalidRequest("`min_score` must be a number") from None
            if not math.isfinite(req.min_score):
                raise InvalidRequest("`min_score` must be a finite number (results carry score_normalized, 0-1)")
        req.include_content = _bool(data.get("include_content"), "include_content")
        req.debug = _bool(data.get("debug"), "debug")
        marks = data.get("snippet_marks") or "markdown"
        if not isinstance(marks, str) or marks not in SNIPPET_MARKS:
            raise InvalidRequest(f"`snippet_marks` must be one of {', '.join(SNIPPET_MARKS)}")
        req.snippet_marks = marks
        as_of = data.get("as_of") or scope.get("as_of")
        if as_of:
            req.as_of = iso_date(as_of, "as_of")
    return req, request_warnings(req)
