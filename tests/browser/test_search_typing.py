"""Typing into the offline search letter by letter, from file:// in a real browser: what a
short word matches, and results that show before their snippets and then get them
(templates/static/search.js; the costs are in tests/benchmarks/bench_site_search.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserkit import build_site, checked_page, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("typing")
    corpus = tmp / "corpus"
    corpus.mkdir()
    pages = {
        "index.md": "# Home\n\nThe start page.\n",
        "go-notes.md": "# Go notes\n\nWe go home early.\n",
        "animals.md": "# Animals\n\nA gopher digs tunnels.\n",
        "golf.md": "# Golf\n\nA sport with clubs.\n",
    }
    for i in range(30):  # enough pages that several text shards hold them
        pages[f"notes/tunnel-{i:02d}.md"] = f"# Note {i}\n\nTunnels under hill {i}, dug slowly.\n"
    for name, text in pages.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    return build_site(corpus, tmp / "site")


def titles_after_typing(page, site: Path, text: str) -> list[str]:
    page.goto((site / "index.html").as_uri())
    page.keyboard.press("/")
    page.locator(".search-box input").wait_for()
    page.keyboard.type(text)
    page.locator(".search-status", has_text="offline index").wait_for(timeout=15000)
    page.wait_for_function("!document.querySelector('.search-results li.r-pending')", timeout=15000)
    return page.locator(".search-results .r-title").all_inner_texts()


def test_two_letters_match_title_words_and_the_word_itself_and_a_third_every_word(site: Path, browser):
    with checked_page(browser) as page:
        two = titles_after_typing(page, site, "go")
    assert set(two) == {"Go notes", "Golf"}  # "gopher" only starts with it: not yet
    with checked_page(browser) as page:
        three = titles_after_typing(page, site, "gop")
    assert three == ["Animals"]


def test_every_result_gets_its_snippet_with_the_word_marked(site: Path, browser):
    with checked_page(browser) as page:
        got = titles_after_typing(page, site, "tunnels")
        items = page.locator(".search-results li")
        items.nth(19).wait_for(timeout=15000)  # results 9-20 come once typing pauses
        assert items.count() == 20 and page.locator(".search-results li.r-pending").count() == 0
        for i in range(items.count()):
            snippet = items.nth(i).locator(".r-snippet")
            assert snippet.locator("mark").first.inner_text().lower() == "tunnels", i
    assert "Animals" in got
