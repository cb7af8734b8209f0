"""The first-run benchmark's harness: CPU time of a build's process tree, and the Quartz
comparison's checks (never run here: Quartz is not part of this repository)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from . import bench_first_run as bench

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {secs}: pass\n"


def test_tree_cpu_counts_the_process_and_its_children(tmp_path: Path) -> None:
    # A parent that burns CPU itself and starts a child that burns more, then sleeps:
    # the tree's CPU is both, read while the parent is still alive.
    script = tmp_path / "burn.py"
    script.write_text(
        "import subprocess, sys, time\n"
        + BURN.format(secs=0.3)
        + f"subprocess.run([sys.executable, '-c', {BURN.format(secs=0.3)!r}])\n"
        + "print('done', flush=True)\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        cpu = bench.tree_cpu(proc.pid)
        assert 0.5 <= cpu < 5, cpu  # 0.6 s burnt, plus two interpreters' start
    finally:
        proc.kill()
        proc.wait()
    time.sleep(0.05)
    assert bench.tree_cpu(proc.pid) == 0  # gone: nothing to count


def test_quartz_is_skipped_with_the_reason(tmp_path: Path) -> None:
    why = bench.quartz_missing(tmp_path)
    assert why is not None and ("not a Quartz 4 checkout" in why or "node/npx" in why)
    (tmp_path / "quartz").mkdir()
    (tmp_path / "quartz" / "bootstrap-cli.mjs").write_text("")
    why = bench.quartz_missing(tmp_path)
    assert why is not None and ("no node_modules" in why or "node/npx" in why)


def test_quartz_content_is_the_corpus_and_the_checkouts_own_is_kept(tmp_path: Path) -> None:
    qdir, corpus = tmp_path / "quartz", tmp_path / "vault"
    (qdir / "content").mkdir(parents=True)
    (qdir / "content" / "index.md").write_text("Quartz's own page")
    (corpus / ".commonplace" / "index").mkdir(parents=True)
    (corpus / "a.md").write_text("# A\n")
    bench.quartz_content(qdir, corpus)
    assert sorted(p.name for p in (qdir / "content").iterdir()) == ["a.md"]  # no index folder
    assert (qdir / bench.QUARTZ_ASIDE / "index.md").read_text() == "Quartz's own page"
    (corpus / "b.md").write_text("# B\n")
    bench.quartz_content(qdir, corpus)  # again: the kept original is not overwritten
    assert sorted(p.name for p in (qdir / "content").iterdir()) == ["a.md", "b.md"]
    assert (qdir / bench.QUARTZ_ASIDE / "index.md").read_text() == "Quartz's own page"
