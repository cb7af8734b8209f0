"""What a hybrid search says about a query of stop words, against a live `commonplace
serve` with its embedding model (real sockets, the model that ships with the package):

- bm25 says "the query has no searchable words (only stop words or symbols)"; hybrid says
  the same about the words, and what it did about meaning: without `min_score` it leaves
  meaning out (a query of function words has nothing to mean: its neighbours are noise)
  and says so, instead of "nothing matched the query well: N weak match(es) by meaning
  alone were left out";
- with `min_score` the matches by meaning alone are returned, said to be that, and a page
  with no text (an empty snippet: `notes/empty.md`, frontmatter only) never outranks a page
  with text; scores still follow the ranking.

A query with content words is untouched.
"""

from __future__ import annotations

import re
import subprocess
import time
from typing import Any

import pytest
from dorylive import CLI, Server
from srvkit import CORPUS, post_ok, write_files

STOP_WORDS = "the and of to is"
NO_WORDS = "the query has no searchable words (only stop words or symbols)"
LOADING = "the embedding model is still loading"
FILES = {
    **CORPUS,
    "notes/empty.md": "---\ntitle: Empty\n---\n",
    "notes/blank.md": "---\ntitle: Blank\ntype: note\n---\n\n",
    "notes/garden.md": "---\ntitle: Garden\n---\n# Garden\n\nThe tomatoes and the beans grow along the south wall.\n",
}


class EmbeddingServer(Server):
    """`dorylive.Server` with its embedding model (no `--no-embed`)."""

    def start(self, timeout: float = 180) -> "EmbeddingServer":
        from readiness import wait_healthy

        self.proc = subprocess.Popen([*CLI, "serve", str(self.corpus), "--out", str(self.out), "--port", "0",
                                      *self.flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=self.env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)", line)
        assert m, line + self.proc.stdout.read()
        self.url, self.port = m.group(0), int(m.group(1))
        wait_healthy(self.url, self.proc, timeout, said=self.proc.stdout.read)
        return self


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("search-warnings")
    root = write_files(base / "corpus", FILES)
    server = EmbeddingServer(root, base / "site", env={"TOKENIZERS_PARALLELISM": "false"}).start()
    server.token = TokenStore(root).create("test")
    deadline = time.time() + 180
    while True:  # the chunks are embedded behind the started server; until the query model
        # is loaded, hybrid answers by words alone
        status = server.request("GET", "/v1/status", token=server.token).json()
        d = post_ok(server, "/v1/search", {"query": "billing migration", "mode": "hybrid"})
        if status.get("vectors_indexed") == status.get("chunks_indexed") > 0 and not any(
                LOADING in w or "not embedded yet" in w for w in d["warnings"]):
            break
        assert time.time() < deadline, (status, d)
        time.sleep(0.3)
    yield server
    server.stop()


def _search(srv: Any, **body: Any) -> dict[str, Any]:
    return post_ok(srv, "/v1/search", {"query": STOP_WORDS, **body})


def test_bm25_says_the_query_has_no_searchable_words(srv: Any) -> None:
    d = _search(srv, mode="bm25")
    assert d["results"] == [] and NO_WORDS in d["warnings"], d


def test_hybrid_says_the_same_about_the_words_and_what_it_did_about_meaning(srv: Any) -> None:
    d = _search(srv, mode="hybrid")
    assert d["results"] == [] and d["count"] == 0, d
    assert NO_WORDS in d["warnings"], d  # what bm25 says, word for word
    meaning = [w for w in d["warnings"] if "meaning" in w]
    assert len(meaning) == 1 and "min_score" in meaning[0], d
    assert not any("nothing matched the query well" in w or "weak match" in w for w in d["warnings"]), d
    assert _search(srv)["warnings"] == d["warnings"]  # hybrid is the default mode


def test_hybrid_with_min_score_returns_meaning_matches_and_says_so(srv: Any) -> None:
    d = _search(srv, mode="hybrid", min_score=0, debug=True)
    assert d["results"], d
    assert NO_WORDS in d["warnings"], d
    assert any("meaning alone" in w for w in d["warnings"]), d
    assert all("bm25" not in r["ranks"] for r in d["results"]), d


@pytest.mark.parametrize("query", [STOP_WORDS, "billing"])
def test_an_empty_page_never_outranks_a_page_with_text(srv: Any, query: str) -> None:
    d = post_ok(srv, "/v1/search", {"query": query, "mode": "hybrid", "min_score": 0, "k": 20, "debug": True})
    snippets = [bool(r["snippet"].strip()) for r in d["results"]]
    assert any(snippets), d
    paths = [r["path"] for r in d["results"]]
    assert "notes/empty.md" in paths, paths  # still found (Dory returns it): only ranked last
    first_empty = snippets.index(False) if False in snippets else len(snippets)
    assert all(not s for s in snippets[first_empty:]), [(r["path"], r["snippet"][:20]) for r in d["results"]]
    for key in ("score", "score_normalized", "rank_score"):
        values = [r[key] for r in d["results"]]
        assert values == sorted(values, reverse=True), (key, values)


def test_a_query_with_words_is_untouched(srv: Any) -> None:
    d = post_ok(srv, "/v1/search", {"query": "the billing migration", "mode": "hybrid", "debug": True})
    assert d["results"] and d["results"][0]["path"] in ("people/alex.md", "projects/atlas/state.md"), d
    assert "bm25" in d["results"][0]["ranks"], d
    assert NO_WORDS not in d["warnings"], d
