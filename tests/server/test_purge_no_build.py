"""A file purge from the command line with `--no-build`: the deleted text must still leave
every derived file once a build runs (the parse cache at once; the manifest and the older
index generations at the next build, whoever runs it)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]


def cp(root: Path, *args: str) -> str:
    env = dict(os.environ, COMMONPLACE_ACTOR="cli-test")
    env.pop("COMMONPLACE_TOKEN", None)
    r = subprocess.run([*CLI, *args, "-C", str(root)], capture_output=True, text=True, timeout=300, env=env,
                       cwd=root.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def traces(*bases: Path, needle: bytes = b"periwinkle") -> list[str]:
    return sorted(str(p) for b in bases for p in b.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_purge_without_build_is_finished_by_the_next_build(tmp_path: Path) -> None:
    root, site = tmp_path / "notes", tmp_path / "site"
    (root / "inbox").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nNothing here.\n")
    note = root / "inbox/n.md"
    note.write_text("# Note\n\nThe vault word is periwinkle.\n")
    out = ["--out", str(site)]
    cp(root, "build", "--no-embed", *out)
    (root / "a.md").write_text("# A\n\nStill nothing.\n")  # a second generation: the first is kept
    cp(root, "build", "--no-embed", *out)
    cached = [p for p in traces(root) if "/cache/parse/" in p]
    assert cached, "the parse cache holds the note's rendered body"
    digest = hashlib.sha256(note.read_bytes()).hexdigest()
    cp(root, "purge", "inbox/n.md", "--yes", "--reason", "asked", "--expected-hash", f"sha256:{digest}",
       "--no-build")
    assert not note.exists()
    assert not [p for p in traces(root) if "/cache/parse/" in p]  # gone at once
    cp(root, "build", "--no-embed", *out)  # a plain build, which knows nothing of the purge
    assert traces(root, site) == []
