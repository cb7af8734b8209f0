"""Request models of the agent-facing operations: wake, active memory, research, session
ingest, recall events, migration, the event stream. Dory's names, defaults and bounds
(`dory-contract.md` §1.5)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from .base import Int, Request
from .memory import Rerank

WAKE_BUDGET_MAX = 1500


class WakeRequest(Request):
    agent: str = Field(..., min_length=1, max_length=200, description="Name of the agent waking up.")
    budget_tokens: Int = Field(600, ge=1, description="Token budget for the block (clamped to 1500, with a warning).")
    profile: Literal["default", "casual", "coding", "writing", "privacy"] = Field(
        "default", description="default, casual, coding (agent work), writing (voice) or privacy (boundaries).")
    project: Optional[str] = Field(None, max_length=500, description="Include the project's page (projects/<slug>/"
                                                                     "state.md or projects/<slug>.md) matched by slug, "
                                                                     "title or alias ('project:' prefix ok).")
    cwd: Optional[str] = Field(None, max_length=4096, description="The agent's working directory; its last part "
                                                                 "names the project when `project` is not given.")
    include_recent_sessions: Int = Field(5, ge=0, description="How many recent sessions to list.")
    include_pinned_decisions: bool = Field(True, description="Add up to 3 pinned decisions.")
    debug: bool = Field(False, description="Add tokens_estimated, sources and frozen_at.")

    @property
    def budget(self) -> int:
        """`budget_tokens` clamped to WAKE_BUDGET_MAX (Dory's clamp; the op says so)."""
        return min(self.budget_tokens, WAKE_BUDGET_MAX)


class ActiveMemoryRequest(Request):
    prompt: str = Field(..., max_length=20000, description="The user's message the agent is about to answer.")
    agent: str = Field(..., max_length=200, description="Name of the agent.")
    cwd: Optional[str] = Field(None, max_length=4096, description="Working directory of the agent, if any.")
    profile: Literal["auto", "general", "coding", "writing", "privacy", "personal"] = Field(
        "auto", description="auto picks from the prompt.")
    timeout_ms: Int = Field(1200, ge=100, le=5000, description="Time budget (100-5000 ms).")
    budget_tokens: Int = Field(400, ge=100, le=1200, description="Token budget of the block (100-1200).")
    include_wake: bool = Field(True, description="Include the wake block; false if wake was already called.")
    rerank: Rerank = Field("auto", description="Accepted for Dory compatibility; commonplace has no reranker.")
    debug: bool = Field(False, description="Add took_ms, profile and confidence.")


class ResearchRequest(Request):
    question: str = Field(..., min_length=1, max_length=4000, description="The question to research in memory.")
    kind: Literal["report", "briefing", "wiki-note", "proposal"] = Field("report", description="Artifact kind.")
    corpus: Literal["durable", "sessions", "all"] = Field("all", description="Which memory to search.")
    limit: Int = Field(8, ge=1, le=20, description="Sources to use (1-20).")
    save: bool = Field(True, description="Write the artifact into the corpus (references/, wiki/ or inbox/).")


class SessionIngestRequest(Request):
    path: str = Field(..., max_length=1024, description="Where: logs/sessions/<...>.md.")
    content: str = Field(..., description="The transcript (markdown).")
    agent: str = Field(..., max_length=200)
    device: str = Field(..., max_length=200)
    session_id: str = Field(..., max_length=200)
    status: Literal["active", "interrupted", "done"] = Field(..., description="active, interrupted or done.")
    captured_from: str = Field(..., max_length=200)
    updated: str = Field(..., max_length=64, description="ISO timestamp of the last update.")


class RecallEventRequest(Request):
    agent: str = Field(..., max_length=200)
    session_key: Optional[str] = Field(None, max_length=500)
    query: str = Field(..., max_length=20000)
    result_paths: list[Annotated[str, Field(max_length=1024)]] = Field(default_factory=list, max_length=200)
    selected_path: Optional[str] = Field(None, max_length=1024)
    corpus: Literal["memory", "sessions", "wiki", "all"] = Field("memory")
    source: str = Field("openclaw-recall", max_length=200)


class MigrateRequest(Request):
    legacy_root: str = Field(..., min_length=1, max_length=4096, description="Folder of legacy notes to import.")
    use_llm: bool = Field(True, description="Classify with a language model (none is configured: send false).")


class StreamRequest(Request):
    reindex: bool = Field(False, description="Rebuild what changed on disk, streaming progress.")
    force: bool = Field(False, description="With reindex: rebuild everything.")


