"""A small vault in Chromium from file://: a PDF viewer on a page with raw HTML, a page
that embeds another note's headings (unique ids, its own `#heading` link lands on its
own heading), titles from file names, math typeset, on a desktop and a phone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from browserkit import DESKTOP, PHONE, build_site, checked_page, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
FILLER = "\n\n".join(f"Paragraph {i} of filler, so the page scrolls." for i in range(40))

FILES: dict[str, str | bytes] = {
    "commonplace.toml": '[site]\ntitles = "filename"\n',
    "Paper page.md": "# Reading list\n\nRead <kbd>this</kbd> <span style=\"color: red\">now</span>:\n\n"
                     "![[paper.pdf]]\n\n<script>document.title = 'hacked'</script>\n",
    "Guide.md": "## Setup\n\nThe guide's own setup.\n\n" + FILLER + "\n\n![[Tool]]\n\n"
                "Back to [[#Setup]] and $\\frac{a}{b}$.\n",
    "Tool.md": "## Setup\n\nThe tool's setup.[^1]\n\n[^1]: A footnote of the tool.\n",
    "paper.pdf": PDF,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vr") / "vault"
    for name, data in FILES.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return build_site(root, root.parent / "site")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pdf_viewer_and_cleaned_html_on_one_page(site, browser, viewport):
    with checked_page(browser, viewport) as page:
        page.goto((site / "Paper page/index.html").as_uri())
        page.wait_for_load_state("load")
        assert page.title().startswith("Paper page")  # the file name, not "Reading list"
        frame = page.query_selector(".attachment.pdf iframe")
        assert frame is not None and frame.is_visible()
        box = frame.bounding_box()
        assert box["height"] >= 300 and 0 < box["width"] <= viewport["width"]
        src = page.eval_on_selector(".attachment.pdf iframe", "e => e.src")
        assert Path(src.removeprefix("file://")).read_bytes() == PDF
        assert page.is_visible("kbd") and page.inner_text("kbd") == "this"
        assert page.eval_on_selector_all("script:not([src])", "els => els.filter(e => e.textContent.includes('hacked')).length") == 0
        assert "Reading list" in page.inner_text(".content")  # the H1 stays in the body


def test_embedded_headings_do_not_steal_the_pages_anchor(site, browser):
    with checked_page(browser) as page:
        page.goto((site / "Guide/index.html").as_uri())
        page.wait_for_load_state("load")
        ids = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
        assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
        page.click("text=Setup >> nth=-1")  # the `[[#Setup]]` link at the bottom
        page.wait_for_function("location.hash === '#setup'")
        top = page.eval_on_selector("#setup", "e => e.getBoundingClientRect().top")
        assert 0 <= top < 200  # scrolled to the page's own heading...
        assert page.eval_on_selector("#setup", "e => !e.closest('.embed')")  # ...not the embedded one
        assert page.eval_on_selector(".embed h2", "e => e.id").startswith("e1~")
        # The embedded footnote's reference reaches the embedded footnote.
        ref = page.eval_on_selector(".embed .footnote-ref a", "e => e.getAttribute('href')")
        assert re.fullmatch(r"#e1~fn1", ref)
        assert page.eval_on_selector(ref.replace("~", "\\~"), "e => e.innerText").startswith("A footnote of the tool")
        page.wait_for_selector(".katex", timeout=10_000)  # math typeset offline
