"""The built wiki under `commonplace serve`, in a real browser: what only a server adds.

A missing page one folder deep is styled and leads to the start page (the server's CSP
forbids <base>); a page reloads by itself when a write through the API rebuilt it (live
reload over /_/events); the search box asks the server's hybrid search when it may.
The server runs the way it runs: a `commonplace serve` subprocess on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browserkit import checked_page, launch, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

CORPUS = {
    "index.md": "---\ntitle: Home\n---\n# Home\n\nSee [[Alex]].\n",
    "people/alex.md": "---\ntitle: Alex\ntype: person\n---\n# Alex\n\nAlex runs the billing migration.\n",
    "notes/plain.md": "---\ntitle: Plain note\ntype: note\n---\n# Plain note\n\nNothing to see.\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    root = base / "corpus"
    for rel, text in CORPUS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    token = subprocess.run([sys.executable, "-c", "from commonplace.server.cli import main; main()", "token", "new",
                            "browser", "-C", str(root)], capture_output=True, text=True, check=True).stdout.split()[0]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from commonplace.server.cli import main; main()", "serve", str(root),
         "--out", str(base / "site"), "--port", "0", "--no-embed", "--loopback-reads"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert proc.stdout is not None
    url = None
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"http://[\d.]+:\d+", line)
        if m and url is None:
            url = m.group(0)
        if "ready at" in line:
            break
    assert url, "serve did not start"
    yield {"url": url, "token": token, "root": root}
    proc.terminate()
    proc.wait(20)


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            with checked_page(browser) as p:
                yield p
        finally:
            browser.close()


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
