"""Build benchmark: `commonplace build` on synthetic corpora, compared with `mkdocs build`.

    python -m tests.benchmarks.bench_build [--n 10000] [--compare-n 2000] [--no-mkdocs]
                                           [--workdir DIR] [--seed 0] [--repeat 1] [--json]

Generates two corpora with `corpus_gen` (in a temporary directory unless --workdir is
given, in which case everything is kept there), then times, as subprocesses and in wall
clock seconds including interpreter start-up:

* `commonplace build CORPUS --out OUT --no-embed --no-index --json` (rendering only;
  `--with-index` keeps the BM25 index in) on the compare-size corpus and
  on the full-size corpus (clean builds: the output and `CORPUS/.commonplace` are set
  aside before every run). If this `commonplace` does not know `--no-embed` yet, the flag is
  dropped once and the report says embeddings were on;
* `python -m mkdocs build -q` on a copy of the compare-size corpus (default theme, default
  search plugin only), unless --no-mkdocs or mkdocs is not installed
  (`pip install .[bench]`).

Nothing is deleted while timing. A build writes into a directory that never held
files: what an earlier run left is renamed into `.trash/` and deleted after the last
timing. (On ext4 without a journal, which this project's benchmark machine uses, the
kernel skips inodes freed in the last minutes when it allocates new ones, and that
scan made the 10,000-page build 60-120% slower right after `rm -rf` of the previous
site: a file-system artifact that would swamp the build, measured with `perf`.)

Prints a table (or JSON with --json) on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    from .corpus_gen import generate
except ImportError:  # run as a plain script: python tests/benchmarks/bench_build.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus_gen import generate  # type: ignore[no-redef]


class BenchError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def find_commonplace() -> str | None:
    """The `commonplace` console script of this interpreter's environment, else PATH."""
    bindir = Path(sys.executable).parent
    for name in ("commonplace", "commonplace.exe"):
        cand = bindir / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which("commonplace")


def mkdocs_version() -> str | None:
    if importlib.util.find_spec("mkdocs") is None:
        return None
    try:
        from importlib.metadata import version

        return version("mkdocs")
    except Exception:  # pragma: no cover - broken metadata
        return "unknown"


@dataclass
class Row:
    label: str
    n: int
    generate_seconds: float = 0.0
    commonplace_seconds: float | None = None
    docs_per_second: float | None = None
    build_exit_code: int | None = None
    build_report: dict = field(default_factory=dict)
    mkdocs_seconds: float | None = None
    mkdocs_docs_per_second: float | None = None
    speedup: float | None = None


TRASH = ".trash"  # see the module docstring


def set_aside(path: Path, trash: Path) -> Path:
    """Make `path` absent without deleting anything now: an existing file or tree moves
    into `trash` (a rename), which `empty_trash` deletes once timing is over."""
    if path.exists() or path.is_symlink():
        trash.mkdir(parents=True, exist_ok=True)
        path.rename(Path(tempfile.mkdtemp(prefix=path.name + "-", dir=trash)) / path.name)
    return path


def empty_trash(trash: Path) -> None:
    shutil.rmtree(trash, ignore_errors=True)


class Commonplace:
    def __init__(self, exe: str, timeout: float | None, with_index: bool = False) -> None:
        self.exe = exe
        self.timeout = timeout
        self.no_embed = True  # until the CLI says it does not know the flag
        # The comparison is rendering only: the site, without search indexes.
        self.with_index = with_index

    def cmd(self, corpus: Path, out: Path) -> list[str]:
        cmd = [self.exe, "build", str(corpus), "--out", str(out)]
        if self.no_embed:
            cmd.append("--no-embed")
        if not self.with_index:
            cmd.append("--no-index")
        return cmd + ["--json"]

    def build(self, corpus: Path, out: Path) -> tuple[float, int, dict]:
        """One clean build; returns (wall seconds, exit code, scalar fields of the JSON report)."""
        while True:
            trash = out.parent / TRASH
            set_aside(out, trash)
            set_aside(corpus / ".commonplace", trash)
            cmd = self.cmd(corpus, out)
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise BenchError(f"`{' '.join(cmd)}` did not finish within {self.timeout}s") from None
            secs = time.perf_counter() - t0
            err = proc.stderr or ""
            if (self.no_embed and proc.returncode == 2 and "no such option" in err.lower()
                    and "--no-embed" in err):
                log("  note: this commonplace has no --no-embed option; building without it (embeddings on)")
                self.no_embed = False
                continue
            report = _parse_report(proc.stdout)
            # 0 = ok; 1 = "problems found" (e.g. broken links) is still a completed build
            # when it produced its JSON report. Anything else is a failure.
            if proc.returncode != 0 and not (proc.returncode == 1 and report is not None):
                tail = "\n".join(err.strip().splitlines()[-15:])
                raise BenchError(f"`{' '.join(cmd)}` failed with exit code {proc.returncode}:\n{tail}")
            return secs, proc.returncode, _summary(report)


def _is_scalar(v: object) -> bool:
    return v is None or isinstance(v, (int, float, str, bool))


def _summary(report: object) -> dict:
    """Scalar fields of the build's JSON report, plus flat dicts of scalars (e.g. `stages`)."""
    if not isinstance(report, dict):
        return {}
    out = {}
    for k, v in report.items():
        if _is_scalar(v):
            out[k] = v
        elif isinstance(v, dict) and v and all(_is_scalar(x) for x in v.values()):
            out[k] = v
    return out


def _parse_report(stdout: str) -> dict | list | None:
    text = (stdout or "").strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):  # tolerate log lines before the JSON
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def _ignore_hidden(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith(".")]


def mkdocs_build(corpus: Path, base: Path, timeout: float | None) -> float:
    """Copy the corpus into a minimal MkDocs project and time `mkdocs build -q`."""
    proj = base / "mkdocs-project"
    docs = proj / "docs"
    site = base / "mkdocs-site"
    set_aside(proj, base / TRASH)
    set_aside(site, base / TRASH)
    shutil.copytree(corpus, docs, ignore=_ignore_hidden)
    cfg = proj / "mkdocs.yml"
    cfg.write_text(
        "site_name: commonplace benchmark corpus\n"
        f"docs_dir: {json.dumps(str(docs))}\n"
        f"site_dir: {json.dumps(str(site))}\n"
        "theme:\n  name: mkdocs\n"
        "plugins:\n  - search\n",
        encoding="utf-8",
    )
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise BenchError(f"mkdocs build did not finish within {timeout}s") from None
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or "").strip().splitlines()[-15:])
        raise BenchError(f"mkdocs build failed with exit code {proc.returncode}:\n{tail}")
    return secs


def _fmt(v: float | None, spec: str, suffix: str = "") -> str:
    return "-" if v is None else format(v, spec) + suffix


def render_table(result: dict) -> str:
    rows: list[Row] = [Row(**{k: v for k, v in r.items()}) for r in result["rows"]]
    head = ("corpus", "docs", "commonplace s", "docs/s", "mkdocs s", "mkdocs docs/s", "speed-up")
    body = [
        (r.label, f"{r.n:,}", _fmt(r.commonplace_seconds, ".2f"), _fmt(r.docs_per_second, ",.0f"),
         _fmt(r.mkdocs_seconds, ".2f"), _fmt(r.mkdocs_docs_per_second, ",.0f"), _fmt(r.speedup, ".1f", "x"))
        for r in rows
    ]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]

    def line(cells) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [
        f"commonplace: {result['commonplace']}",
        f"command:     commonplace build CORPUS --out OUT{' --no-embed' if result['no_embed'] else ''}{'' if result.get('with_index') else ' --no-index'} --json"
        + ("" if result["no_embed"] else "   (this commonplace has no --no-embed: the time may include embedding)"),
        f"mkdocs:      {result['mkdocs']['status']}",
        f"timing:      wall clock incl. process start, best of {result['repeat']}, clean builds, seed {result['seed']}",
        "",
        line(head),
        line(["-" * w for w in widths]),
        *(line(b) for b in body),
    ]
    full = next((r for r in rows if r.label == "full"), None)
    if full is not None and full.commonplace_seconds is not None:
        out += ["", f"{full.n:,}-document build: {full.commonplace_seconds:.2f} s ({full.docs_per_second:,.0f} docs/s)"]
    stage_lines = []
    for r in rows:
        stages = r.build_report.get("stages") if isinstance(r.build_report, dict) else None
        if isinstance(stages, dict) and stages:
            parts = ", ".join(f"{k} {v:.2f}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in stages.items())
            stage_lines.append(f"  {r.label} ({r.n:,}): {parts}")
    if stage_lines:
        out += ["", "build stages reported by commonplace (seconds):", *stage_lines]
    return "\n".join(out)


def run(args: argparse.Namespace) -> dict:
    exe = args.commonplace or find_commonplace()
    if exe is None:
        raise BenchError("no `commonplace` executable next to this Python or on PATH; install the project first")
    cp = Commonplace(exe, args.timeout, args.with_index)

    mk_ver = mkdocs_version()
    if args.no_mkdocs:
        mk_status = "skipped (--no-mkdocs)"
    elif mk_ver is None:
        mk_status = "not installed: mkdocs column skipped (install the benchmark extra: pip install '.[bench]')"
        log("mkdocs is not installed; skipping the mkdocs comparison (pip install '.[bench]')")
    else:
        mk_status = f"mkdocs {mk_ver} (theme mkdocs, plugins: search)"
    use_mkdocs = not args.no_mkdocs and mk_ver is not None and args.compare_n > 0
    if mk_ver is not None and not args.no_mkdocs and args.compare_n == 0:
        mk_status = "not run (--compare-n 0)"

    if args.workdir:
        base = Path(args.workdir).resolve()
        base.mkdir(parents=True, exist_ok=True)
        cleanup = None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix="commonplace-bench-")
        base = Path(cleanup.name)

    plan: list[tuple[str, int]] = []
    if args.compare_n > 0:
        plan.append(("compare", args.compare_n))
    if args.n > 0 and args.n != args.compare_n:
        plan.append(("full", args.n))

    rows: list[Row] = []
    try:
        for label, n in plan:
            row = Row(label, n)
            corpus = base / f"corpus-{n}"
            set_aside(corpus, base / TRASH)
            log(f"[{label}] generating {n:,} documents in {corpus} ...")
            t0 = time.perf_counter()
            paths = generate(corpus, n, seed=args.seed)
            row.generate_seconds = round(time.perf_counter() - t0, 3)
            row.n = len(paths)
            times = []
            for i in range(args.repeat):
                log(f"[{label}] commonplace build ({i + 1}/{args.repeat}) ...")
                secs, code, report = cp.build(corpus, base / f"site-commonplace-{n}")
                times.append(secs)
                row.build_exit_code, row.build_report = code, report
                log(f"[{label}]   {secs:.2f} s (exit {code})")
            row.commonplace_seconds = round(min(times), 3)
            row.docs_per_second = round(row.n / min(times), 1)
            if use_mkdocs and label == "compare":
                mtimes = []
                for i in range(args.repeat):
                    log(f"[{label}] mkdocs build ({i + 1}/{args.repeat}) ...")
                    mtimes.append(mkdocs_build(corpus, base, args.timeout))
                    log(f"[{label}]   {mtimes[-1]:.2f} s")
                row.mkdocs_seconds = round(min(mtimes), 3)
                row.mkdocs_docs_per_second = round(row.n / min(mtimes), 1)
                row.speedup = round(min(mtimes) / min(times), 2)
            rows.append(row)
        if args.n > 0 and args.n == args.compare_n and rows:
            rows.append(Row(**{**asdict(rows[0]), "label": "full"}))
    finally:
        if cleanup is not None:
            cleanup.cleanup()
        else:
            log("removing what earlier runs left (timing is over) ...")
            empty_trash(base / TRASH)

    result = {
        "commonplace": exe,
        "no_embed": cp.no_embed,
        "with_index": cp.with_index,
        "mkdocs": {"available": mk_ver is not None, "used": use_mkdocs, "version": mk_ver, "status": mk_status},
        "seed": args.seed,
        "repeat": args.repeat,
        "workdir": str(base) if args.workdir else None,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "rows": [asdict(r) for r in rows],
    }
    for r in result["rows"]:
        result[r["label"]] = r
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_build", description="Benchmark `commonplace build` (and mkdocs).")
    ap.add_argument("--n", type=int, default=10_000, help="full corpus size (default 10000; 0 skips)")
    ap.add_argument("--compare-n", type=int, default=2_000,
                    help="corpus size also built with mkdocs (default 2000; 0 skips)")
    ap.add_argument("--no-mkdocs", action="store_true", help="do not run mkdocs")
    ap.add_argument("--with-index", action="store_true",
                    help="also build the BM25 index (default: rendering only, --no-index)")
    ap.add_argument("--workdir", type=Path, help="keep corpora and sites here instead of a temp dir")
    ap.add_argument("--seed", type=int, default=0, help="corpus generator seed (default 0)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the best is reported")
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per build subprocess")
    ap.add_argument("--commonplace", metavar="PATH",
                    help="commonplace executable to time (default: the one next to this Python, else PATH)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args(argv)
    if args.n < 0 or args.compare_n < 0 or args.repeat < 1:
        ap.error("--n and --compare-n must be >= 0 and --repeat >= 1")
    try:
        result = run(args)
    except BenchError as exc:
        log(f"error: {exc}")
        return 1
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(render_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
