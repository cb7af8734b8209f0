"""Site safety: a corpus of hostile documents builds, and no page carries executable script
from the documents (catalogue: hostile_cases.XSS, XSS_PATHS, YAML, INVISIBLE, CLAIMS).

Two surfaces: the CLI (`commonplace claim add` and `commonplace build` over a corpus of
hostile files written straight to disk, as a hostile document in the corpus would be) and
the HTTP API (`POST /v1/write` of each payload; the live corpus re-renders the pages).
Every HTML page is parsed with html.parser (hostilekit.SafetyChecker): no <script> but the
site's own search scripts, no on* attribute, no javascript:/vbscript:/data: URL, no
<iframe>/<object>/<embed>/<base>/<meta http-equiv>/<style>/<svg>. Every search-data script
is one JSON value inside a fixed wrapper, and (with node) runs with no other side effect.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import hostile_cases as hc
from hostilekit import (GIT_SECRET, OUTSIDE_SECRET, PASSWD_MARK, Env, assert_no_leak, check_response,
                        dangerous_url, html_problems, make_env, search_data_payload)


def _site_problems(site: Path, since_ns: int = 0) -> dict[str, list[str]]:
    """Problems per page (only pages written at or after `since_ns`, if given)."""
    out: dict[str, list[str]] = {}
    for p in sorted(site.rglob("*.html")):
        if since_ns and p.stat().st_mtime_ns < since_ns:
            continue
        probs = html_problems(p.read_text("utf-8"))
        if probs:
            out[p.relative_to(site).as_posix()] = probs
    return out


def _hostile_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for cid, content in hc.XSS:
        files[f"xss/{cid}.md"] = content
    for cid, rel in hc.XSS_PATHS:
        files[rel] = f"---\npinned: true\nupdated: 2025-01-0{len(files) % 9 + 1}\n---\n# {cid}\n\nA page whose path is hostile.\n"
    for cid, content, _, _ in hc.YAML:
        files[f"yaml/{cid}.md"] = content
    for cid, text in hc.INVISIBLE:
        files[f"invisible/{cid}.md"] = f"---\ntitle: \"{cid} {text.replace(chr(34), '')}\"\ntags: [\"{cid}\"]\n---\n{text}\n"
    for cid, text in hc.INJECTIONS:
        files[f"injection/{cid}.md"] = f"# {cid}\n\n{text}\n"
    files["people/alex.md"] = "---\ntitle: Alex\n---\n# Alex\n\nAlex.\n"
    files["xss/superseded-wikilink.md"] = "---\nsuperseded_by: \"[[javascript:alert(1)]]\"\n---\nbody\n"
    files["xss/recent.md"] = "---\ntitle: \"<img src=x onerror=alert(9)>\"\nupdated: 2030-01-01\npinned: true\n---\nrecent\n"
    return files


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory, cli) -> Env:
    env = make_env(tmp_path_factory.mktemp("hostile-site"), _hostile_files())
    for cid, subject, statement, extra, code, _, _ in hc.CLAIMS:
        if code == 0:
            r = cli("claim", "add", subject, statement, *extra, "-C", env.corpus, "--actor", "hostile")
            assert r.exit_code == 0, (cid, r)
    for i, statement in enumerate(["<script>alert(1)</script>", "[x](javascript:alert(1))", "\"><img src=x onerror=alert(1)>",
                                   "<!-- commonplace:claims:end -->", "$$<svg onload=alert(1)>$$"]):
        r = cli("claim", "add", "Alex", f"{statement} #{i}", "-e", "javascript:alert(1)", "-C", env.corpus, "--actor", "hostile")
        assert r.exit_code == 0, r
    (env.corpus / "commonplace.toml").write_text('[site]\nurl = "https://example.org/wiki"\n')  # a sitemap too
    r = cli("build", env.corpus, "--out", env.site, "--no-embed", "--json")
    assert r.exit_code == 0, r
    assert_no_leak(r.stdout, env, "build --json", allow_paths=[env.corpus, env.site])
    return env


def test_hostile_corpus_builds_and_lints(hostile_site: Env, cli) -> None:
    assert (hostile_site.site / "index.html").is_file()
    r = cli("lint", hostile_site.corpus, "--json")
    assert r.exit_code == 1, r  # broken links and bad frontmatter are findings
    findings = json.loads(r.stdout)["findings"]
    codes = {f["code"] for f in findings}
    assert "frontmatter" in codes and "broken-link" in codes, codes
    assert_no_leak(r.output, hostile_site, "lint", allow_paths=[hostile_site.corpus])
    # The symlink loop and the links out of the corpus were skipped, not followed.
    r = cli("build", hostile_site.corpus, "--out", hostile_site.site, "--no-embed")
    assert r.exit_code == 0, r
    assert "symlink" in r.stderr


def test_no_executable_script_in_any_page(hostile_site: Env) -> None:
    pages = list(hostile_site.site.rglob("*.html"))
    assert len(pages) > len(hc.XSS), "the hostile documents were not all built"
    problems = _site_problems(hostile_site.site)
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:3000]


def test_every_hostile_document_has_its_page(hostile_site: Env) -> None:
    from commonplace.compiler.model import page_url

    for cid, _ in hc.XSS:
        assert (hostile_site.site / page_url(f"xss/{cid}.md")).is_file(), cid
    for cid, rel in hc.XSS_PATHS:
        assert (hostile_site.site / page_url(rel)).is_file(), cid


def test_search_data_cannot_break_out_of_its_script(hostile_site: Env) -> None:
    shards = sorted((hostile_site.site / "_" / "search-data").glob("*.js"))
    assert shards
    total = 0
    for shard in shards:
        payload, problems = search_data_payload(shard.read_bytes())
        assert not problems, (shard.name, problems)
        total += len(json.loads(payload).get("pages", ()))  # text shards: the pages in them
    assert total >= len(hc.XSS)
    node = shutil.which("node")
    if node is None:
        return  # the structural check above already holds; node adds an execution check
    script = r"""
const vm = require('vm'); const fs = require('fs');
const calls = []; let pages = 0;
const data = {meta: (x) => 0, terms: (x) => 0, text: (x) => { pages += x.pages.length; }};
const sandbox = {window: {}, CommonplaceData: data, alert: (x) => calls.push(x), console: {log: (x) => calls.push(x)}};
sandbox.self = sandbox.window;
vm.createContext(sandbox);
for (const f of process.argv.slice(1)) { vm.runInContext(fs.readFileSync(f, 'utf8'), sandbox, {filename: f}); }
const keys = Object.keys(sandbox).sort().join(',');
const wkeys = Object.keys(sandbox.window).sort().join(',');
console.log(JSON.stringify({calls, keys, wkeys, docs: pages}));
"""
    r = subprocess.run([node, "-e", script, *map(str, shards)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["calls"] == [], f"search data ran code: {out['calls']}"
    assert out["keys"] == "CommonplaceData,alert,console,self,window" and out["wkeys"] == "", out
    assert out["docs"] == total


def test_feed_sitemap_and_graph_are_well_formed_and_safe(hostile_site: Env) -> None:
    site = hostile_site.site
    feed = ET.parse(site / "feed.xml").getroot()
    for el in feed.iter():
        href = el.attrib.get("href")
        if href is not None:
            assert not dangerous_url(href), f"feed link {href!r}"
    sitemap = ET.parse(site / "sitemap.xml").getroot()
    for loc in sitemap.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc"):
        assert not dangerous_url(loc.text or ""), f"sitemap loc {loc.text!r}"
    graph = json.loads((site / "graph.json").read_text("utf-8"))
    assert {"nodes", "edges", "broken"} <= set(graph)


def test_no_secret_reaches_the_site(hostile_site: Env) -> None:
    for p in hostile_site.site.rglob("*"):
        if p.is_file():
            text = p.read_bytes().decode("utf-8", "replace")
            for secret in (OUTSIDE_SECRET, GIT_SECRET, PASSWD_MARK, hostile_site.token):
                assert secret not in text, f"{secret} in {p}"
            assert str(hostile_site.base) not in text, f"absolute path in {p}"


def test_hostile_pages_served_with_a_strict_csp(hostile_site: Env) -> None:
    from commonplace.compiler.live.corpus import LiveCorpus
    from commonplace.server import ServerConfig, create_app

    live = LiveCorpus(hostile_site.corpus, hostile_site.site, embed=False)
    live.open()
    try:
        app = create_app(live, ServerConfig(corpus=hostile_site.corpus, out=hostile_site.site))
        client = app.test_client()
        for url in ("/", "/xss/script-tag/", "/xss/fm-title/", "/_/search/", "/_/tags/"):
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code)
            csp = r.headers.get("Content-Security-Policy", "")
            assert "script-src 'self'" in csp and "object-src 'none'" in csp and "base-uri 'none'" in csp, csp
            assert not html_problems(r.get_data(as_text=True)), url
    finally:
        live.close()


# --------------------------------------------------------------------------- over HTTP

HTTP_XSS = [(cid, f"inbox/xss-{cid}.md", content) for cid, content in hc.XSS] + \
           [(cid, rel, "---\npinned: true\n---\n# hostile path\n") for cid, rel in hc.XSS_PATHS]


@pytest.mark.parametrize("cid,target,content", HTTP_XSS, ids=[c[0] for c in HTTP_XSS])
def test_xss_written_over_http_renders_inert(cid: str, target: str, content: str, env: Env, client) -> None:
    t0 = time.time_ns() - 2_000_000_000  # filesystem timestamps may be coarse
    r = client.post("/v1/write", json={"kind": "create", "target": target, "content": content,
                                       "frontmatter": {"title": "XSS", "type": "capture"}}, headers=env.auth)
    if r.status_code == 400 and cid.startswith("fm-"):
        # Dory's schema refuses a hostile status, date or flag at the door: nothing is written.
        data = check_response(r, env, 400, cid)
        assert data["detail"]["code"] == "dory_validation_error" and not (env.corpus / target).exists(), data
        return
    data = check_response(r, env, 200, cid)
    assert data["indexed"] is True, data
    from commonplace.compiler.model import page_url

    page = env.site / page_url(data["path"])
    assert page.is_file(), page
    assert page.stat().st_mtime_ns >= t0
    problems = _site_problems(env.site, since_ns=t0)  # every page the write touched
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:2000]
    g = client.get("/v1/get", query_string={"path": data["path"], "debug": "true"})
    check_response(g, env, 200, f"get {cid}")


def test_whole_live_site_stays_clean(env: Env, client) -> None:
    """After the writes above (same module, same live corpus): every page, the search data
    and the feed of the live-built site are still clean."""
    problems = _site_problems(env.site)
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:2000]
    for shard in (env.site / "_" / "search-data").glob("*.js"):
        _, probs = search_data_payload(shard.read_bytes())
        assert not probs, (shard.name, probs)
    feed = ET.parse(env.site / "feed.xml").getroot()
    assert not [el.attrib["href"] for el in feed.iter() if dangerous_url(el.attrib.get("href", ""))]
