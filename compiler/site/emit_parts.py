"""The whole-corpus outputs a new or removed document rewrites (graph.json,
_/graph-data.js, the broken-links page), assembled from per-document fragments a live
site remembers between updates (`Site.parts`).

Re-encoding 10,000 nodes and ~100,000 edges took ~400 ms of a document's creation at
10,000 documents, and the broken-links page (13,000 rows in the benchmark corpus) another
50-100 ms, while one document changed. A fragment is reused only while the site still
holds the very object it was made from (an update replaces a document and its edge list,
it never edits them) with the same shown values; the bytes equal a whole encoding
(tests/test_emit_parts.py).
"""

from __future__ import annotations

from json.encoder import encode_basestring as json_string  # as json.dumps(ensure_ascii=False)
from typing import Any, Callable

from ..model import Document
from .model import Site


def _parts(site: Site, name: str) -> dict:
    return site.parts.setdefault(name, {})


def node_fragments(site: Site, name: str, make: Callable[[Document], str]) -> list[str]:
    """`make(d)` for every document in site order, remembered under `name` (a fragment is
    made again when the document, or its title, type or tags, is another object)."""
    held = _parts(site, name)
    fresh: dict[str, tuple] = {}
    out = []
    for d in site.docs:
        got = held.get(d.path)
        if got is None or got[0] is not d or got[1] is not d.title or got[2] is not d.type or got[3] is not d.tags:
            got = (d, d.title, d.type, d.tags, make(d))
        fresh[d.path] = got
        out.append(got[4])
    site.parts[name] = fresh
    return out


def graph_edges(site: Site) -> str:
    """graph.json's edges ({"source", "target"} objects, sources sorted), encoded once per
    edge list."""
    held = _parts(site, "graph-edges")
    fresh: dict[str, tuple] = {}
    out = []
    for s, targets in sorted(site.graph.outgoing.items()):
        got = held.get(s)
        if got is None or got[0] is not targets:
            src = json_string(s)
            got = (targets, ",".join(f'{{"source":{src},"target":{json_string(t)}}}' for t in targets))
        fresh[s] = got
        if got[1]:
            out.append(got[1])
    site.parts["graph-edges"] = fresh
    return ",".join(out)


def graph_data_edges(site: Site, index: dict[str, int]) -> str:
    """_/graph-data.js's edges as pairs of node numbers; a source's pairs are encoded
    again only when its list or a number in it moved (a new document shifts those after it)."""
    held = _parts(site, "graph-data-edges")
    fresh: dict[str, tuple] = {}
    out = []
    for s, targets in sorted(site.graph.outgoing.items()):
        i = index.get(s)
        if i is None:
            continue
        nums = tuple(map(index.get, targets))
        if None in nums:
            nums = tuple(n for n in nums if n is not None)
        got = held.get(s)
        if got is None or got[0] != i or got[1] != nums:
            got = (i, nums, ",".join(f"[{i},{j}]" for j in nums))
        fresh[s] = got
        if got[2]:
            out.append(got[2])
    site.parts["graph-data-edges"] = fresh
    return ",".join(out)


def unchanged(site: Site, name: str, shown: Any) -> bool:
    """True if `shown` (everything an output shows) equals what this site emitted under
    `name` last time; remembers it either way."""
    before = site.parts.get(name)
    site.parts[name] = shown
    return before is not None and before == shown
