"""The first build on a machine (an empty model cache): commonplace says what it is doing,
and nothing from the libraries underneath reaches the terminal or a pipe.

Slow: each case converts the real model (~15-40 s). stderr is a pseudo-terminal in the
first case, as a person at a terminal would see it, and a pipe in the second.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "commonplace"
# What the libraries print when left alone (the two lines, and their kind).
THIRD_PARTY = re.compile(r"Loading weights|\[transformers\]|loss_type|it/s\]|Warning:|WARNING|nncf|"
                         r"huggingface|TracerWarning|torch\.|sentence_transformers", re.I)
CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


def screen(raw: str) -> list[str]:
    """What stays on an 80-column terminal after `raw` (carriage returns, erased lines and
    cursor moves applied): the lines a person reads once the command ends."""
    lines, row, col, i = [""], 0, 0, 0
    while i < len(raw):
        m = CSI.match(raw, i)
        if m:
            arg, cmd = m.groups()
            if cmd == "K":
                lines[row] = "" if arg == "2" else lines[row][:col]
            elif cmd == "A":
                row = max(0, row - int(arg or 1))
            i = m.end()
            continue
        c = raw[i]
        if c == "\n":
            row, col = row + 1, 0
            while len(lines) <= row:
                lines.append("")
        elif c == "\r":
            col = 0
        elif c >= " ":
            text = lines[row].ljust(col)
            lines[row] = text[:col] + c + text[col + 1:]
            col += 1
        i += 1
    return [line.rstrip() for line in lines if line.strip()]


def run_on_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """(exit code, stdout from a pipe, everything written to stderr, a pseudo-terminal)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 80, 0, 0))
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the last writer closed it
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out = proc.stdout.read() if proc.stdout else b""
    code = proc.wait(timeout=600)
    reader.join(10)
    os.close(master)
    return code, out.decode("utf-8", "replace"), b"".join(chunks).decode("utf-8", "replace")


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TQDM_", "TRANSFORMERS_", "HF_HUB_DISABLE", "COMMONPLACE_EMBED"))}
    env["COMMONPLACE_CACHE_DIR"] = str(cache)  # empty: the model is converted in this run
    env["HF_HUB_OFFLINE"] = "1"
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    subprocess.run([str(SCRIPT), "init", "notes"], cwd=tmp_path, check=True, capture_output=True, timeout=60)
    return tmp_path / "notes"


@pytest.mark.slow
def test_first_build_on_a_terminal_says_what_it_does(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "empty-cache"
    code, out, err = run_on_terminal([str(SCRIPT), "build", "notes", "--out", "site"], tmp_path, _env(cache))
    assert code == 0, err
    assert not THIRD_PARTY.search(err), err
    # While it runs: what is happening and roughly how long; after: one line, how long it took.
    assert "Preparing the embedding model (once, ~15 s)" in err, err
    shown = screen(err)
    assert len(shown) == 1 and re.fullmatch(
        r"Prepared the embedding model for this machine \(kept for later runs\) in \d+\.\d s", shown[0]), shown
    # The site is usable before the vectors: its line comes first, then the summary.
    assert re.match(r"Site ready in [\d.]+ s: site/index\.html \(search by words works; embedding 5 chunks next\)\n"
                    r"Built 5 documents in [\d.]+ s: 5 new or changed, \d+ site files written, "
                    r"5 chunks embedded; no problems\.\nSite: site/index\.html\n$", out), out
    assert any(cache.rglob("model.xml")), "the converted model is kept for later runs"


@pytest.mark.slow
def test_first_build_on_a_pipe_prints_only_the_site_ready_line_and_the_summary(corpus: Path, tmp_path: Path) -> None:
    p = subprocess.run([str(SCRIPT), "build", "notes", "--out", "site"], cwd=tmp_path,
                       env=_env(tmp_path / "empty-cache"), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    first, rest = p.stdout.split("\n", 1)
    assert first.startswith("Site ready in ") and "embedding 5 chunks next" in first, p.stdout
    assert rest.startswith("Built 5 documents in ") and rest.endswith("Site: site/index.html\n"), p.stdout


def _big(tmp_path: Path) -> None:
    for i in range(250):
        note = tmp_path / "big" / f"n{i:03d}.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"# Note {i}\n\nText about topic {i % 7}; see [[n{(i + 1) % 250:03d}]].\n", encoding="utf-8")


def test_a_big_build_shows_its_stages_on_a_terminal(tmp_path: Path) -> None:
    """250 documents: parse, render and index bars with counts while it runs; none left
    on the screen after, and only the summary on stdout."""
    _big(tmp_path)
    code, out, err = run_on_terminal([str(SCRIPT), "build", "big", "--out", "site", "--no-embed"], tmp_path,
                                     _env(tmp_path / "cache"))
    assert code == 0, err
    for stage in ("Parsing", "Rendering", "Indexing"):
        assert re.search(stage + r".*?\d+/250", err), (stage, err[-2000:])
    assert screen(err) == [], screen(err)
    assert out.startswith("Built 250 documents in ") and "\x1b" not in out, out


def test_json_draws_nothing_even_on_a_terminal(tmp_path: Path) -> None:
    _big(tmp_path)
    code, out, err = run_on_terminal([str(SCRIPT), "build", "big", "--out", "site", "--no-embed", "--json"],
                                     tmp_path, _env(tmp_path / "cache"))
    assert code == 0 and err == "", err
    assert json.loads(out)["documents"] == 250
