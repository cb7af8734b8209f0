"""A build killed with SIGKILL at any point leaves a state the next build recovers from.

Each trial edits the corpus, starts `commonplace build` in a subprocess, kills it after
a random delay, then runs the build again without --clean: it must succeed and produce
exactly the bytes of a clean build of the same corpus.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.benchmarks.corpus_gen import generate  # noqa: E402

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def run_build(corpus: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "build", str(corpus), "--out", str(out), "--no-embed", "--json", *extra],
                          capture_output=True, text=True, timeout=600)


def edit(corpus: Path, rng: random.Random, step: int) -> None:
    files = sorted(corpus.rglob("*.md"))
    for f in rng.sample(files, 3):
        f.write_text(f.read_text() + f"\n\nEdit {step}: more words about deployments.\n")
    victim = rng.choice(files)
    if victim.exists():
        victim.rename(victim.with_name(f"renamed-{step}-{victim.name}"))
    (corpus / f"notes/new-{step}.md").write_text(f"---\ntitle: New {step}\ntags: [crash]\n---\nLinks [[New {step - 1}]].\n")


def test_killed_builds_recover_to_a_clean_build(tmp_path: Path):
    rng = random.Random(int(os.environ.get("CRASH_SEED", "7")))
    trials = int(os.environ.get("CRASH_TRIALS", "8"))
    corpus = tmp_path / "corpus"
    generate(corpus, 300, seed=3)
    (corpus / "notes").mkdir(exist_ok=True)
    out = tmp_path / "site"
    first = run_build(corpus, out)
    assert first.returncode in (0, 1), first.stderr
    full_seconds = None
    for trial in range(trials):
        edit(corpus, rng, trial)
        proc = subprocess.Popen([*CLI, "build", str(corpus), "--out", str(out), "--no-embed", "--json"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Kill anywhere from start-up to the end of a typical build.
        t0 = time.monotonic()
        delay = rng.uniform(0.2, full_seconds or 3.0)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.returncode == 0 and full_seconds is None:
            full_seconds = time.monotonic() - t0
        again = run_build(corpus, out)
        assert again.returncode in (0, 1), f"trial {trial}: recovery build failed:\n{again.stderr[-2000:]}"
        clean_corpus = tmp_path / f"clean-{trial}" / "corpus"  # same folder name: same site name
        shutil.copytree(corpus, clean_corpus, ignore=shutil.ignore_patterns(".commonplace"))
        clean_out = tmp_path / f"clean-site-{trial}"
        clean = subprocess.run([*CLI, "build", str(clean_corpus), "--out", str(clean_out), "--no-embed",
                                "--json", "--clean"], capture_output=True, text=True, timeout=600)
        assert clean.returncode in (0, 1), clean.stderr
        got, want = site_bytes(out), site_bytes(clean_out)
        assert sorted(got) == sorted(want), f"trial {trial}: file sets differ"
        diff = [k for k in got if got[k] != want[k]]
        assert not diff, f"trial {trial}: {diff[:5]} differ"
        shutil.rmtree(clean_corpus.parent)
        shutil.rmtree(clean_out)
