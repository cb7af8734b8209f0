"""Group commit of refreshes (`compiler/live/commit.py`): a writer alone, or one client
writing in turn, refreshes at once; overlapping writers share refreshes (the leader waits
`GATHER_SECONDS` for more while writes overlap), and every writer returns only after a
refresh that includes its path and started after it registered."""

from __future__ import annotations

import threading
import time

from commonplace.compiler.live import commit as R


class FakeLive:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.batches: list[tuple[float, list[str]]] = []  # (start, paths)
        self.lock = threading.Lock()

    def __call__(self, paths: list[str]) -> object:
        with self.lock:
            self.batches.append((time.monotonic(), list(paths)))
        time.sleep(self.seconds)
        return type("R", (), {"indexed": True})()


def test_one_writer_in_turn_never_waits_for_company(monkeypatch):
    monkeypatch.setattr(R, "GATHER_SECONDS", 0.5)
    live, b = FakeLive(0.01), R.RefreshBatcher()
    for i in range(5):
        t0 = time.monotonic()
        assert b.run(live, [f"a{i}.md"]) == R.Refreshed(True, None)
        assert time.monotonic() - t0 < 0.3
    assert [p for _, p in live.batches] == [[f"a{i}.md"] for i in range(5)]


def test_overlapping_writers_share_refreshes_and_each_sees_its_own(monkeypatch):
    monkeypatch.setattr(R, "GATHER_SECONDS", 0.05)
    live, b = FakeLive(0.05), R.RefreshBatcher()
    seen: list[tuple[str, float]] = []
    errors: list[str] = []

    def writer(cid: int) -> None:
        for i in range(6):
            path, t0 = f"c{cid}-{i}.md", time.monotonic()
            if b.run(live, [path]) != R.Refreshed(True, None):
                errors.append(path)
            seen.append((path, t0))
            time.sleep(0.005 * cid)

    threads = [threading.Thread(target=writer, args=(c,)) for c in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(seen) == 36
    for path, t0 in seen:  # in a refresh that started after the writer registered
        assert any(path in paths and start >= t0 for start, paths in live.batches), path
    assert len(live.batches) < 24  # shared: 36 writes, far fewer refreshes


def test_a_bad_gather_setting_keeps_the_default_and_says_so(caplog):
    with caplog.at_level("WARNING", logger="commonplace"):
        assert R._gather_seconds("soon") == R.GATHER_DEFAULT
        assert R._gather_seconds("-1") == R.GATHER_DEFAULT
    assert "COMMONPLACE_WRITE_GATHER='soon'" in caplog.text
    assert R._gather_seconds("0") == 0.0 and R._gather_seconds(None) == R.GATHER_DEFAULT


def test_a_bad_switch_interval_is_said_and_ignored(monkeypatch, capsys):
    import sys

    from commonplace.server.runner import set_switch_interval

    before = sys.getswitchinterval()
    monkeypatch.setenv("COMMONPLACE_SWITCH_INTERVAL", "fast")
    set_switch_interval()
    assert sys.getswitchinterval() == before
    assert "COMMONPLACE_SWITCH_INTERVAL='fast' is not a number" in capsys.readouterr().err


def test_a_live_write_says_which_links_it_added_and_removed(tmp_path):
    """`LiveCorpus.write`: applied, refreshed (searchable), and the links it changed read
    from the refreshed link graph; a dry run changes nothing."""
    from commonplace.compiler import writes as w
    from commonplace.compiler.live.corpus import LiveCorpus

    corpus = tmp_path / "c"
    for name, text in {"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n", "c.md": "# C\n"}.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text)
    with LiveCorpus(corpus, tmp_path / "site", embed=False) as live:
        old = live.docs["a.md"].hash
        dry = live.write(w.WriteRequest("replace", "a.md", "# A\n\n[[c]]\n", expected_hash=old, dry_run=True))
        assert dry.committed is None and "[[b]]" in (corpus / "a.md").read_text()
        done = live.write(w.WriteRequest("replace", "a.md", "# A\n\n[[c]] and [[a]] zebrafish\n", expected_hash=old)).committed
        assert done.paths == ["a.md"] and done.indexed and done.failed is None
        assert done.added == {"a.md": ["c.md"]} and done.removed == {"a.md": ["b.md"]}
        assert live.graph.backlinks.get("c.md") == ["a.md"] and "b.md" not in live.graph.backlinks
        assert [r["path"] for r in live.search({"query": "zebrafish", "mode": "bm25"})["results"]] == ["a.md"]
