"""An Obsidian vault in, its pages out: attachments, transclusion, links, lint, the home page.

Built from the fixture vault in tests/fixtures/vault (a copy, so tests may edit it).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from commonplace.compiler.build.pipeline import BuildOptions, build, load_corpus
from commonplace.compiler.build.lint import lint

FIXTURE = Path(__file__).parent / "fixtures" / "vault"


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".commonplace" not in p.parts}


def make(tmp: Path, name: str = "vault") -> Path:
    root = tmp / name
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("syntax", ".commonplace"))  # obsmd's part has its own tests
    return root


def run(root: Path, out: Path, clean: bool = False):
    return build(BuildOptions(root, out, embed=False, index=False, clean=clean))


def content(page: Path) -> str:
    html = page.read_text("utf-8")
    return html[html.index('<div class="content">'):html.index('<section class="links">')]


def references(page: Path, out: Path) -> list[tuple[str, Path]]:
    """Every local src/href of a page's body, and the site file it names."""
    found = []
    for attr, url in re.findall(r'\b(src|href)="([^"#]+)', content(page)):
        if re.match(r"^[a-z]+:", url):
            continue
        target = (page.parent / unquote(url)).resolve()
        found.append((url, target if target.suffix else target / "index.html"))
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vault")
    root = make(tmp)
    result = run(root, tmp / "site")
    return root, tmp / "site", result


def test_every_referenced_attachment_is_published_at_a_stable_path(built):
    _, out, _ = built
    files = sorted(p.relative_to(out / "_/files").as_posix() for p in (out / "_/files").rglob("*") if p.is_file())
    # Only what pages use; the hidden .obsidian folder never.
    assert files == ["attachments/beep.wav", "attachments/my picture.png", "attachments/paper.pdf",
                     "attachments/red.png", "projects/blue.png"]
    assert (out / "_/files/attachments/red.png").read_bytes() == (FIXTURE / "attachments/red.png").read_bytes()


def test_every_reference_resolves_from_the_pages_own_folder(built):
    _, out, _ = built
    pages = [out / "index.html", out / "Home/index.html", out / "deep/a/b/Deep/index.html"]
    for page in pages:
        refs = references(page, out)
        assert refs, page
        for url, target in refs:
            assert target.is_file(), f"{page}: {url} -> {target}"


def test_embeds_show_images_sized_pdf_audio_and_a_placeholder(built):
    _, out, _ = built
    html = content(out / "Home/index.html")
    assert re.search(r'<img class="attachment" src="\.\./_/files/attachments/red\.png" alt="red\.png"', html)
    assert 'width="300"' in html and 'width="40" height="20" style="height:20px"' in html
    assert '<img src="../_/files/attachments/red.png" alt="A red square"' in html  # ![alt](path)
    assert "my%20picture.png" in html
    assert '<iframe src="../_/files/attachments/paper.pdf"' in html
    assert '<audio class="attachment" controls' in html
    assert 'class="attachment missing" title="Missing attachment: gone.png"' in html
    assert '<a href="../_/files/attachments/paper.pdf" class="attachment">The paper</a>' in html


def test_transclusion_of_a_note_a_section_and_a_block(built):
    _, out, _ = built
    html = content(out / "Home/index.html")
    embeds = re.findall(r'<div class="embed-body">(.*?)</div></div>', html, re.S)
    assert len(embeds) == 3
    whole, steps, block = embeds
    assert "Bread for beginners." in whole and "Slice when cool." in whole
    assert "Knead the dough" in steps and "Bread for beginners" not in steps and "Slice" not in steps
    assert block.strip() == "<p>Let it rise overnight in a cool place.</p>"  # the ^tip id is not shown


def test_an_embed_cycle_stops_with_a_link(built):
    _, out, _ = built
    html = content(out / "Loop A/index.html")
    assert "Loop B embeds A" in html
    assert 'class="embed stopped" title="Not shown: embeds itself"' in html


def test_block_and_nested_heading_links(built):
    _, out, _ = built
    html = content(out / "Home/index.html")
    assert 'href="../projects/Recipe/index.html#^tip">the tip</a>' in html
    assert 'href="../projects/Recipe/index.html#dough">the dough</a>' in html


def test_a_shared_name_resolves_to_the_nearest_note_and_says_it_is_ambiguous(built):
    _, out, _ = built
    html = content(out / "projects/Roadmap/index.html")
    assert re.search(r'<a class="wikilink ambiguous" href="\.\./\.\./projects/Plan/index\.html" title="Ambiguous', html)
    # From a folder neither is nearer to: broken, never a guess.
    assert 'class="wikilink broken"' in content(out / "deep/a/b/Deep/index.html")


def test_home_md_is_the_home_page(built):
    _, out, _ = built
    home = (out / "index.html").read_text("utf-8")
    assert "This vault&#39;s home page." in home or "This vault's home page." in home
    assert '<link rel="stylesheet" href="./_/static/style.css">' in home


def test_a_note_named_dot_is_a_document_and_a_hidden_name_is_reported(built):
    root, out, result = built
    assert "A note named with one dot" in (out / "_dot/index.html").read_text("utf-8")
    assert [(w.path, w.code) for w in result.warnings] == [(".hidden.md", "hidden-file")]


def test_lint_reports_only_what_is_wrong_with_a_severity(built):
    root, _, _ = built
    findings = [(f.path, f.code, f.severity) for f in lint(load_corpus(root))]
    assert sorted(findings) == [
        (".hidden.md", "hidden-file", "warning"),
        ("Home.md", "missing-attachment", "error"),
        ("deep/a/b/Deep.md", "ambiguous-link", "error"),
    ]


def test_lint_exits_1_on_errors_and_on_warnings_only_with_strict(tmp_path):
    from commonplace.compiler.commands.cli import main

    root = make(tmp_path)
    runner = CliRunner()
    r = runner.invoke(main, ["lint", str(root)])
    assert r.exit_code == 1 and "error: [missing-attachment]" in r.stdout
    (root / "Home.md").write_text((root / "Home.md").read_text().replace("![[gone.png]]", ""))
    (root / "deep/a/b/Deep.md").write_text("# Deep\n\nNothing ambiguous.\n")
    r = runner.invoke(main, ["lint", str(root)])
    assert r.exit_code == 0 and "warning: [hidden-file]" in r.stdout and "0 errors, 1 warning." in r.stdout
    assert runner.invoke(main, ["lint", str(root), "--strict"]).exit_code == 1


def test_incremental_attachment_edits_equal_a_clean_build(tmp_path):
    root = make(tmp_path)
    out = tmp_path / "site"
    run(root, out)
    page_before = (out / "Home/index.html").read_bytes()

    # An edited image: only its copy changes.
    red = root / "attachments/red.png"
    data = (root / "projects/blue.png").read_bytes()
    red.write_bytes(data)
    os.utime(red, ns=(red.stat().st_atime_ns, red.stat().st_mtime_ns + 10_000_000))
    result = run(root, out)
    assert result.pages_written == 1 and result.documents_changed == 0
    assert (out / "_/files/attachments/red.png").read_bytes() == data
    assert (out / "Home/index.html").read_bytes() == page_before

    # A deleted one: its copy goes and the pages show a placeholder.
    (root / "projects/blue.png").unlink()
    run(root, out)
    assert not (out / "_/files/projects/blue.png").exists()
    assert 'title="Missing attachment: blue.png"' in content(out / "Home/index.html")

    # One that appears: the pages naming it find it.
    (root / "gone.png").write_bytes(data)
    run(root, out)
    assert (out / "_/files/gone.png").read_bytes() == data
    assert "Missing attachment: gone.png" not in content(out / "Home/index.html")

    clean = tmp_path / "clean"
    run(root, clean, clean=True)
    assert site_bytes(out) == site_bytes(clean)


def test_editing_an_embedded_note_rebuilds_the_pages_that_embed_it(tmp_path):
    root = make(tmp_path)
    out = tmp_path / "site"
    run(root, out)
    recipe = root / "projects/Recipe.md"
    recipe.write_text(recipe.read_text().replace("Knead the dough for ten minutes.", "Knead it for twelve minutes."))
    run(root, out)
    html = content(out / "Home/index.html")
    assert "Knead it for twelve minutes." in html and "ten minutes" not in html
    assert "Knead it for twelve minutes." in (out / "index.html").read_text("utf-8")  # the home page too
    # Through two levels: B changes, A (which embeds B) follows.
    (root / "Loop B.md").write_text("Loop B now says something else: ![[Loop A]]\n")
    run(root, out)
    assert "Loop B now says something else" in content(out / "Loop A/index.html")
    clean = tmp_path / "clean"
    run(root, clean, clean=True)
    assert site_bytes(out) == site_bytes(clean)


def test_home_page_follows_home_md_coming_and_going(tmp_path):
    root = make(tmp_path)
    out = tmp_path / "site"
    run(root, out)
    (root / "Home.md").unlink()
    run(root, out)
    assert "This vault" not in (out / "index.html").read_text("utf-8")
    (root / "commonplace.toml").write_text('[site]\nhome = "projects/Recipe"\n')
    run(root, out)
    assert "Bread for beginners." in (out / "index.html").read_text("utf-8")
    for url, target in references(out / "index.html", out):
        assert target.is_file(), url


def test_the_sidebar_folder_tree_follows_new_and_removed_folders(tmp_path):
    root = make(tmp_path)
    out = tmp_path / "site"
    run(root, out)
    nav = (out / "projects/Recipe/index.html").read_text("utf-8")
    assert '<ul class="tree">' in nav and 'href="../../_/folders/deep/a/b/index.html">b</a>' in nav
    (root / "journal/2026").mkdir(parents=True)
    (root / "journal/2026/Day.md").write_text("# Day\n")
    run(root, out)
    assert 'href="../../_/folders/journal/2026/index.html">2026</a>' in (out / "projects/Recipe/index.html").read_text("utf-8")
    shutil.rmtree(root / "deep")
    run(root, out)
    assert "folders/deep/" not in (out / "projects/Recipe/index.html").read_text("utf-8")
    clean = tmp_path / "clean"
    run(root, clean, clean=True)
    assert site_bytes(out) == site_bytes(clean)


def test_derived_state_can_live_outside_the_vault(tmp_path):
    from commonplace.server.cli import main

    root = make(tmp_path)
    state = tmp_path / "elsewhere"
    r = CliRunner().invoke(main, ["--state-dir", str(state), "build", str(root), "--out", str(tmp_path / "site"),
                                  "--no-embed"], env={"COMMONPLACE_STATE_DIR": None})
    os.environ.pop("COMMONPLACE_STATE_DIR", None)  # the option sets it for the process
    assert r.exit_code == 0, r.output
    assert not (root / ".commonplace").exists()
    assert list(state.glob("builds/*/manifest.json")) and (state / "index").is_dir()
    # The same through the corpus's settings, relative to the corpus.
    (root / "commonplace.toml").write_text('[site]\nstate_dir = "../kept"\n')
    run(root, tmp_path / "site2")
    assert not (root / ".commonplace").exists() and list((tmp_path / "kept").glob("builds/*/manifest.json"))


def test_obsidian_resolution_details():
    from commonplace.compiler.markdown.embeds import section
    from commonplace.compiler.corpus.links import Resolver
    from commonplace.compiler.markdown.mdit import slugify
    from commonplace.compiler.markdown.parse import parse

    docs = [parse(p, t.encode())[0] for p, t in {
        "a/Basic formatting syntax.md": "# Basic formatting\n",
        "a/Self.md": "# Self\n\nSee [[Self#Part]].\n\n## Part\n",
    }.items()]
    r = Resolver.build(docs)
    assert r.resolve_wiki("basic formatting syntax", "b/x.md").path == "a/Basic formatting syntax.md"  # case
    body = "Text\n\n![[shot.png]]^after-embed\n\n- item one ^li\n- item two\n"
    assert section(body, "^after-embed", slugify) == "![[shot.png]]"
    assert section(body, "^li", slugify) == "- item one"
    assert section("# A\n\n```\n# not a heading\n```\n\n## B\nb\n", "A#B", slugify) == "## B\nb\n"


def test_a_link_to_a_heading_of_its_own_page_is_not_a_self_link(tmp_path):
    (tmp_path / "Self.md").write_text("# Self\n\nSee [[Self#Part]] and [[Self]].\n\n## Part\n")
    findings = [(f.code, f.line) for f in lint(load_corpus(tmp_path))]
    assert findings == [("self-link", 3)]
