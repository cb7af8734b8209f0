"""The start-of-session context block (`/v1/wake`): Dory's profiles and sections, read
from the files on disk and packed as facts by the context builder (`compiler/context/wake.py`,
`compiler/context/`)."""

from __future__ import annotations

from typing import Any

from ..models import WakeRequest
from ..models.agents import WAKE_BUDGET_MAX
from . import OpContext


def wake(ctx: OpContext, req: WakeRequest) -> dict[str, Any]:
    from commonplace.compiler.context.wake import wake as run

    live = ctx.live
    r = run(live.docs, root=ctx.root, budget_tokens=req.budget, profile=req.profile, project=req.project,
            agent=req.agent, include_recent_sessions=req.include_recent_sessions,
            include_pinned_decisions=req.include_pinned_decisions, resolver=live.resolver, cwd=req.cwd,
            transport=ctx.transport)
    out = r.as_dict(debug=req.debug)
    if req.budget_tokens > WAKE_BUDGET_MAX:  # Dory clamps silently; an agent that asked for more is told
        out.setdefault("warnings", []).append(
            f"budget_tokens {req.budget_tokens} is more than wake gives: the block is cut to {WAKE_BUDGET_MAX} tokens")
    return out
