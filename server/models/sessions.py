"""Request models of the sessions operations: proposals, digests, compaction (issue 31)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from .base import Int, Num, Request
from .memory import MemoryWriteRequest

PROPOSAL_ID = r"^p-[0-9a-f]{12}(-[0-9]{1,4})?$"
DAY = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


class ProposeRequest(MemoryWriteRequest):
    """memory-write's fields; nothing is written to durable memory: the dry run is stored."""

    source_paths: list[Annotated[str, Field(max_length=1024)]] = Field(
        default_factory=list, max_length=50, description="Corpus paths the statement comes from (path#L3-L7 ok).")
    origin: Optional[str] = Field(None, max_length=200, description="What proposed it (a digest, an agent, cli).")


class ProposalsListRequest(Request):
    status: Literal["proposed", "applied", "rejected", "all"] = Field(
        "proposed", description="Which proposals: proposed (waiting for review), applied, rejected or all.")
    limit: Int = Field(50, ge=1, le=500, description="At most this many (1-500), oldest first.")


class ProposalShowRequest(Request):
    id: str = Field(..., pattern=PROPOSAL_ID, description="The proposal id, p-<12 hex> (from propose or list).")


class ProposalApplyRequest(ProposalShowRequest):
    dry_run: bool = Field(False, description="Re-run the dry run and say whether it would apply; change nothing.")


class ProposalRejectRequest(ProposalShowRequest):
    reason: Optional[str] = Field(None, max_length=2000, description="Why it is rejected (kept with it).")


class DigestRequest(Request):
    session: Optional[str] = Field(None, max_length=1024, description="One session: its logs/sessions/...md path.")
    date: Optional[str] = Field(None, pattern=DAY, description="Or one day (YYYY-MM-DD): every session of that day.")
    propose: bool = Field(True, description="Store the digest's decisions (and facts about known entities) as "
                                            "proposals for review; never written to memory directly.")
    save: bool = Field(True, description="Write the digest page under logs/digests/ (false: only answer it).")
    use_llm: bool = Field(True, description="Let the configured OpenAI-compatible endpoint rewrite it (if one is "
                                            "configured; any failure keeps the extractive digest).")


class CompactRequest(Request):
    older_than_days: Num = Field(30.0, ge=0, le=100000, allow_inf_nan=False,
                                 description="Compact session transcripts older than this many days (never the "
                                             "most recent third of the sessions).")
    dry_run: bool = Field(False, description="List what would be compacted; change nothing.")


class UncompactRequest(Request):
    path: str = Field(..., max_length=1024, description="The compacted transcript (logs/sessions/...md).")
