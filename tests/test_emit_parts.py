"""graph.json, _/graph-data.js and the broken-links page are assembled from fragments a
live site remembers between updates (`emit_parts`): after creations, edits, removals and
links that break or heal, their bytes must equal a whole encoding of the site."""

from __future__ import annotations

import json
import random
from pathlib import Path

from commonplace.compiler.site import emit
from commonplace.compiler.live.corpus import LiveCorpus
from commonplace.compiler.site.model import Site

from test_live_site_view import random_edit, seed


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def scanned_broken(site: Site) -> list[dict]:
    """Every unresolved link, found by scanning every document's links."""
    return [{"path": d.path, "url": d.url, "line": l.line, "target": l.target, "kind": l.kind,
             "candidates": list(l.candidates)} for d in site.docs for l in d.links if l.resolved is None]


def whole_graph_json(site: Site) -> bytes:
    return (_dumps({
        "nodes": [{"id": d.path, "title": d.title, "type": d.type, "url": d.url, "tags": d.tags} for d in site.docs],
        "edges": [{"source": s, "target": t} for s, ts in sorted(site.graph.outgoing.items()) for t in ts],
        "broken": [{"source": b["path"], "target": b["target"], "line": b["line"]} for b in scanned_broken(site)],
    }) + "\n").encode("utf-8")


def whole_graph_data(site: Site) -> bytes:
    index = {d.path: i for i, d in enumerate(site.docs)}
    payload = _dumps({"nodes": [[d.path, d.title, d.type, d.tags, d.url] for d in site.docs],
                      "edges": [[index[s], index[t]] for s, ts in sorted(site.graph.outgoing.items()) if s in index
                                for t in ts if t in index]})
    payload = payload.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.COMMONPLACE_GRAPH = {payload};\n".encode("utf-8")


def test_graph_outputs_and_broken_page_equal_a_whole_encoding_after_each_update(tmp_path: Path) -> None:
    rng = random.Random(11)
    corpus, out = tmp_path / "corpus", tmp_path / "site"
    names = [f"{rng.choice(['', 'notes/', 'inbox/'])}doc{i}" for i in range(14)] + ["notes/odd</script>\u2028"]
    seed(corpus, rng, names, 9)
    live = LiveCorpus(corpus, out, embed=False, index=False)
    live.open()
    try:
        reused = 0
        for step in range(30):
            live.refresh([random_edit(corpus, rng, names)])
            site = live.state.site
            assert site.broken_links() == scanned_broken(site), step
            assert (out / "graph.json").read_bytes() == whole_graph_json(site), step
            assert (out / "_/graph-data.js").read_bytes() == whole_graph_data(site), step
            assert emit.graph_json(site)[1] == whole_graph_json(site)
            url, html = emit.broken_page(site, emit.make_env())
            assert (out / url).read_bytes() == html, step
            reused += bool(site.parts)
        assert reused  # the fragments were kept between updates
    finally:
        live.close()
