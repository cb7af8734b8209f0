"""The query engine: modes, corpus kinds, scope filters, grouping, snippets, response shape."""

from __future__ import annotations

import os

import pytest
from searchkit import doc

from commonplace.compiler.search.read.engine import IndexNotReady, SearchEngine
from commonplace.compiler.search.read.query import InvalidRequest

FILES = {
    "projects/auth/state.md": doc(
        "Auth migration", "## Status\n\nMoving clients to svc-auth-v2 with rotating refresh tokens.\n\n"
        "## Risks\n\n" + "Token rotation bugs log users out. " * 10 + "\n",
        status="active", canonical="true", tags="[auth, migration]", updated="2024-05-01"),
    "inbox/auth-idea.md": doc("Auth idea", "Capture: svc-auth-v2 could rotate refresh tokens faster.\n",
                              tags="[idea]", created="2024-06-01"),
    "decisions/old-auth.md": doc("Old auth decision", "We keep session cookies; svc-auth-v2 is not needed.\n",
                                 status="superseded", date="2022-01-10"),
    "notes/cpp.md": doc("Engine notes", "The renderer is written in C++ and the harness target is foo_bar.\n",
                        created="2023-03-03"),
    "notes/foo.md": doc("Paths", "Config lives in foo/bar/baz.toml next to the binary.\n", created="2023-04-04"),
    "people/dana.md": doc("Dana", "Dana reviews the billing pipeline every Monday.\n", tags="[people]"),
    "logs/sessions/2024/02/x.md": doc("Session transcript", "Assistant: the billing pipeline rerun used idempotency.\n"),
}


@pytest.fixture
def engine(indexed) -> SearchEngine:
    return indexed(FILES)[1]


def paths(res):
    return [r["path"] for r in res["results"]]


def test_response_shape_is_the_http_contract(engine):
    res = engine.search({"query": "svc-auth-v2"})
    assert set(res) == {"query", "count", "results", "took_ms", "warnings"}
    assert res["query"] == "svc-auth-v2" and res["count"] == len(res["results"]) > 0
    assert isinstance(res["took_ms"], float) and res["warnings"] == []
    for r in res["results"]:
        assert set(r) == {"path", "lines", "title", "snippet", "evidence_class", "confidence", "stale_warning", "score",
                          "score_normalized"}
        assert 0.0 <= r["score_normalized"] <= 1.0
        start, end = map(int, r["lines"].split("-"))
        assert 1 <= start <= end


def test_mode_aliases(engine):
    for alias, mode in [("text", "bm25"), ("keyword", "bm25"), ("lexical", "bm25"), ("semantic", "vector")]:
        assert paths(engine.search({"query": "billing pipeline", "mode": alias})) == \
            paths(engine.search({"query": "billing pipeline", "mode": mode}))
    with pytest.raises(InvalidRequest):
        engine.search({"query": "x", "mode": "fuzzy"})
    with pytest.raises(InvalidRequest):
        engine.search({"query": "x", "corpus": "everything"})


def test_results_are_grouped_per_document(engine):
    res = engine.search({"query": "token rotation refresh svc-auth-v2", "mode": "bm25", "k": 10})
    assert len(paths(res)) == len(set(paths(res)))
    res = engine.search({"query": "token rotation refresh svc-auth-v2", "mode": "vector", "k": 10})
    assert len(paths(res)) == len(set(paths(res)))


def test_identifiers_are_found_by_bm25(engine):
    assert paths(engine.search({"query": "C++", "mode": "bm25"}))[0] == "notes/cpp.md"
    assert paths(engine.search({"query": "foo_bar", "mode": "bm25"}))[0] == "notes/cpp.md"
    assert paths(engine.search({"query": "foo/bar", "mode": "bm25"}))[0] == "notes/foo.md"
    top = paths(engine.search({"query": "svc-auth-v2", "mode": "bm25"}))
    assert set(top) == {"projects/auth/state.md", "inbox/auth-idea.md", "decisions/old-auth.md"}


def test_natural_language_uses_or_semantics(engine):
    res = engine.search({"query": "who is it that reviews the billing pipeline on weekends?", "mode": "bm25"})
    assert paths(res)[0] == "people/dana.md"


def test_sessions_only_in_sessions_or_all(engine):
    q = {"query": "billing pipeline rerun idempotency"}
    for mode in ("bm25", "vector", "hybrid", "exact"):
        durable = paths(engine.search({**q, "mode": mode}))
        assert "logs/sessions/2024/02/x.md" not in durable, mode
        sessions = paths(engine.search({**q, "mode": mode, "corpus": "sessions"}))
        if mode != "exact":
            assert sessions == ["logs/sessions/2024/02/x.md"], mode
        assert all(p.startswith("logs/sessions/") for p in sessions)
    assert "logs/sessions/2024/02/x.md" in paths(engine.search({**q, "corpus": "all", "mode": "bm25"}))
    assert paths(engine.search({"query": "billing pipeline", "mode": "exact", "corpus": "all"}))


def test_scope_filters(engine):
    q = "svc-auth-v2"
    for mode in ("bm25", "vector", "hybrid", "exact"):
        def run(**scope):
            return set(paths(engine.search({"query": q, "mode": mode, "k": 20, "scope": scope})))

        assert run(path_glob="inbox/*") == {"inbox/auth-idea.md"}, mode
        assert run(type=["decision"]) == {"decisions/old-auth.md"}, mode
        assert run(status=["active"]) == {"projects/auth/state.md"}, mode
        assert run(tags=["auth"]) == {"projects/auth/state.md"}, mode
        assert run(since="2024-01-01") == {"projects/auth/state.md", "inbox/auth-idea.md"}, mode
        assert run(until="2022-12-31") == {"decisions/old-auth.md"}, mode
        assert run(until="2022-01-10") == {"decisions/old-auth.md"}, mode  # inclusive
        assert run(path_glob=["nothing/**"]) == set(), mode


def test_field_syntax_in_the_query(engine):
    assert paths(engine.search({"query": "type:decision svc-auth-v2", "mode": "bm25"})) == ["decisions/old-auth.md"]
    assert paths(engine.search({"query": "title:Dana", "mode": "bm25"}))[0] == "people/dana.md"


def test_snippet_marks(engine):
    q = {"query": "billing pipeline", "mode": "bm25"}
    md = engine.search(q)["results"][0]["snippet"]
    assert "**billing**" in md and "**pipeline**" in md
    br = engine.search({**q, "snippet_marks": "brackets"})["results"][0]["snippet"]
    assert "[[billing]]" in br and "**" not in br
    html = engine.search({**q, "snippet_marks": "html"})["results"][0]["snippet"]
    assert "<mark>billing</mark>" in html
    plain = engine.search({**q, "snippet_marks": "none"})["results"][0]["snippet"]
    assert "billing pipeline" in plain and "*" not in plain


def test_exact_mode_is_a_case_insensitive_substring(engine):
    res = engine.search({"query": "AUTH-V2 IS NOT", "mode": "exact"})
    assert paths(res) == ["decisions/old-auth.md"]
    assert "**auth-v2 is not**" in res["results"][0]["snippet"]
    assert engine.search({"query": "definitely absent phrase", "mode": "exact"})["count"] == 0


def test_hybrid_priors_promote_canonical_and_demote_inbox_and_superseded(engine):
    res = engine.search({"query": "svc-auth-v2 refresh tokens rotate", "mode": "hybrid", "debug": True})
    order = paths(res)
    assert order.index("projects/auth/state.md") < order.index("inbox/auth-idea.md")
    first = res["results"][0]
    assert first["evidence_class"] == "canonical" and first["confidence"] == "high"
    assert {"frontmatter", "heading", "chunk_id", "ranks"} <= set(first)
    old = next(r for r in res["results"] if r["path"] == "decisions/old-auth.md")
    assert old["evidence_class"] == "superseded" and old["stale_warning"] == "marked superseded"


def test_include_content_min_score_and_k(engine):
    res = engine.search({"query": "svc-auth-v2", "mode": "bm25", "include_content": True, "k": 1})
    assert res["count"] == 1 and "svc-auth-v2" in res["results"][0]["content"]
    assert engine.search({"query": "svc-auth-v2", "mode": "bm25", "min_score": 1e9})["count"] == 0
    res = engine.search({"query": "svc-auth-v2", "k": 500})
    assert any("outside 1-50" in w for w in res["warnings"])
    with pytest.raises(InvalidRequest):
        engine.search({"query": "x", "k": "many"})
    with pytest.raises(InvalidRequest):
        engine.search({"query": "x", "scope": {"since": "last tuesday"}})


def test_stale_warning_when_a_file_changed_after_indexing(indexed):
    root, engine = indexed(FILES)
    p = root / "people/dana.md"
    p.write_text(p.read_text() + "\nnew line\n")
    os.utime(p, ns=(1, 1))
    r = engine.search({"query": "Dana billing", "mode": "bm25"})["results"][0]
    assert r["path"] == "people/dana.md" and "changed after indexing" in r["stale_warning"]


def test_no_index_is_reported_not_crashed(tmp_path):
    with pytest.raises(IndexNotReady):
        SearchEngine(tmp_path).search({"query": "x"})


def test_empty_query_is_valid(engine):
    for mode in ("bm25", "vector", "hybrid", "exact"):
        res = engine.search({"query": "   ", "mode": mode})
        assert res["count"] == 0 and res["warnings"] == ["empty query"]


def test_fast_bm25_path_matches_whoosh_scoring(indexed):
    """The numpy BM25F path gives Whoosh's own scores, across segments and deletions."""
    from searchkit import reindex

    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"Note {i} about billing pipeline run {i % 7}. "
                                       f"{'invoice ' * (i % 4)}{'svc-auth-v2 ' * (i % 3)}\n") for i in range(40)}
    files["logs/sessions/2024/01/s.md"] = doc("S", "billing pipeline invoice transcript\n")
    root, engine = indexed(files)
    for i in range(0, 40, 5):  # a second segment, and deletions in the first
        p = root / f"notes/n{i:02d}.md"
        p.write_text(p.read_text() + "\nbilling invoice addendum\n")
        reindex(root)
    engine.search({"query": "x"})
    bm = engine._bm25
    assert bm.fast() is not None
    assert len(list(bm.searcher.leaf_searchers())) >= 1
    for query in ["billing pipeline", "invoice svc-auth-v2", "run 3 addendum", "note"]:
        weights = bm.build_query(query)[1]
        boosts = bm.term_boosts(weights)
        for corpus in ("durable", "sessions", "all"):
            fast = bm.search_terms(boosts, 10, corpus)
            q = bm.restrict_kind(bm.build_query(query)[0], corpus)
            exclude = (lambda p: p.startswith("logs/sessions/")) if corpus == "durable" else None
            slow = bm.search(q, 10, exclude=exclude) if set(boosts) == set(bm._search_terms(weights)) else None
            assert fast is not None
            if slow is not None:
                assert [h.path for h in fast] == [h.path for h in slow], (query, corpus)
                assert [round(h.score, 3) for h in fast] == [round(h.score, 3) for h in slow]


def test_exact_mode_treats_like_wildcards_literally(indexed):
    _, engine = indexed({
        "a.md": doc("A", "We are 100% sure about foo_bar and C:\\temp.\n"),
        "b.md": doc("B", "Here fooXbar and 100 percent and C:temp.\n"),
    })
    for needle, want in [("foo_bar", ["a.md"]), ("100%", ["a.md"]), ("c:\\temp", ["a.md"]), ("%", ["a.md"]), ("_", ["a.md"])]:
        assert paths(engine.search({"query": needle, "mode": "exact"})) == want, needle


def test_a_search_can_keep_its_vector_list_for_the_deeper_look(engine, monkeypatch):
    """Active memory searches, then looks deeper down the same query's vector list: the
    list kept by the search is the one a fresh look finds, without a second query."""
    from dataclasses import replace

    from commonplace.compiler.search.read.query import normalize_request

    question = "who reviews the billing pipeline"
    fresh = engine.candidates(question, "durable", 5, lists=("vector",))["vector"]
    assert fresh
    other = SearchEngine(engine.root, embedder=engine._embedder)  # nothing kept yet
    req = replace(normalize_request({"query": question, "k": 2})[0], vector_depth=5)
    assert other.search(req)["count"] == 2
    queries = []
    group = SearchEngine._group
    monkeypatch.setattr(SearchEngine, "_group", lambda self, *a: queries.append(a) or group(self, *a))
    assert other.candidates(question, "durable", 5, lists=("vector",))["vector"] == fresh
    assert queries == []  # the kept list, not a second neighbour query
    other.candidates("the renderer", "durable", 5, lists=("vector",))
    assert len(queries) == 1  # another query is looked up
