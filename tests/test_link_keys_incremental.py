"""Incremental builds re-resolve links by every name the resolver matches on.

`[[atlas]]` names a folder project by its slug (`projects/atlas/state.md`, whatever
that page is titled), and a project's decision log never takes the project's links
(`corpus.links`). A page arriving or leaving under such a name must re-check the
links elsewhere, or the incremental site differs from a clean one.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


class Corpus:
    """A corpus built incrementally into one folder, compared after every build with a
    clean build of a copy."""

    def __init__(self, tmp: Path):
        self.tmp, self.root, self.out = tmp, tmp / "corpus", tmp / "site-inc"
        self.root.mkdir()
        self.builds = 0

    def write(self, path: str, text: str) -> None:
        p = self.root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def page(self, url: str) -> str:
        return (self.out / url).read_text(encoding="utf-8")

    def build(self, changed: int | None = None) -> dict[str, bytes]:
        """Build incrementally; assert it equals a clean build; return the site."""
        self.builds += 1
        result = build(BuildOptions(corpus=self.root, out=self.out, embed=False, index=False))
        if changed is not None:  # the build was incremental: only the edit was parsed
            assert result.documents_changed + result.documents_removed == changed
        clean_root = self.tmp / f"clean-{self.builds}"
        clean_out = self.tmp / f"site-clean-{self.builds}"
        shutil.copytree(self.root, clean_root, ignore=shutil.ignore_patterns(".commonplace"))
        build(BuildOptions(corpus=clean_root, out=clean_out, embed=False, index=False, name=self.root.name))
        inc, clean = site_bytes(self.out), site_bytes(clean_out)
        assert sorted(inc) == sorted(clean)
        for k in inc:
            assert inc[k] == clean[k], k
        return inc


def _link_to_atlas(html: str) -> str:
    m = re.search(r'<a class="wikilink[^"]*"[^>]*>[^<]*</a>', html[html.index("Links to"):])
    assert m, html
    return m.group(0)


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    c = Corpus(tmp_path)
    # The folders and types the later pages bring exist already, so no edit below
    # changes the navigation (which re-renders every page and would hide the bug).
    c.write("notes/reader.md", "---\ntitle: Reader\n---\nLinks to [[atlas]].\n")
    c.write("projects/atlas/plan.md", "---\ntitle: Atlas plan\ntype: project\n---\nA plan.\n")
    c.write("projects/other.md", "---\ntitle: Other\ntype: project\n---\nAnother project.\n")
    c.write("decisions/misc.md", "---\ntitle: Misc decisions\ntype: decision\n---\nSome.\n")
    return c


STATE = "---\ntitle: Where things stand\ntype: project\n---\nThe project's state.\n"


def test_a_folder_projects_state_page_arriving_and_leaving_relinks_its_slug(corpus: Corpus):
    corpus.build()
    assert "wikilink broken" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.write("projects/atlas/state.md", STATE)  # titled otherwise: only the slug names it
    corpus.build(changed=1)
    link = _link_to_atlas(corpus.page("notes/reader/index.html"))
    assert "broken" not in link and "Where things stand" in link, link
    corpus.remove("projects/atlas/state.md")
    corpus.build(changed=1)
    assert "wikilink broken" in _link_to_atlas(corpus.page("notes/reader/index.html"))


def test_a_folder_project_takes_its_slug_from_a_page_so_named(corpus: Corpus):
    """`[[atlas]]` reached notes/atlas.md by its stem; the project arriving takes it."""
    corpus.write("notes/atlas.md", "---\ntitle: Atlas notes\n---\nNotes.\n")
    corpus.build()
    assert "Atlas notes" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.write("projects/atlas/state.md", STATE)
    corpus.build(changed=1)
    assert "Where things stand" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.remove("projects/atlas/state.md")
    corpus.build(changed=1)
    assert "Atlas notes" in _link_to_atlas(corpus.page("notes/reader/index.html"))


def test_a_second_state_page_for_one_slug_unties_and_ties_it(corpus: Corpus):
    """`projects/Atlas/state.md` and `projects/atlas/state.md` share the slug `atlas`:
    with both the slug names neither project."""
    corpus.write("projects/atlas/state.md", STATE)
    corpus.build()
    assert "Where things stand" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.write("projects/Atlas/state.md", "---\ntitle: Other state\ntype: project\n---\nText.\n")
    corpus.write("projects/Atlas/plan.md", "---\ntitle: Other plan\ntype: project\n---\nText.\n")
    corpus.build()  # a new folder: every page is rendered; what matters is the next build
    corpus.remove("projects/Atlas/state.md")
    corpus.build(changed=1)
    assert "Where things stand" in _link_to_atlas(corpus.page("notes/reader/index.html"))


def test_a_one_page_project_arriving_and_leaving_relinks_its_slug(corpus: Corpus):
    corpus.build()
    corpus.write("projects/atlas.md", STATE)
    corpus.build(changed=1)
    assert "Where things stand" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.remove("projects/atlas.md")
    corpus.build(changed=1)
    assert "wikilink broken" in _link_to_atlas(corpus.page("notes/reader/index.html"))


@pytest.mark.parametrize("project", ["projects/atlas.md", "projects/atlas/state.md"])
def test_a_decision_log_arriving_beside_a_project_leaves_its_links(corpus: Corpus, project: str):
    corpus.write(project, STATE)
    corpus.build()
    log = "---\ntitle: Where things stand\ntype: decision\n---\nDecided.\n"  # titled as the project
    corpus.write("decisions/atlas.md", log)
    corpus.build(changed=1)
    assert "Where things stand" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    assert "decisions/atlas" not in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.remove(project)  # the log is what the name means now
    corpus.build(changed=1)
    assert "decisions/atlas" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.write(project, STATE)
    corpus.build(changed=1)
    assert "decisions/atlas" not in _link_to_atlas(corpus.page("notes/reader/index.html"))


def test_a_project_linked_by_its_title_and_by_a_slug_in_another_case(corpus: Corpus):
    corpus.write("notes/reader.md", "---\ntitle: Reader\n---\nLinks to [[ATLAS]] and [[Where things stand]].\n")
    corpus.build()
    corpus.write("projects/atlas/state.md", STATE)
    corpus.build(changed=1)
    page = corpus.page("notes/reader/index.html")
    assert "wikilink broken" not in page, page
    corpus.remove("projects/atlas/state.md")
    corpus.build(changed=1)
    assert corpus.page("notes/reader/index.html").count('<a class="wikilink broken"') == 2


def test_a_link_written_with_backslashes_is_relinked_by_its_path(corpus: Corpus):
    """`[[projects\\atlas\\plan]]` (a Windows path) resolves as `projects/atlas/plan`."""
    corpus.write("notes/reader.md", "---\ntitle: Reader\n---\nLinks to [[projects\\atlas\\brief]].\n")
    corpus.build()
    assert "wikilink broken" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.write("projects/atlas/brief.md", "---\ntitle: Brief\ntype: project\n---\nShort.\n")
    corpus.build(changed=1)
    assert "Brief" in _link_to_atlas(corpus.page("notes/reader/index.html"))
    corpus.remove("projects/atlas/brief.md")
    corpus.build(changed=1)
    assert "wikilink broken" in _link_to_atlas(corpus.page("notes/reader/index.html"))


# ----- a tie renders as ambiguous, naming its candidates ------------------------------

def _wiki_html(text: str, resolved: tuple) -> str:
    from commonplace.compiler.markdown.mdit import parse_tokens, render_tokens

    tokens, env = parse_tokens(text)
    return render_tokens(tokens, {**env, "resolve_wikilink": lambda target, heading: resolved})


def test_a_tie_renders_as_ambiguous_naming_its_candidates():
    html = _wiki_html("See [[atlas|the atlas]].", (None, "", "wikilink broken", ("a/atlas.md", "b/atlas.md")))
    assert ('<a class="wikilink broken" title="Ambiguous link: [[atlas]] matches several pages, none nearest: '
            'a/atlas.md, b/atlas.md">the atlas</a>') in html, html


def test_a_link_no_page_matches_still_renders_as_broken():
    for resolved in ((None, "", "wikilink broken"), (None, "", "wikilink broken", ())):
        html = _wiki_html("See [[atlas]].", resolved)
        assert '<a class="wikilink broken" title="Broken link: no page matches atlas">atlas</a>' in html, html


def test_a_tie_names_its_candidates_escaped():
    html = _wiki_html("See [[a<b]].", (None, "", "wikilink broken", ('x/a<b.md', 'y/a"b.md')))
    assert 'title="Ambiguous link: [[a&lt;b]] matches several pages, none nearest: x/a&lt;b.md, y/a&quot;b.md"' in html


def test_a_built_page_shows_a_tie_as_lint_reports_it(tmp_path: Path):
    from commonplace.compiler.build.lint import lint
    from commonplace.compiler.build.pipeline import load_corpus

    root = tmp_path / "corpus"
    for path, text in {"reader.md": "Links to [[atlas]].\n", "a/atlas.md": "One.\n", "b/atlas.md": "Two.\n"}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    [finding] = [f for f in lint(load_corpus(root)) if f.code == "ambiguous-link"]
    assert finding.message == "[[atlas]] matches several pages, none nearest: a/atlas.md, b/atlas.md"
    build(BuildOptions(corpus=root, out=tmp_path / "site", embed=False, index=False))
    page = (tmp_path / "site/reader/index.html").read_text(encoding="utf-8")
    assert f'<a class="wikilink broken" title="Ambiguous link: {finding.message}">atlas</a>' in page, page
