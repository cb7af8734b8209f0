"""Reading and writing documents by path (`/v1/get`, `/v1/write`)."""

from __future__ import annotations

from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError, from_write_error
from ..models import GetRequest, WriteRequest
from . import OpContext
from .refresh import note


def get(ctx: OpContext, req: GetRequest) -> dict[str, Any]:
    start = req.from_ if req.from_ is not None else req.from_line if req.from_line is not None else 1
    if start < 1:
        raise ApiError(400, "invalid_parameter", "'from' must be >= 1")
    if req.lines is not None and req.lines < 1:
        raise ApiError(400, "invalid_parameter", "'lines' must be >= 1")
    if req.uncompact:  # a compacted session transcript as it was (issue 31)
        from .compaction import read_original

        return read_original(ctx, req, start)
    try:
        r = w.read_document(ctx.root, req.path, start, req.lines, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    return r.as_dict(debug=req.debug)


def write(ctx: OpContext, req: WriteRequest) -> dict[str, Any]:
    """Dory's `/v1/write`: the corpus schema applies (`schema=True`), dry runs answer
    would_create ... would_quarantine, forget marks the document superseded and writes
    `<stem>.tombstone.md`. The live corpus applies it and refreshes the site and indexes
    before the answer."""
    wr = w.WriteRequest(kind=req.kind, target=req.target, content=req.content, frontmatter=req.frontmatter,
                        expected_hash=req.expected_hash, reason=req.reason, dry_run=req.dry_run, soft=req.soft,
                        actor=ctx.actor, schema=True)
    try:
        written = ctx.live.write(wr, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    res, done = written.result, written.committed
    out = res.as_dict()
    if done is None:
        out.update(indexed=False, edges_added=0)
        return out
    out["indexed"] = done.indexed
    out["edges_added"] = done.edges_added
    if len(res.paths) > 1:
        out["paths"] = res.paths
    if done.warnings:  # links elsewhere this write re-pointed, left ambiguous or broke
        out["warnings"] = done.warnings
    message = note(done)
    if message:
        out["message"] = (out.get("message", "") + "; " if out.get("message") else "") + message
    return out
