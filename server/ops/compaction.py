"""Compaction of old session transcripts (`/v1/compact`, `/v1/uncompact`, and `get` with
`uncompact: true`); the work is compiler/sessions/compact.py's.

Each transcript is compacted under the corpus write lock, its gist being its
deterministic digest; the changed transcripts are refreshed together afterwards, so
search finds them by their gist at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from commonplace.compiler import writes as w
from commonplace.compiler.model import is_session_path
from commonplace.compiler.sessions import blobs
from commonplace.compiler.sessions import compact as cp
from commonplace.compiler.sessions import digest as dg

from ..errors import ApiError, from_write_error
from ..models import CompactRequest, GetRequest, SearchRequest, UncompactRequest
from . import OpContext
from .refresh import refresh
from .sessions import existing_session

if TYPE_CHECKING:
    from commonplace.compiler.live.contract import LiveContract


def gist_of(rel: str, data: bytes) -> str:
    d = dg.build(dg.digest_path(rel), "gist", [(rel, data)], None)
    return d.sections_markdown()


def run_compaction(ctx: OpContext, older_than_days: float, dry_run: bool = False) -> dict[str, Any]:
    todo, protected = cp.plan(ctx.root, older_than_days)
    done: list[str] = []
    if not dry_run:
        for rel in todo:
            with w.write_lock(ctx.root):
                full = ctx.root / rel
                if not full.is_file():
                    continue
                data = full.read_bytes()
                if cp.compact_file(ctx.root, rel, gist_of(rel, data)):
                    done.append(rel)
    indexed = True
    if done:
        indexed, _ = refresh(ctx.live, done)
    return {"dry_run": dry_run, "compacted": done if not dry_run else [], "would_compact": todo if dry_run else [],
            "count": len(todo) if dry_run else len(done), "kept_recent": len(protected), "indexed": indexed}


def compact(ctx: OpContext, req: CompactRequest) -> dict[str, Any]:
    return run_compaction(ctx, req.older_than_days, req.dry_run)


def uncompact(ctx: OpContext, req: UncompactRequest) -> dict[str, Any]:
    rel = existing_session(ctx, req.path)
    try:
        with w.write_lock(ctx.root):
            changed = cp.uncompact_file(ctx.root, rel)
    except blobs.BlobError as exc:
        raise ApiError(409, "blob_missing", f"cannot uncompact {rel}: {exc}") from None
    indexed = True
    if changed:
        indexed, _ = refresh(ctx.live, [rel])
    data = (ctx.root / rel).read_bytes()
    return {"path": rel, "uncompacted": changed, "hash": w.content_hash(data), "indexed": indexed}


def read_original(ctx: OpContext, req: GetRequest, start: int) -> dict[str, Any]:
    """`get` with uncompact=true: the original of a compacted transcript (any other
    document reads as it is), sliced like a plain get."""
    try:
        r = w.read_document(ctx.root, req.path, 1, None, ctx.excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    try:
        data = cp.original_bytes(ctx.root, r.path)
    except blobs.BlobError as exc:
        raise ApiError(409, "blob_missing", f"cannot uncompact {r.path}: {exc}") from None
    text = data.decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    sliced = lines[start - 1: (start - 1 + req.lines) if req.lines is not None else None]
    out: dict[str, Any] = {"path": r.path, "from": start, "content": "".join(sliced), "compacted": data != b""
                           and cp.is_compacted((ctx.root / r.path).read_bytes())}
    if req.debug:
        out.update(total_lines=len(lines), lines_returned=len(sliced), frontmatter=dg.session_meta(data),
                   hash=w.content_hash(data))
    return out


def with_originals(ctx: OpContext, req: SearchRequest, answer: dict[str, Any]) -> dict[str, Any]:
    """`search` with `originals: true`: the compacted sessions in the request's scope
    searched by their original text too, merged into the engine's answer (an engine
    answer with debug fields; `ops/search.shape` words it)."""
    from commonplace.compiler.sessions import originals

    if req.corpus == "durable" and req.mode != "recall":
        raise ApiError(400, "invalid_parameter", "`originals` searches session transcripts: send corpus sessions "
                                                 "or all (or mode recall)")
    docs = ctx.live.docs
    sessions = [(p, docs[p].frontmatter if isinstance(docs[p].frontmatter, dict) else {}, docs[p].title)
                for p in sorted(docs) if is_session_path(p)]
    scope = req.scope.model_dump(exclude_none=True) if req.scope is not None else None
    return originals.extend(ctx.root, answer, req.query, req.k, sessions, scope, req.snippet_marks or "none")


class Schedule:
    """`serve --compact-after DAYS`: compaction every `interval` seconds in a daemon thread,
    once the corpus is open; a failed run is logged and the next one tries again."""

    def __init__(self, live: LiveContract, root: Any, out: Any, days: float, interval: float = 3600.0) -> None:
        import threading

        self.live, self.root, self.out, self.days, self.interval = live, root, out, days, interval
        self.stop = threading.Event()
        self.runs = 0
        self.thread = threading.Thread(target=self._loop, name="commonplace-compact", daemon=True)

    def start(self) -> "Schedule":
        self.thread.start()
        return self

    def _loop(self) -> None:
        import logging

        log = logging.getLogger("commonplace.server")
        while not self.stop.is_set():
            if self.live.ready:
                try:
                    out = self.out.resolve() if self.out is not None else None
                    excluded = (out,) if out is not None and out.is_relative_to(self.root) else ()
                    r = run_compaction(OpContext(live=self.live, root=self.root, out=out, excluded=excluded,
                                                 actor="compaction"), self.days)
                    self.runs += 1
                    if r["count"]:
                        log.warning("compacted %d session transcript(s)", r["count"])
                except Exception:  # noqa: BLE001 - the next run tries again
                    log.exception("scheduled compaction failed")
                self.stop.wait(self.interval)
            else:
                self.stop.wait(1.0)
