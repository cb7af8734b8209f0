"""Obsidian-flavoured markdown, as a reader of the built site sees it: callouts, highlights,
comments (gone from every output), block ids, body tags, math and mermaid, raw HTML made
safe, and titles. Unit checks per syntax, then a build of the fixture vault
`tests/fixtures/vault/syntax/` (the browser tests use it too)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.markdown.mdit import render_tokens
from commonplace.compiler.markdown.comments import strip_comments
from commonplace.compiler.markdown.parse import parse
from commonplace.compiler.search.index.chunk import ChunkConfig, RegexTokenCounter, chunk_document

VAULT = Path(__file__).parent / "fixtures" / "vault" / "syntax"
HIDDEN = re.compile(r"hiddenword\w*")


def doc(text: str, path: str = "notes/x.md"):
    return parse(path, text.encode("utf-8"))[0]


def html(text: str) -> str:
    d = doc(text)
    return render_tokens(d.tokens, d.md_env)


# ----------------------------------------------------------------------------- callouts


def test_a_callout_is_a_titled_box_and_a_foldable_one_a_details_element():
    out = html("> [!tip] Custom *title*\n> Body text.\n\n> [!warning]- Closed\n> Inside.\n\n"
               "> [!info]+\n> Open.\n")
    assert '<div class="callout" data-callout="tip">' in out
    assert '<div class="callout-title">Custom <em>title</em></div>' in out
    assert "<p>Body text.</p>" in out and "[!tip]" not in out
    assert '<details class="callout" data-callout="warning">\n<summary class="callout-title">Closed</summary>' in out
    assert '<details class="callout" data-callout="info" open>\n<summary class="callout-title">Info</summary>' in out
    assert "<blockquote>" not in out


def test_callouts_nest_and_plain_quotes_stay_quotes():
    out = html("> [!question] Outer\n> text\n> > [!example]- Inner\n> > inner text\n\n> just a quote\n\n"
               "[!note] in a paragraph\n")
    outer = out.index('data-callout="question"')
    inner = out.index('<details class="callout" data-callout="example">')
    assert outer < inner < out.index("inner text") < out.index("<blockquote>")
    assert out.count("</details>") == 1 and "<p>[!note] in a paragraph</p>" in out
    # well nested: the outer box closes after the inner one
    assert out.index("</details>") < out.rindex("</div>\n</div>\n<blockquote>")


def test_a_callout_with_only_a_title_line_has_an_empty_body():
    out = html("> [!danger]\n")
    assert '<div class="callout-title">Danger</div>\n<div class="callout-content">\n</div>' in out


# ------------------------------------------------------------------- highlights and tags


def test_highlights_become_mark_and_keep_inline_markdown():
    out = html("Some ==very **bold** words== and == spaced == and `==code==`.\n")
    assert "<mark>very <strong>bold</strong> words</mark>" in out
    assert "== spaced ==" in out and "<code>==code==</code>" in out


def test_body_tags_join_the_documents_tags_but_not_in_code_urls_or_numbers():
    d = doc("---\ntags: [fm]\n---\nText #project/alpha and #reading #fm, not #123, `#code`,\n"
            "https://example.com/#anchor, [x](#anchor), a#b.\n\n```\n#fenced\n```\n\n## Head #inhead\n")
    assert d.tags == ["fm", "project/alpha", "reading", "inhead"]
    out = render_tokens(d.tokens, d.md_env)
    assert '<span class="tag">#project/alpha</span>' in out and "#123" in out


# ------------------------------------------------------------------------------ comments


def test_comments_are_cut_keeping_line_numbers_and_code():
    text = "a %%x%% b\n%%\nhidden\n\nmore\n%%\n`%%code%%` ``x%%`` %%gone%% c\n```\n%%fenced%%\n```\n"
    out = strip_comments(text)
    assert out.count("\n") == text.count("\n")
    assert out == "a  b\n\n\n\n\n\n`%%code%%` ``x%%``  c\n```\n%%fenced%%\n```\n"
    assert strip_comments("100%% sure\nnext") == "100%% sure\nnext"  # never closed: text
    assert strip_comments("a %%x\ny%% b %%z\nw end") == "a \n b %%z\nw end"


def test_comments_reach_neither_the_page_nor_the_search_chunks():
    d = doc("# T\n\nSeen %%hiddenwordone%% here.\n\n%%\nhiddenwordtwo\n%%\n\nAfter.\n")
    assert not HIDDEN.search(render_tokens(d.tokens, d.md_env))
    chunks = chunk_document(d, RegexTokenCounter(), ChunkConfig())
    assert chunks and all(not HIDDEN.search(c.text) and not HIDDEN.search(c.embed_text) for c in chunks)
    assert "After." in " ".join(c.text for c in chunks)
    assert "hiddenwordone" in d.text  # the file itself is untouched (`get` returns it)


# ----------------------------------------------------------------------------- block ids


def test_block_ids_become_anchors_and_are_not_shown():
    out = html("A paragraph. ^para-1\n\n- item ^item-1\n- other\n\n| a |\n|---|\n| 1 |\n\n^tbl\n\n"
               "Two lines\n^two\n\nnot an id^x and `code ^y`\n")
    assert '<p id="^para-1">A paragraph.</p>' in out
    assert '<li id="^item-1">item</li>' in out
    assert '<table id="^tbl">' in out
    assert '<p id="^two">Two lines</p>' in out
    assert "not an id^x" in out and "^para-1<" not in out and "^tbl</p>" not in out


# -------------------------------------------------------------------- math and diagrams


def test_math_is_marked_for_katex_and_mermaid_blocks_for_mermaid():
    out = html("Inline $a^2$, prices $5 and $10.\n\n$$\nx = 1\n$$\n\n```mermaid\ngraph TD; A-->B\n```\n")
    assert '<span class="math inline">a^2</span>' in out and "$5 and $10" in out
    assert '<div class="math block">' in out
    assert '<pre class="mermaid">graph TD; A--&gt;B\n</pre>' in out


# ------------------------------------------------------------------------------ raw HTML


HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    "<svg/onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    "<object data=javascript:alert(1)></object>",
    '<p style="background:url(javascript:alert(1))">x</p>',
    "<style>body{display:none}</style>",
    '<form action="https://evil.example"><input name=a></form>',
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    '<base href="https://evil.example/">',
    "<details open ontoggle=alert(1)>x</details>",
    '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
    "<div><!-- --><script>alert(1)</script></div>",
    "Inline <b onmouseover=alert(1)>bold</b> text",
]


@pytest.mark.parametrize("payload", HOSTILE)
def test_hostile_html_loses_every_way_to_run_code(payload):
    out = html(f"# T\n\n{payload}\n\nAfter.\n").lower()
    assert "<script" not in out and "javascript:" not in out and "<iframe" not in out
    assert "<svg" not in out and "<style" not in out and "<object" not in out and "<base" not in out
    assert "<form" not in out and "<meta" not in out and "url(" not in out
    assert not re.search(r"<[^>]+\son\w+\s*=", out)
    assert "after." in out


def test_harmless_html_is_kept_not_escaped():
    out = html('Inline <span style="color: red; position: fixed">red</span> a<br>b <kbd>K</kbd>\n\n'
               "<div class=\"box\">\n<p>Raw <b>block</b></p>\n</div>\n")
    assert '<span style="color:red">red</span>' in out
    assert "a<br>b" in out and "<kbd>K</kbd>" in out and '<div class="box">' in out
    assert "&lt;span" not in out


# -------------------------------------------------------------------------------- titles


def test_title_is_frontmatter_then_first_h1_outside_code_then_file_name():
    assert doc("---\ntitle: From FM\n---\n# Heading\n").title == "From FM"
    assert doc("```\n# Not this\n```\n\n# Real\n").title == "Real"
    assert doc("~~~\n# fenced\n~~~\n\nplain\n", "notes/file name.md").title == "file name"
    assert doc("Setext title\n===\n").title == "Setext title"
    assert doc("> # quoted\n\ntext\n", "notes/q.md").title == "q"


# ------------------------------------------------------------------- the fixture vault


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("syntax")
    shutil.copytree(VAULT, tmp / "vault")
    build(BuildOptions(corpus=tmp / "vault", out=tmp / "site", embed=False, index=False))
    return tmp / "site"


def page(site: Path, rel: str) -> str:
    return (site / rel / "index.html").read_text("utf-8")


def test_vault_comments_are_in_no_file_of_the_site(site: Path):
    assert any(HIDDEN.search(p.read_text("utf-8")) for p in VAULT.rglob("*.md"))
    leaks = [p for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".js", ".json", ".xml")
             and HIDDEN.search(p.read_text("utf-8", "replace"))]
    assert leaks == []
    assert "publishedword" in page(site, "Comments")
    assert any("publishedword" in p.read_text("utf-8") for p in (site / "_" / "search-data").rglob("*.js"))


def test_vault_nested_tags_have_their_own_and_their_parents_pages(site: Path):
    alpha = next((site / "_" / "tags").glob("project-alpha*/index.html")).read_text("utf-8")
    parent = (site / "_" / "tags" / "project" / "index.html").read_text("utf-8")
    assert "Highlights and tags" in alpha and "Highlights and tags" in parent
    body = page(site, "Highlights and tags")
    href = re.search(r'<a class="tag" href="([^"]+)">#project/alpha</a>', body).group(1)
    assert (site / "Highlights and tags" / href).resolve().is_file()


def test_vault_pages_load_katex_and_mermaid_only_where_used(site: Path):
    math = page(site, "Math and diagrams")
    assert "vendor/katex/katex.min.js" in math and "vendor/mermaid/mermaid.min.js" in math
    plain = page(site, "Callouts")
    assert "katex" not in plain and "mermaid" not in plain
    for rel in ("vendor/katex/katex.min.js", "vendor/katex/katex.min.css", "vendor/katex/fonts/KaTeX_Main-Regular.woff2",
                "vendor/katex/LICENSE.txt", "vendor/mermaid/mermaid.min.js", "vendor/mermaid/LICENSE.txt",
                "math.js", "diagrams.js"):
        assert (site / "_" / "static" / rel).is_file(), rel


def test_vault_titles_skip_headings_in_code(site: Path):
    assert "<title>The real heading ·" in page(site, "Titles/Code first")
    assert "<title>No heading ·" in page(site, "Titles/No heading")


def test_pages_without_raw_html_are_not_cleaned():
    """Task-list checkboxes are the renderer's own HTML: such a page is left as rendered."""
    out = html("- [x] done\n- [ ] open\n")
    assert 'checked="checked" disabled="disabled"' in out  # nh3 would have written checked=""


def test_wake_block_leaves_comments_out(tmp_path: Path):
    from commonplace.compiler.context.wake import wake

    (tmp_path / "core").mkdir()
    text = "---\ntitle: Identity\ntype: core\npinned: true\n---\nI am visible. %%hiddenwordwake%%\n\n%%\nhiddenwordwaketwo\n%%\n"
    (tmp_path / "core" / "identity.md").write_text(text)
    d = doc(text, "core/identity.md")
    block = wake({d.path: d}, root=tmp_path, budget_tokens=1500).block
    assert "I am visible." in block and not HIDDEN.search(block)


def test_a_new_nested_body_tag_adds_its_pages_on_rebuild_and_removing_it_drops_them(tmp_path: Path):
    root, out = tmp_path / "c", tmp_path / "s"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nplain\n")
    (root / "b.md").write_text("# B\n\n#keep\n")
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    tags = out / "_" / "tags"
    assert not (tags / "fresh").exists()
    (root / "a.md").write_text("# A\n\nnow #fresh/child\n")
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    assert "A" in (tags / "fresh" / "index.html").read_text("utf-8")
    assert any(p.name.startswith("fresh-child") for p in tags.iterdir())
    (root / "a.md").write_text("# A\n\nplain again\n")
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    assert not (tags / "fresh").exists() and not any(p.name.startswith("fresh-child") for p in tags.iterdir())
    assert (tags / "keep" / "index.html").is_file()


def test_an_embedded_note_shows_without_its_comments(tmp_path: Path):
    root, out = tmp_path / "c", tmp_path / "s"
    root.mkdir()
    (root / "inner.md").write_text("# Inner\n\nShown text %%hiddenwordembed%% here.\n")
    (root / "outer.md").write_text("# Outer\n\n![[inner]]\n")
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    outer = (out / "outer" / "index.html").read_text("utf-8")
    assert "Shown text" in outer and not HIDDEN.search(outer)
