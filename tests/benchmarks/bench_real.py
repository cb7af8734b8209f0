"""Real corpora for `bench_build`: a public Obsidian vault and a large plain-markdown repository.

    python -m tests.benchmarks.bench_build --n 0 --compare-n 0 --real [--real-dir DIR]
                                           [--vault-repo URL] [--markdown-repo URL]

Neither corpus is kept in this repository. The benchmark fetches each with
`git clone --depth 1 <repo> DIR/<name>` (once; an existing clone is reused) and builds
one folder of it:

* the vault: Obsidian's own help vault, https://github.com/obsidianmd/obsidian-help,
  folder `en/` (about 170 notes and 135 attachments: images, embeds, callouts);
* the markdown repository: https://github.com/tldr-pages/tldr, folder `pages/` (about
  7,400 pages of plain markdown in folders).

Any git URL or local path can stand in for either (`--vault-repo`, `--markdown-repo`,
with `--vault-dir` / `--markdown-dir` naming the folder); a local folder that is not a
git repository is built where it is, without cloning. For each corpus it times, as
subprocesses in wall-clock seconds, a clean `commonplace build --no-embed --no-index`, a
second build with nothing changed, and `commonplace lint --json`, and prints the lint
findings by kind and severity, and the lint exit code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

VAULT = ("vault", "https://github.com/obsidianmd/obsidian-help", "en")
MARKDOWN = ("markdown", "https://github.com/tldr-pages/tldr", "pages")


@dataclass
class RealRow:
    name: str
    source: str
    documents: int = 0
    attachments_published: int = 0
    clean_s: float = 0.0
    nochange_s: float = 0.0
    lint_s: float = 0.0
    lint_exit: int = 0
    findings: dict[str, int] = field(default_factory=dict)  # "severity kind" -> count


def fetch(repo: str, dest: Path, log) -> Path:
    """A shallow clone of `repo` at `dest` (kept between runs); a local folder that is
    not a git repository (a copy made some other way) is used as it is."""
    local = Path(repo)
    if local.is_dir() and not (local / ".git").exists() and not (local / "HEAD").is_file():
        return local
    if (dest / ".git").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    log(f"fetching {repo} into {dest}")
    subprocess.run(["git", "clone", "--quiet", "--depth", "1", repo, str(dest)], check=True)
    return dest


def _timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0, proc


def measure(exe: str, name: str, corpus: Path, work: Path, source: str) -> RealRow:
    row = RealRow(name, source)
    out = work / f"{name}-site"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(corpus / ".commonplace", ignore_errors=True)
    build = [exe, "build", str(corpus), "--out", str(out), "--no-embed", "--no-index", "--json"]
    row.clean_s, proc = _timed(build)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"build of {corpus} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    row.documents = report.get("documents", 0)
    files = out / "_" / "files"
    row.attachments_published = sum(1 for p in files.rglob("*") if p.is_file()) if files.is_dir() else 0
    row.nochange_s, _ = _timed(build)
    row.lint_s, proc = _timed([exe, "lint", str(corpus), "--json"])
    row.lint_exit = proc.returncode
    findings = json.loads(proc.stdout)["findings"]
    row.findings = dict(sorted(Counter(f"{f.get('severity', '?')} {f['code']}" for f in findings).items()))
    return row


def run_real(exe: str, work: Path, log, vault_repo: str = VAULT[1], vault_dir: str = VAULT[2],
             markdown_repo: str = MARKDOWN[1], markdown_dir: str = MARKDOWN[2]) -> list[RealRow]:
    rows = []
    for name, repo, sub in (("vault", vault_repo, vault_dir), ("markdown", markdown_repo, markdown_dir)):
        clone = fetch(repo, work / f"{name}-repo", log)
        corpus = clone / sub if sub else clone
        log(f"building {corpus}")
        rows.append(measure(exe, name, corpus, work, f"{repo} {sub}/"))
    return rows


def render_real(rows: list[RealRow]) -> str:
    lines = ["| corpus | documents | attachments | clean build s | no-change build s | lint s | lint exit |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.name} ({r.source}) | {r.documents} | {r.attachments_published} | {r.clean_s:.2f} | "
                     f"{r.nochange_s:.2f} | {r.lint_s:.2f} | {r.lint_exit} |")
    lines += ["", "| corpus | severity | lint finding | count |", "|---|---|---|---:|"]
    for r in rows:
        if not r.findings:
            lines.append(f"| {r.name} | | (none) | 0 |")
        for key, n in r.findings.items():
            severity, code = key.split(" ", 1)
            lines.append(f"| {r.name} | {severity} | {code} | {n} |")
    return "\n".join(lines)
