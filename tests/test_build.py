"""The static wiki build: every page kind, determinism, exclusions, bad input, escaping."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build

DOCS = Path(__file__).resolve().parent.parent / "docs"


def site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def run(corpus: Path, out: Path, **kw):
    kw.setdefault("index", False)  # these tests are about the site; tests/search covers indexes
    return build(BuildOptions(corpus=corpus, out=out, embed=False, **kw))


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs-site")
    result = run(DOCS, out)
    assert result.documents >= 15
    return out


def test_docs_corpus_builds_every_kind_of_page(docs_site: Path):
    files = site_files(docs_site)
    for required in ["index.html", "404.html", "graph.json", "feed.xml", "_/graph/index.html", "_/graph-data.js",
                     "_/recent/index.html", "_/broken/index.html", "_/tags/index.html",
                     "_/folders/index.html", "_/search/index.html", "_/search-data/meta.js",
                     "_/static/style.css", "_/types/decision/index.html", "core/overview/index.html"]:
        assert required in files, required
    pages = [p for p in DOCS.rglob("*.md")]
    for md in pages:
        rel = md.relative_to(DOCS).as_posix()[:-3]
        assert f"{rel}/index.html" in files
    assert any(k.startswith("_/tags/") and k != "_/tags/index.html" for k in files)
    graph = json.loads(files["graph.json"])
    assert len(graph["nodes"]) == len(pages) and graph["edges"]


def test_docs_corpus_has_no_broken_links(docs_site: Path):
    graph = json.loads((docs_site / "graph.json").read_text())
    assert graph["broken"] == []


def test_build_is_byte_identical_across_runs(tmp_path: Path, docs_site: Path):
    other = tmp_path / "again"
    run(DOCS, other)
    assert site_files(other) == site_files(docs_site)


def test_rebuild_into_same_folder_writes_nothing(tmp_path: Path):
    out = tmp_path / "out"
    first = run(DOCS, out)
    second = run(DOCS, out)  # incremental: nothing changed, nothing redone
    assert first.pages_written > 0 and second.pages_written == 0
    assert second.documents_changed == 0 and second.pages_unchanged == 0
    clean = run(DOCS, out, clean=True)  # clean: everything redone, same bytes
    assert clean.pages_written == 0 and clean.pages_unchanged == first.pages_written


def test_deleted_document_page_is_removed_on_rebuild(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n[[b]]\n", "b.md": "# B\n"})
    out = tmp_path / "out"
    run(root, out)
    assert (out / "b/index.html").exists()
    (root / "b.md").unlink()
    result = run(root, out)
    assert not (out / "b/index.html").exists()
    assert result.broken_links == 1


def test_hidden_state_and_output_never_appear(write_corpus, tmp_path: Path):
    root = write_corpus({
        "visible.md": "# Visible\n",
        ".hidden.md": "# SECRET-HIDDEN-FILE\n",
        ".git/notes.md": "# SECRET-GIT\n",
        "notes/.drafts/d.md": "# SECRET-DRAFT\n",
        ".commonplace/tokens.md": "# SECRET-STATE\n",
    })
    out = root / "site"  # output inside the corpus
    run(root, out)
    (out / "stray.md").write_text("# SECRET-OUTPUT\n")
    run(root, out)
    blob = b"".join(site_files(out).values())
    for secret in (b"SECRET-HIDDEN-FILE", b"SECRET-GIT", b"SECRET-DRAFT", b"SECRET-STATE", b"SECRET-OUTPUT"):
        assert secret not in blob
    assert not any(k.startswith(("site/", ".")) and k != ".commonplace-site" for k in site_files(out))


def test_bad_files_warn_and_good_documents_still_render(write_corpus, tmp_path: Path, cli):
    root = write_corpus({
        "good.md": "---\ntitle: Good page\n---\nFine.\n",
        "bad-yaml.md": "---\ntitle: [oops\n---\nStill has a body GOODBODY.\n",
        "latin1.md": "caf\xe9".encode("latin-1"),
        "binary.md": b"\x00\x01\x02PNG",
    })
    result = run(root, tmp_path / "out")
    reasons = {w.path: w.message for w in result.warnings}
    assert set(reasons) == {"bad-yaml.md", "latin1.md", "binary.md"}
    assert "UTF-8" in reasons["latin1.md"] and "binary" in reasons["binary.md"]
    assert "GOODBODY" in (tmp_path / "out/bad-yaml/index.html").read_text()
    assert (tmp_path / "out/good/index.html").exists()
    ok = cli("build", root, "--out", tmp_path / "o2")
    assert ok.exit_code == 0
    strict = cli("build", root, "--out", tmp_path / "o3", "--strict")
    assert strict.exit_code == 1


def test_strict_fails_on_broken_links_only_when_there_are_any(write_corpus, tmp_path: Path, cli):
    clean = write_corpus({"a.md": "# A\n[[b]]\n", "b.md": "# B\n"}, root=tmp_path / "clean")
    assert cli("build", clean, "--out", tmp_path / "o1", "--strict").exit_code == 0
    broken = write_corpus({"a.md": "# A\n[[nowhere]]\n"}, root=tmp_path / "broken")
    assert cli("build", broken, "--out", tmp_path / "o2", "--strict").exit_code == 1


def test_broken_and_ambiguous_links_are_styled_listed_and_linted(write_corpus, tmp_path: Path, cli):
    root = write_corpus({
        "a.md": "# A\nSee [[missing page]] and [[Twin]] and [[b|the B page]].\n",
        "b.md": "# B\n",
        "x/one.md": "---\ntitle: Twin\n---\n",
        "y/two.md": "---\ntitle: twin\n---\n",
    })
    out = tmp_path / "out"
    run(root, out)
    page = (out / "a/index.html").read_text()
    assert re.search(r'class="wikilink broken"[^>]*>missing page<', page)
    assert re.search(r'class="wikilink broken"[^>]*>Twin<', page)
    assert '<a class="wikilink" href="../b/index.html">the B page</a>' in page
    broken_page = (out / "_/broken/index.html").read_text()
    assert "missing page" in broken_page and "ambiguous: x/one.md, y/two.md" in broken_page
    lint = cli("lint", root, "--json")
    assert lint.exit_code == 1
    codes = {(f["code"], f["path"]) for f in json.loads(lint.output)["findings"]}
    assert ("broken-link", "a.md") in codes and ("ambiguous-link", "a.md") in codes
    assert ("duplicate-name", "x/one.md") in codes


def test_a_project_and_its_decision_log_sharing_a_title_is_not_a_lint_finding(write_corpus, cli):
    # [[tidepool]] names projects/tidepool/state.md (its slug), so the decision log
    # memory-write made as decisions/tidepool.md under the project's title is no ambiguity
    root = write_corpus({
        "projects/tidepool/state.md": "---\ntitle: Tidepool\ntype: project\n---\n# Tidepool\n",
        "decisions/tidepool.md": "---\ntitle: Tidepool\ntype: decision\n---\n# Tidepool\n",
        "a.md": "# A\nWorks on [[tidepool]].\n",
    })
    lint = cli("lint", root, "--json")
    assert lint.exit_code == 0, lint.output
    assert json.loads(lint.output)["findings"] == []


def test_backlinks_and_outgoing_links_on_pages(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n[[b#Part two]]\n", "b.md": "# B\n## Part two\n"})
    run(root, tmp_path / "out")
    a = (tmp_path / "out/a/index.html").read_text()
    b = (tmp_path / "out/b/index.html").read_text()
    assert 'href="../b/index.html#part-two"' in a
    assert "Backlinks" in b and 'href="../a/index.html"' in b


class _ScriptFinder(HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self.js_urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts.append(dict(attrs).get("src") or "inline")
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag}.{name}")
            if name in ("href", "src", "action") and value and value.strip().lower().startswith(("javascript:", "data:", "vbscript:")):
                self.js_urls.append(value)


def test_raw_html_and_script_injection_is_escaped(write_corpus, tmp_path: Path):
    root = write_corpus({
        "evil.md": (
            "---\ntitle: '<script>alert(1)</script>'\ntags: ['<img src=x onerror=alert(2)>']\n"
            "note: '\"><script>alert(3)</script>'\n---\n"
            "<script>alert(4)</script>\n\n<div onclick=\"alert(5)\">x</div>\n\n"
            "[click](javascript:alert(6)) [[<script>alert(7)</script>]] ![i](data:text/html,<script>alert(8)</script>)\n"
        ),
    })
    out = tmp_path / "out"
    run(root, out)
    for path in out.rglob("*.html"):
        finder = _ScriptFinder()
        finder.feed(path.read_text())
        # Only our own bundled scripts (the rest load on demand from them).
        assert all(s.endswith(("_/static/theme.js", "_/static/site.js")) for s in finder.scripts), (path, finder.scripts)
        assert finder.handlers == [] and finder.js_urls == [], path


def test_no_request_to_any_external_host(docs_site: Path):
    for path, data in site_files(docs_site).items():
        if path.endswith((".html", ".css", ".js")):
            text = data.decode()
            # Anything the browser fetches by itself: src=, <link href>, form actions.
            assert not re.search(r'src="(https?:)?//', text), path
            assert not re.search(r'<link[^>]+href="(https?:)?//', text), path
            assert not re.search(r'action="(https?:)?//', text), path
            assert "url(http" not in text
            # mermaid's bundle holds a CSS parser, which names "@import" as a keyword
            if not (path.startswith("_/static/vendor/") and path.endswith(".js")):
                assert "@import" not in text, path


def test_output_folder_of_someone_else_is_refused(write_corpus, tmp_path: Path, cli):
    root = write_corpus({"a.md": "# A\n"})
    mine = tmp_path / "precious"
    mine.mkdir()
    (mine / "thesis.txt").write_text("do not delete")
    result = cli("build", root, "--out", mine)
    assert result.exit_code == 1 and "not empty" in result.output
    assert (mine / "thesis.txt").read_text() == "do not delete"
    assert cli("build", root, "--out", root.parent).exit_code == 1  # would contain the corpus


def test_build_json_summary(write_corpus, tmp_path: Path, cli):
    root = write_corpus({"a.md": "# A\n", "b.md": "---\ntitle: [bad\n---\n"})
    result = cli("build", root, "--out", tmp_path / "out", "--json")
    summary = json.loads(result.output)
    assert summary["documents"] == 2 and summary["pages_written"] > 2
    assert summary["warnings"][0]["path"] == "b.md"
    assert isinstance(summary["seconds"], float)


def test_console_script_quick_exit_keeps_output_and_exit_code(write_corpus, tmp_path: Path):
    """The installed script leaves with os._exit after a build: the piped JSON must be
    complete and the exit code the one --strict asks for."""
    import subprocess
    import sys

    root = write_corpus({"a.md": "# A\n[[nowhere]]\n", "b.md": "# B\n" + "text\n" * 5000})
    entry = [sys.executable, "-c", "from commonplace.server.cli import entry; entry()"]
    for extra, code in (([], 0), (["--strict"], 1)):
        out = tmp_path / f"out{code}"
        proc = subprocess.run([*entry, "build", str(root), "--out", str(out), "--no-index", "--json", *extra],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == code, proc.stderr
        summary = json.loads(proc.stdout)
        assert summary["documents"] == 2 and summary["broken_links"] == 1
        assert (out / "b" / "index.html").read_text().count("text") >= 5000
        assert (root / ".commonplace").is_dir()  # the manifest was written before leaving


def test_unknown_frontmatter_is_shown_on_the_page(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "---\ntitle: A\nmood: sunny\nsensitivity: low\n---\nx\n"})
    run(root, tmp_path / "out")
    page = (tmp_path / "out/a/index.html").read_text()
    assert "<dt>mood</dt><dd>sunny</dd>" in page and "<dt>sensitivity</dt>" in page


def test_markdown_features_render(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": (
        "# A\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n"
        "Math $e^{i\\pi}$ and a note.[^1]\n\n[^1]: The footnote.\n\n## Sub heading\n"
    )})
    run(root, tmp_path / "out")
    page = (tmp_path / "out/a/index.html").read_text()
    assert "<table>" in page and 'type="checkbox"' in page and 'class="math inline"' in page
    assert "footnote" in page and 'id="sub-heading"' in page


def test_recent_changes_and_feed_follow_document_dates(write_corpus, tmp_path: Path):
    root = write_corpus({
        "old.md": "---\ntitle: Old\nupdated: 2020-01-01\n---\n",
        "new.md": "---\ntitle: New\nupdated: 2026-05-05\n---\n",
        "undated.md": "# Undated\n",
    })
    run(root, tmp_path / "out")
    recent = (tmp_path / "out/_/recent/index.html").read_text()
    assert recent.index("New") < recent.index("Old")
    assert "Undated" in recent  # dated by its file (tests/test_site_output.py)
    feed = (tmp_path / "out/feed.xml").read_text()
    assert "<updated>2026-05-05T00:00:00Z</updated>" in feed


def test_paths_with_spaces_and_unicode_link_correctly(write_corpus, tmp_path: Path):
    root = write_corpus({"my notes/Café plan.md": "# Café plan\n", "a.md": "# A\n[[Café plan]]\n"})
    run(root, tmp_path / "out")
    assert (tmp_path / "out/my notes/Café plan/index.html").exists()
    assert 'href="../my%20notes/Caf%C3%A9%20plan/index.html"' in (tmp_path / "out/a/index.html").read_text()


def test_pages_emitted_while_rendering_show_nothing_rendering_makes():
    """A clean build emits most generated pages while the documents still render;
    those pages must not change once excerpts exist, and the rest must show them."""
    from commonplace.compiler.site import emit, emitters
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.site.model import Site
    from commonplace.compiler.site.search_terms import sections_json

    corpus = load_corpus(DOCS)
    site = Site.build(corpus.docs, corpus.resolver, corpus.graph, "docs")
    env = emit.make_env()

    def pages(rendered):
        return dict(emitters.site_pages(site, env, emitters.Selection(), rendered))

    for d in site.docs:
        d.excerpt, d.search_text = "", b""
    early = pages(False)
    for d in site.docs:
        d.excerpt = f"EXCERPT-OF {d.path}"
        d.search_text = sections_json([["", "", d.excerpt]]).encode()
    assert pages(False) == early
    late = pages(True)
    assert not set(early) & set(late)
    assert set(early) | set(late) == set(pages(None)) == emitters.site_urls(site)
    assert b"EXCERPT-OF" in late["feed.xml"] and "index.html" in early
    assert sum(b"EXCERPT-OF" in data for url, data in late.items() if url != "feed.xml") > 1  # search data


def test_parallel_build_equals_in_process_build(tmp_path: Path, monkeypatch, docs_site: Path):
    monkeypatch.setenv("COMMONPLACE_WORKERS", "2")
    result = run(DOCS, tmp_path / "parallel")
    assert result.extra["workers"] == 2
    assert site_files(tmp_path / "parallel") == site_files(docs_site)


def test_xml_escape_matches_the_standard_library():
    from hypothesis import given, settings, strategies as st
    from xml.sax.saxutils import escape

    from commonplace.compiler.site.emit import xml_escape

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.sampled_from('ab&<>"\' ;#x')))
    def check(text: str) -> None:
        assert xml_escape(text) == escape(text)
        assert xml_escape(text, {'"': "&quot;"}) == escape(text, {'"': "&quot;"})

    check()
