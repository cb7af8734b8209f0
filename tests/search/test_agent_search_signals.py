"""What an agent reads from /v1/search on entity pages the claim store writes.

A person and a project are written through /v1/memory-write (facts, a replace, a forget),
then searched over a live corpus with (fake) embeddings, so hybrid fuses both lists:

- the Timeline and Evidence of an entity page are history, not page content: a replaced
  or forgotten statement is not found through them, and no result is a chunk of them
  (a snippet that is only a heading such as "Timeline");
- the current claims are found, and `content` is what the page says (no marker
  comments, claim ids or markdown escapes);
- `score_normalized` follows the ranking, so `min_score` keeps a prefix of it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from srvkit import CORPUS, open_live, write_files  # noqa: E402

PERSON = "people/dana-whitfield.md"
PROJECT = "projects/ledgerline/state.md"
PAGES = {
    PERSON: "---\ntitle: Dana Whitfield\ntype: person\n---\n# Dana Whitfield\n\nDana leads the payments team.\n",
    PROJECT: ("---\ntitle: Ledgerline\ntype: project\nstatus: active\n---\n# Ledgerline\n\n## Key Decisions\n\n"
              "Ledgerline is the ledger reconciliation service.\n"),
}
OLD = "The Ledgerline reconciliation job runs nightly at 02:00 UTC."
NEW = "The Ledgerline reconciliation job runs nightly at 04:30 UTC."
FORGOTTEN = "Dana Whitfield lives in Lisbon."
_ID = re.compile(r"\b[ce]_[0-9a-f]{6,}")
_HEADING_ONLY = {"timeline", "evidence", "claims", "facts", "history", "key decisions", "ledgerline key decisions"}


def test_an_old_timeline_with_replaced_text_is_not_indexed(write_corpus: Any, fake_embedder: Any) -> None:
    """A page compiled before the Timeline hid replaced statements still holds them there."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.stage import build_indexes
    from commonplace.compiler.search.read.engine import SearchEngine

    page = (
        "---\ntitle: Ledgerline\ntype: project\ncanonical: true\n---\n# Ledgerline\n\n## Key Decisions\n\n"
        "Ledgerline is the ledger reconciliation service.\n\n<!-- commonplace:claims:start -->\n\n## Claims\n\n"
        "### Facts\n\n- The Ledgerline reconciliation job runs nightly at 04:30 UTC. — recorded 2026-12-02 by api · "
        "`c_a91ba85d4f42eb30`\n\n<!-- commonplace:claims:end -->\n\n<!-- commonplace:timeline:start -->\n\n"
        "## Timeline\n\n- 2026-12-02 09:31 UTC · added fact `c_a91ba85d4f42eb30`: The Ledgerline reconciliation job "
        "runs nightly at 02:00 UTC. (by api)\n- 2026-12-02 09:32 UTC · replaced `c_a91ba85d4f42eb30`: The Ledgerline "
        "reconciliation job runs nightly at 04:30 UTC. (by api)\n\n<!-- commonplace:timeline:end -->\n\n"
        "<!-- commonplace:evidence:start -->\n\n## Evidence\n\n- [[sources/semantic/x-add.md|2026-12-02 09:31 UTC · "
        "add]] — `c_a91ba85d4f42eb30`\n\n<!-- commonplace:evidence:end -->\n\n## Notes\n\nHand-written notes after "
        "the managed sections stay searchable.\n")
    root = write_corpus({PROJECT: page, "notes/other.md": "# Other\n\nNothing about jobs.\n"})
    build_indexes(root, load_corpus(root).docs, embed=True)
    engine = SearchEngine(root, embedder=fake_embedder)
    try:
        assert not engine.search({"query": "02:00", "mode": "exact"})["results"]
        for mode in ("bm25", "hybrid"):
            for h in engine.search({"query": "02:00 UTC", "mode": mode, "include_content": True})["results"]:
                assert "02:00" not in h["snippet"] and "02:00" not in h["content"], h  # "02" of a date may match
        assert not engine.search({"query": "Timeline", "mode": "bm25"})["results"]
        hits = engine.search({"query": "hand-written notes", "mode": "bm25"})["results"]
        assert hits and hits[0]["path"] == PROJECT and hits[0]["lines"].startswith(str(page.split("\n").index(
            "## Notes") + 1)), hits
        hits = engine.search({"query": "04:30", "mode": "bm25", "include_content": True})["results"]
        assert hits and "04:30" in hits[0]["content"] and "<!--" not in hits[0]["content"]
        assert "c_a91" not in hits[0]["content"]
    finally:
        engine.close()


@pytest.fixture(scope="module", params=["fake", pytest.param("real", marks=pytest.mark.e2e)])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The server over the corpus, with the fake embedder or the real model."""
    from commonplace.compiler.search import embedding
    from commonplace.compiler.search.read.engine import close_engines
    from commonplace.server import ServerConfig, create_app
    from searchkit import FakeEmbedder

    if request.param == "fake":
        fake = FakeEmbedder()
        embedding.set_embedder_factory(lambda ref: fake)
    tmp = tmp_path_factory.mktemp("signals")
    corpus = write_files(tmp / "corpus", {**CORPUS, **PAGES})
    live = open_live(corpus, tmp / "site", embed=True)
    app = create_app(live, ServerConfig(corpus=corpus, out=tmp / "site", loopback_reads=True, no_auth=True))
    app.testing = True
    c = app.test_client()
    writes = [
        dict(subject="Dana Whitfield", content="Dana Whitfield is allergic to peanuts."),
        dict(subject="Dana Whitfield", content=FORGOTTEN),
        dict(subject="Dana Whitfield", kind="preference", content="Dana Whitfield prefers morning meetings."),
        dict(subject="Dana Whitfield", content="Dana Whitfield's badge id is dw_42."),
        dict(subject="ledgerline", scope="project", content=OLD),
        dict(subject="ledgerline", scope="project", action="replace", content=NEW),
        dict(subject="ledgerline", scope="project", content="Ledgerline uses Postgres 16."),
        dict(subject="Dana Whitfield", action="forget", content="lives in Lisbon", reason="private"),
    ]
    for body in writes:
        body = {"action": "write", "kind": "fact", "allow_canonical": True, **body}
        r = c.post("/v1/memory-write", json=body)
        assert r.status_code == 200 and r.get_json()["result"] in ("written", "replaced", "forgotten"), r.get_json()
    page = (corpus / PROJECT).read_text()
    assert "## Timeline" in page and "## Evidence" in page and NEW in page
    c.corpus = corpus
    c.model = request.param
    yield c
    close = getattr(live, "close", None)
    if callable(close):
        close()
    embedding.set_embedder_factory(None)
    close_engines()


def search(c: Any, **body: Any) -> list[dict[str, Any]]:
    r = c.post("/v1/search", json=body)
    assert r.status_code == 200, r.get_json()
    return r.get_json()["results"]


def lines_of(c: Any, hit: dict[str, Any]) -> str:
    lo, hi = (int(x) for x in hit["lines"].split("-"))
    return "\n".join((c.corpus / hit["path"]).read_text().split("\n")[lo - 1:hi])


QUERIES = ["reconciliation job time", "02:00 UTC", "Dana allergy", "Lisbon", "Timeline", "Evidence",
           "added fact", "morning meetings", "Postgres", "badge id", "payments team", "since replaced"]


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_no_result_is_history(client: Any, mode: str) -> None:
    """No result's passage is the Timeline or Evidence, and no snippet is a bare heading."""
    for q in QUERIES:
        for h in search(client, query=q, mode=mode, min_score=0, k=20):
            passage = lines_of(client, h)
            assert "## Timeline" not in passage and "## Evidence" not in passage, (q, h)
            assert "commonplace:timeline" not in passage and "commonplace:evidence" not in passage, (q, h)
            assert h["snippet"].strip().lower().rstrip(".") not in _HEADING_ONLY, (q, h)
            assert h["snippet"].strip(), (q, h)


def test_replaced_and_forgotten_text_is_not_found(client: Any) -> None:
    for mode in ("bm25", "exact"):
        assert not search(client, query="Lisbon", mode=mode), mode
    assert not search(client, query="02:00", mode="exact")
    for mode in ("hybrid", "bm25"):  # the "02" of a date may match, the replaced text may not
        for q in ("02:00 UTC", "02:00 UTC reconciliation", "Lisbon"):
            for h in search(client, query=q, mode=mode, min_score=0, k=20, include_content=True):
                assert "02:00" not in h["snippet"] and "02:00" not in h["content"], (q, h)
                assert "Lisbon" not in h["snippet"] and "Lisbon" not in h["content"], (q, h)
                assert "02:00" not in lines_of(client, h) and "Lisbon" not in lines_of(client, h), (q, h)


def test_current_claims_are_found(client: Any) -> None:
    hits = search(client, query="Dana allergy", min_score=0.5)
    assert hits and hits[0]["path"] == PERSON, hits
    if client.model == "real":  # a bag of words does not know that "allergy" is "allergic"
        assert "allergic to peanuts" in hits[0]["snippet"]
        assert "allergic to peanuts" in lines_of(client, hits[0])
    assert "allergic to peanuts" in search(client, query="Dana allergic", min_score=0.5)[0]["snippet"]
    top = search(client, query="reconciliation job time")[0]
    assert top["path"] == PROJECT and "04:30 UTC" in top["snippet"], top
    assert "04:30 UTC" in lines_of(client, top)
    hits = search(client, query="04:30", mode="bm25")
    assert hits and hits[0]["path"] == PROJECT


def test_content_is_what_the_page_says(client: Any) -> None:
    seen = 0
    for q in ("Dana allergy", "badge id", "reconciliation job", "morning meetings", "Postgres"):
        for h in search(client, query=q, include_content=True, k=5):
            content = h["content"]
            assert "<!--" not in content and "-->" not in content, (q, content)
            assert not _ID.search(content), (q, content)
            assert "\\" not in content, (q, content)
            if h["path"] in (PERSON, PROJECT):
                seen += 1
    assert seen >= 4
    badge = [h for h in search(client, query="badge id", include_content=True) if h["path"] == PERSON]
    assert badge and "dw_42" in badge[0]["content"] and "dw_42" in badge[0]["snippet"], badge


NORM_QUERIES = QUERIES + ["Alex billing migration", "on-call rotation", "fusion ranking", "who owns Atlas",
                          "ledger service decisions", "Dana", "nightly job"]


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_score_normalized_follows_the_ranking(client: Any, mode: str) -> None:
    for q in NORM_QUERIES:
        hits = search(client, query=q, mode=mode, min_score=0, k=20)
        norms = [h["score_normalized"] for h in hits]
        assert all(0.0 <= n <= 1.0 for n in norms), (q, norms)
        assert norms == sorted(norms, reverse=True), (q, mode, norms)
        for a, b in zip(hits, hits[1:]):
            if a["score"] != b["score"] and a["score_normalized"] > 0:
                assert a["score_normalized"] > b["score_normalized"], (q, mode, a, b)


@pytest.mark.parametrize("field", ["min_score", "min_relevance_score"])
def test_min_score_keeps_a_prefix(client: Any, field: str) -> None:
    cuts = 0
    for q in NORM_QUERIES:
        full = search(client, query=q, min_score=0, k=20)
        for cut in sorted({h["score_normalized"] for h in full if h["score_normalized"] > 0}):
            kept = search(client, query=q, k=20, **{field: cut})
            assert [h["path"] for h in kept] == [h["path"] for h in full[:len(kept)]], (q, cut)
            assert all(h["score_normalized"] >= cut for h in kept)
            assert len(kept) == sum(1 for h in full if h["score_normalized"] >= cut), (q, cut)
            cuts += 1
    assert cuts > 10
