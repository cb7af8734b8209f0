"""Request models of the memory operations: search, get, write, purge, memory-write, link,
status. Field names, defaults and bounds are Dory's (`dory-contract.md` §1.5); fields
commonplace adds are marked as such in their description."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .base import Int, Num, Request, StrList

SearchMode = Literal["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "recall", "exact"]
Rerank = Literal["auto", "true", "false"]


class Scope(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path_glob: Optional[StrList] = Field(None, description="Only paths matching this glob (fnmatch; a list: any).")
    type: Optional[StrList] = Field(None, description="Only documents of these types.")
    status: Optional[StrList] = Field(None, description="Only documents with these statuses.")
    tags: Optional[StrList] = Field(None, description="Only documents with all these tags.")
    since: Optional[str] = Field(None, description="ISO date (YYYY-MM-DD): documents dated on or after it "
                                                   "(date, else updated, else created).")
    until: Optional[str] = Field(None, description="ISO date (YYYY-MM-DD): documents dated on or before it.")
    as_of: Optional[str] = Field(None, description="commonplace: ISO date; claims as they stood then.")


class SearchRequest(Request):
    query: str = Field(..., min_length=1, max_length=20000,
                       description="What to look for: a question, keywords, an identifier, a phrase in quotes.")
    scope: Optional[Scope] = Field(None, description="Filters on path, type, status, tags and dates.")
    k: Int = Field(10, ge=1, le=50, description="How many documents to return (1-50).")
    mode: SearchMode = Field("hybrid", description="hybrid: both rankings fused; bm25 (text, keyword, lexical): "
                                                   "words; vector (semantic): meaning; recall: sessions-aware "
                                                   "hybrid; exact: substring.")
    corpus: Literal["durable", "sessions", "all"] = Field(
        "durable", description="durable: notes, pages, decisions; sessions: session transcripts (logs/sessions/); "
                               "all: both.")
    min_score: Num = Field(0.0, ge=0.0, allow_inf_nan=False,
                           description="Drop results whose normalised score (0-1) is below this.")
    min_relevance_score: Optional[Num] = Field(
        None, ge=0.0, allow_inf_nan=False,
        description="Dory's newer name for min_score (min_score wins when both are sent).")
    include_content: bool = Field(True, description="Longer snippets (up to 700 characters instead of 240).")
    rerank: Rerank = Field("auto", description="Accepted for Dory compatibility; commonplace has no reranker.")
    snippet_marks: Optional[Literal["markdown", "brackets", "html", "none"]] = Field(
        None, description="commonplace: how matched words are marked in snippets (default none: plain text).")
    debug: bool = Field(False, description="Add score, score_normalized, rank_score and frontmatter.")
    originals: bool = Field(False, description="commonplace: also search the original text of compacted session "
                                               "transcripts (needs corpus sessions or all, or mode recall); a "
                                               "session found there has `in_original: true` (or an `original` "
                                               "block) with the turn's lines in the original.")

    @field_validator("mode", mode="before")
    @classmethod
    def _mode_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class GetRequest(Request):
    path: str = Field(..., description="Corpus-relative path of the document, e.g. people/alex.md.")
    from_: Optional[Int] = Field(None, alias="from", description="First line to return, 1-based (default 1).")
    from_line: Optional[Int] = Field(None, description="Older name of `from`.")
    lines: Optional[Int] = Field(None, description="How many lines to return (default: to the end).")
    debug: bool = Field(False, description="Add total_lines, lines_returned, frontmatter and hash (sha256 of the "
                                           "whole file, needed as expected_hash to replace, forget or purge).")
    uncompact: bool = Field(False, description="commonplace: a compacted session transcript as it was before "
                                               "compaction, byte for byte (the file is not changed).")


class WriteRequest(Request):
    kind: Literal["append", "create", "replace", "forget"] = Field(..., description="append, create, replace or "
                                                                                  "forget.")
    target: str = Field(...,
                        description="Corpus-relative path, e.g. inbox/idea.md or logs/daily/2025-06-30.md.")
    content: str = Field("", description="Markdown to write.")
    soft: bool = Field(False, description="If the content is refused (prompt-injection markers, invisible or bidi "
                                          "control characters), quarantine it under inbox/quarantine/ instead.")
    dry_run: bool = Field(False, description="Say what would happen (would_create, would_append, ...); change "
                                             "nothing.")
    frontmatter: Optional[dict[str, Any]] = Field(None, description="Frontmatter fields (merged; tags unioned). "
                                                                    "create needs title and type.")
    agent: Optional[str] = Field(None, description="Who writes (accepted, recorded nowhere).")
    session_id: Optional[str] = Field(None, description="Session of the writer (accepted, recorded nowhere).")
    expected_hash: Optional[str] = Field(None, description="Required for replace: 'sha256:<hex>' of the current "
                                                           "file (from get with debug=true); checked for forget "
                                                           "when given.")
    reason: Optional[str] = Field(None, description="Required for forget: why (the body of <stem>.tombstone.md).")


class PurgeRequest(Request):
    target: str = Field(..., min_length=1, max_length=1024, description="Corpus-relative path of the file to delete; "
                        "or `claim:<claim_id>` or an entity id (person:alex) to erase claims from the claim log too.")
    expected_hash: Optional[str] = Field(None, description="Required for a live purge: 'sha256:<hex>' of the file.")
    reason: Optional[str] = Field(None, description="Required for a live purge: why.")
    dry_run: bool = Field(True, description="Default true: say what would be deleted; send false to delete.")
    allow_canonical: bool = Field(False, description="Needed for core/, people/, projects/, decisions/canonical/ "
                                                     "and pages marked canonical.")
    include_related_tombstone: bool = Field(False, description="Also delete <stem>.tombstone.md next to it.")


MemoryAction = Literal["write", "replace", "forget"]
_ACTION_ALIASES = {"add": "write", "create": "write", "remove": "forget", "delete": "forget"}


class MemoryWriteRequest(Request):
    action: MemoryAction = Field(..., description="write (add, create), replace, or forget (remove, delete).")
    kind: Literal["fact", "preference", "state", "decision", "note"] = Field(..., description="Kind of claim.")
    subject: str = Field(..., min_length=1, max_length=500,
                         description="Who or what it is about: name, alias, slug, path or family:slug.")
    content: str = Field(..., description="The statement, one atomic fact (for forget: the claim's text; text that "
                                          "matches no current claim of the kind forgets nothing and lists them; empty "
                                          "text forgets every current claim of the kind, of every kind for note).")
    scope: Optional[Literal["person", "project", "concept", "decision", "core"]] = Field(
        None, description="Family of the subject; project, concept and decision subjects are created when unknown.")
    confidence: Optional[Literal["high", "medium", "low"]] = Field(None, description="high, medium or low.")
    reason: Optional[str] = Field(None, description="Why (recorded with the claim; for forget, in the tombstone).")
    source: Optional[str] = Field(None, description="Where it came from: a corpus path (optionally path#L3-L7), a "
                                                    "URL, or a free-text origin.")
    soft: bool = Field(False, description="Quarantine refused content or an unknown subject instead of rejecting.")
    dry_run: bool = Field(False, description="Preview (result: preview); change nothing.")
    force_inbox: bool = Field(False, description="File the statement in inbox/semantic/ for a person instead.")
    allow_canonical: bool = Field(False, description="Needed for a live write to canonical memory (core, people, "
                                                     "projects, concepts, decisions).")
    claim: Optional[str] = Field(None, description="commonplace: for replace or forget, the claim's id (or part of "
                                                   "its text).")
    all: bool = Field(False, description="commonplace: for forget, every current claim of the subject.")

    @field_validator("action", mode="before")
    @classmethod
    def _action_alias(cls, value: Any) -> Any:
        if isinstance(value, str):
            v = value.strip().lower()
            return _ACTION_ALIASES.get(v, v)
        return value


class LinkRequest(Request):
    op: Literal["neighbors", "backlinks", "lint"] = Field(..., description="neighbors, backlinks or lint.")
    path: Optional[str] = Field(None, description="Document path (needed for neighbors and "
                                                                   "backlinks; optional for lint).")
    direction: Literal["out", "in", "both"] = Field("out", description="For neighbors: out (default), in or both.")
    depth: Int = Field(1, ge=1, le=10, description="For neighbors: how many hops.")
    max_edges: Int = Field(40, ge=1, le=500, description="Most edges to return (1-500).")
    exclude_prefixes: list[str] = Field(default_factory=list, description="Leave out edges to or from paths "
                                                                          "starting with these.")


class StatusRequest(Request):
    debug: bool = Field(False, description="Add corpus details, compatibility matrix and OpenClaw diagnostics.")


