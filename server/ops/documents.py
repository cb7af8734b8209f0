"""Reading and writing documents by path (`/v1/get`, `/v1/write`)."""

from __future__ import annotations

from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError, from_write_error
from ..models import GetRequest, WriteRequest
from . import OpContext
from .refresh import links_of, refresh


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
    `<stem>.tombstone.md`. The site and indexes are refreshed before the answer."""
    wr = w.WriteRequest(kind=req.kind, target=req.target, content=req.content, frontmatter=req.frontmatter,
                        expected_hash=req.expected_hash, reason=req.reason, dry_run=req.dry_run, soft=req.soft,
                        actor=ctx.actor, schema=True)
    live = ctx.live
    try:
        res = w.apply_write(ctx.root, wr, ctx.excluded)  # serialized by the corpus write lock
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    out = res.as_dict()
    if res.dry_run:
        out.update(indexed=False, edges_added=0)
        return out
    changes = res.changes or []
    before = {c.path: links_of(live, c.path, c.old) for c in changes}
    indexed, note = refresh(live, res.paths)
    out["indexed"] = indexed
    out["edges_added"] = sum(len(links_of(live, c.path, c.new) - before[c.path]) for c in changes)
    if len(res.paths) > 1:
        out["paths"] = res.paths
    if note:
        out["message"] = (out.get("message", "") + "; " if out.get("message") else "") + note
    return out
