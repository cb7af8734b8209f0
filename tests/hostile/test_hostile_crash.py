"""Writers killed with SIGKILL at random points (slow; many trials).

Three writers run in subprocesses and are killed at a random moment, again and again:

- `compiler/writes.py` in a loop (append a numbered line, replace an 800 KB file, create a
  new note), so kills land inside temp-file writes, fsyncs and renames;
- `commonplace write` in a shell loop (the CLI path, one process per write);
- `commonplace claim add` in a shell loop (the claim log and canonical pages);
- and, deterministically, `writes.py` killed at each disk step of one write (half the temp
  file written, before its fsync, before the rename or hard link, before the folder fsync).

After every kill: each target holds either its old or its new content, never a mix; the
appended lines form an unbroken sequence, each once; every claim log line parses; the next
`commonplace build` succeeds and its site equals a clean build of a copy of the corpus.
Figures (trials, writes seen, leftover temp files) are printed and written to
/tmp/commonplace-hostile-crash.json. `CRASH_TRIALS` and `CRASH_SEED` tune the run.
(Builds killed mid-way are tests/test_crash.py's job.)
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PY = sys.executable
CLI = [PY, "-c", "from commonplace.server.cli import main; main()"]
SEED = int(os.environ.get("CRASH_SEED", "11"))
TRIALS = int(os.environ.get("CRASH_TRIALS", "12"))
FIGURES = Path("/tmp/commonplace-hostile-crash.json")

WRITER = r"""
import sys
from pathlib import Path
from commonplace.compiler import writes as w
root, i = Path(sys.argv[1]), int(sys.argv[2])
print("ready", flush=True)
while True:
    w.apply_write(root, w.WriteRequest("append", "notes/log.md", f"line-{i:06d}\n"))
    big = (f"V{i:06d} " * 100_000)[:800_000] + "\n"
    cur = (root / "notes/big.md").read_bytes()
    w.apply_write(root, w.WriteRequest("replace", "notes/big.md", big, expected_hash=w.content_hash(cur)))
    w.apply_write(root, w.WriteRequest("create", f"notes/new/{i:06d}.md", f"# New {i}\n\nCreated by the writer. [[Log]]\n"))
    print(i, flush=True)
    i += 1
"""


def big_version(i: int) -> bytes:
    return ((f"V{i:06d} " * 100_000)[:800_000] + "\n").encode()


def seed_corpus(root: Path) -> None:
    files = {
        "notes/log.md": "---\ntitle: Log\n---\n# Log\n",
        "notes/big.md": "initial big file\n",
        "people/alex.md": "---\ntitle: Alex\n---\n# Alex\n\nAlex runs billing.\n",
        "core/identity.md": "---\ntitle: Identity\npinned: true\n---\n# Identity\n\nSee [[Alex]] and [[Log]].\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def build(corpus: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "build", str(corpus), "--out", str(out), "--no-embed", "--json", *extra],
                          capture_output=True, text=True, timeout=300)


def assert_next_build_equals_clean(corpus: Path, out: Path, scratch: Path, label: str) -> None:
    r = build(corpus, out)
    assert r.returncode == 0, f"{label}: the build after the kill failed:\n{r.stderr[-3000:]}"
    clean_root = scratch / "clean"
    shutil.rmtree(clean_root, ignore_errors=True)
    copy = clean_root / corpus.name  # same folder name: the site is named after it
    for p in corpus.rglob("*"):
        rel = p.relative_to(corpus)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, copy / rel)
    r2 = build(copy, clean_root / "site")
    assert r2.returncode == 0, r2.stderr[-3000:]
    a, b = site_bytes(out), site_bytes(clean_root / "site")
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    assert not diff, f"{label}: incremental site differs from a clean build in {diff[:10]}"


def public_files(corpus: Path) -> list[Path]:
    return [p for p in corpus.rglob("*") if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(corpus).parts)]


def leftover_tmp(corpus: Path) -> list[str]:
    return sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.tmp"))


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def check_writer_state(corpus: Path, max_started: int) -> int:
    """Every target is whole; returns how many appended lines there are."""
    log = (corpus / "notes/log.md").read_text()
    assert log.endswith("\n"), "log.md ends mid-line"
    nums = [int(n) for n in re.findall(r"^line-(\d{6})$", log, re.M)]
    assert nums == list(range(len(nums))), f"appended lines not an unbroken sequence: {nums[-5:]}"
    assert not re.search(r"line-\d{0,5}$|line-\d{7,}", log, re.M), "a partial line in log.md"
    big = (corpus / "notes/big.md").read_bytes()
    if big != b"initial big file\n":
        i = int(big[1:7])
        assert big == big_version(i) and i <= max_started, "big.md holds a mix of two versions"
    for p in (corpus / "notes/new").glob("*.md") if (corpus / "notes/new").exists() else []:
        i = int(p.stem)
        assert p.read_text() == f"# New {i}\n\nCreated by the writer. [[Log]]\n", f"partial {p.name}"
    for p in public_files(corpus):
        assert not p.name.endswith(".tmp"), f"a visible temp file {p}"
    return len(nums)


@pytest.fixture
def figures() -> dict:
    data: dict = {}
    yield data
    old = {}
    if FIGURES.exists():
        try:
            old = json.loads(FIGURES.read_text())
        except ValueError:
            old = {}
    for key, value in data.items():
        if key == "steps" and isinstance(old.get("steps"), dict):
            old["steps"].update(value)
        else:
            old[key] = value
    FIGURES.write_text(json.dumps(old, indent=2) + "\n")
    print(json.dumps(data, indent=2))


def test_writes_py_killed_at_random_points(tmp_path: Path, figures: dict) -> None:
    rng = random.Random(SEED)
    corpus = tmp_path / "corpus"
    seed_corpus(corpus)
    out = tmp_path / "site"
    assert build(corpus, out).returncode == 0
    kills, lines = [], 0
    for trial in range(TRIALS):
        proc = subprocess.Popen([PY, "-c", WRITER, str(corpus), str(lines)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        delay = rng.uniform(0.02, 1.5)
        time.sleep(delay)
        kill_group(proc)
        done = proc.stdout.read().split()
        lines = check_writer_state(corpus, lines + len(done) + 1)
        kills.append({"after_s": round(delay, 3), "iterations_completed": len(done), "lines_total": lines,
                      "leftover_tmp": len(leftover_tmp(corpus))})
        if trial % 2 == 1 or trial == TRIALS - 1:
            assert_next_build_equals_clean(corpus, out, tmp_path, f"writes.py trial {trial}")
    figures["writes_py"] = {"trials": TRIALS, "appended_lines": lines, "kills": kills,
                            "leftover_tmp_files": leftover_tmp(corpus)}
    assert lines > 0, "the writer never completed a write: raise the delays"


def test_write_cli_killed_at_random_points(tmp_path: Path, figures: dict) -> None:
    rng = random.Random(SEED + 1)
    corpus = tmp_path / "corpus"
    seed_corpus(corpus)
    out = tmp_path / "site"
    assert build(corpus, out).returncode == 0
    cli = " ".join(map(repr, CLI))
    script = (f"i=$1; while :; do {cli} write notes/cli.md -C {corpus} --content \"cli-$(printf %06d $i)\" "
              f"--no-build >/dev/null || exit 9; echo $i; i=$((i+1)); done")
    n = 0
    kills = []
    for trial in range(max(4, TRIALS // 2)):
        proc = subprocess.Popen(["sh", "-c", script, "sh", str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        delay = rng.uniform(0.2, 3.0)
        time.sleep(delay)
        kill_group(proc)
        text = (corpus / "notes/cli.md").read_text() if (corpus / "notes/cli.md").exists() else ""
        nums = [int(x) for x in re.findall(r"^cli-(\d{6})$", text, re.M)]
        assert nums == list(range(len(nums))), f"CLI appends not an unbroken sequence: {nums[-5:]}"
        assert not text or text.endswith("\n")
        n = len(nums)
        kills.append({"after_s": round(delay, 3), "lines_total": n})
        assert_next_build_equals_clean(corpus, out, tmp_path, f"write CLI trial {trial}")
    figures["write_cli"] = {"trials": len(kills), "appended_lines": n, "kills": kills,
                            "leftover_tmp_files": leftover_tmp(corpus)}


def test_claim_cli_killed_at_random_points(tmp_path: Path, figures: dict) -> None:
    rng = random.Random(SEED + 2)
    corpus = tmp_path / "corpus"
    seed_corpus(corpus)
    out = tmp_path / "site"
    assert build(corpus, out).returncode == 0
    cli = " ".join(map(repr, CLI))
    script = (f"i=$1; while :; do {cli} claim add person:alex \"fact number $(printf %06d $i)\" -C {corpus} "
              f"--actor crash >/dev/null || exit 9; echo $i; i=$((i+1)); done")
    n = 0
    kills = []
    for trial in range(max(4, TRIALS // 2)):
        proc = subprocess.Popen(["sh", "-c", script, "sh", str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        delay = rng.uniform(0.2, 3.0)
        time.sleep(delay)
        kill_group(proc)
        events = []
        for p in sorted((corpus / "claims").rglob("*.jsonl")) if (corpus / "claims").exists() else []:
            raw = p.read_bytes()
            assert not raw or raw.endswith(b"\n"), f"{p.name} ends mid-line"
            for line in raw.split(b"\n"):
                if line:
                    events.append(json.loads(line))  # every line parses
        nums = sorted(int(e["statement"].split()[-1]) for e in events if e.get("event") == "added")
        assert nums == list(range(len(nums))), f"claims not an unbroken sequence: {nums[-5:]}"
        n = len(nums)
        kills.append({"after_s": round(delay, 3), "claims_total": n})
        assert_next_build_equals_clean(corpus, out, tmp_path, f"claim CLI trial {trial}")
        page = (corpus / "people/alex.md").read_text()
        for i in range(n):
            assert f"fact number {i:06d}" in page, f"claim {i} missing from the compiled page after the build"
    figures["claim_cli"] = {"trials": len(kills), "claims": n, "kills": kills,
                            "leftover_tmp_files": leftover_tmp(corpus)}


STEP_WRITER = r"""
import builtins, os, signal, sys
from pathlib import Path
from commonplace.compiler import fsutil as f, writes as w
root, step, kind = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)

if step == "mid-temp-write":
    real_open = builtins.open
    class Half:
        def __init__(self, fh): self.fh = fh
        def write(self, data):
            self.fh.write(data[: len(data) // 2]); self.fh.flush(); os.fsync(self.fh.fileno()); die()
        def __getattr__(self, n): return getattr(self.fh, n)
        def __enter__(self): return self
        def __exit__(self, *a): self.fh.close()
    f.open = lambda p, m="r", *a, **k: Half(real_open(p, m, *a, **k)) if "x" in m else real_open(p, m, *a, **k)
elif step == "before-fsync":
    w.os.fsync = die
elif step == "before-rename":
    w.os.replace = die
elif step == "before-link":
    w.os.link = die
elif step == "before-folder-fsync":
    f.fsync_dir = die
target = "notes/big.md" if kind == "replace" else "notes/created.md"
content = (("NEW " * 200_000) + "\n") if kind == "replace" else "# Created\n\nnew file\n"
cur = (root / target).read_bytes() if (root / target).exists() else None
w.apply_write(root, w.WriteRequest(kind, target, content,
                                   expected_hash=w.content_hash(cur) if cur is not None else None))
print("finished")
"""

STEPS = [("mid-temp-write", "replace"), ("before-fsync", "replace"), ("before-rename", "replace"),
         ("before-folder-fsync", "replace"), ("mid-temp-write", "create"), ("before-link", "create"),
         ("before-folder-fsync", "create")]


@pytest.mark.parametrize("step,kind", STEPS, ids=[f"{s}-{k}" for s, k in STEPS])
def test_writer_killed_at_each_step(step: str, kind: str, tmp_path: Path, figures: dict) -> None:
    """Deterministic kills at every disk step of a write (the random kills above rarely
    land inside the short temp-file window)."""
    corpus = tmp_path / "corpus"
    seed_corpus(corpus)
    out = tmp_path / "site"
    assert build(corpus, out).returncode == 0
    old = (corpus / "notes/big.md").read_bytes()
    r = subprocess.run([PY, "-c", STEP_WRITER, str(corpus), step, kind], capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr[-2000:])
    big = (corpus / "notes/big.md").read_bytes()
    new_big = (("NEW " * 200_000) + "\n").encode()
    assert big in (old, new_big), "big.md holds a mix of old and new"
    if step in ("mid-temp-write", "before-fsync", "before-rename") and kind == "replace":
        assert big == old
    created = corpus / "notes/created.md"
    if created.exists():
        assert created.read_text() == "# Created\n\nnew file\n", "a partial created file"
    if step in ("mid-temp-write", "before-link"):
        assert not created.exists()
    for p in public_files(corpus):
        assert not p.name.endswith(".tmp")
    leftovers = leftover_tmp(corpus)
    assert all(Path(x).name.startswith(".") for x in leftovers), leftovers  # hidden: never a document
    # (and swept by the next write of the same target, below)
    assert_next_build_equals_clean(corpus, out, tmp_path, f"killed at {step} ({kind})")
    # The next write works despite any leftover temp file.
    from commonplace.compiler import writes as w

    cur = (corpus / "notes/big.md").read_bytes()
    w.apply_write(corpus, w.WriteRequest("replace", "notes/big.md", "after the crash\n", expected_hash=w.content_hash(cur)))
    assert (corpus / "notes/big.md").read_text() == "after the crash\n"
    if kind == "create":
        w.apply_write(corpus, w.WriteRequest("append", "notes/created.md", "after the crash\n"))
    assert leftover_tmp(corpus) == [], "the next write of the target sweeps a dead writer's temp file"
    figures.setdefault("steps", {})[f"{step}-{kind}"] = {"target_after_kill": "new" if big == new_big else "old",
                                                        "created_exists": created.exists(),
                                                        "leftover_tmp_files": len(leftovers)}
