"""Reading and writing documents by path (`/v1/get`, `/v1/write`)."""

from __future__ import annotations

from typing import Any

from commonplace.compiler import writes as w
from commonplace.compiler.writes.compose import split_content

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
    before the answer. A write with no body text stands (Dory's 200) and says so in
    `warnings` (`empty_body`)."""
    wr = w.WriteRequest(kind=req.kind, target=req.target, content=req.content, frontmatter=req.frontmatter,
                        expected_hash=req.expected_hash, reason=req.reason, dry_run=req.dry_run, soft=req.soft,
                        actor=ctx.actor, schema=True)
    try:
        written = ctx.live.write(wr, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    res, done = written.result, written.committed
    out = res.as_dict()
    empty = empty_body(req.content, res)
    if empty:
        out["warnings"] = [empty]
    if done is None:
        out.update(indexed=False, edges_added=0)
        return out
    out["indexed"] = done.indexed
    out["edges_added"] = done.edges_added
    if len(res.paths) > 1:
        out["paths"] = res.paths
    if done.warnings:  # links elsewhere this write re-pointed, left ambiguous or broke
        out["warnings"] = [*out.get("warnings", []), *done.warnings]
    message = note(done)
    if message:
        out["message"] = (out.get("message", "") + "; " if out.get("message") else "") + message
    return out


_DID = {  # what an empty body made of the write: (done, in a dry run)
    "created": ("{path} was created with frontmatter only, no body text",
                "{path} would be created with frontmatter only, no body text"),
    "appended": ("nothing of substance was appended to {path}", "nothing of substance would be appended to {path}"),
    "replaced": ("{path} now has no body text, only its frontmatter",
                 "{path} would be left with no body text, only its frontmatter"),
}


def empty_body(content: str, res: Any) -> str | None:
    """The warning for a create, append or replace whose content has no body text (empty,
    only whitespace, or only its own frontmatter block). Dory accepts such a write (200;
    `content` defaults to ""), so it stands; the writer is told that nothing of substance
    was written rather than left to believe the text is in memory now."""
    if res.quarantined or res.action not in _DID:
        return None
    content = content or ""
    try:
        own, body = split_content(content)
    except w.WriteError:  # unusable frontmatter: the write would have refused it
        own, body = None, content
    if body.strip():
        return None
    what = "empty" if not content else "only frontmatter" if own is not None else "only whitespace"
    done, would = _DID[res.action]
    return f"empty body: the content is {what}, so {(would if res.dry_run else done).format(path=res.path)}"
