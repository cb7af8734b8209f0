"""Issue 30 #5: derived state under `.commonplace/` that cannot be read is discarded and
rebuilt, with a warning on stderr and in `/v1/status`, never a reason not to start; and
`build` never tracebacks on it. Each corruption is planted in a copy of a built corpus,
then `serve` (a real server) must open, answer a search that finds the corpus's words,
and say what it rebuilt; `build` must finish."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from livekit import Server
from readiness import wait_healthy

from dorylive import CLI

NOTES = {f"notes/n{i}.md": f"---\ntitle: Note {i}\n---\n# Note {i}\n\nThe okapi number {i} lives in the ledger.\n"
         for i in range(1, 7)}


def _gen(c: Path) -> Path:
    idx = c / ".commonplace" / "index"
    return idx / (idx / "CURRENT").read_text().strip()


def _truncate(p: Path, keep: float = 0.5) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: int(len(data) * keep)])


def _gone_module(toc: Path) -> None:
    """The pickled schema in a Whoosh table of contents names our tokenizer's module by
    path; here a module that does not exist (same length, so the pickle's length prefix
    holds): the file opens, and unpickling the schema fails with ModuleNotFoundError."""
    data = toc.read_bytes()
    assert BM25_MODULE in data, "the TOC names the schema's module"
    toc.write_bytes(data.replace(BM25_MODULE, GONE_MODULE))


BM25_MODULE = b"commonplace.compiler.search.store.bm25"
GONE_MODULE = b"commonplace.compiler.search.store.gone"


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "meta-garbage": lambda c: (_gen(c) / "meta.json").write_text("{not json"),
    "meta-empty": lambda c: (_gen(c) / "meta.json").write_text(""),
    "meta-not-an-object": lambda c: (_gen(c) / "meta.json").write_text("[1, 2]"),
    "table-truncated": lambda c: _truncate(_gen(c) / "table.sqlite"),
    "table-garbage": lambda c: (_gen(c) / "table.sqlite").write_bytes(b"garbage" * 200),
    "delta-garbage": lambda c: (_gen(c) / "delta.sqlite").write_bytes(b"garbage" * 200),
    "whoosh-segment-truncated": lambda c: _truncate(sorted((_gen(c) / "whoosh").glob("*.trm"))[0]),
    "whoosh-toc-truncated": lambda c: _truncate(sorted((_gen(c) / "whoosh").glob("*.toc"))[0]),
    "whoosh-toc-gone-module": lambda c: _gone_module(sorted((_gen(c) / "whoosh").glob("*.toc"))[0]),
}
EMBED_CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "vectors-truncated": lambda c: _truncate(_gen(c) / "vectors.hnsw"),
    "vectors-empty": lambda c: _truncate(_gen(c) / "vectors.hnsw", 0),
}


def _built(base: Path, embed: bool) -> Path:
    tmpl = base / ("tmpl-embed" if embed else "tmpl")
    if not tmpl.exists():
        for rel, text in NOTES.items():
            (tmpl / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmpl / rel).write_text(text)
        r = subprocess.run([*CLI, "build", str(tmpl), "--out", str(base / "tsite"), *([] if embed else ["--no-embed"])],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
    return tmpl


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


def _copy(base: Path, name: str, embed: bool, corrupt: Callable[[Path], None]) -> Path:
    c = base / name
    shutil.rmtree(c, ignore_errors=True)
    shutil.copytree(_built(base, embed), c, symlinks=True)
    corrupt(c)
    return c


def _serve_and_search(c: Path, site: Path, embed: bool) -> str:
    from commonplace.server.tokens import TokenStore

    token = TokenStore(c).create("state")
    server = Server(c, site).start() if not embed else _start_embed(c, site)
    try:
        r = server.request("POST", "/v1/search", {"query": "okapi ledger", "k": 3,
                                                  "mode": "hybrid" if embed else "bm25"}, token=token)
        assert r.status == 200, r.text
        assert r.json()["results"], r.text
        status = server.request("GET", "/v1/status", token=token).json()
        assert status["recovered"] and "rebuilt" in status["recovered"][0]["message"], status.get("recovered")
    finally:
        out = server.stop()
    assert "could not be read" in out and "Traceback" not in out, out[-2000:]
    return out


def _start_embed(c: Path, site: Path) -> Server:
    server = Server(c, site)
    server.flags = tuple(f for f in server.flags if f != "--no-embed")
    # dorylive always adds --no-embed; start it by hand with embeddings on.
    import re

    server.proc = subprocess.Popen([*CLI, "serve", str(c), "--out", str(site), "--port", "0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=server.env)
    line = server.proc.stdout.readline()
    m = re.search(r"http://[\d.]+:(\d+)", line)
    assert m, line
    server.url, server.port = m.group(0), int(m.group(1))
    wait_healthy(server.url, server.proc, 300, said=server.proc.stdout.read)
    return server


# The fast suite runs one corruption of each kind; `-m slow` runs them all.
FAST = {"meta-garbage", "delta-garbage", "whoosh-segment-truncated", "whoosh-toc-gone-module", "vectors-truncated"}


def _cases(names: list[str]) -> list:
    return [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", _cases(list(CORRUPTIONS)))
def test_serve_rebuilds_unreadable_index_state(name: str, base: Path) -> None:
    c = _copy(base, name, False, CORRUPTIONS[name])
    out = _serve_and_search(c, base / f"{name}-site", embed=False)
    if name == "whoosh-toc-gone-module":  # the warning says why, not only what failed
        assert "UnreadableSchema" in out and "written by another version" in out, out[-2000:]


def test_local_search_over_an_unreadable_index_says_how_to_rebuild_it(base: Path) -> None:
    """`search --local` has no server to rebuild the index: an index written by another
    version (its schema names a module this one lacks) is a clear error, not a
    traceback, and the build it names makes the same search work."""
    c = _copy(base, "gone-module-local", False, CORRUPTIONS["whoosh-toc-gone-module"])
    search = [*CLI, "search", "okapi ledger", "-C", str(c), "--local", "--json"]
    r = subprocess.run(search, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "written by another version" in r.stderr and "commonplace build" in r.stderr, r.stderr
    assert str(base) not in r.stderr  # no path of the machine's in the message
    r = subprocess.run([*CLI, "build", str(c), "--out", str(base / "gone-module-local-site"), "--no-embed"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "written by another version" in r.stderr, r.stderr[-2000:]
    r = subprocess.run(search, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "notes/n" in r.stdout, (r.stdout[-1000:], r.stderr[-1000:])


@pytest.mark.parametrize("name", _cases(list(CORRUPTIONS)))
def test_build_never_tracebacks_on_unreadable_index_state(name: str, base: Path) -> None:
    c = _copy(base, name + "-b", False, CORRUPTIONS[name])
    r = subprocess.run([*CLI, "build", str(c), "--out", str(base / f"{name}-bsite"), "--no-embed"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]


# Serve loads vectors after it is ready (issue 32), but it reads the HNSW file at open
# (`index_stage.warm_or_rebuild_vectors`): an unreadable one is rebuilt from the cache then.
@pytest.mark.parametrize("name", _cases(list(EMBED_CORRUPTIONS)))
def test_serve_rebuilds_unreadable_vectors(name: str, base: Path) -> None:
    c = _copy(base, name, True, EMBED_CORRUPTIONS[name])
    _serve_and_search(c, base / f"{name}-site", embed=True)


@pytest.mark.parametrize("how", ["garbage", pytest.param("truncated", marks=pytest.mark.slow)])
def test_unreadable_embedding_cache_is_started_again(how: str, base: Path) -> None:
    def corrupt(c: Path) -> None:
        cache = c / ".commonplace" / "cache" / "embeddings.sqlite"
        if how == "garbage":
            cache.write_bytes(b"x" * 5000)
        else:
            _truncate(cache, 0.6)
        (c / "notes" / "new.md").write_text("# New\n\nA new note about the pangolin ledger.\n")

    c = _copy(base, f"cache-{how}", True, corrupt)
    r = subprocess.run([*CLI, "build", str(c), "--out", str(base / f"cache-{how}-site")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    if how == "garbage":
        assert "embedding cache could not be read" in r.stderr, r.stderr[-2000:]
    r = subprocess.run([*CLI, "search", "pangolin ledger", "-C", str(c), "--local", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "notes/new.md" in r.stdout, (r.stdout[-1000:], r.stderr[-1000:])


def test_search_answers_from_bm25_when_the_hnsw_file_cannot_be_read(base: Path) -> None:
    """Without a server to rebuild it (`search --local`), an HNSW file found unreadable at
    its first load turns hybrid searches into BM25 ones, with a warning, not a failure."""
    from commonplace.compiler.search.read.engine import SearchEngine
    from commonplace.compiler.search.store.recover import recovered

    c = _copy(base, "vectors-first-load", True, EMBED_CORRUPTIONS["vectors-truncated"])
    engine = SearchEngine(c)
    try:
        r = engine.search({"query": "okapi ledger", "k": 3, "mode": "hybrid"})
    finally:
        engine.close()
    assert r["results"] and r["results"][0]["path"].startswith("notes/n"), r
    assert "the vector index could not be read; used bm25 only" in r["warnings"], r["warnings"]
    assert any(x["what"] == "the vector index" for x in recovered())
