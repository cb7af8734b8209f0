"""`commonplace search` / `status`, the build's index stage, and the server client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from searchkit import doc

FILES = {
    "notes/a.md": doc("Alpha", "The replica fell behind during the vacuum job; see svc-auth-v2.\n"),
    "people/b.md": doc("Bea", "Bea owns the billing pipeline.\n", canonical="true"),
    "logs/sessions/2024/01/s.md": doc("Session", "billing pipeline transcript\n"),
}


@pytest.fixture
def built(write_corpus, cli, fake_embedder, tmp_path):
    root = write_corpus(FILES)
    res = cli("build", root, "--out", tmp_path / "site", "--json")
    assert res.exit_code == 0, res.output
    return root, json.loads(res.output)


def test_build_reports_index_counters(built, fake_embedder):
    _root, summary = built
    extra = summary["extra"]
    assert extra["chunks"] == 3 and extra["vectors"] == 3 and extra["chunks_embedded"] == 3
    assert extra["embeddings_pending"] == 0
    assert "index" in summary["stages"]


def test_rebuild_via_cli_embeds_nothing(built, cli, fake_embedder, tmp_path):
    root, _ = built
    calls = fake_embedder.calls
    res = cli("build", root, "--out", tmp_path / "site", "--json")
    assert json.loads(res.output)["extra"]["chunks_embedded"] == 0
    assert fake_embedder.calls == calls


def test_search_json_is_the_http_shape(built, cli):
    root, _ = built
    res = cli("search", "-C", root, "--mode", "bm25", "--json", "--local", "billing", "pipeline")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"query", "count", "results", "took_ms", "warnings"}
    assert data["query"] == "billing pipeline"
    assert [r["path"] for r in data["results"]] == ["people/b.md"]
    assert "**billing**" in data["results"][0]["snippet"]


def test_search_options(built, cli):
    root, _ = built
    res = cli("search", "-C", root, "--json", "--local", "--corpus-kind", "sessions", "--mode", "keyword", "billing")
    assert [r["path"] for r in json.loads(res.output)["results"]] == ["logs/sessions/2024/01/s.md"]
    res = cli("search", "-C", root, "--json", "--local", "--type", "person", "--mode", "exact", "billing")
    assert [r["path"] for r in json.loads(res.output)["results"]] == ["people/b.md"]
    res = cli("search", "-C", root, "--json", "--local", "--path-glob", "notes/*", "--mode", "hybrid", "vacuum")
    assert [r["path"] for r in json.loads(res.output)["results"]] == ["notes/a.md"]
    res = cli("search", "-C", root, "--local", "--mode", "bm25", "vacuum job")
    assert res.exit_code == 0 and "notes/a.md:" in res.output and "Alpha" in res.output


def test_search_without_an_index_exits_1(write_corpus, cli):
    root = write_corpus({"a.md": "# A\n"})
    res = cli("search", "-C", root, "--local", "anything")
    assert res.exit_code == 1 and "commonplace build" in res.output


def test_status_json(built, cli):
    root, _ = built
    data = json.loads(cli("status", "-C", root, "--json").output)
    assert data["index"] is True
    assert data["documents"] == 3 and data["chunks"] == 3 and data["vectors"] == 3
    assert data["embedding"]["model"] == "all-MiniLM-L6-v2" and data["embedding"]["dimensions"] == 64
    precision, backend = data["embedding"]["machine_precision"].split()
    # int8+bf16 once a large build here calibrated the int8 layers (they stay in the model cache)
    assert precision in {"bf16", "fp32", "int8+bf16"} and backend in {"(openvino)", "(torch)"}
    assert data["pending"]["chunks"] == 0 and data["freshness"]["fresh"] is True
    (root / "notes/new.md").write_text("# New\n")
    data = json.loads(cli("status", "-C", root, "--json").output)
    assert data["freshness"] == {"fresh": False, "changed": 0, "added": 1, "removed": 0, "examples": ["notes/new.md"]}
    text = cli("status", "-C", root).output
    assert "Pending embeddings: 0 chunks" in text and "stale" in text


def _run(code: str, cwd: Path) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_bm25_search_and_help_never_import_torch(built):
    root, _ = built
    code = (
        "import sys\n"
        "from commonplace.server.cli import main\n"
        "for args in (['--help'], ['search', '--help'], ['status', '-C', {root!r}],\n"
        "             ['search', '-C', {root!r}, '--local', '--mode', 'bm25', 'billing'],\n"
        "             ['search', '-C', {root!r}, '--local', '--mode', 'exact', 'billing']):\n"
        "    try:\n"
        "        main(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('TORCH' if 'torch' in sys.modules or 'sentence_transformers' in sys.modules else 'CLEAN')\n"
    ).format(root=str(root))
    assert _run(code, root).strip().endswith("CLEAN")


class _FakeServer(BaseHTTPRequestHandler):
    answer = {"query": "from server", "count": 0, "results": [], "took_ms": 1.0, "warnings": ["served"]}
    seen: list = []

    def do_GET(self):  # noqa: N802
        body = b'{"ok": true}'
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802
        n = int(self.headers.get("Content-Length", 0))
        _FakeServer.seen.append(json.loads(self.rfile.read(n)))
        body = json.dumps(self.answer).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_search_asks_a_running_server(built, cli):
    root, _ = built
    srv = HTTPServer(("127.0.0.1", 0), _FakeServer)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        (root / ".commonplace" / "server.json").write_text(
            json.dumps({"url": f"http://127.0.0.1:{srv.server_port}", "pid": os.getpid()}))
        res = cli("search", "-C", root, "--json", "--mode", "vector", "billing")
        assert json.loads(res.output)["warnings"] == ["served"]
        assert _FakeServer.seen[-1]["query"] == "billing" and _FakeServer.seen[-1]["mode"] == "vector"
        # --local never asks
        res = cli("search", "-C", root, "--json", "--local", "--mode", "bm25", "billing")
        assert json.loads(res.output)["warnings"] == []
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_dead_server_is_ignored(built, cli):
    root, _ = built
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (root / ".commonplace" / "server.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": dead.pid}))
    res = cli("search", "-C", root, "--json", "--mode", "bm25", "billing")
    assert json.loads(res.output)["count"] == 1
    # alive pid but nothing listening: also local, quickly
    (root / ".commonplace" / "server.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid()}))
    res = cli("search", "-C", root, "--json", "--mode", "bm25", "billing")
    assert json.loads(res.output)["count"] == 1
