"""What a reader of a built vault sees, beyond the fixture vault's tests (test_vault.py):
embeds on pages that also hold raw HTML, ids of transcluded headings, `[text](Note.md)`
links by name, math in the search text, and titles from file names (`site.titles`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.site.model import SettingsError, load_settings

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def run(root: Path, out: Path, clean: bool = False):
    return build(BuildOptions(root, out, embed=False, index=False, clean=clean))


def body(out: Path, page: str) -> str:
    html = (out / page / "index.html").read_text("utf-8")
    return html[html.index('<div class="content">'):html.index('<section class="links">')]


def title_of(out: Path, page: str) -> str:
    html = (out / page / "index.html").read_text("utf-8")
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1)


def test_a_pdf_viewer_survives_on_a_page_with_raw_html_which_is_still_cleaned(tmp_path):
    root = write(tmp_path / "v", {
        "Paper page.md": "# Paper page\n\nRead <span style=\"color: red\">this</span>:\n\n![[paper.pdf]]\n\n"
                         "<iframe src=\"https://evil.example/\"></iframe><script>alert(1)</script>\n"
                         "<a href=\"javascript:alert(2)\">x</a>\n",
        "Host.md": "# Host\n\n<b>bold</b> and the embedded note:\n\n![[Embedded]]\n",
        "Embedded.md": "# Embedded\n\n<i>raw</i> <img src=x onerror=alert(3)>\n\n![[paper.pdf]]\n",
        "paper.pdf": PDF,
    })
    out = tmp_path / "site"
    run(root, out)
    html = body(out, "Paper page")
    assert '<iframe src="../_/files/paper.pdf" title="paper.pdf" height="600"></iframe>' in html
    assert html.count("<iframe") == 1  # the author's own iframe is gone
    assert "evil.example" not in html and "<script" not in html and "javascript:" not in html
    assert '<span style="color:red">this</span>' in html or '<span style="color: red">this</span>' in html
    host = body(out, "Host")
    assert "<b>bold</b>" in host and "<i>raw</i>" in host
    assert '<iframe src="../_/files/paper.pdf"' in host  # the embedded note's viewer too
    assert "onerror" not in host and "cpkept" not in host and "cpkept" not in html


def test_transcluded_headings_get_their_own_ids_and_the_pages_heading_keeps_its_anchor(tmp_path):
    root = write(tmp_path / "v", {
        "Guide.md": "# Guide\n\n## Setup\n\nThe guide's own setup.\n\n![[Tool]]\n\n![[Tool#Setup]]\n\n"
                    "See [[Guide#Setup]] and [[#Setup]].\n",
        "Tool.md": "# Tool\n\n## Setup\n\nThe tool's setup, with a note.[^1]\n\n[^1]: The footnote.\n",
        "Reader.md": "# Reader\n\nGo to [[Guide#Setup]].\n",
    })
    out = tmp_path / "site"
    run(root, out)
    html = body(out, "Guide")
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    # The page's own heading keeps the plain anchor; the embedded ones are scoped.
    assert re.search(r'<h2 id="setup"[^>]*>Setup</h2>\s*<p>The guide', html)
    assert re.search(r'<h2 id="e1~setup"', html) and re.search(r'<h2 id="e2~setup"', html)
    assert 'href="#setup"' in html
    assert 'href="../Guide/index.html#setup"' in body(out, "Reader")
    # An embedded footnote's link still reaches its own (renamed) note.
    ref = re.search(r'href="#(e\d~fn1)"', html)
    assert ref and f'id="{ref.group(1)}"' in html


def test_a_markdown_link_by_name_resolves_nearest_and_says_when_it_is_ambiguous(tmp_path):
    root = write(tmp_path / "v", {
        "notes/Plan.md": "# Notes plan\n",
        "projects/Plan.md": "# Projects plan\n",
        "projects/Roadmap.md": "# Roadmap\n\nSee [the plan](Plan.md) and [the other](../notes/Plan.md) "
                               "and [the spec](Spec.md) and [nothing](Nope.md).\n",
        "Spec.md": "# Spec\n",
        "deep/a/Far.md": "# Far\n\n[which plan](Plan.md)\n",
    })
    out = tmp_path / "site"
    run(root, out)
    html = body(out, "projects/Roadmap")
    # Beside the page: exact, no tooltip.
    assert '<a href="../../projects/Plan/index.html">the plan</a>' in html
    assert '<a href="../../notes/Plan/index.html">the other</a>' in html
    # Not beside it: by name, as Obsidian writes such links.
    assert '<a href="../../Spec/index.html">the spec</a>' in html
    assert 'class="broken">nothing</a>' in html
    far = body(out, "deep/a/Far")
    # Two notes share the name and neither is nearer: broken, never a guess.
    assert 'class="broken">which plan</a>' in far
    root2 = write(tmp_path / "v2", {
        "projects/Plan.md": "# P\n", "projects/sub/Plan.md": "# S\n",
        "projects/other/Page.md": "# Page\n\n[plan](Plan.md)\n",
    })
    run(root2, tmp_path / "site2")
    page = body(tmp_path / "site2", "projects/other/Page")
    assert re.search(r'<a href="\.\./\.\./\.\./projects/Plan/index\.html" class="ambiguous" '
                     r'title="Ambiguous link: several pages have this name; this is the nearest">plan</a>', page)


def test_math_is_searchable_as_the_tex_the_author_wrote(tmp_path):
    root = write(tmp_path / "v", {
        "Calculus.md": "# Calculus\n\nThe derivative $\\frac{dy}{dx}$ and\n\n$$\n\\nabla \\cdot E = \\rho\n$$\n\n"
                       "plain words after.\n",
    })
    out = tmp_path / "site"
    run(root, out)
    data = "".join(p.read_text("utf-8") for p in (out / "_" / "search-data").rglob("*.js"))
    # The TeX stays in the search text as written (a reader finds "nabla" or "frac"),
    # and the words around it are whole.
    assert "frac{dy}{dx}" in data and "nabla" in data and "rho" in data
    assert "plain words after." in data
    html = body(out, "Calculus")
    assert '<span class="math inline">\\frac{dy}{dx}</span>' in html


def test_titles_from_file_names_is_a_setting(tmp_path):
    files = {
        "Meeting notes.md": "# Agenda\n\nText.\n",
        "Titled.md": "---\ntitle: From frontmatter\n---\n# Heading\n",
        "Code first.md": "```\n# not a heading\n```\n\n# Real heading\n",
        "Linker.md": "[[Meeting notes]]\n",
    }
    root = write(tmp_path / "v", files)
    out = tmp_path / "site"
    run(root, out)
    # Default: frontmatter, else the first H1 outside code, else the file name.
    assert title_of(out, "Meeting notes").startswith("Agenda")
    assert title_of(out, "Titled").startswith("From frontmatter")
    assert title_of(out, "Code first").startswith("Real heading")
    assert ">Agenda</a>" in body(out, "Linker")

    (root / "commonplace.toml").write_text('[site]\ntitles = "filename"\n')
    run(root, out)  # an incremental build: the setting rebuilds every page
    assert title_of(out, "Meeting notes").startswith("Meeting notes")
    assert title_of(out, "Titled").startswith("From frontmatter")
    assert title_of(out, "Code first").startswith("Code first")
    assert ">Meeting notes</a>" in body(out, "Linker")
    # The H1 is no longer the title, so the body shows it.
    assert re.search(r"<h1[^>]*>Agenda</h1>", body(out, "Meeting notes"))
    clean = tmp_path / "clean"
    run(root, clean, clean=True)
    assert (out / "Meeting notes/index.html").read_bytes() == (clean / "Meeting notes/index.html").read_bytes()


def test_a_wrong_titles_setting_is_a_clear_error(tmp_path):
    root = write(tmp_path / "v", {"commonplace.toml": '[site]\ntitles = "stem"\n', "A.md": "# A\n"})
    with pytest.raises(SettingsError, match="site.titles must be one of 'heading', 'filename'"):
        load_settings(root)


def test_a_pdf_embed_opens_at_a_page_and_takes_a_height(tmp_path):
    root = write(tmp_path / "v", {
        "Doc.md": "# Doc\n\n![[paper.pdf#page=3]]\n\n![[paper.pdf#height=400]]\n\n![[paper.pdf|200x300]]\n",
        "paper.pdf": PDF,
    })
    out = tmp_path / "site"
    run(root, out)
    html = body(out, "Doc")
    assert '<iframe src="../_/files/paper.pdf#page=3" title="paper.pdf" height="600">' in html
    assert '<iframe src="../_/files/paper.pdf" title="paper.pdf" height="400">' in html
    assert '<iframe src="../_/files/paper.pdf" title="paper.pdf" width="200" height="300"' in html
    assert html.count('<a href="../_/files/paper.pdf">paper.pdf</a>') == 3
