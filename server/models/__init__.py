"""Request models: one pydantic model per operation, the single declaration from which
request validation, `/v1/openapi.json`, `/v1/tools` and the MCP tools all come.

Dory's server validates with pydantic too, so coercion and the 422 error list are the
same as Dory's: booleans accept true/True/1/yes/on, integers accept digit strings,
unknown fields are ignored.
"""

from .agents import (ActiveMemoryRequest, MigrateRequest, RecallEventRequest, ResearchRequest,
                     SessionIngestRequest, StreamRequest, WakeRequest)
from .base import EmptyRequest, Request
from .sessions import (CompactRequest, DigestRequest, ProposalApplyRequest, ProposalRejectRequest,
                       ProposalShowRequest, ProposalsListRequest, ProposeRequest, UncompactRequest)
from .memory import (GetRequest, LinkRequest, MemoryWriteRequest, PurgeRequest, Scope, SearchRequest,
                     StatusRequest, WriteRequest)

__all__ = ["CompactRequest", "DigestRequest", "ProposalApplyRequest", "ProposalRejectRequest", "ProposalShowRequest",
           "ProposalsListRequest", "ProposeRequest", "UncompactRequest", "ActiveMemoryRequest", "EmptyRequest", "GetRequest", "LinkRequest", "MemoryWriteRequest",
           "MigrateRequest", "PurgeRequest", "RecallEventRequest", "Request", "ResearchRequest", "Scope",
           "SearchRequest", "SessionIngestRequest", "StatusRequest", "StreamRequest", "WakeRequest",
           "WriteRequest"]
