"""Request models: one pydantic model per operation, the single declaration from which
request validation, `/v1/openapi.json`, `/v1/tools` and the MCP tools all come.

Dory's server validates with pydantic too, so coercion is the same: booleans accept
true/True/1/yes/on (and false/...), integers accept digit strings, unknown fields are
ignored. Field descriptions are written for an agent reading the tool list.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

StrList = Union[str, list[str]]


def _no_bool(value: Any) -> Any:
    # pydantic's lax mode reads true as 1; a boolean where a number belongs is a client bug.
    if isinstance(value, bool):
        raise ValueError("Input should be a number, not a boolean")
    return value


def _sane_int(value: Any) -> Any:
    value = _no_bool(value)
    text = value.strip().lstrip("+-") if isinstance(value, str) else None
    if text is not None and len(text) > 18:  # a JSON integer of any size is fine (past the end)
        raise ValueError("Input should be an integer of at most 18 digits")
    return value


Int = Annotated[int, BeforeValidator(_sane_int)]
Num = Annotated[float, BeforeValidator(_no_bool)]


class Request(BaseModel):
    """Base: unknown fields ignored (clients send extra fields such as `agent`). Every field
    but an object may also come from the query string; body fields win."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Scope(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path_glob: Optional[StrList] = Field(None, description="Only paths matching this glob (or any of these).")
    type: Optional[StrList] = Field(None, description="Only documents of this type (or any of these).")
    status: Optional[StrList] = Field(None, description="Only documents with this status (or any of these).")
    tags: Optional[StrList] = Field(None, description="Only documents with all these tags.")
    since: Optional[str] = Field(None, description="ISO date (YYYY-MM-DD): documents dated on or after.")
    until: Optional[str] = Field(None, description="ISO date (YYYY-MM-DD): documents dated on or before.")
    as_of: Optional[str] = Field(None, description="ISO date")


SearchMode = Literal["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"]


class SearchRequest(Request):
    query: str = Field(..., max_length=20000,
                       description="What to look for: a question, keywords, an identifier, a phrase in quotes.")
    k: Int = Field(10, ge=1, le=50, description="How many documents to return: 1-50 (default 10).")
    mode: SearchMode = Field("hybrid", description="hybrid (default): both rankings fused; bm25/text/keyword/lexical: "
                                                   "words; vector/semantic: meaning; exact: substring.")
    corpus: Literal["durable", "sessions", "all"] = Field(
        "durable", description="durable (default): notes, pages, decisions; sessions: raw session transcripts only; "
                               "all: both.")
    scope: Optional[Scope] = Field(None, description="Filters on path, type, status, tags and dates.")
    min_score: Optional[Num] = Field(None, allow_inf_nan=False, description="Drop results scoring below this.")
    include_content: bool = Field(False, description="Include the full text of the matching passage.")
    snippet_marks: Optional[Literal["markdown", "brackets", "html", "none"]] = Field(
        None, description="How matched words are marked in snippets (default markdown **bold**).")
    debug: bool = Field(False, description="Add diagnostic fields to the answer.")


class GetRequest(Request):
    path: str = Field(..., min_length=1, max_length=1024,
                      description="Corpus-relative path of the document, e.g. people/alex.md.")
    from_: Int = Field(1, ge=1, alias="from", description="First line to return, 1-based (default 1).")
    lines: Optional[Int] = Field(None, ge=1, description="How many lines to return (default: to the end).")
    debug: bool = Field(False, description="Add total_lines, lines_returned, frontmatter and hash.")


class WriteRequest(Request):
    kind: Literal["append", "create", "replace", "forget"] = Field("append", description="append (default), create, "
                                                                                        "replace or forget.")
    target: str = Field(..., min_length=1, max_length=1024,
                        description="Corpus-relative path, e.g. inbox/idea.md or logs/daily/2025-06-30.md.")
    content: str = Field("", description="Markdown to write (may start with its own frontmatter).")
    frontmatter: Optional[dict[str, Any]] = Field(None, description="Frontmatter fields to set (merged; tags and "
                                                                    "aliases unioned).")
    expected_hash: Optional[str] = Field(None, description="Required for replace and forget: 'sha256:<hex>' of the "
                                                           "current file.")
    reason: Optional[str] = Field(None, description="Required for forget: why the document is forgotten.")
    dry_run: bool = Field(False, description="Say what would happen; change nothing.")
    soft: bool = Field(False, description="If the content is refused (prompt-injection markers, invisible or bidi "
                                          "control characters), quarantine it under inbox/quarantine/ for a person "
                                          "to review instead of failing with 422.")


class MemoryWriteRequest(Request):
    action: Literal["write", "replace", "forget"] = Field("write", description="write (default), replace or forget.")
    kind: Literal["fact", "preference", "state", "decision", "note"] = Field("fact", description="Kind of claim "
                                                                                               "(default fact).")
    subject: str = Field(..., min_length=1, max_length=500,
                         description="Who or what it is about: name, alias, slug, path or family:slug.")
    content: str = Field("", description="The statement, one atomic fact (for forget: which claim, by text or id).")
    scope: Optional[str] = Field(None, description="Accepted for Dory compatibility (checked like content); not used yet.")
    confidence: Optional[Union[Num, str]] = Field(None, description="low, medium, high, or a number from 0 to 1.")
    reason: Optional[str] = Field(None, description="Why (required for forget).")
    source: Optional[str] = Field(None, description="Evidence: a corpus path (optionally path#L3-L7) the claim "
                                                    "comes from.")
    claim: Optional[str] = Field(None, description="For replace: the id of the claim to replace.")
    all: bool = Field(False, description="For forget: every current claim of the subject.")
    dry_run: bool = Field(False, description="Say what would happen; change nothing.")
    soft: bool = Field(False, description="Quarantine refused content or an unknown subject for review instead of "
                                          "failing.")
    force_inbox: bool = Field(False, description="File the statement in inbox/ instead of a canonical page.")
    allow_canonical: bool = Field(False, description="Allow changing a page marked canonical.")


class WakeRequest(Request):
    agent: Optional[str] = Field(None, max_length=200, description="Name of the agent waking up (shown in the block).")
    budget_tokens: Int = Field(2000, ge=1, le=200000, description="Token budget for the block (default 2000).")
    profile: str = Field("default", max_length=100, description="default, core, project or minimal.")
    project: Optional[str] = Field(None, max_length=500, description="Project to include: slug, title or path.")


class LinkRequest(Request):
    op: Literal["neighbors", "backlinks", "lint"] = Field("neighbors", description="neighbors (default), backlinks "
                                                                                   "or lint.")
    path: Optional[str] = Field(None, max_length=1024, description="Document path (or title/alias) to start from; "
                                                                   "optional for lint.")
    direction: Literal["out", "in", "both"] = Field("both", description="For neighbors: out, in or both (default).")
    depth: Int = Field(1, ge=1, le=5, description="For neighbors: how many hops (default 1).")
    max_edges: Int = Field(200, ge=1, le=10000, description="Most edges to return (default 200).")


class StatusRequest(Request):
    debug: bool = Field(False, description="Also check index freshness against the files on disk.")


class EmptyRequest(Request):
    pass
