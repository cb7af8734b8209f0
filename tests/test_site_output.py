"""Site settings and dates: undated pages get their file's date (git or mtime), the site
title and URL come from commonplace.toml, and the sitemap is absolute or absent."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.site.output import OutputError

DAY = 86400
JAN_5_2025 = 1736035200  # 2025-01-05T00:00:00Z


def run(corpus: Path, out: Path, **kw):
    return build(BuildOptions(corpus=corpus, out=out, embed=False, index=False, **kw))


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def touch(path: Path, when: int) -> None:
    os.utime(path, (when, when))


def test_new_undated_notes_appear_in_recent_changes_and_the_feed(write_corpus, tmp_path: Path):
    root = write_corpus({"old.md": "---\ntitle: Old\nupdated: 2020-01-01\n---\nx\n"})
    run(root, tmp_path / "out")
    for i in range(5):  # what the issue did: add five notes, no frontmatter
        (root / f"note-{i}.md").write_text(f"# New note {i}\n\nText.\n")
        touch(root / f"note-{i}.md", JAN_5_2025 + i * DAY)
    run(root, tmp_path / "out")
    recent = (tmp_path / "out/_/recent/index.html").read_text()
    home = (tmp_path / "out/index.html").read_text()
    feed = (tmp_path / "out/feed.xml").read_text()
    for i in range(5):
        assert f"New note {i}" in recent and f"New note {i}" in home and f"New note {i}" in feed
    assert recent.index("New note 4") < recent.index("New note 0") < recent.index("Old")
    assert "<time>2025-01-09</time>" in recent
    assert "<updated>2025-01-09T00:00:00Z</updated>" in feed


def test_same_files_same_dates_give_the_same_bytes_and_a_touch_shows(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n", "b.md": "---\ncreated: 2024-02-02\n---\n# B\n"})
    touch(root / "a.md", JAN_5_2025)
    run(root, tmp_path / "one")
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".commonplace"))  # keeps mtimes
    run(copy, tmp_path / "two", name="corpus")
    assert files(tmp_path / "one") == files(tmp_path / "two")
    # Saved again, same bytes, another day: the incremental build sees the new date, as
    # a clean build of the same files does.
    touch(root / "a.md", JAN_5_2025 + 3 * DAY)
    run(root, tmp_path / "one")
    assert "2025-01-08" in (tmp_path / "one/_/recent/index.html").read_text()
    run(root, tmp_path / "clean", clean=True)
    assert files(tmp_path / "one") == files(tmp_path / "clean")


def _git(root: Path, *args: str, when: int | None = None) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_repository_the_last_commit_dates_a_page(write_corpus, tmp_path: Path):
    root = write_corpus({"notes/a.md": "# A\n", "notes/b.md": "# B\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first", when=JAN_5_2025)
    (root / "notes/b.md").write_text("# B\n\nMore.\n")
    _git(root, "commit", "-q", "-am", "second", when=JAN_5_2025 + 10 * DAY)
    (root / "notes/c.md").write_text("# C\n")  # not committed: its own mtime
    touch(root / "notes/c.md", JAN_5_2025 + 20 * DAY)
    for p in ("notes/a.md", "notes/b.md"):  # a fresh clone's mtimes say nothing
        touch(root / p, JAN_5_2025 + 30 * DAY)
    run(root, tmp_path / "out")
    recent = (tmp_path / "out/_/recent/index.html").read_text()
    assert "<time>2025-01-05</time>" in recent and "<time>2025-01-15</time>" in recent
    assert "<time>2025-01-25</time>" in recent and "2025-02-04" not in recent
    (root / "notes/a.md").write_text("# A\n\nEdited, not committed.\n")  # dirty: mtime again
    touch(root / "notes/a.md", JAN_5_2025 + 40 * DAY)
    run(root, tmp_path / "out")
    assert "<time>2025-02-14</time>" in (tmp_path / "out/_/recent/index.html").read_text()


def test_site_title_and_url_from_commonplace_toml(write_corpus, tmp_path: Path):
    root = write_corpus({"a b.md": "# A\n", "commonplace.toml": '[site]\ntitle = "Team memory"\nurl = "https://notes.example.org/wiki/"\n'})
    run(root, tmp_path / "out")
    home = (tmp_path / "out/index.html").read_text()
    assert "<title>Home · Team memory</title>" in home
    sitemap = (tmp_path / "out/sitemap.xml").read_text()
    assert "<loc>https://notes.example.org/wiki/a%20b/index.html</loc>" in sitemap
    assert 'href="https://notes.example.org/wiki/index.html"' in (tmp_path / "out/feed.xml").read_text()
    assert 'src="/wiki/_/static/site.js"' in (tmp_path / "out/404.html").read_text()
    # A command-line value wins over the file.
    run(root, tmp_path / "flag", name="Other", site_url="https://x.example.org")
    assert "<title>Home · Other</title>" in (tmp_path / "flag/index.html").read_text()
    assert "<loc>https://x.example.org/a%20b/index.html</loc>" in (tmp_path / "flag/sitemap.xml").read_text()


def test_no_sitemap_without_a_site_url(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n"})
    run(root, tmp_path / "out")
    assert not (tmp_path / "out/sitemap.xml").exists()
    (root / "commonplace.toml").write_text('[site]\nurl = "https://example.org"\n')
    run(root, tmp_path / "out")  # the setting changes every page: a full rebuild
    assert "<loc>https://example.org/a/index.html</loc>" in (tmp_path / "out/sitemap.xml").read_text()
    (root / "commonplace.toml").unlink()
    run(root, tmp_path / "out")
    assert not (tmp_path / "out/sitemap.xml").exists()


@pytest.mark.parametrize("text, message", [
    ('[site]\ntitel = "x"\n', "unknown setting site.titel"),
    ('[site]\nurl = "notes.example.org"\n', "absolute http(s) URL"),
    ('[site\n', "cannot read the settings"),
    ('[site]\ntitle = 3\n', "must be strings"),
    ('site = 1\n', "must be a table"),
])
def test_bad_settings_stop_the_build_with_a_clear_error(write_corpus, tmp_path: Path, text: str, message: str):
    root = write_corpus({"a.md": "# A\n", "commonplace.toml": text})
    with pytest.raises(OutputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(root, tmp_path / "out")
    assert not (tmp_path / "out/index.html").exists()


def test_bad_site_url_flag_is_refused(write_corpus, tmp_path: Path, cli):
    root = write_corpus({"a.md": "# A\n"})
    result = cli("build", root, "--out", tmp_path / "out", "--site-url", "javascript:alert(1)", "--no-index")
    assert result.exit_code == 1 and "absolute http(s) URL" in result.output
