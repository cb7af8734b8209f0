"""The fixture vault (tests/fixtures/vault) in Chromium, from file:// and under `serve`:
its images load, its audio and PDF are there, transcluded notes show their text."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

import pytest

from browserkit import build_site, checked_page, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vault"


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    base = tmp_path_factory.mktemp("vaultb")
    root = base / "vault"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(".commonplace"))
    return root, build_site(root, base / "site")


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


def test_vault_under_serve(vault, browser, serve):
    root, _ = vault
    url = serve(root, "--loopback-reads")["url"]
    for path in ("/", "/Home/", "/Home/index.html"):
        with checked_page(browser) as page:
            check_page(page, url + path)
    with urllib.request.urlopen(url + "/_dot/") as r:  # the note named `..md`
        assert b"A note named with one dot" in r.read()
    with urllib.request.urlopen(url + "/_/files/attachments/paper.pdf") as r:
        assert r.headers["Content-Type"] == "application/pdf"
        assert "frame-ancestors 'self'" in r.headers["Content-Security-Policy"]
    with urllib.request.urlopen(url + "/_/files/attachments/red.png") as r:
        assert r.headers["Content-Type"] == "image/png" and "sandbox" in r.headers["Content-Security-Policy"]
