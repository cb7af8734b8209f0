"""The compiled text scanner (compiler/site/_textscan.c) gives exactly what the Python that
defines it gives, or None ("use Python"), and covers real pages (else it would be slow
for nothing). Pages come from building the bundled docs corpus; odd text from hypothesis."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonplace.compiler.site import render, search_terms as site_search_terms, textscan
from commonplace.compiler.build.pipeline import BuildOptions, build

DOCS = Path(__file__).resolve().parents[1] / "docs"


def python_page(html: str) -> tuple[str, str, str]:
    """What stages.page_text makes of a body in Python alone."""
    sections = render.text_sections(html, fold=render._folded_text_py)
    excerpt = render.sections_excerpt(sections, 600)
    terms = site_search_terms._terms_py(" ".join([f"{s[1]} {s[2]}" for s in sections]))
    return excerpt, terms, site_search_terms.sections_json(sections).encode("utf-8")


def test_the_scanner_is_built_here():
    # The install compiles it wherever a C compiler is (CI has one: hnswlib needs it too).
    # Without it everything still works, 4x slower in the search data's share of a build.
    assert textscan.AVAILABLE, "compiler/site/_textscan.c was not built: reinstall with a C compiler (pip install -e .)"


@pytest.fixture(scope="module")
def bodies(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("site")
    build(BuildOptions(corpus=DOCS, out=out, embed=False, index=False))
    found = []
    for page in sorted(out.rglob("*.html")):
        m = re.search(r'<article class="doc">(.*)</article>', page.read_text(encoding="utf-8"), re.S)
        if m:
            found.append(m.group(1))
    assert len(found) > 40
    return found


def test_real_pages_give_the_same_strings_and_none_falls_back(bodies):
    assert all(textscan.page(b) == python_page(b) for b in bodies)
    assert all(textscan.fold(b) == render._folded_text_py(b) for b in bodies)


# Text around the cases the scanner decodes itself and those it leaves to Python: tags,
# headings with and without ids, entities known and unknown, characters whose lower case
# is not one to one (U+0130, capital sigma), separators and Unicode whitespace, `</`.
PIECES = st.sampled_from([
    "<h2 id=\"a-b\">", "</h2>", "<h3 id=\"x&amp;y\">", "</h3>", "<h1>", "</h1>", "<h2 class=\"k\" id=\"q\">",
    "<h4 data-id=\"n\">", "<h6id=\"z\">", "<p>", "</p>", "<code>", "</code>", "<a href=\"#s\">", "</a>", "<>", "<", ">",
    "&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x27;", "&#9776;", "&#0;", "&#x110000;", "&nbsp;", "&apos;",
    "&copy;", "&amp", "& ", "&", "&#", "&#x;", "\"", "\\", "/", "</", "\n", "\t", " ", "\x1e", "\x1f", "\xa0",
    "\u2028", "\u2029", "\x00", "\x7f", "word", "Word", "WORD", "x1", "_", "caf\u00e9", "\u0130stanbul",
    "\u03a3\u03bf\u03c6\u03af\u03b1", "stra\u00dfe", "\u4e2d\u6587", "\u00bd", "\U0001d400", "\u2014", "\u201cq\u201d",
    "a" * 41, "b" * 40,
])
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_odd_text_gives_the_same_strings_or_none(html):
    fast = textscan.page(html)
    assert fast is None or fast == python_page(html)
    folded = textscan.fold(html)
    assert folded is None or folded == render._folded_text_py(html)
    terms = textscan.terms(html)
    assert terms is None or terms == site_search_terms._terms_py(html)


def test_the_common_cases_are_handled_in_c_not_left_to_python():
    page = ('<p>Intro &amp; more</p>\n<h2 id="caf\u00e9-x">Caf\u00e9 <code>&lt;b&gt;</code></h2>\n'
            '<p>\u201cQuoted\u201d \u2014 stra\u00dfe &#39;x&#39; &quot;y&quot; &#9776;</p>')
    fast = textscan.page(page)
    assert fast is not None and fast == python_page(page)
    excerpt, terms, json = fast
    assert excerpt == "Intro & more Caf\u00e9 <b> \u201cQuoted\u201d \u2014 stra\u00dfe 'x' \"y\" \u2630"
    assert "caf\u00e9:" in terms or "caf\u00e9 " in terms
    assert json.decode() == ('[["","","Intro & more"],["caf\u00e9-x","Caf\u00e9 <b>",'
                             '"\u201cQuoted\u201d \u2014 stra\u00dfe \'x\' \\"y\\" \u2630"]]')
