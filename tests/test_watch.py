"""The watcher: an editor's save shows up in the site within 2 seconds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from commonplace.compiler.live.corpus import LiveCorpus


def wait_for(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def live(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n\nFirst version.\n", "b.md": "# B\n\nLinks to [[a]].\n"})
    lc = LiveCorpus(root, tmp_path / "site", embed=False)
    lc.open()
    lines: list[str] = []
    lc.watch(echo=lines.append)
    lc.lines = lines
    yield lc
    lc.close()


def page(lc: LiveCorpus, name: str) -> str:
    p = lc.out / name / "index.html"
    return p.read_text() if p.exists() else ""


def test_write_in_place_updates_page(live):
    (live.root / "a.md").write_text("# A\n\nSecond version.\n")
    assert wait_for(lambda: "Second version" in page(live, "a"))
    assert wait_for(lambda: any("a.md" in line for line in live.lines))


def test_write_then_rename_updates_page(live):
    tmp = live.root / ".a.md.swp"
    tmp.write_text("# A\n\nRenamed into place.\n")
    os.replace(tmp, live.root / "a.md")
    assert wait_for(lambda: "Renamed into place" in page(live, "a"))


def test_backup_and_swap_files_are_ignored(live):
    (live.root / "a.md~").write_text("# backup\n")
    (live.root / "#a.md#").write_text("# autosave\n")
    (live.root / ".a.md.swp").write_text("# swap\n")
    (live.root / "c.md").write_text("# C\n\nNew note.\n")
    assert wait_for(lambda: "New note" in page(live, "c"))
    assert not (live.out / "a.md~").exists() and not page(live, "#a.md#")
    assert set(live.docs) == {"a.md", "b.md", "c.md"}


def test_delete_and_create_update_links(live):
    (live.root / "a.md").unlink()
    assert wait_for(lambda: not page(live, "a") and "wikilink broken" in page(live, "b"))
    (live.root / "a.md").write_text("# A\n\nBack again.\n")
    assert wait_for(lambda: "Back again" in page(live, "a") and "wikilink broken" not in page(live, "b"))


def test_bad_file_is_a_warning_not_the_end(live):
    (live.root / "bad.md").write_bytes(b"\x00\x01binary")
    assert wait_for(lambda: any("bad.md" in line and "binary" in line for line in live.lines))
    (live.root / "a.md").write_text("# A\n\nStill watching.\n")
    assert wait_for(lambda: "Still watching" in page(live, "a"))


def test_folder_rename_is_picked_up(live):
    (live.root / "sub").mkdir()
    (live.root / "sub/x.md").write_text("# X\n")
    assert wait_for(lambda: "sub/x.md" in live.docs)
    (live.root / "sub").rename(live.root / "moved")
    assert wait_for(lambda: "moved/x.md" in live.docs and "sub/x.md" not in live.docs)
    assert wait_for(lambda: (live.out / "moved/x/index.html").exists() and not (live.out / "sub/x/index.html").exists())


def test_saved_text_becomes_searchable(write_corpus, tmp_path: Path):
    root = write_corpus({"a.md": "# A\n\nNothing special.\n"})
    lc = LiveCorpus(root, tmp_path / "site", embed=False)
    lc.open()
    lc.watch(echo=lambda line: None)
    try:
        (root / "a.md").write_text("# A\n\nThe zanzibar gateway migrated.\n")

        def found() -> bool:
            res = lc.search({"query": "zanzibar gateway", "mode": "bm25"})
            return any(r["path"] == "a.md" for r in res["results"])

        assert wait_for(found)
        (root / "a.md").unlink()
        assert wait_for(lambda: not lc.search({"query": "zanzibar", "mode": "bm25"})["results"])
    finally:
        lc.close()


def test_new_top_level_folder_is_watched(live):
    folder = live.root / "projects"
    folder.mkdir()
    (folder / "apollo.md").write_text("# Apollo\n\nLaunch plan.\n", encoding="utf-8")
    assert wait_for(lambda: "Launch plan." in page(live, "projects/apollo")), live.lines
    # a later save inside the new folder is seen too (the folder has a watch of its own)
    (folder / "apollo.md").write_text("# Apollo\n\nLaunch plan, revised.\n", encoding="utf-8")
    assert wait_for(lambda: "revised" in page(live, "projects/apollo")), live.lines


def test_hidden_and_output_folders_are_not_watched(write_corpus, tmp_path: Path):
    from commonplace.compiler.live.watch import Watcher

    corpus = write_corpus({"notes/a.md": "# A\n", ".git/HEAD": "ref\n", "site/index.html": "x"})
    w = Watcher(corpus, corpus / "site", lambda paths, rescan: None)
    assert sorted(w._watches) == ["notes"]


def test_folder_holding_the_output_is_still_watched(write_corpus, tmp_path: Path):
    from commonplace.compiler.live.watch import Watcher

    corpus = write_corpus({"build/notes.md": "# Notes\n", "build/site/index.html": "x"})
    w = Watcher(corpus, corpus / "build" / "site", lambda paths, rescan: None)
    assert sorted(w._watches) == ["build"]


def test_an_image_that_appears_is_published_and_shown(live):
    (live.root / "b.md").write_text("# B\n\n![[pic.png]]\n")
    assert wait_for(lambda: "Missing attachment: pic.png" in page(live, "b"))
    (live.root / "pics").mkdir()
    (live.root / "pics" / "pic.png").write_bytes(b"\x89PNG not really")
    assert wait_for(lambda: (live.out / "_/files/pics/pic.png").is_file() and 'src="../_/files/pics/pic.png"' in page(live, "b"),
                    timeout=5.0)
    (live.root / "pics" / "pic.png").write_bytes(b"\x89PNG edited")
    assert wait_for(lambda: (live.out / "_/files/pics/pic.png").read_bytes() == b"\x89PNG edited", timeout=5.0)
