"""The build benchmark's harness: timed builds never follow a deletion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import bench_build
from .bench_build import TRASH, empty_trash, set_aside


def test_set_aside_moves_instead_of_deleting(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "index.html").write_text("old")
    trash = tmp_path / TRASH
    assert set_aside(site, trash) == site
    assert not site.exists()
    moved = list(trash.rglob("index.html"))
    assert [p.read_text() for p in moved] == ["old"]  # still there until timing is over
    set_aside(site, trash)  # nothing there: nothing to do
    site.mkdir()
    (site / "b.html").write_text("newer")
    set_aside(site, trash)
    assert len(list(trash.iterdir())) == 2  # two runs' leftovers never collide
    empty_trash(trash)
    assert not trash.exists()


def test_a_small_run_reports_and_leaves_only_its_own_outputs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["--n", "40", "--compare-n", "0", "--no-mkdocs", "--no-hugo", "--workdir", str(tmp_path), "--json"]
    assert bench_build.main(args) == 0
    first = json.loads(capsys.readouterr().out)
    row = first["full"]
    assert row["n"] == 40 and row["build_exit_code"] in (0, 1)
    assert row["commonplace_seconds"] > 0 and row["build_report"]["documents"] == 40
    assert row["commonplace_maxrss_mb"] > 10  # the build's peak memory is reported
    assert (tmp_path / "site-commonplace-40" / "index.html").is_file()
    # A second run in the same workdir replaces the corpus and site and cleans up after itself;
    # its table states the memory budget and whether the build held it.
    assert bench_build.main(args[:-1]) == 0
    table = capsys.readouterr().out
    assert "40-document build:" in table
    assert re.search(r"memory budget \(full, 40 docs\): 300 MB, peak [\d,]+ MB: held", table), table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus-40", "site-commonplace-40"]


def test_hugo_copy_renames_only_front_matter_keys_hugo_reserves() -> None:
    text = '---\ntitle: "A"\nurl: "https://example.com/a"\naliases:\n  - "A."\ntags: [x]\n---\n\nurl: stays in the body\n'
    out = bench_build._hugo_text(text)
    assert out == ('---\ntitle: "A"\ncp_url: "https://example.com/a"\ncp_aliases:\n  - "A."\ntags: [x]\n---\n'
                   '\nurl: stays in the body\n')
    assert bench_build._hugo_text("no front matter\nurl: x\n") == "no front matter\nurl: x\n"


@pytest.mark.skipif(bench_build.hugo_version() is None, reason="hugo is not installed (apt-get install hugo)")
def test_hugo_column_times_a_build_and_its_memory(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["--n", "40", "--compare-n", "0", "--no-mkdocs", "--workdir", str(tmp_path), "--json"]
    assert bench_build.main(args) == 0
    result = json.loads(capsys.readouterr().out)
    row = result["full"]
    assert result["hugo"]["used"] and row["hugo_seconds"] > 0 and row["hugo_maxrss_mb"] > 10
    # The ratio is printed to two decimals: off by at most half a hundredth (plus the seconds' rounding).
    assert row["hugo_ratio"] == pytest.approx(row["hugo_seconds"] / row["commonplace_seconds"], abs=0.006, rel=0.01)
    pages = list((tmp_path / "hugo-project-corpus-40" / "content").rglob("*.md"))
    assert len(pages) == 40 and (tmp_path / "hugo-project-corpus-40" / "content" / "_index.md").is_file()
