"""Every operation of the API, declared once: path, methods, request model, handler, the
tool name agents know it by (Dory's `dory_*`), and the text an agent reads.

From this table come the route registration (`routes/v1.py`), the auth rules (which
routes write), `/v1/tools`, `/v1/openapi.json` (`openapi.py`) and the MCP tools. A test
walks Flask's URL map and this table both ways, so the description cannot drift from what
is served. Handlers are named as "module:function" under `server.ops` and imported on
first call, so this table stays cheap to import.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from . import models as m

OBJ: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class Route:
    name: str  # operation id and endpoint name
    path: str  # OpenAPI form: /v1/search, /wiki/{page}
    methods: tuple[str, ...]
    summary: str
    description: str  # written for an agent
    model: type[m.Request] | None = None
    response: dict[str, Any] = field(default_factory=lambda: dict(OBJ))
    errors: tuple[int, ...] = (401, 422, 503)
    tool: str | None = None  # the tool name (Dory's), when agents may call it as a tool
    writes: bool = False  # changes the corpus
    handler: str | None = None  # "module:function" in server.ops; None: a view of its own
    needs_ready: bool = True  # 503 until the corpus is open
    kind: str = "json"  # json | site | html | text | sse | mcp
    public: bool = False  # no token ever needed
    example: dict[str, Any] | None = None

    @property
    def flask_path(self) -> str:
        return self.path.replace("{rel}", "<path:rel>").replace("{page}", "<path:page>")

    def call(self, ctx: Any, req: Any) -> dict[str, Any]:
        ctx.compat = compat_matrix
        return resolve(self.handler)(ctx, req)  # type: ignore[arg-type]


_HANDLERS: dict[str, Callable[..., dict[str, Any]]] = {}


def resolve(handler: str) -> Callable[..., dict[str, Any]]:
    fn = _HANDLERS.get(handler)
    if fn is None:
        module, _, name = handler.partition(":")
        fn = _HANDLERS[handler] = getattr(importlib.import_module(f"commonplace.server.ops.{module}"), name)
    return fn


def _result_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["path", "lines", "snippet", "evidence_class", "confidence", "stale_warning"],
        "properties": {
            "path": {"type": "string"},
            "lines": {"type": "string", "description": "1-based line range 'start-end' of the best chunk"},
            "title": {"type": "string"},
            "snippet": {"type": "string"},
            "evidence_class": {"type": "string"},
            "confidence": {"type": ["string", "null"]},
            "stale_warning": {"type": ["string", "null"]},
            "score": {"type": "number"},
            "score_normalized": {"type": ["number", "null"]},
            "rank_score": {"type": ["number", "null"]},
            "frontmatter": {"type": "object"},
            "content": {"type": "string"},
        },
    }


def _obj(*required: str, **props: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": props}


S, I, B, N, A = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}, {"type": "array"}
NS = {"type": ["string", "null"]}
READ_ERRORS = (400, 401, 404, 422, 503)
WRITE_ERRORS = (400, 401, 404, 409, 413, 422, 503)

ROUTES: tuple[Route, ...] = (
    Route("healthz", "/healthz", ("GET",), "Liveness and readiness",
          '200 {"ok": true} once the index is loaded (the query model loads behind it: until then a hybrid '
          'search answers by words and warns); 503 before.',
          response=_obj("ok", ok=B), errors=(503,), public=True, needs_ready=False),
    Route("wake", "/v1/wake", ("POST",), "Get a start-of-session context block",
          "Call once at the start of a session: returns `block`, the markdown an agent reads first. It holds the "
          "core/ files in the profile's order (coding for agent work, writing for voice, privacy for "
          "boundaries), the project page when `project` is given, pinned decisions and a list of recent "
          "sessions, cut to fit `budget_tokens` (at most 1500).",
          m.WakeRequest, _obj("profile", "block", profile=S, block=S, tokens_estimated=I, sources=A, frozen_at=S),
          tool="dory_wake", handler="wake:wake", example={"agent": "coder", "profile": "coding"}),
    Route("active_memory", "/v1/active-memory", ("POST",), "Memory relevant to the message at hand",
          "Before answering a message, get the memory that bears on it in one bounded pass: `block` starts "
          "with '## Active memory' bullets, then durable and session evidence with paths. kind is 'none' when "
          "nothing relevant was found. Send the user's whole message as prompt (a pasted log with its question "
          "is fine: what it asks is searched first) and cwd when working in a project's folder (its pages come "
          "first). Limits: budget_tokens <= 1200, timeout_ms <= 5000; set include_wake=false if wake was already "
          "called.",
          m.ActiveMemoryRequest, _obj("kind", "block", "summary", "sources", kind=S, block=S, summary=S, sources=A),
          tool="dory_active_memory", handler="active_memory:active_memory",
          example={"prompt": "what did we decide about billing?", "agent": "coder"}),
    Route("research", "/v1/research", ("POST",), "Research a question and save a report",
          "Search memory (durable and sessions by default) for `question` and compile a markdown artifact with "
          "Question, Answer and Evidence sections. With save=true it is written into the corpus "
          "(references/reports/, references/briefings/, wiki/concepts/ or inbox/proposed/ by kind), unless "
          "nothing answered the question (then nothing is saved and `warnings` says so). Earlier reports "
          "are never cited as evidence. A question that names a span of days (\"what changed this week?\", "
          "yesterday, the past 3 days) leads with what was said and written in it, newest first.",
          m.ResearchRequest, _obj("artifact", "research", artifact={"type": ["object", "null"]}, research=OBJ),
          tool="dory_research", writes=True, handler="research:research", errors=WRITE_ERRORS,
          example={"question": "Who owns the billing migration?", "save": False}),
    Route("search", "/v1/search", ("POST",), "Search memory (hybrid BM25 + vector by default)",
          "Search the memory and get the best matching documents, each with its path, the line range of the "
          "best passage, a plain-text snippet with the matched words marked, its evidence class and "
          "confidence, and a stale_warning when it is superseded. Any text is a valid query. Read a result "
          "with dory_get (path, and `from`/`lines` from its line range).",
          m.SearchRequest, _obj("query", "count", "results", "took_ms", "warnings", query=S, count=I,
                                results={"type": "array", "items": _result_schema()}, took_ms=N,
                                warnings={"type": "array", "items": S}),
          tool="dory_search", handler="search:search", errors=READ_ERRORS,
          example={"query": "who owns the billing migration?", "k": 5}),
    Route("get", "/v1/get", ("GET", "POST"), "Read a document (or some of its lines)",
          "Read a document of the memory by its corpus-relative path (as search returns it). `from` (1-based) "
          "and `lines` select a slice. With debug=true the answer adds total_lines, lines_returned, the "
          "frontmatter and `hash`, which replace, forget and purge need as expected_hash.",
          m.GetRequest, _obj("path", "from", "content", path=S, content=S, total_lines=I, lines_returned=I,
                             frontmatter=OBJ, hash={"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                             **{"from": I}),
          tool="dory_get", handler="documents:get", errors=READ_ERRORS,
          example={"path": "core/identity.md", "debug": True}),
    Route("memory_write", "/v1/memory-write", ("POST",), "Remember a fact about a person, project, concept or decision",
          "Record an atomic statement about a subject through the claim store: the subject is resolved (name, "
          "alias, slug or family:slug), the claim is kept with provenance and the subject's canonical page is "
          "recompiled. Live writes to canonical memory need allow_canonical=true; dry_run=true previews; "
          "force_inbox=true files a tentative capture instead; an unknown subject is rejected (soft=true "
          "quarantines it). Business outcomes come back as 200 with `result`; over MCP a rejected write is a "
          "tool error whose text says how to succeed.",
          m.MemoryWriteRequest, _obj("resolved", "action", "kind", "result", "indexed", "quarantined", resolved=B,
                                     action=S, kind=S, subject_ref=NS, target_path=NS, result=S,
                                     confidence=NS, indexed=B, quarantined=B, message=NS),
          tool="dory_memory_write", writes=True, handler="memory:memory_write", errors=WRITE_ERRORS,
          example={"action": "write", "kind": "preference", "subject": "Alex", "content": "Alex prefers async reviews.",
                   "allow_canonical": True}),
    Route("write", "/v1/write", ("POST",), "Write a markdown document (append, create, replace, forget)",
          "Write to a document by path; the wiki and indexes are updated before the answer (`indexed`). "
          "append adds at the end (creating the file needs frontmatter title and type); create makes a new "
          "file; replace needs expected_hash; forget marks the document superseded and writes a tombstone "
          "next to it (needs reason). Refused content gets 400 unless soft=true quarantines it; dry_run=true "
          "answers would_create, would_append, would_replace or would_forget.",
          m.WriteRequest, _obj("path", "action", "bytes_written", "hash", "indexed", "edges_added", path=S,
                               action=S, bytes_written=I, hash=S, indexed=B, edges_added=I),
          tool="dory_write", writes=True, handler="documents:write", errors=WRITE_ERRORS,
          example={"kind": "append", "target": "inbox/notes.md", "content": "Rotate the signing keys.",
                   "frontmatter": {"title": "Notes", "type": "capture"}}),
    Route("purge", "/v1/purge", ("POST",), "Delete a file for good",
          "Delete a file (inbox, generated or evaluation material by default; canonical memory needs "
          "allow_canonical=true). dry_run defaults to true and lists what would go; a live purge needs "
          "reason and expected_hash. Prefer dory_write kind=forget, which keeps history. A target of "
          "`claim:<claim_id>` or an entity id (person:alex) erases those claims: their text leaves the claim log "
          "itself and every page, artifact and index (needs reason and allow_canonical; no expected_hash).",
          m.PurgeRequest, _obj("path", "action", "paths", "bytes_deleted", "indexed", "dry_run", path=S, action=S,
                               paths=A, bytes_deleted=I, hash=NS, indexed=B, dry_run=B),
          tool="dory_purge", writes=True, handler="purge:purge", errors=WRITE_ERRORS,
          example={"target": "inbox/old.md"}),
    Route("link", "/v1/link", ("POST",), "Follow links: neighbors, backlinks, broken links",
          "Explore the link graph. op=neighbors: edges from `path` (direction out, in or both; depth hops); "
          "op=backlinks: documents linking to `path`; op=lint: broken links and self-links. Edges are "
          "{from, to, anchor, created}; lists stop at max_edges (`truncated`, `total_count`).",
          m.LinkRequest, _obj("op", "count", op=S, path=NS, edges=A, broken=A, self_links=A, count=I,
                              total_count=I, truncated=B),
          tool="dory_link", handler="links:link", errors=READ_ERRORS, example={"op": "backlinks", "path": "people/alex.md"}),
    Route("status", "/v1/status", ("GET", "POST"), "Index and server status",
          "Counts (files, chunks, vectors, sessions), index health, the embedding model and dimensions, and "
          "the last build. debug=true adds paths, the compatibility matrix and OpenClaw diagnostics.",
          m.StatusRequest, _obj("api_version", "files_indexed", "chunks_indexed", "vectors_indexed", api_version=S,
                                files_indexed=I, chunks_indexed=I, vectors_indexed=I, index_healthy=B),
          tool="dory_status", handler="status:status", needs_ready=False, errors=(401, 422)),
    Route("session_ingest", "/v1/session-ingest", ("POST",), "Store a session transcript",
          "Store (or update) an agent session transcript at `path` under logs/sessions/ (a .md path), with the "
          "session's frontmatter; status is active, interrupted or done. It is searchable with corpus=sessions or "
          "all once the answer comes (`indexed`), never mixed into durable answers by default.",
          m.SessionIngestRequest, _obj("stored", "path", "reindexed", stored=B, path=S, reindexed=B, indexed=B,
                                       action=S, hash=S, findings=A),
          tool="dory_session_ingest", writes=True, handler="sessions:ingest", errors=WRITE_ERRORS,
          example={"path": "logs/sessions/coder/2026-04-12-s1.md", "agent": "coder", "device": "laptop",
                   "session_id": "s1", "status": "done", "captured_from": "example", "updated": "2026-04-12T10:15:00Z",
                   "content": "user: We decided to use SQLite for the Atlas cache.\n\nassistant: Noted; Alex "
                              "owns the Atlas migration and ships it on Friday.\n"}),
    Route("digest", "/v1/digest", ("POST",), "Digest a session or a day of sessions",
          "Distil one session transcript (`session`, a logs/sessions/...md path) or one day of them (`date`, "
          "YYYY-MM-DD) into a page under logs/digests/: its decisions, facts, open questions and follow-ups, each "
          "with the source turn (path and line range). Deterministic (same sessions, same page); an "
          "OpenAI-compatible endpoint, when configured, may rewrite it. Decisions, and facts about known entities, "
          "become proposals for review (never direct writes).",
          m.DigestRequest, _obj("path", "saved", "digest", "proposals", path=S, saved=B, action=S, indexed=B,
                                digest=OBJ, content=S, proposals=A),
          tool="dory_digest", writes=True, handler="digest:digest", errors=WRITE_ERRORS,
          example={"session": "logs/sessions/coder/2026-04-12-s1.md"}),
    Route("memory_propose", "/v1/memory-propose", ("POST",), "Propose a memory write for review",
          "Like dory_memory_write, but nothing is written to memory: the write is planned (dry run) and stored as "
          "a proposal under inbox/proposed/ with its planned target, preview, risk flags, source paths and "
          "provenance. A reviewer applies it (dory_proposals_apply) or rejects it. Proposing the same statement "
          "again returns the same proposal.",
          m.ProposeRequest, _obj("stored", "id", "path", stored=B, id=NS, path=NS, status=NS, planned=OBJ,
                                 risk_flags=A, source_paths=A, provenance=OBJ, existing=B, message=S),
          tool="dory_memory_propose", writes=True, handler="proposals:propose", errors=WRITE_ERRORS,
          example={"action": "write", "kind": "preference", "subject": "Alex", "content": "Alex prefers written "
                   "design reviews.", "source_paths": ["logs/sessions/coder/2026-04-12-s1.md#L7-L8"]}),
    Route("proposals_list", "/v1/proposals", ("GET", "POST"), "List proposals",
          "Proposals waiting for review (status=proposed, the default), or applied, rejected or all: id, "
          "statement, subject, planned target, risk flags, sources and provenance, oldest first.",
          m.ProposalsListRequest, _obj("status", "count", "proposals", status=S, count=I, total=I, proposals=A),
          tool="dory_proposals_list", handler="proposals:list_proposals", errors=READ_ERRORS, example={}),
    Route("proposals_show", "/v1/proposals/show", ("GET", "POST"), "Show one proposal",
          "One proposal by id, with its preview (the diff its dry run planned) and, once settled, its outcome.",
          m.ProposalShowRequest, _obj("id", "status", "path", id=S, status=S, path=S, planned=OBJ, preview=S),
          tool="dory_proposals_show", handler="proposals:show", errors=(*READ_ERRORS, 409),
          example={"id": "p-c23d86b52de2"}),
    Route("proposals_apply", "/v1/proposals/apply", ("POST",), "Apply a proposal",
          "Apply a proposal: its dry run is run again and the apply is refused (409 route_changed) if the target "
          "path or subject changed since it was proposed; otherwise it is the same write as dory_memory_write "
          "(claims, evidence, canonical page) and the proposal moves to inbox/applied/. dry_run=true only checks.",
          m.ProposalApplyRequest, _obj("id", "applied", "path", id=S, applied=B, dry_run=B, path=S, result=S,
                                       target_path=NS, claim_ids=A, indexed=B),
          tool="dory_proposals_apply", writes=True, handler="proposals:apply", errors=WRITE_ERRORS,
          example={"id": "p-c23d86b52de2", "dry_run": True}),
    Route("proposals_reject", "/v1/proposals/reject", ("POST",), "Reject a proposal",
          "Reject a proposal (with an optional reason): it moves to inbox/rejected/ and memory is not changed.",
          m.ProposalRejectRequest, _obj("id", "rejected", "path", id=S, rejected=B, path=S, indexed=B),
          tool="dory_proposals_reject", writes=True, handler="proposals:reject", errors=WRITE_ERRORS,
          example={"id": "p-c23d86b52de2", "reason": "not a lasting preference"}),
    Route("compact", "/v1/compact", ("POST",), "Compact old session transcripts",
          "Compact session transcripts older than older_than_days (never the most recent third): each keeps its "
          "frontmatter and its digest as the gist, and its original bytes go to a content-addressed blob under "
          "logs/blobs/. get with uncompact=true, or /v1/uncompact, gives the original back byte for byte.",
          m.CompactRequest, _obj("count", "compacted", count=I, compacted=A, would_compact=A, kept_recent=I,
                                 dry_run=B, indexed=B),
          tool="dory_compact", writes=True, handler="compaction:compact", errors=WRITE_ERRORS,
          example={"older_than_days": 30, "dry_run": True}),
    Route("uncompact", "/v1/uncompact", ("POST",), "Put a compacted transcript back",
          "Restore a compacted session transcript (logs/sessions/...md) from its content-addressed blob, byte for "
          "byte; the file is searchable by its full text again. A transcript that was not compacted is unchanged.",
          m.UncompactRequest, _obj("path", "uncompacted", path=S, uncompacted=B, hash=S, indexed=B),
          tool="dory_uncompact", writes=True, handler="compaction:uncompact", errors=WRITE_ERRORS,
          example={"path": "logs/sessions/coder/2026-04-12-s1.md"}),
    Route("recall_event", "/v1/recall-event", ("POST",), "Record which memory an agent used",
          "Record a recall: the query, the paths offered and the one selected (kept in the server's state "
          "folder, not in the corpus; /v1/status?debug=true summarises them under `openclaw`).",
          m.RecallEventRequest, _obj("stored", stored=B, selected_path=NS, created_at=NS),
          writes=True, handler="sessions:recall_event", errors=WRITE_ERRORS),
    Route("public_artifacts", "/v1/public-artifacts", ("GET",), "Artifacts agents may publish",
          "Documents an agent may list as artifacts (core/, references/reports|briefings|slides|notes/, wiki/), "
          "with kind, relative_path, title and agent_ids (frontmatter agent_ids and agent).",
          m.EmptyRequest, _obj("count", "artifacts", count=I, artifacts=A), handler="sessions:public_artifacts",
          errors=(401, 503)),
    Route("migrate", "/v1/migrate", ("POST",), "Import a folder of legacy notes",
          "Import the text and markdown files of the server-side folder `legacy_root` into the corpus by rule "
          "(sources/imported/, digests/, logs/sessions/, sources/legacy/), never replacing a file, with a report "
          "under references/reports/migrations/. Send use_llm=false: no language model is configured.",
          m.MigrateRequest, _obj("staged_count", "written_count", "canonical_created_count", "quarantined_count",
                                 "report_path", "stats", staged_count=I, written_count=I, canonical_created_count=I,
                                 quarantined_count=I, report_path=S, run_artifact_path=NS, stats=OBJ, run_id=S,
                                 skipped_count=I, written=A, quarantined=A, skipped=A, indexed=B),
          writes=True, handler="migrate:migrate", errors=(400, 401, 403, 413, 422, 503)),
    Route("stream", "/v1/stream", ("GET",), "Server-sent events: status, reindex, done",
          "An event stream: `status`, then `reindex` progress when asked (reindex=true, force=true rebuilds "
          "everything), then `done`.",
          m.StreamRequest, {}, kind="sse", writes=False, errors=(401, 422, 503)),
    Route("tools", "/v1/tools", ("GET",), "List the tools with JSON Schemas",
          "The tools this server offers, with input JSON Schemas, for agent bridges.",
          response=_obj("tools", tools=A), errors=(401,), needs_ready=False),
    Route("openapi", "/v1/openapi.json", ("GET",), "This OpenAPI description",
          "The OpenAPI 3.1 description of every route.", response=_obj("openapi", "paths"), errors=(),
          public=True, needs_ready=False),
    Route("metrics", "/metrics", ("GET",), "Prometheus metrics",
          "Gauges in Prometheus text format: corpus files, indexed files, chunks and vectors.",
          kind="text", errors=(401,), needs_ready=False),
    Route("mcp", "/mcp", ("GET", "POST", "DELETE"), "MCP over streamable HTTP",
          "The same tools over the Model Context Protocol (streamable HTTP), behind the same bearer token.",
          kind="mcp", errors=(401,)),
    Route("wiki_home", "/wiki", ("GET",), "The wiki (browser)", "The built wiki's start page, behind the "
          "browser login.", kind="html", errors=(303, 404)),
    Route("wiki_login", "/wiki/login", ("GET", "POST"), "Browser login", "A password form (setting "
          "COMMONPLACE_WEB_PASSWORD); on success a signed session cookie.", kind="html", errors=(401, 503),
          public=True),
    Route("wiki_logout", "/wiki/logout", ("GET",), "Browser logout", "Clears the session and token cookies.",
          kind="html", errors=(), public=True),
    Route("wiki_search", "/wiki/search", ("GET",), "Wiki search (browser)", "Search results as a page (q=).",
          kind="html", errors=(303,)),
    Route("wiki_page", "/wiki/{page}", ("GET",), "A wiki page (browser)", "The built site under /wiki/ "
          "(`/wiki/people/alex/`, its assets); Dory's `/wiki/<page>` redirects to the page of wiki/<page>.md, "
          "else <page>.md.", kind="html", errors=(303, 400, 404)),
    Route("events", "/_/events", ("GET",), "Live reload for the site's pages",
          "Server-sent events: `rebuilt` with the site-relative pages a refresh wrote ({\"urls\": [...]}) or "
          "{\"all\": true}; the stream ends after 30 s and the browser reconnects. At most half of the "
          "server's threads stream at once; a stream over that is told to retry in 15 s.",
          kind="sse", errors=(401,), needs_ready=False),
    Route("wiki_events", "/wiki/_/events", ("GET",), "Live reload for the wiki's pages",
          "The stream of /_/events for pages under /wiki/, behind the wiki's login.",
          kind="sse", errors=(303,), needs_ready=False),
    Route("site_home", "/", ("GET",), "The wiki's start page", "The built site's index.html.", kind="site",
          errors=(401, 404), needs_ready=False),
    Route("site_page", "/{rel}", ("GET",), "A file of the built wiki",
          "Pages by pretty URL (`/people/alex/` serves people/alex/index.html; `/people/alex` and "
          "`/people/alex.md` redirect there), and the site's assets. Nothing outside the output folder is "
          "ever served: hidden parts, `..` and encoded separators are 404.", kind="site", errors=(401, 404),
          needs_ready=False),
)

BY_NAME = {r.name: r for r in ROUTES}
BY_TOOL = {r.tool: r for r in ROUTES if r.tool}
WRITE_PATHS = frozenset(r.path for r in ROUTES if r.writes)
PUBLIC_PATHS = frozenset(r.path for r in ROUTES if r.public)

# Dory's compatibility matrix (`/v1/status`'s `compat_matrix`): its name -> our route.
COMPAT_ROUTES = {"wake": "wake", "search": "search", "get": "get", "memory-write": "memory_write",
                 "recall-event": "recall_event", "public-artifacts": "public_artifacts", "status": "status",
                 "reindex": "stream"}


def compat_matrix() -> dict[str, str]:
    """"ok" for each compatibility route this server offers and whose handler imports."""
    out = {}
    for name, route in COMPAT_ROUTES.items():
        r = BY_NAME.get(route)
        ok = r is not None
        if ok and r.handler:
            try:
                resolve(r.handler)
            except (ImportError, AttributeError):
                ok = False
        out[name] = "ok" if ok else "missing"
    return out
