"""The link graph (`/v1/link`): neighbors, backlinks and broken links, in Dory's shapes.

Edges are `{from, to, anchor, created}`: `anchor` is the link's label, else its target as
written; `created` is the date of the linking page (updated, else date, else created, else
the file's date): commonplace keeps no per-edge history. commonplace adds `depth` (hops
from `path`) and `title` (of the page at the far end). neighbors follows links out of
`path` by default (Dory's `direction: out`); `exclude_prefixes` drops edges with either
end under a prefix (the walk still passes through them, as Dory's does). Lint is
`{op, broken: [{from, to, reason}], self_links: [{from, to}], count}` with `count` the
number of broken links, from `compiler.lint.link_problems` (the rule lint uses too); a
`path` narrows it to one page (a commonplace addition).
"""

from __future__ import annotations

import posixpath
from collections import deque
from typing import Any

from commonplace.compiler import writes as w
from commonplace.compiler.live.contract import LiveContract

from ..errors import ApiError
from ..models import LinkRequest
from . import OpContext

MAX_WALK = 200_000


def _shown(path: str) -> str:
    return w.reveal(path[:200])


def resolve_doc(live: LiveContract, path: str) -> str:
    """The corpus path `path` names: a path (`.md` optional) or, like a wikilink, a title or
    alias. 400 for a path that leaves the corpus, 404 for one that names nothing."""
    raw = path
    if "\x00" in raw:
        raise ApiError(400, "invalid_path", f"invalid path {_shown(raw)!r}")
    norm = posixpath.normpath(raw.strip().replace("\\", "/")) if raw.strip() else ""
    if raw.strip().startswith("/") or norm == ".." or norm.startswith("../"):
        raise ApiError(400, "invalid_path", f"path escapes corpus root: {_shown(raw)}")
    docs = live.docs
    for cand in (raw, norm, norm + ".md"):
        if cand and cand in docs:
            return cand
    if raw.strip():
        try:
            res = live.resolver.resolve_wiki(raw.strip(), "")
        except Exception:  # noqa: BLE001 - a name that cannot resolve is simply absent
            res = None
        if res is not None and res.path in docs:
            return res.path
    raise ApiError(404, "not_found", f"path not found: {_shown(raw)}")


def _anchor(docs: dict[str, Any], src: str, dst: str) -> str:
    d = docs.get(src)
    for link in getattr(d, "links", ()) or ():
        if link.resolved == dst:
            return link.label or link.target or (f"#{link.heading}" if link.heading else dst)
    return dst.rsplit("/", 1)[-1].removesuffix(".md")


def _created(docs: dict[str, Any], src: str) -> str | None:
    d = docs.get(src)
    value = getattr(d, "sort_date", None) if d is not None else None
    return str(value) if value else None


def _excluded(edge: dict[str, Any], prefixes: list[str]) -> bool:
    return any(p and (edge["from"].startswith(p) or edge["to"].startswith(p)) for p in prefixes)


def neighbors(live: LiveContract, rel: str, direction: str, depth: int) -> list[dict[str, Any]]:
    """Edges within `depth` hops of `rel`, breadth first, each once."""
    graph, docs = live.graph, live.docs
    edges: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    visited = {rel}
    frontier = deque([(rel, 0)])
    while frontier and len(seen) < MAX_WALK:
        node, d = frontier.popleft()
        if d >= depth:
            continue
        steps: list[tuple[str, str, str]] = []
        if direction in ("out", "both"):
            steps += [(node, t, t) for t in graph.outgoing.get(node, ())]
        if direction in ("in", "both"):
            steps += [(s, node, s) for s in graph.backlinks.get(node, ())]
        for src, dst, nxt in steps:
            if (src, dst) not in seen:
                seen.add((src, dst))
                far = docs.get(nxt)
                edges.append({"from": src, "to": dst, "anchor": _anchor(docs, src, dst),
                              "created": _created(docs, src), "depth": d + 1,
                              "title": far.title if far is not None else None})
            if nxt not in visited:
                visited.add(nxt)
                frontier.append((nxt, d + 1))
    return edges


def _capped(op: str, rel: str, edges: list[dict[str, Any]], req: LinkRequest) -> dict[str, Any]:
    kept = [e for e in edges if not _excluded(e, req.exclude_prefixes)]
    shown = kept[: req.max_edges]
    return {"op": op, "path": rel, "edges": shown, "count": len(shown), "total_count": len(kept),
            "truncated": len(kept) > len(shown)}


def lint(live: LiveContract, rel: str | None, prefixes: list[str]) -> dict[str, Any]:
    from commonplace.compiler.build.lint import link_problems

    found = link_problems(live.docs, rel)
    broken = []
    for p in found.broken:
        item: dict[str, Any] = {"from": p.source, "to": p.target,
                                "reason": "ambiguous: the name matches several pages" if p.candidates
                                else "target file does not exist", "line": p.line}
        if p.candidates:
            item["candidates"] = list(p.candidates)
        broken.append(item)
    self_links = [{"from": p.source, "to": p.target, "line": p.line} for p in found.self_links]
    broken = [b for b in broken if not _excluded(b, prefixes)]
    self_links = [s for s in self_links if not _excluded(s, prefixes)]
    return {"op": "lint", "path": rel, "broken": broken, "self_links": self_links, "count": len(broken)}


def link(ctx: OpContext, req: LinkRequest) -> dict[str, Any]:
    live = ctx.live
    if req.op in ("neighbors", "backlinks") and not req.path:
        raise ApiError(400, "missing_parameter", f"link {req.op} requires path")
    rel = resolve_doc(live, req.path) if req.path else None
    if req.op == "lint":
        return lint(live, rel, req.exclude_prefixes)
    assert rel is not None
    if req.op == "backlinks":
        return _capped("backlinks", rel, neighbors(live, rel, "in", 1), req)
    return {**_capped("neighbors", rel, neighbors(live, rel, req.direction, req.depth), req),
            "direction": req.direction, "depth": req.depth}
