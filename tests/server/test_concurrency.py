"""8 threads x 50 writes through the API lose nothing (same file and different files)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from commonplace.compiler.markdown import frontmatter as fm

THREADS = 8
WRITES = 50


def _run(app, job) -> list[str]:
    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def worker(t: int) -> None:
        c = app.test_client()
        start.wait()
        for i in range(WRITES):
            r = c.post("/v1/write", json=job(t, i))
            if r.status_code != 200:
                errors.append(f"{t}/{i}: {r.status_code} {r.get_data(as_text=True)[:200]}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def test_appends_to_one_file(make_app, corpus: Path, live) -> None:
    app = make_app(no_auth=True)
    errors = _run(app, lambda t, i: {"kind": "append", "target": "logs/daily/2025-07-01.md",
                                     "content": f"- entry t{t}-i{i} marker{t}x{i}",
                                     "frontmatter": {"title": "2025-07-01", "type": "daily", "tags": [f"t{t}"]}})
    assert errors == []
    text = (corpus / "logs/daily/2025-07-01.md").read_text()
    raw, body, _ = fm.split(text)
    meta = fm.load(raw)  # well-formed
    assert sorted(meta["tags"]) == sorted(f"t{t}" for t in range(THREADS))
    entries = re.findall(r"^- entry (t\d+-i\d+) ", body, re.M)
    assert len(entries) == THREADS * WRITES
    assert len(set(entries)) == THREADS * WRITES  # each exactly once
    # per thread, order is preserved
    for t in range(THREADS):
        mine = [e for e in entries if e.startswith(f"t{t}-")]
        assert mine == [f"t{t}-i{i}" for i in range(WRITES)]
    # the live view and search agree with the disk
    assert live.docs["logs/daily/2025-07-01.md"].text == text
    c = app.test_client()
    for t in range(THREADS):
        hits = c.post("/v1/search", json={"query": f"marker{t}x{WRITES - 1}", "mode": "bm25"}).get_json()["results"]
        assert any(h["path"] == "logs/daily/2025-07-01.md" for h in hits)


def test_writes_to_many_files(make_app, corpus: Path, live) -> None:
    app = make_app(no_auth=True)
    errors = _run(app, lambda t, i: {"kind": "create", "target": f"notes/c{t}/n{i}.md",
                                     "content": f"# Note {t} {i}\n\nunique{t}y{i} [[Alex]]\n",
                                     "frontmatter": {"title": f"Note {t} {i}", "type": "note"}})
    assert errors == []
    for t in range(THREADS):
        for i in range(WRITES):
            p = corpus / f"notes/c{t}/n{i}.md"
            assert p.read_text().endswith(f"---\n\n# Note {t} {i}\n\nunique{t}y{i} [[Alex]]\n")
            assert f"notes/c{t}/n{i}.md" in live.docs
    # (A background BM25 merge may be building in its scratch folder: not a write's leftover.)
    assert not [p for p in corpus.rglob("*.tmp") if not any(part.startswith(".merge-") for part in p.parts)]
    c = app.test_client()
    back = c.post("/v1/link", json={"op": "backlinks", "path": "people/alex.md", "max_edges": 500}).get_json()
    assert back["total_count"] >= THREADS * WRITES
    hits = c.post("/v1/search", json={"query": f"unique{THREADS - 1}y{WRITES - 1}", "mode": "bm25"}).get_json()
    assert hits["results"][0]["path"] == f"notes/c{THREADS - 1}/n{WRITES - 1}.md"


def test_replace_races_lose_no_update(make_app, corpus: Path) -> None:
    """Compare-and-swap through expected_hash: every successful replace saw the latest bytes."""
    app = make_app(no_auth=True)
    c = app.test_client()
    c.post("/v1/write", json={"kind": "create", "target": "notes/counter.md", "content": "0",
                              "frontmatter": {"title": "Counter", "type": "note"}})
    done = []
    lock = threading.Lock()

    def worker() -> None:
        cl = app.test_client()
        n_ok = 0
        while n_ok < 10:
            g = cl.get("/v1/get?path=notes/counter.md&debug=1").get_json()
            value = int(g["content"].strip().splitlines()[-1])
            r = cl.post("/v1/write", json={"kind": "replace", "target": "notes/counter.md",
                                           "content": str(value + 1), "expected_hash": g["hash"]})
            if r.status_code == 200:
                n_ok += 1
            else:
                assert r.status_code == 400 and r.get_json()["error"]["code"] == "hash_mismatch"
        with lock:
            done.append(n_ok)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert int((corpus / "notes/counter.md").read_text().strip().splitlines()[-1]) == sum(done) == 40
