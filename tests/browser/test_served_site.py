"""The built wiki under `commonplace serve`, in a real browser: what only a server adds.

A missing page one folder deep is styled and leads to the start page (the server's CSP
forbids <base>); a page reloads by itself when a write through the API rebuilt it (live
reload over /_/events); the search box asks the server's hybrid search when it may.
The server runs the way it runs: a `commonplace serve` subprocess on 127.0.0.1.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from browserkit import checked_page, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

CORPUS = {
    "index.md": "---\ntitle: Home\n---\n# Home\n\nSee [[Alex]].\n",
    "people/alex.md": "---\ntitle: Alex\ntype: person\n---\n# Alex\n\nAlex runs the billing migration.\n",
    "notes/plain.md": "---\ntitle: Plain note\ntype: note\n---\n# Plain note\n\nNothing to see.\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory, serve):
    root = tmp_path_factory.mktemp("served") / "corpus"
    for rel, text in CORPUS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return serve(root, "--loopback-reads")


@pytest.fixture
def page(browser):
    """A fresh page (its own context) of the module's Chromium."""
    with checked_page(browser) as p:
        yield p


def test_not_found_one_folder_deep_is_styled_and_leads_home(served, page):
    resp = page.goto(served["url"] + "/people/nobody/")
    assert resp is not None and resp.status == 404
    # style.css applied (the header is sticky), although the page sits one folder deep
    assert page.evaluate("getComputedStyle(document.querySelector('.top')).position") == "sticky"
    page.locator("a.start").click()
    page.wait_for_load_state()
    assert page.url.rstrip("/") in (served["url"], served["url"] + "/index.html")
    assert page.locator("h1").first.inner_text() == "Home"  # the start page: the corpus's index.md (its home page)


def test_a_page_reloads_when_a_write_rebuilds_it(served, page):
    page.goto(served["url"] + "/people/alex/")
    page.evaluate("window.__before_reload = true")
    time.sleep(1.0)  # the page connects to /_/events
    body = {"kind": "append", "target": "people/alex.md", "content": "Alex also owns the invoice export."}
    req = urllib.request.Request(served["url"] + "/v1/write", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {served['token']}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert json.loads(r.read())["indexed"] is True
    deadline = time.time() + 15
    while time.time() < deadline:  # (the CSP forbids wait_for_function's string evaluation)
        try:
            if page.evaluate("() => window.__before_reload") is None:
                break
        except Exception:  # noqa: BLE001 - the page is between documents
            pass
        time.sleep(0.2)
    page.wait_for_load_state()
    assert page.evaluate("() => window.__before_reload") is None, "the page did not reload"
    assert "invoice export" in page.content()


def test_search_box_uses_the_servers_search(served, page):
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "/v1/search" in r.url else None)
    page.goto(served["url"] + "/")
    page.keyboard.press("/")
    page.keyboard.type("billing")
    # (the start page itself links to Alex: wait inside the result list, not the page)
    page.wait_for_selector(".search-results >> text=Alex", timeout=10000)
    assert seen, "the box did not ask /v1/search"
    assert "hybrid search" in page.locator(".search-status").inner_text()
