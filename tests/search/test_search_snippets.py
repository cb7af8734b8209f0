"""Snippets are plain text: what a reader would see, not the markdown source (issue 19)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from searchkit import doc

from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.plaintext import plain_text, split_links
from commonplace.compiler.search.read.snippet import make_snippet


def _only_marks_removed(snippet: str) -> str:
    return snippet.replace("[[", "").replace("]]", "")


def test_init_corpus_with_one_claim_searches_clean(tmp_path: Path, fake_embedder) -> None:
    """`commonplace init`, one claim, `search "vendor api"`: the snippet shows the claim
    as text, with no claim-section comment, backticks or markdown."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.server.cli import main  # the console script: `claim` is composed there
    from commonplace.compiler.search.index.stage import build_indexes

    root = tmp_path / "notes"
    runner = CliRunner()
    assert runner.invoke(main, ["init", str(root)]).exit_code == 0
    res = runner.invoke(main, ["claim", "add", "project:atlas", "Atlas is blocked on the vendor API",
                               "--kind", "state", "-C", str(root)])
    assert res.exit_code == 0, res.output
    build_indexes(root, load_corpus(root).docs)
    engine = SearchEngine(root, embedder=fake_embedder)
    out = engine.search({"query": "vendor api", "snippet_marks": "brackets"})
    state = next(r for r in out["results"] if r["path"] == "projects/atlas/state.md")
    snippet = state["snippet"]
    assert "[[vendor]] [[API]]" in snippet
    plain = _only_marks_removed(snippet)
    assert "Atlas is blocked on the vendor API" in plain
    for junk in ("<!--", "-->", "commonplace:claims", "`", "**", "##", "| "):
        assert junk not in plain, (junk, snippet)
    for r in out["results"]:  # every result's snippet, not only the first
        assert "<!--" not in r["snippet"] and "`" not in r["snippet"]


def test_markdown_syntax_is_stripped() -> None:
    text = ("## Status of **the** migration\n\n| field | meaning |\n|---|---|\n| `id` | the *event* id |\n\n"
            "> quoted ~~old~~ text\n\n- [x] done item\n1. first step\n<!-- a comment -->\n<br/>tail")
    got = plain_text(text)
    assert got == ("Status of the migration field · meaning id · the event id quoted old text done item "
                   "first step tail")


def test_a_wrapped_line_starting_with_a_number_keeps_it() -> None:
    # "8001." after a line of prose continues the sentence; only "1." or a line after a
    # list item starts a numbered list there
    assert plain_text("the docs preview now also grabs\n8001. Updated the Procfile.") == \
        "the docs preview now also grabs 8001. Updated the Procfile."
    assert plain_text("Steps:\n1. one\n2. two\n3. three") == "Steps: one two three"
    assert plain_text("Steps:\n\n4. four\n5. five") == "Steps: four five"
    assert plain_text("- port 8002: the docs preview grabs\n  8001. Updated it.\n- next") == \
        "port 8002: the docs preview grabs 8001. Updated it. next"
    assert plain_text("1. one\n   wrapped\n2. two") == "one wrapped two"


def test_code_spans_keep_their_text_and_identifiers_their_underscores() -> None:
    assert plain_text("run `foo_bar --x [[not a link]]` then snake_case_name and `__init__`") == \
        "run foo_bar --x [[not a link]] then snake_case_name and __init__"


def test_links_show_labels_or_titles_not_slugs() -> None:
    known = {"rank-fusion": "Rank fusion", "concepts/claim-store": "Claim store"}

    def titles(target: str) -> str | None:  # the engine's resolver also takes paths with .md
        return known.get(target.removesuffix(".md"))

    text = ("See [[rank-fusion]], [[concepts/claim-store.md#Forgetting]], [[rank-fusion|the RRF note]], "
            "[the log](../concepts/claim-store.md) and [[unknown-page]].")
    assert plain_text(text, titles) == ("See Rank fusion, Claim store › Forgetting, the RRF note, the log and "
                                        "unknown-page.")


def test_snippet_window_is_around_the_best_passage_with_terms_marked() -> None:
    def filler(n: int) -> str:  # distinct paragraphs: a snippet drops a line it already holds
        return " ".join(f"Nothing to see in sentence {n}.{i} about unrelated matters." for i in range(8))

    text = (f"# Notes\n\n{filler(1)}\n\nThe **vendor** mentioned an api once.\n\n{filler(2)}\n\n"
            f"Atlas is blocked on the `vendor API` until March.\n\n{filler(3)}")
    snip = make_snippet(text, {"vendor", "api", "atlas", "block"}, style="brackets",
                        weights={"vendor": 3.0, "api": 2.0, "atlas": 4.0, "block": 1.0})
    assert "[[Atlas]] is [[blocked]] on the [[vendor]] [[API]] until March" in snip
    assert snip.startswith("…") and snip.endswith("…") and len(_only_marks_removed(snip)) <= 242
    assert "**" not in snip and "`" not in snip


def test_link_text_is_split_from_the_page_text() -> None:
    own, links = split_links("Intro. See [[Rank fusion]] and [why](../c/rrf.md) here.")
    assert "Rank" not in own and "why" not in own and "Intro." in own and "here." in own
    assert "Rank fusion" in links and "why" in links


def test_engine_snippets_use_titles_of_linked_pages(indexed) -> None:
    _root, engine = indexed({
        "concepts/rank-fusion.md": doc("Reciprocal rank fusion", "How two ranked lists become one.\n"),
        "notes/why.md": doc("Why", "We merge the lists as [[rank-fusion]] explains, for search quality.\n"),
    })
    res = engine.search({"query": "search quality merge", "mode": "bm25", "snippet_marks": "none"})
    snippet = next(r["snippet"] for r in res["results"] if r["path"] == "notes/why.md")
    assert "as Reciprocal rank fusion explains" in snippet and "rank-fusion" not in snippet


def test_a_request_without_snippets_keeps_the_chunk_text(indexed) -> None:
    """Active memory asks for no snippets (it reads the pages): the answer's results are
    the same, with an empty snippet and the chunk's text as `content`."""
    from commonplace.compiler.search.read.query import SearchRequest

    _root, engine = indexed({
        "concepts/rank-fusion.md": doc("Reciprocal rank fusion", "How two ranked lists become one.\n"),
        "notes/why.md": doc("Why", "We merge the lists as [[rank-fusion]] explains, for search quality.\n"),
    })
    full = engine.search(SearchRequest("search quality merge", mode="bm25", include_content=True))
    bare = engine.search(SearchRequest("search quality merge", mode="bm25", include_content=True, snippets=False))
    assert [r["path"] for r in bare["results"]] == [r["path"] for r in full["results"]]
    why = next(r for r in bare["results"] if r["path"] == "notes/why.md")
    assert why["snippet"] == "" and "[[rank-fusion]] explains" in why["content"]
