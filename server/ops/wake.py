"""The start-of-session context block (`/v1/wake`)."""

from __future__ import annotations

from typing import Any

from ..models import WakeRequest
from . import OpContext


def wake(ctx: OpContext, req: WakeRequest) -> dict[str, Any]:
    from commonplace.compiler.wake import wake as run

    live = ctx.live
    r = run(live.docs, budget_tokens=req.budget_tokens, profile=req.profile, project=req.project, agent=req.agent,
            resolver=getattr(live, "resolver", None))
    return r.as_dict()
