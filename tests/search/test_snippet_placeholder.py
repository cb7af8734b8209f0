"""A page whose claims section is empty says "*No current claims.*" there: no snippet or
content of a search result carries it (a forget of prose left it on the page)."""

from __future__ import annotations

from commonplace.compiler.search.read.snippet import make_snippet
from commonplace.compiler.search.read.snippet_clean import strip_bookkeeping

PAGE = ("# Ruth Abernathy\n\nShe is hard of hearing: prefers a phone call, never a text.\n\n"
        "<!-- commonplace:claims:start -->\n\n## Claims\n\n*No current claims.*\n\n"
        "<!-- commonplace:claims:end -->\n")


def test_the_empty_claims_placeholder_is_no_text() -> None:
    assert "No current claims" not in strip_bookkeeping(PAGE)
    assert "No current claims" not in make_snippet(PAGE, {"text"}, style="none")
    assert "never a text" in make_snippet(PAGE, {"text"}, style="none")


def test_a_results_content_has_no_placeholder_either() -> None:
    from commonplace.compiler.search.read.snippet_clean import clean_content

    assert "No current claims" not in clean_content(PAGE) and "hard of hearing" in clean_content(PAGE)
