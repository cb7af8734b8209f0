"""Issue 30 #9: a write acknowledged while the index could not be updated (disk full:
`indexed: false`) becomes searchable with the next refresh (another write, or a reindex)
once the disk has room again, without a restart."""

from __future__ import annotations

import errno
from pathlib import Path

from commonplace.compiler.live.corpus import LiveCorpus
from commonplace.compiler import search as index_stage  # the facade the live corpus calls


def test_a_write_that_missed_the_index_is_indexed_by_the_next_refresh(tmp_path: Path, monkeypatch) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "notes").mkdir(parents=True)
    (corpus / "notes" / "a.md").write_text("# A\n\nThe first note.\n")
    live = LiveCorpus(corpus, tmp_path / "site", embed=False)
    live.open()
    try:
        real = index_stage.update_indexes

        def full_disk(*a, **kw):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(index_stage, "update_indexes", full_disk)
        (corpus / "notes" / "b.md").write_text("# B\n\nThe quokka ledger was written while the disk was full.\n")
        first = live.refresh(["notes/b.md"])
        assert first.indexed is False
        assert not [r for r in live.search({"query": "quokka ledger", "mode": "bm25"})["results"]]
        monkeypatch.setattr(index_stage, "update_indexes", real)  # space is back
        (corpus / "notes" / "c.md").write_text("# C\n\nAnother note.\n")
        live.refresh(["notes/c.md"])
        hits = [r["path"] for r in live.search({"query": "quokka ledger", "mode": "bm25"})["results"]]
        assert "notes/b.md" in hits, hits
    finally:
        live.close()


def test_a_reindex_catches_up_too(tmp_path: Path, monkeypatch) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "notes").mkdir(parents=True)
    (corpus / "notes" / "a.md").write_text("# A\n\nThe first note.\n")
    live = LiveCorpus(corpus, tmp_path / "site", embed=False)
    live.open()
    try:
        real = index_stage.update_indexes
        monkeypatch.setattr(index_stage, "update_indexes",
                            lambda *a, **kw: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
        (corpus / "notes" / "b.md").write_text("# B\n\nThe wallaby register.\n")
        assert live.refresh(["notes/b.md"]).indexed is False
        monkeypatch.setattr(index_stage, "update_indexes", real)
        live.refresh([], rescan=True)  # what /v1/stream?reindex=true does
        hits = [r["path"] for r in live.search({"query": "wallaby register", "mode": "bm25"})["results"]]
        assert "notes/b.md" in hits, hits
    finally:
        live.close()
