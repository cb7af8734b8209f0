"""The Obsidian fixture vault (tests/fixtures/vault/syntax/) in Chromium, as a reader sees
it: callouts fold, math and mermaid render offline from file:// (no request leaves the
disk) and under `commonplace serve` (its CSP), comments are absent from the page, the
site's search and `/v1/search`, and hostile raw HTML runs nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from browserkit import PHONE, build_site, checked_page, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

VAULT = Path(__file__).resolve().parents[1] / "fixtures" / "vault" / "syntax"
HIDDEN = re.compile(r"hiddenword\w*", re.I)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("vault-browser")
    shutil.copytree(VAULT, tmp / "vault")
    return build_site(tmp / "vault", tmp / "site")


@pytest.fixture
def page(browser):
    with checked_page(browser) as p:
        requests: list[str] = []
        p.on("request", lambda r: requests.append(r.url))
        p.requests = requests
        yield p


def open_page(page, site: Path, rel: str) -> None:
    page.goto((site / rel / "index.html").as_uri())


def offline(page) -> list[str]:
    return [u for u in page.requests if not u.startswith(("file://", "data:", "blob:", "about:"))]


def test_callouts_fold_without_scripts_and_nest(site: Path, page):
    open_page(page, site, "Callouts")
    folded = page.locator('details.callout[data-callout="tip"]')
    assert folded.get_attribute("open") is None
    body = folded.locator(".callout-content")
    assert not body.is_visible()
    folded.locator("summary").click()
    assert body.is_visible() and "foldbodyword" in body.inner_text()
    opened = page.locator('details.callout[data-callout="warning"]')
    assert opened.get_attribute("open") is not None and opened.locator(".callout-content").is_visible()
    inner = page.locator('div.callout[data-callout="question"] details.callout[data-callout="example"]')
    assert inner.count() == 1 and not inner.locator(".callout-content").is_visible()
    plain = page.locator('div.callout[data-callout="note"] .callout-title')
    assert plain.inner_text().strip() == "Note"
    # a callout looks like one: coloured border, not a grey quote
    colour = plain.evaluate("e => getComputedStyle(e.closest('.callout')).borderLeftColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "")
    assert "[!" not in page.locator(".content").inner_text().split("[!note] at the start")[0]


def test_math_and_mermaid_render_from_disk_with_no_network(site: Path, page):
    open_page(page, site, "Math and diagrams")
    page.locator(".math.inline .katex").first.wait_for(timeout=15000)
    assert page.locator(".math.block .katex-display").count() == 1
    page.locator('html[data-diagrams="drawn"]').wait_for(timeout=30000)
    svg = page.locator("pre.mermaid svg")
    assert svg.count() == 1 and "Start here" in svg.text_content()
    assert page.evaluate("document.fonts.ready.then(() => document.fonts.check('16px KaTeX_Main'))")
    assert "$5 and $10" in page.locator(".content").inner_text()
    assert offline(page) == []


def test_comments_are_absent_from_the_page_and_the_site_search(site: Path, page):
    open_page(page, site, "Comments")
    text = page.locator(".content").inner_text()
    assert "publishedword" in text and not HIDDEN.search(page.content())
    assert "%%kept in code%%" in text and "%%kept in a fence%%" in text
    page.keyboard.press("/")
    page.keyboard.type("publishedword")
    page.locator(".search-results li", has_text="Comments").first.wait_for(timeout=15000)
    for word in ("hiddenwordinline", "hiddenwordblock"):
        page.locator(".search-backdrop input").fill(word)
        page.locator(".search-status").wait_for(timeout=15000)
        page.wait_for_timeout(300)
        results = page.locator(".search-results").inner_text()
        assert not HIDDEN.search(results) and "Comments" not in results


def test_hostile_raw_html_runs_nothing(site: Path, page):
    open_page(page, site, "Raw HTML")
    page.wait_for_timeout(300)
    assert page.evaluate("window.pwned === undefined")
    assert page.locator(".content span.red-note").inner_text() == "span text"
    assert page.locator(".content .box b").inner_text() == "bold"
    assert page.locator(".content svg, .content iframe, .content script").count() == 0


def test_block_id_link_lands_on_the_block(site: Path, page):
    open_page(page, site, "Block ids")
    page.goto((site / "Block ids" / "index.html").as_uri() + "#^para-one")
    target = page.locator('[id="^para-one"]')
    assert target.inner_text() == "A paragraph someone links to."
    assert page.evaluate("document.querySelector(':target') && document.querySelector(':target').id") == "^para-one"


# ------------------------------------------------------------------------------ served


@pytest.fixture(scope="module")
def served(tmp_path_factory, serve):
    root = tmp_path_factory.mktemp("vault-served") / "vault"
    shutil.copytree(VAULT, root)
    return serve(root)


def search(served, query: str) -> dict:
    req = urllib.request.Request(served["url"] + "/v1/search", data=json.dumps({"query": query, "k": 10}).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {served['token']}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def test_served_search_never_returns_comment_text(served):
    found = json.dumps(search(served, "publishedword")["results"])
    assert "Comments.md" in found and not HIDDEN.search(found)
    for word in ("hiddenwordinline", "hiddenwordblock spans several lines"):
        answer = json.dumps(search(served, word)["results"])
        assert not HIDDEN.search(answer) and "Comments.md" not in answer, answer[:500]


def test_served_math_and_mermaid_render_under_the_servers_policy(served, browser):
    with checked_page(browser, PHONE) as p:
        p.goto(served["url"] + "/Math%20and%20diagrams/index.html")
        p.locator(".math.inline .katex").first.wait_for(timeout=15000)
        p.locator('html[data-diagrams="drawn"]').wait_for(timeout=30000)
        assert p.locator("pre.mermaid svg").count() == 1
