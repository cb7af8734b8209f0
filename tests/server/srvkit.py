"""Helpers shared by the server tests (a small corpus, a live corpus, a stand-in search).

Imported by conftest.py and by tests that need them outside fixtures. The live corpus is
the compiler's `LiveCorpus` with `embed=False`; when it cannot search yet (no `search`
method, or no index), a plain word-matching search with the same answer shape stands in,
so these tests check the server, not the search engine.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Callable

from team_corpus import CORPUS, write_files  # noqa: E402,F401 - re-exported for the server tests


def tree_files(root: Path, skip: tuple[str, ...] = (".commonplace", "site")) -> list[Path]:
    """Every file under root, sorted, without descending into any folder named in `skip`.

    A running server removes old index generations under .commonplace at any moment, so a
    walk that entered it (Path.rglob) could fail on a folder deleted mid-walk.
    """
    out = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        out.extend(Path(here) / f for f in files)
    return sorted(out)


_WORD = re.compile(r"\w+")


def naive_search(docs: dict[str, Any], query: str = "", k: int = 10, mode: str = "hybrid",
                 corpus: str = "durable", debug: bool = False, **_: Any) -> dict[str, Any]:
    """Word-overlap search over the live snapshot, in the /v1/search answer shape."""
    t0 = time.perf_counter()
    modes = {"hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"}
    if mode not in modes:
        raise ValueError(f"unknown mode {mode!r}")
    k = min(max(int(k), 1), 50)
    terms = {t.lower() for t in _WORD.findall(query)}
    scored = []
    for d in docs.values():
        if corpus == "durable" and d.is_session or corpus == "sessions" and not d.is_session:
            continue
        if mode == "exact":
            score = float(query.lower() in d.text.lower()) if query.strip() else 0.0
        else:
            words = {t.lower() for t in _WORD.findall(d.text)}
            score = float(len(terms & words))
        if score > 0:
            scored.append((score, d))
    scored.sort(key=lambda x: (-x[0], x[1].path))
    results = []
    for score, d in scored[:k]:
        n = d.text.count("\n") + 1
        r = {"path": d.path, "lines": f"1-{n}", "title": d.title, "snippet": d.body.strip()[:160],
             "evidence_class": "note", "confidence": None, "stale_warning": None, "score": score}
        if debug:
            r["frontmatter"] = d.frontmatter
        results.append(r)
    return {"query": query, "count": len(results), "results": results,
            "took_ms": round((time.perf_counter() - t0) * 1000, 2), "warnings": []}


def open_live(root: Path, out: Path, embed: bool = False, real_search: bool = True) -> Any:
    """A LiveCorpus (embed=False: BM25 index only). With `real_search=False`, or when the
    real search cannot answer, the word-overlap stand-in answers instead (and no index is
    kept, which makes writes much cheaper)."""
    from commonplace.compiler.live.corpus import LiveCorpus

    live = LiveCorpus(root, out, embed=embed, index=real_search)
    live.open()
    if not real_search or not _can_search(live):
        live.search = lambda request=None, **kw: naive_search(live.docs, **{**(request or {}), **kw})  # type: ignore[method-assign]
    return live


def _can_search(live: Any) -> bool:
    try:
        live.search({"query": "probe", "k": 1})
        return True
    except Exception:  # noqa: BLE001 - no index yet: use the stand-in
        return False


def post_ok(srv: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST `body` to a live `dorylive.Server` with its `token`; the answer must be 200."""
    r = srv.request("POST", path, body, token=srv.token)
    assert r.status == 200, r.text
    return r.json()


def restarted(base: Path, files: dict[str, str], setup: Callable[[Any], Any] | None = None) -> Any:
    """A live `commonplace serve` over `files` (written to `base/corpus`), restarted over an
    existing build, the way a server runs after its first day: a first server builds and
    runs `setup(first)` (writes, ingests; `first.token` is set), then stops, and the one
    returned starts over the same build, with `.token` and `.before` (what `setup` returned)."""
    from dorylive import Server

    from commonplace.server.tokens import TokenStore

    root = write_files(base / "corpus", files)
    token = TokenStore(root).create("test")
    first = Server(root, base / "site").start()
    first.token = token
    try:
        before = setup(first) if setup is not None else None
    finally:
        first.stop()
    server = Server(root, base / "site").start()
    server.token = token
    server.before = before
    return server


def started(base: Path, files: dict[str, str]) -> Any:
    """A live `commonplace serve` over `files` (written to `base/corpus`), first built by
    the server itself, with a token in `.token`."""
    from dorylive import Server

    from commonplace.server.tokens import TokenStore

    root = write_files(base / "corpus", files)
    server = Server(root, base / "site").start()
    server.token = TokenStore(root).create("test")
    return server
