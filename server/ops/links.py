"""The link graph (`/v1/link`): neighbors, backlinks and broken links."""

from __future__ import annotations

from collections import deque
from typing import Any

from commonplace.compiler import writes as w

from ..errors import ApiError
from ..models import LinkRequest
from . import OpContext

MAX_WALK = 200_000


def resolve_doc(live: Any, path: str) -> str:
    docs = live.docs
    if path in docs:
        return path
    if not path.endswith(".md") and path + ".md" in docs:
        return path + ".md"
    resolver = getattr(live, "resolver", None)
    if resolver is not None and "\x00" not in path:
        try:
            res = resolver.resolve_wiki(path, "")
        except Exception:  # noqa: BLE001
            res = None
        if res is not None and res.path in docs:
            return res.path
    raise ApiError(404, "not_found", f"no document {w.reveal(path[:200])!r}")


def link(ctx: OpContext, req: LinkRequest) -> dict[str, Any]:
    live = ctx.live
    op, limit, path = req.op, req.max_edges, req.path
    if op in ("neighbors", "backlinks") and not path:
        raise ApiError(400, "missing_parameter", f"`path` is required for op={op}")
    rel = resolve_doc(live, path) if path else None
    graph = live.graph
    docs = live.docs
    if op == "neighbors":
        direction, depth = req.direction, req.depth
        edges: list[dict[str, Any]] = []
        seen_edges: set[tuple[str, str]] = set()
        visited = {rel}
        frontier = deque([(rel, 0)])
        while frontier and len(seen_edges) < MAX_WALK:
            node, d = frontier.popleft()
            if d >= depth:
                continue
            steps: list[tuple[str, str, str]] = []
            if direction in ("out", "both"):
                steps += [(node, t, "out") for t in graph.outgoing.get(node, ())]
            if direction in ("in", "both"):
                steps += [(s, node, "in") for s in graph.backlinks.get(node, ())]
            for src, dst, how in steps:
                if (src, dst) not in seen_edges:
                    seen_edges.add((src, dst))
                    edges.append({"source": src, "target": dst, "direction": how, "depth": d + 1})
                nxt = dst if how == "out" else src
                if nxt not in visited:
                    visited.add(nxt)
                    frontier.append((nxt, d + 1))
        total = len(edges)
        shown = edges[:limit]
        for e in shown:
            other = e["target"] if e["direction"] == "out" else e["source"]
            e["title"] = docs[other].title if other in docs else None
        return {"op": op, "path": rel, "direction": direction, "depth": depth, "edges": shown,
                "count": len(shown), "total_count": total, "truncated": total > len(shown)}
    if op == "backlinks":
        edges = []
        for src in graph.backlinks.get(rel, ()):
            d = docs.get(src)
            lines = sorted({l.line for l in d.links if l.resolved == rel}) if d else []
            edges.append({"source": src, "target": rel, "title": d.title if d else None, "lines": lines})
        total = len(edges)
        shown = edges[:limit]
        return {"op": op, "path": rel, "edges": shown, "count": len(shown), "total_count": total,
                "truncated": total > len(shown)}
    # lint
    broken: list[dict[str, Any]] = []
    self_links: list[dict[str, Any]] = []
    pool = [docs[rel]] if rel else [docs[p] for p in sorted(docs)]
    for d in pool:
        for l in d.links:
            shown_target = l.target or (f"#{l.heading}" if l.heading else "")
            if l.resolved is None:
                item = {"source": d.path, "target": shown_target, "line": l.line}
                if l.candidates:
                    item["candidates"] = list(l.candidates)
                broken.append(item)
            elif l.resolved == d.path and l.target:
                self_links.append({"source": d.path, "target": shown_target, "line": l.line})
    total = len(broken) + len(self_links)
    b = broken[:limit]
    s = self_links[: max(0, limit - len(b))]
    return {"op": op, "path": rel, "broken": b, "self_links": s, "count": len(b) + len(s),
            "total_count": total, "truncated": total > len(b) + len(s)}
