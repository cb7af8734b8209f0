"""Site first, vectors after: `commonplace build` says the site is ready before it embeds,
an interrupted embedding leaves a complete site and a working BM25 search, and the next
build embeds only what is missing; `commonplace serve` answers before the vectors exist.

The processes run with a stand-in embedder that can be held (tests/firstrun_site), so the
tests can stop a build, or look at a server, in the middle of its embedding.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from readiness import wait_healthy

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar "
         "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def make_corpus(root: Path, docs: int = 40, sections: int = 8) -> Path:
    """Documents with distinct sections (one chunk each, every text different), and a line
    under the title (a chunk of its own: headings over nothing are none)."""
    root.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        body = [f"# Note {d}\n\nNote {d} opens the part list.\n"]
        for s in range(sections):
            words = " ".join(f"{WORDS[(d * 7 + s * 3 + i) % len(WORDS)]}{(d * sections + s + i) % 97}"
                             for i in range(70))
            body.append(f"## Part {s}\n\nmarker{d}x{s} {words}.\n")
        (root / f"note-{d:03d}.md").write_text("\n".join(body), encoding="utf-8")
    return root


def env_for(hold: Path | None = None, free: int = 0, thread: str = "") -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(HERE / "firstrun_site"), PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")
    for name in ("COMMONPLACE_TEST_EMBED_HOLD", "COMMONPLACE_TEST_EMBED_FREE", "COMMONPLACE_TEST_EMBED_THREAD",
                 "COMMONPLACE_EMBED_MODEL", "COMMONPLACE_TEST_STANDIN_EMBEDDER"):
        env.pop(name, None)
    if hold is not None:
        env.update(COMMONPLACE_TEST_EMBED_HOLD=str(hold), COMMONPLACE_TEST_EMBED_FREE=str(free))
    if thread:
        env["COMMONPLACE_TEST_EMBED_THREAD"] = thread
    return env


def wait_for(predicate, timeout: float = 60, what: str = "") -> None:  # noqa: ANN001
    t0 = time.time()
    while time.time() - t0 < timeout:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def index_meta(root: Path) -> dict:
    gen = (root / ".commonplace" / "index" / "CURRENT").read_text().strip()
    return json.loads((root / ".commonplace" / "index" / gen / "meta.json").read_text())


def bm25_paths(root: Path, query: str) -> list[str]:
    """A BM25 search of what is on disk (no model involved)."""
    from commonplace.compiler.search.read.engine import SearchEngine

    engine = SearchEngine(root)
    try:
        return [h["path"] for h in engine.search({"query": query, "k": 5, "mode": "bm25"})["results"]]
    finally:
        getattr(engine, "close", lambda: None)()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["int", "term", "kill"])
def test_interrupted_embedding_leaves_site_and_bm25_and_the_rerun_embeds_only_the_rest(tmp_path, sig):
    root = make_corpus(tmp_path / "notes")
    out = tmp_path / "site"
    hold = tmp_path / "hold"
    hold.write_text("held")
    # SIGINT as a terminal sends it: a test runner's worker (pytest-xdist) may run with
    # SIGINT ignored, which a child inherits, and Python then leaves it ignored.
    proc = subprocess.Popen([*CLI, "build", str(root), "--out", str(out)], env=env_for(hold, free=1),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert re.match(r"Site ready in \d+\.\d s: .*index\.html \(search by words works; embedding 360 chunks next\)",
                    first), first
    # The first group of 256 is embedded (and cached); the second waits for the hold.
    wait_for(lambda: Path(str(hold) + ".waiting").exists(), what="the embedding to start")
    proc.send_signal(sig)
    try:
        rest, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # sitecustomize: every thread's stack to stderr
        time.sleep(1)
        proc.kill()
        rest, err = proc.communicate()
        pytest.fail(f"the build did not stop within 60 s of {sig.name}; its threads:\n{err[-6000:]}")
    assert proc.returncode == (-9 if sig == signal.SIGKILL else 130), (rest, err)
    if sig != signal.SIGKILL:
        assert "Embedding interrupted: the site and word search are complete" in err
    # The site is whole and the words are searchable; no vector is in the index yet.
    pages = sorted(out.glob("note-*/index.html"))
    assert len(pages) == 40 and (out / "index.html").exists()
    assert "Note 17" in (out / "note-017" / "index.html").read_text(encoding="utf-8")
    assert bm25_paths(root, "marker17x5") == ["note-017.md"]
    meta = index_meta(root)
    assert (meta["chunks"], meta["vectors"]) == (360, 0)

    hold.unlink()
    again = subprocess.run([*CLI, "build", str(root), "--out", str(out), "--json"], env=env_for(),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)["extra"]
    # The 256 vectors made before the interruption came from the cache.
    assert result["chunks_embedded"] == 360 - 256
    assert result["embeddings_pending"] == 0
    meta = index_meta(root)
    assert meta["chunks"] == meta["vectors"] == 360
    assert bm25_paths(root, "marker17x5") == ["note-017.md"]


def test_site_ready_line_comes_before_the_embedding_and_only_when_there_is_some(tmp_path):
    root = make_corpus(tmp_path / "notes", docs=3, sections=2)
    out = tmp_path / "site"
    first = subprocess.run([*CLI, "build", str(root), "--out", str(out)], env=env_for(), capture_output=True,
                           text=True, timeout=120)
    lines = first.stdout.splitlines()
    assert lines[0].startswith("Site ready in ") and "embedding 9 chunks next" in lines[0], lines
    assert lines[1].startswith("Built 3 documents") and "9 chunks embedded" in lines[1], lines
    second = subprocess.run([*CLI, "build", str(root), "--out", str(out)], env=env_for(), capture_output=True,
                            text=True, timeout=120)
    # Nothing to embed: the summary at once, no site ready line.
    assert second.stdout.splitlines()[0].startswith("Nothing changed"), second.stdout
    no_embed = subprocess.run([*CLI, "build", str(root), "--out", str(tmp_path / "site2"), "--no-embed"],
                              env=env_for(), capture_output=True, text=True, timeout=120)
    assert no_embed.stdout.splitlines()[0].startswith("Built 3 documents"), no_embed.stdout


class Serve:
    """`commonplace serve` with embeddings on (the stand-in), on a free port, no auth."""

    def __init__(self, root: Path, out: Path, env: dict[str, str]):
        self.proc = subprocess.Popen([*CLI, "serve", str(root), "--out", str(out), "--port", "0", "--no-auth"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)", line)
        assert m, line
        self.port = int(m.group(1))
        wait_healthy(m.group(0), self.proc, 120, said=self.proc.stdout.read)

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            r = conn.getresponse()
            raw = r.read()
            return r.status, (json.loads(raw) if raw.startswith(b"{") else {})
        finally:
            conn.close()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, out
        return out


def test_server_answers_hybrid_before_vectors_then_without_the_warning(tmp_path):
    root = make_corpus(tmp_path / "notes", docs=20, sections=4)
    hold = tmp_path / "hold"
    hold.write_text("held")
    server = Serve(root, tmp_path / "site", env_for(hold, thread="commonplace-vector-fill"))
    try:
        status, body = server.call("POST", "/v1/search", {"query": "marker7x2", "mode": "hybrid", "k": 3})
        assert status == 200, body
        assert body["results"][0]["path"] == "note-007.md"
        assert any("100 of 100 chunks" in w and "not embedded yet" in w for w in body["warnings"]), body["warnings"]
        status, st = server.call("GET", "/v1/status")
        assert (st["chunks_indexed"], st["vectors_indexed"]) == (100, 0), st
        # A write while the backlog waits: it lands (and embeds its own chunk) at once.
        t0 = time.time()
        status, wrote = server.call("POST", "/v1/write", {"target": "references/notes/new.md", "kind": "create",
                                                          "content": "zebracrossing appears here.\n",
                                                          "frontmatter": {"title": "New", "type": "note"}})
        assert status == 200, wrote
        assert wrote["indexed"] is True and time.time() - t0 < 20, wrote
        status, body = server.call("POST", "/v1/search", {"query": "zebracrossing", "mode": "vector", "k": 1})
        assert body["results"][0]["path"] == "references/notes/new.md", body
        status, st = server.call("GET", "/v1/status")
        assert (st["chunks_indexed"], st["vectors_indexed"]) == (101, 1), st
        # Let the filler go: every chunk gets its vector, and the warning goes away.
        hold.unlink()
        wait_for(lambda: server.call("GET", "/v1/status")[1].get("vectors_indexed") == 101, what="all vectors")
        status, body = server.call("POST", "/v1/search", {"query": "marker7x2", "mode": "hybrid", "k": 3})
        assert body["results"][0]["path"] == "note-007.md"
        assert not any("not embedded yet" in w for w in body["warnings"]), body["warnings"]
    finally:
        server.stop()
