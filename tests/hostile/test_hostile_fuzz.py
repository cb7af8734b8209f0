"""Fuzzing (hypothesis, bounded) of the paths hostile text goes through: frontmatter split
and load, parse(), rendering with wikilinks, link resolution, query parsing and search.

Properties: no unhandled exception (only the documented ones: FrontmatterError, SkipFile,
InvalidRequest); frontmatter is always JSON-safe; rendered HTML uses only the tags and
attributes markdown-it and commonplace emit, is balanced, and carries no executable
script (hostilekit.html_problems); HTML snippets escape the document text.
"""

from __future__ import annotations

import json
import string
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hostilekit import html_problems

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MD_TOKENS = [
    "[[", "]]", "|", "#", "![[", "[", "]", "(", ")", "<", ">", "`", "```", "*", "_", "~~", "$", "$$", ":", "\\",
    "/", "\"", "'", "&", "&#106;", "&colon;", "\n", "\n\n", " ", "\t", "- ", "1. ", "> ", "| a | b |\n|---|---|\n",
    "[^1]", "[^1]: ", "- [ ] ", "<script>", "</script>", "<img src=x onerror=alert(1)>", "javascript:", "data:",
    "vbscript:", "](", "](javascript:alert(1))", "<!-- commonplace:details:start ", " -->", "<!-- commonplace:details:end -->",
    "<!-- commonplace:claims:start -->", "\u202e", "\u200b", "\ufeff", "\u2028", "é", "\U0001f600", "../", "%2e%2e",
    "notes/a", "b", "A", "title", ".md", "#heading", "\r\n", "---\n", "    ", "<https://x\">", "\"onmouseover=\"",
]
YAML_TOKENS = [
    "title: ", "tags: ", "aliases: ", "superseded_by: ", "type: ", "status: ", "date: ", "- ", ": ", "\n", "  ", "&a ",
    "*a", "!!python/object/apply:os.system ", "!!binary ", "!x ", "[", "]", "{", "}", ",", "'", "\"", "|", ">", "? ",
    "<<: ", ".inf", ".nan", "2025-13-45", "2025-01-01", "null", "~", "true", "9" * 30, "#", "%YAML 1.1\n", "---", "...",
    "\t", "\u0085", "\ufeff", "<script>", "[[x]]", "é",
]


def joined(tokens: list[str], max_size: int = 40) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(tokens), st.text(max_size=6)), max_size=max_size).map("".join)


markdown_text = joined(MD_TOKENS)
yaml_text = joined(YAML_TOKENS, 30)
documents = st.one_of(
    markdown_text,
    st.builds(lambda y, b: f"---\n{y}\n---\n{b}", yaml_text, markdown_text),
    st.builds(lambda y, b: f"---\n{y}\n{b}", yaml_text, markdown_text),  # never closed
    st.text(max_size=200),
)


def _json_safe(value: Any) -> None:
    json.dumps(value, allow_nan=False)


# --------------------------------------------------------------------------- frontmatter


@FUZZ
@given(documents)
def test_frontmatter_split_and_load(text: str) -> None:
    from commonplace.compiler.markdown import frontmatter as fm

    try:
        raw, body, line = fm.split(text)
    except fm.FrontmatterError:
        return
    assert isinstance(body, str) and line >= 1
    if raw is None:
        assert body == text
        return
    assert text.endswith(body)
    try:
        meta = fm.load(raw)
    except fm.FrontmatterError:
        return
    assert isinstance(meta, dict)
    _json_safe(meta)
    # What commonplace writes back loads to the same thing.
    assert fm.load(fm.dump(meta)) == meta


# --------------------------------------------------------------------------- parse


@FUZZ
@given(st.one_of(documents.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)),
       st.sampled_from(["a.md", "notes/b.md", "logs/daily/2025-01-01.md", "people/x.md", "logs/sessions/s.md"]))
def test_parse_never_raises_unexpectedly(data: bytes, path: str) -> None:
    from commonplace.compiler.markdown.parse import SkipFile, parse

    try:
        doc, warnings = parse(path, data)
    except SkipFile:
        return
    assert isinstance(doc.title, str) and doc.title
    assert all(isinstance(t, str) for t in doc.tags + doc.aliases)
    _json_safe(doc.frontmatter)
    for link in doc.links:
        assert isinstance(link.target, str) and link.line >= 1


# --------------------------------------------------------------------------- render


ALLOWED_TAGS = {
    "p", "a", "em", "strong", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "img", "s", "input", "section", "sup", "span", "div",
    "details", "summary", "label", "eq", "eqn", "section",
}
# Raw HTML an author writes is kept once the allow-list sanitizer has cleaned it, so any tag
# that list allows may appear (never a script, handler or javascript: URL: html_problems).
from commonplace.compiler.markdown.sanitize import _TAGS as _SANITIZER_TAGS  # noqa: E402

ALLOWED_TAGS |= set(_SANITIZER_TAGS)
VOID = {"hr", "br", "img", "input"}
ALLOWED_ATTRS = {"href", "class", "title", "id", "src", "alt", "style", "type", "disabled", "checked", "rel", "start",
                 "aria-label", "for", "data-line"}


class WellFormed(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"unexpected tag <{tag}>")
        for k, _ in attrs:
            if k not in ALLOWED_ATTRS:
                self.problems.append(f"unexpected attribute {k} on <{tag}>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        if tag not in VOID:
            self.problems.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()

    def handle_comment(self, data: str) -> None:
        self.problems.append("a comment in rendered output")

    def close(self) -> None:
        super().close()
        if self.stack:
            self.problems.append(f"unclosed {self.stack}")


def _render(text: str, others: list[str]) -> str:
    from commonplace.compiler.corpus.links import Resolver, resolve_all
    from commonplace.compiler.markdown.parse import SkipFile, parse
    from commonplace.compiler.site.render import render_document

    docs = []
    for i, t in enumerate([text, *others]):
        try:
            doc, _ = parse(f"notes/d{i}.md" if i else "notes/fuzz.md", t.encode("utf-8", "surrogatepass"))
        except SkipFile:
            continue
        docs.append(doc)
    if not docs or docs[0].path != "notes/fuzz.md":
        return ""
    resolver = Resolver.build(docs)
    resolve_all(docs, resolver)
    titles = {d.path: d.title for d in docs}
    return render_document(docs[0], resolver, titles)


@FUZZ
@given(documents, st.lists(documents, max_size=3))
def test_render_is_well_formed_and_escaped(text: str, others: list[str]) -> None:
    html = _render(text, others)
    checker = WellFormed()
    checker.feed(html)
    checker.close()
    assert not checker.problems, (checker.problems, html[:500])
    assert not html_problems(html), (html_problems(html), html[:500])


@FUZZ
@given(st.text(alphabet=string.printable + "é\u202e\u200b<>\"'`", max_size=60), st.text(max_size=20),
       st.sampled_from(["", "|label", "|<b>x</b>", "#h", "#\"><script>"]))
def test_wikilink_render_escapes_every_part(target: str, label: str, suffix: str) -> None:
    html = _render(f"see [[{target}{suffix}]] and [[{label}]] and [x]({target})\n",
                   [f"---\ntitle: \"{label.replace(chr(34), '')}\"\n---\nx\n"])
    assert not html_problems(html), (html_problems(html), html[:500])
    checker = WellFormed()
    checker.feed(html)
    checker.close()
    assert not checker.problems, (checker.problems, html[:500])


# --------------------------------------------------------------------------- link resolution


@FUZZ
@given(st.lists(st.from_regex(r"[a-z./\-é ]{1,12}\.md", fullmatch=True), min_size=1, max_size=8, unique=True),
       st.text(max_size=40), st.sampled_from(["notes/a.md", "a.md", "x/y/z.md"]))
def test_link_resolution_stays_in_the_corpus(paths: list[str], target: str, source: str) -> None:
    from commonplace.compiler.corpus.links import Resolver
    from commonplace.compiler.markdown.parse import SkipFile, parse

    docs = []
    for p in paths:
        try:
            docs.append(parse(p, f"# {p}\n".encode())[0])
        except SkipFile:
            pass
    r = Resolver.build(docs)
    known = {d.path for d in docs}
    for res in (r.resolve_wiki(target, source), r.resolve_md(target, source)):
        assert res.path is None or res.path in known or res.path == source
        assert set(res.candidates) <= known


# --------------------------------------------------------------------------- queries

QUERY_TOKENS = ["AND", "OR", "NOT", "(", ")", "\"", "*", "?", "title:", "type:", "status:", "tag:", "path:", "heading:",
                "body:", ":", "-", "+", "~", "^", "[", "]", "{", "}", "TO", "billing", "atlas", "bill*", "C++", "\\",
                "/", "\U0001f600", "\u202e", "\x00", "\ud800", " ", "\n", "'", "é", "9" * 20]
queries = st.one_of(st.text(max_size=80), joined(QUERY_TOKENS, 30))


@FUZZ
@given(queries)
def test_query_parsing_never_raises(text: str) -> None:
    from commonplace.compiler.search.read.query import parse_query

    pq = parse_query(text)
    assert isinstance(pq.words, str)
    assert all(isinstance(p, str) for p in pq.phrases + pq.prefixes + pq.types + pq.statuses)
    assert all(isinstance(n, str) and isinstance(v, str) for n, v in pq.fielded)
    assert isinstance(pq.semantic_text, str)


@FEW
@given(st.dictionaries(st.sampled_from(["query", "k", "mode", "corpus", "scope", "min_score", "include_content",
                                        "debug", "snippet_marks", "as_of"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                                 st.lists(st.text(max_size=3), max_size=3),
                                 st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3))))
def test_request_normalisation_raises_only_invalid_request(data: dict) -> None:
    from commonplace.compiler.search.read.query import InvalidRequest, normalize_request

    try:
        req, warnings = normalize_request(data)
    except InvalidRequest:
        return
    assert 1 <= req.k <= 50 and isinstance(req.query, str)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.compiler.live.corpus import LiveCorpus
    from commonplace.compiler.search import open_engine

    root = tmp_path_factory.mktemp("fuzz-search") / "corpus"
    files = {
        "people/alex.md": "---\ntitle: Alex <b>Kim</b>\ntags: [people]\n---\n# Alex\n\nAlex runs the billing migration & <script>x</script>.\n",
        "projects/atlas/state.md": "# Atlas\n\nAtlas moves billing off the legacy queue. C++ and foo/bar.\n",
        "notes/q.md": "# Quotes\n\n\"quoted\" text with <tags> and [[links]] and **bold** é 😀.\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    live = LiveCorpus(root, root.parent / "site", embed=False)
    live.open()
    live.close()
    return open_engine(root)


@FEW
@given(queries, st.sampled_from(["bm25", "exact", "hybrid"]), st.sampled_from(["html", "brackets", "markdown", "none"]))
def test_search_answers_any_query(engine: Any, query: str, mode: str, marks: str) -> None:
    res = engine.search({"query": query, "mode": mode, "snippet_marks": marks, "k": 5, "corpus": "all"})
    assert res["count"] == len(res["results"])
    json.dumps(res, allow_nan=False)
    for r in res["results"]:
        if marks == "html":
            stripped = r["snippet"].replace("<mark>", "").replace("</mark>", "")
            assert "<" not in stripped and ">" not in stripped, r["snippet"]
