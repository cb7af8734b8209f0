"""Any string is a valid query: every mode returns a well-formed result, never raises."""

from __future__ import annotations

import pytest
from searchkit import FakeEmbedder, doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonplace.compiler.build.pipeline import load_corpus
from commonplace.compiler.search import embedding
from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.index.stage import build_indexes
from commonplace.compiler.search.read.query import parse_query

MODES = ["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"]
RESULT_KEYS = {"path", "lines", "title", "snippet", "evidence_class", "confidence", "stale_warning", "score",
               "score_normalized"}

NASTY = [
    "", " ", "?", "\"", "\"unbalanced", "'", "C++", "c#", "foo/bar", "foo_bar", "svc-auth-v2", "title:x",
    "title:", ":", "type:decision", "status:\"active\"", "AND OR NOT", "NOT", "a AND (b OR", ")(", "*", "**",
    "foo*", "*foo", "?oo", "~2", "field:value:more", "\\", "\\\\\\", "[[link]]", "<script>alert(1)</script>",
    "🙂🚀🔥", "ℌ𝔢𝔩𝔩𝔬", "\x00\x01\x02", "\ud800", "ﬁ", "İstanbul", "groß", "مرحبا", "你好世界", "   \t\n  ",
    "-", "--", "+", "+foo -bar", "@#$%^&*()", "a" * 3000, "x " * 2500, "%s%n%x", "{\"json\": true}", "NULL",
    "' OR 1=1 --", "$(rm -rf /)", "😀" * 500,
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    fake = FakeEmbedder()
    embedding.set_embedder_factory(lambda ref: fake)
    root = tmp_path_factory.mktemp("robust") / "corpus"
    files = {
        "notes/a.md": doc("Alpha C++", "The renderer is in C++; see foo/bar and foo_bar. svc-auth-v2 rotates keys.\n"),
        "notes/b.md": doc("Beta", "## Title: x\n\nAND OR NOT are plain words here. Emoji 🙂 too. 你好世界\n"),
        "logs/sessions/2024/01/s.md": doc("S", "Session text with groß and İstanbul.\n"),
        "people/p.md": doc("Person", "A person page.\n", canonical="true"),
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    build_indexes(root, load_corpus(root).docs)
    yield SearchEngine(root, embedder=fake)
    embedding.set_embedder_factory(None)


def check(res: dict, k: int = 10) -> None:
    assert set(res) == {"query", "count", "results", "took_ms", "warnings"}
    assert isinstance(res["query"], str)
    assert res["count"] == len(res["results"]) <= k
    assert isinstance(res["took_ms"], float) and res["took_ms"] >= 0
    assert all(isinstance(w, str) for w in res["warnings"])
    assert not any("failed" in w for w in res["warnings"]), res["warnings"]
    seen = set()
    for r in res["results"]:
        assert set(r) == RESULT_KEYS
        assert r["path"] not in seen
        seen.add(r["path"])
        a, b = r["lines"].split("-")
        assert 1 <= int(a) <= int(b)
        assert isinstance(r["snippet"], str) and isinstance(r["title"], str)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", NASTY, ids=range(len(NASTY)))
def test_nasty_queries(engine, mode, query):
    check(engine.search({"query": query, "mode": mode}))


@pytest.mark.parametrize("corpus", ["durable", "sessions", "all"])
@pytest.mark.parametrize("marks", ["markdown", "brackets", "html", "none"])
def test_every_corpus_and_snippet_style(engine, corpus, marks):
    for q in ["C++ foo/bar", "groß", "plain words"]:
        check(engine.search({"query": q, "corpus": corpus, "snippet_marks": marks, "mode": "hybrid"}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300), mode=st.sampled_from(MODES), k=st.integers(1, 50))
def test_arbitrary_text_in_every_mode(engine, query, mode, k):
    check(engine.search({"query": query, "mode": mode, "k": k}), k)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parse_query_never_raises(text):
    pq = parse_query(text)
    assert isinstance(pq.words, str) and isinstance(pq.semantic_text, str)


def test_a_5000_character_paste(engine):
    paste = ("Stack trace: File \"x.py\", line 3, in <module> foo_bar() C++ svc-auth-v2 " * 80)[:5000]
    for mode in MODES:
        res = engine.search({"query": paste, "mode": mode})
        check(res)
    assert engine.search({"query": paste, "mode": "bm25"})["results"][0]["path"] == "notes/a.md"
