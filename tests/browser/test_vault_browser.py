"""The fixture vault (tests/fixtures/vault) in Chromium, from file:// and under `serve`:
its images load, its audio and PDF are there, transcluded notes show their text."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browserkit import build_site, checked_page, launch, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vault"


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    base = tmp_path_factory.mktemp("vaultb")
    root = base / "vault"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(".commonplace"))
    return root, build_site(root, base / "site")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def check_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    for img in page.query_selector_all("img.attachment, .content img"):
        img.scroll_into_view_if_needed()
    page.wait_for_function("Array.from(document.querySelectorAll('.content img')).every(i => i.complete)")
    widths = page.eval_on_selector_all(".content img", "els => els.map(e => [e.getAttribute('src'), e.naturalWidth])")
    assert len(widths) >= 5, widths
    assert all(w > 0 for _, w in widths), widths
    assert page.eval_on_selector('img[height="20"]', "e => [e.clientWidth, e.clientHeight]") == [40, 20]
    # The audio's source and the PDF are reachable from this page.
    for sel in ("audio.attachment", ".attachment.pdf iframe"):
        src = page.eval_on_selector(sel, "e => e.src")
        ok = page.evaluate("async u => { try { const r = await fetch(u); return r.ok && (await r.arrayBuffer()).byteLength > 0 }"
                           " catch (e) { return 'xhr' } }", src)
        if ok == "xhr":  # file:// forbids fetch: ask for it as a media element would
            ok = Path(src.removeprefix("file://")).is_file()
        assert ok, src
    bodies = page.eval_on_selector_all(".embed .embed-body", "els => els.map(e => e.innerText)")
    assert len(bodies) == 3
    assert "Bread for beginners." in bodies[0] and "Knead the dough" in bodies[1]
    assert bodies[2].strip() == "Let it rise overnight in a cool place."
    assert page.is_visible("text=Let it rise overnight in a cool place.")
    missing = page.eval_on_selector(".attachment.missing", "e => e.innerText")
    assert "gone.png" in missing


def test_vault_from_disk(vault, browser):
    _, site = vault
    for url in ((site / "index.html").as_uri(), (site / "Home/index.html").as_uri()):
        with checked_page(browser) as page:
            check_page(page, url)


def test_vault_under_serve(vault, browser, tmp_path):
    root, _ = vault
    proc = subprocess.Popen(
        [sys.executable, "-c", "from commonplace.server.cli import main; main()", "serve", str(root),
         "--out", str(tmp_path / "site"), "--port", "0", "--no-embed", "--loopback-reads"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        assert proc.stdout is not None
        url = None
        deadline = time.time() + 120
        while time.time() < deadline:
            line = proc.stdout.readline()
            m = re.search(r"http://[\d.]+:\d+", line)
            if m and url is None:
                url = m.group(0)
            if "ready at" in line or not line:
                break
        assert url, "serve did not start"
        for path in ("/", "/Home/", "/Home/index.html"):
            with checked_page(browser) as page:
                check_page(page, url + path)
        import urllib.request

        with urllib.request.urlopen(url + "/_dot/") as r:  # the note named `..md`
            assert b"A note named with one dot" in r.read()
        with urllib.request.urlopen(url + "/_/files/attachments/paper.pdf") as r:
            assert r.headers["Content-Type"] == "application/pdf"
            assert "frame-ancestors 'self'" in r.headers["Content-Security-Policy"]
        with urllib.request.urlopen(url + "/_/files/attachments/red.png") as r:
            assert r.headers["Content-Type"] == "image/png" and "sandbox" in r.headers["Content-Security-Policy"]
    finally:
        proc.terminate()
        proc.wait(20)
