"""End to end over HTTP: `commonplace serve` (waitress) with the real embedding model.

Run with `pytest -m e2e tests/server/test_e2e.py`. One server for the module; the steps
run in order (create, search every mode, get, replace, append, forget, memory-write,
wake, link) against a small corpus.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from srvkit import CORPUS, write_files

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FACT = "The quokka colony on Rottnest Island is counted every March by volunteers."
PARAPHRASE = "when do volunteers survey the small marsupials on the island"


class Http:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, auth: bool = True) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                raw = r.read()
                ctype = r.headers.get("Content-Type", "")
                return r.status, json.loads(raw) if "json" in ctype else raw.decode()
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def post(self, path: str, body: dict[str, Any], **kw: Any) -> tuple[int, Any]:
        return self.call("POST", path, body, **kw)

    def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return self.call("GET", path, None, **kw)

    def search(self, query: str, mode: str, **kw: Any) -> list[dict[str, Any]]:
        status, body = self.post("/v1/search", {"query": query, "mode": mode, **kw})
        assert status == 200, body
        assert set(body) >= {"query", "count", "results", "took_ms", "warnings"}
        return body["results"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("e2e")
    root = write_files(base / "corpus", CORPUS)
    token = TokenStore(root).create("e2e")
    env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from commonplace.server.cli import main; main()", "serve", str(root),
         "--out", str(base / "site"), "--port", "0", "--loopback-reads"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://[\d.]+:\d+", line)
    assert m, line
    url = m.group(0)
    from readiness import wait_healthy

    wait_healthy(url, proc, 300, said=proc.stdout.read)
    yield Http(url, token), root
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out


def test_ready_before_vectors_then_model_loaded(server) -> None:
    http, _ = server
    status, body = http.get("/v1/status")
    assert status == 200 and body["ready"] is True
    # Ready once the site and BM25 are (issue 32): the vectors fill in behind, with the model.
    t0 = time.time()
    while not (body["vectors"] and body["vectors"] == body["chunks"]):
        assert time.time() - t0 < 300, body
        time.sleep(0.5)
        body = http.get("/v1/status")[1]
    assert body["model"] and body["dimensions"] == 384, body


def test_create_search_every_mode(server) -> None:
    http, root = server
    status, body = http.post("/v1/write", {"kind": "create", "target": "notes/quokkas.md",
                                           "content": f"# Quokka census\n\n{FACT}\n\nSee [[Alex]].\n",
                                           "frontmatter": {"title": "Quokka census", "type": "note"}})
    assert status == 200 and body["indexed"] is True and body["edges_added"] == 1, body
    for mode in ("bm25", "hybrid", "exact", "vector"):
        query = {"bm25": "quokka census Rottnest", "hybrid": "quokka colony counted",
                 "exact": "counted every March", "vector": PARAPHRASE}[mode]
        hits = http.search(query, mode, k=5)
        assert any(h["path"] == "notes/quokkas.md" for h in hits), (mode, hits)
        top = next(h for h in hits if h["path"] == "notes/quokkas.md")
        assert re.fullmatch(r"\d+-\d+", top["lines"]) and top["title"] == "Quokka census"


def test_get_slices_and_hash(server) -> None:
    http, root = server
    n = (root / "notes/quokkas.md").read_text().splitlines().index(FACT) + 1
    status, body = http.get(f"/v1/get?path=notes/quokkas.md&from={n}&lines=1&debug=true")
    assert status == 200
    assert body["content"] == FACT + "\n" and body["from"] == n and body["lines_returned"] == 1
    import hashlib

    assert body["hash"] == "sha256:" + hashlib.sha256((root / "notes/quokkas.md").read_bytes()).hexdigest()


def test_replace_append_forget(server) -> None:
    http, root = server
    _, g = http.get("/v1/get?path=notes/quokkas.md&debug=1")
    status, body = http.post("/v1/write", {"kind": "replace", "target": "notes/quokkas.md",
                                           "content": "# Quokka census\n\nMoved to April.\n",
                                           "expected_hash": "sha256:" + "1" * 64})
    assert status == 400 and body["error"]["code"] == "hash_mismatch"
    status, body = http.post("/v1/write", {"kind": "replace", "target": "notes/quokkas.md",
                                           "content": "# Quokka census\n\nThe census moved to April.\n",
                                           "expected_hash": g["hash"]})
    assert status == 200 and body["action"] == "replaced"
    assert not any(h["path"] == "notes/quokkas.md" for h in http.search("counted every March", "exact"))
    assert any(h["path"] == "notes/quokkas.md" for h in http.search("census moved to April", "bm25"))
    status, body = http.post("/v1/write", {"kind": "append", "target": "notes/quokkas.md",
                                           "content": "Volunteers bring zircon clipboards."})
    assert status == 200 and body["action"] == "appended"
    assert any(h["path"] == "notes/quokkas.md" for h in http.search("zircon clipboards", "hybrid"))
    status, body = http.post("/v1/write", {"kind": "forget", "target": "notes/quokkas.md",
                                           "expected_hash": body["hash"], "reason": "e2e test"})
    assert status == 200 and body["action"] == "forgotten"  # Dory: kept, superseded by a tombstone
    assert (root / "notes/quokkas.tombstone.md").exists()
    # Erasing is purge: the file goes, and its text leaves every index and the site.
    _, g = http.get("/v1/get?path=notes/quokkas.md&debug=1")
    status, body = http.post("/v1/purge", {"target": "notes/quokkas.md", "dry_run": False, "reason": "e2e test",
                                           "expected_hash": g["hash"], "allow_canonical": True,
                                           "include_related_tombstone": True})
    assert status == 200 and body["action"] == "purged" and not (root / "notes/quokkas.md").exists(), body
    for mode in ("bm25", "exact", "hybrid"):
        hits = http.search("zircon clipboards", mode)
        assert not any("zircon" in (h.get("snippet") or "") for h in hits), (mode, hits)


def test_memory_write_changes_page_and_search(server) -> None:
    http, root = server
    status, body = http.post("/v1/memory-write", {"action": "write", "subject": "Alex", "kind": "preference",
                                                  "content": "Alex prefers walnut standing desks.",
                                                  "allow_canonical": True})
    assert status == 200 and body["result"] == "written" and body["indexed"] is True, body
    status, g = http.get("/v1/get?path=people/alex.md")
    assert "walnut standing desks" in g["content"]
    hits = http.search("walnut standing desk", "hybrid")
    assert hits and hits[0]["path"] in ("people/alex.md", body["evidence_path"]), hits
    status, page = http.get("/people/alex/")
    assert "walnut standing desks" in page


def test_wake_within_budget(server) -> None:
    from commonplace.compiler.context.wake import estimate_tokens

    http, _ = server
    for budget in (120, 800):
        status, body = http.post("/v1/wake", {"agent": "e2e", "budget_tokens": budget, "project": "atlas"})
        assert status == 200 and estimate_tokens(body["block"]) <= budget


def test_link_ops(server) -> None:
    http, _ = server
    status, body = http.post("/v1/link", {"op": "neighbors", "path": "people/alex.md", "depth": 2})
    assert status == 200 and body["count"] >= 2
    status, body = http.post("/v1/link", {"op": "backlinks", "path": "Alex"})
    assert status == 200 and {"core/rules.md", "notes/links.md"} <= {e["from"] for e in body["edges"]}
    status, body = http.post("/v1/link", {"op": "lint"})
    assert status == 200 and any(b["to"] == "missing page" for b in body["broken"])


def test_writes_need_the_token(server) -> None:
    http, root = server
    status, body = http.post("/v1/write", {"target": "inbox/x.md", "content": "x"}, auth=False)
    assert status == 401 and not (root / "inbox/x.md").exists()


def test_active_memory_made_up_words_are_not_memory(server) -> None:
    """A prompt none of whose words are in memory ("flibber quantum marmalade ...") has
    neighbours by meaning all the same; they were handed over as `## Active memory` with
    confidence low and no warning (a strong match by meaning alone still answers:
    tests/server/test_context_updates_live.py)."""
    http, _ = server
    status, body = http.post("/v1/active-memory", {"prompt": "flibber quantum marmalade zebra oscillates purple",
                                                   "agent": "e2e", "include_wake": False, "debug": True})
    assert status == 200, body
    assert body["block"] == "" and body["confidence"] is None, body
    assert any(w.startswith("nothing matched the prompt") for w in body.get("warnings", [])), body
    assert not any("min_score" in w for w in body["warnings"]), body  # a search's advice; active memory has none
    status, body = http.post("/v1/active-memory", {"prompt": "how do I cook a mushroom risotto?", "agent": "e2e",
                                                   "include_wake": False, "debug": True})
    assert status == 200 and body["block"] == "", body


def test_research_on_made_up_words_saves_nothing(server) -> None:
    """Research saved a report of the nearest pages by meaning for a question nothing in
    memory answers; saved, it then ranked for real queries."""
    http, root = server
    status, body = http.post("/v1/research", {"question": "What is the airspeed velocity of an unladen swallow?",
                                              "save": True})
    assert status == 200 and body["artifact"] is None, body
    assert body["research"]["sources"] == [] and "No grounded findings" in body["research"]["artifact"]["body"]
    assert any("nothing was saved" in w for w in body["warnings"]), body
    assert not (root / "references/reports").exists() or not any((root / "references/reports").iterdir())
