"""The search box says when nothing matches well (issue 19), in a real browser: under
`commonplace serve` from /v1/search's normalised scores and warnings, and offline (file://)
when no page holds the words typed. Weak results are shown dimmed, as a guess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browserkit import build_site, why_no_browser
from test_served_site import page, served  # noqa: F401 - fixtures: a real `commonplace serve`

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")


def status(p) -> str:
    return p.locator(".search-status").inner_text()


def type_and_wait(p, text: str, done: str) -> None:
    p.keyboard.press("/")
    p.locator(".search-box input").wait_for()
    p.keyboard.type(text)
    # (a locator, not wait_for_function: the server's CSP refuses eval)
    p.locator(".search-status", has_text=done).wait_for(timeout=15000)


def test_served_nonsense_query_says_nothing_matched_well(served, page):  # noqa: F811
    page.goto(served["url"] + "/")
    type_and_wait(page, "xyzzy", "Nothing matched well")
    assert "hybrid search" in status(page)
    assert page.locator(".search-results li").count() == 0


def test_served_good_match_is_not_called_weak(served, page):  # noqa: F811
    page.goto(served["url"] + "/")
    type_and_wait(page, "billing", "hybrid search")
    page.wait_for_selector(".search-results >> text=Alex", timeout=10000)
    assert "Nothing matched" not in status(page)
    assert page.locator(".search-results li").first.evaluate("e => getComputedStyle(e).opacity") == "1"


def test_served_weak_scores_are_shown_dimmed(served, page):  # noqa: F811
    """The server's own answer with every normalised score lowered below its cut-off
    (a weak meaning-only neighbour looks like this with embeddings on)."""
    seen: list[dict] = []

    def weaken(route):
        try:
            resp = route.fetch()
            body = resp.json()
            for r in body["results"]:
                r["score_normalized"] = 0.12
            route.fulfill(response=resp, body=json.dumps(body))
            seen.append(body)
        except Exception:  # noqa: BLE001 - the box dropped this request for a newer one
            pass

    page.route("**/v1/search", weaken)
    page.goto(served["url"] + "/")
    page.keyboard.press("/")
    page.fill(".search-box input", "billing")  # one input event: one request
    page.locator(".search-status", has_text="Nothing matched well").wait_for(timeout=15000)
    first = page.locator(".search-results li").first
    first.wait_for()
    assert "Alex" in first.inner_text()
    assert any(r.get("path") == "people/alex.md" for body in seen for r in body["results"])
    assert float(first.evaluate("e => getComputedStyle(e).opacity")) < 1


@pytest.fixture(scope="module")
def offline_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("weak")
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "index.md").write_text("# Home\n\nThe start page.\n", encoding="utf-8")
    (corpus / "builds.md").write_text("# Builds\n\nAn incremental build redoes what changed.\n", encoding="utf-8")
    (corpus / "garden.md").write_text("# Garden\n\nTomatoes and beans.\n", encoding="utf-8")
    return build_site(corpus, tmp / "site")


def test_offline_nonsense_query_says_nothing_matched_well(offline_site: Path, page):
    page.goto((offline_site / "index.html").as_uri())
    type_and_wait(page, "xyzzy", "Nothing matched well")
    assert "offline index" in status(page)
    assert page.locator(".search-results li").count() == 0


def test_offline_near_miss_is_shown_dimmed_and_a_hit_is_not(offline_site: Path, page):
    page.goto((offline_site / "index.html").as_uri())
    type_and_wait(page, "incrementl", "Nothing matched well")  # no page holds it; fuzzy finds Builds
    first = page.locator(".search-results li").first
    assert "Builds" in first.inner_text()
    assert float(first.evaluate("e => getComputedStyle(e).opacity")) < 1
    page.keyboard.press("Control+A")
    page.keyboard.type("incremental")
    page.locator(".search-status", has_text=re.compile(r"^1 page")).wait_for(timeout=15000)
    assert page.locator(".search-results li").first.evaluate("e => getComputedStyle(e).opacity") == "1"
