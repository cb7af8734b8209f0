"""Build benchmark: `commonplace build` on synthetic corpora, compared with `mkdocs build`.

    python -m tests.benchmarks.bench_build [--n 10000] [--compare-n 2000] [--no-mkdocs] [--no-hugo]
                                           [--hugo-disk] [--workdir DIR] [--seed 0] [--repeat 1] [--json]
    python -m tests.benchmarks.bench_build --parse-cache ...   (rebuilds with the parse cache on and off:
                                                                see bench_parse_cache)

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
  (`pip install .[bench]`);
* `hugo --renderToMemory` (or to disk with --hugo-disk) on a copy of each corpus with a
  minimal layout (section navigation, table of contents, list pages), when `hugo` is on
  PATH, unless --no-hugo.

Every build also reports its peak memory: the largest sum of PSS (proportional set
size, so pages a forked worker shares with its parent count once) over the build's
process tree, sampled every 0.1 s from /proc, and `ru_maxrss` of the largest single
process (from wait4).

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
import threading
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


def hugo_version() -> str | None:
    exe = shutil.which("hugo")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.split()[1] if out.startswith("hugo ") and len(out.split()) > 1 else (out.strip() or "unknown")


# ----- peak memory of a process tree -------------------------------------------------------
def _children(pids: set[int]) -> set[int]:
    """`pids` and every process whose parent is in the set (one /proc scan: ~2 ms)."""
    parent_of: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = open(f"/proc/{name}/stat", "rb").read()
            except OSError:
                continue
            parent_of[int(name)] = int(stat.rsplit(b")", 1)[1].split()[1])
    tree, grew = set(pids), True
    while grew:
        more = {p for p, pp in parent_of.items() if pp in tree and p not in tree}
        tree |= more
        grew = bool(more)
    return tree


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class Measured:
    seconds: float
    returncode: int
    stdout: str
    stderr: str
    peak_pss_mb: float | None  # largest sampled sum over the tree; None without /proc
    maxrss_mb: float | None  # ru_maxrss of the largest single process of the tree
    # user + system CPU of the process and the workers it reaped (wait4): moved far less
    # than wall time by other work on a shared machine
    cpu_seconds: float | None = None


def run_measured(cmd: list[str], timeout: float | None) -> Measured:
    """Run `cmd` to the end, timing it and sampling its tree's memory every 0.1 s."""
    out_f, err_f = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()
    sampling = os.path.exists("/proc/self/smaps_rollup")

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], sum(_pss_kb(p) for p in _children({proc.pid})))

    sampler = threading.Thread(target=sample, daemon=True)
    if sampling:
        sampler.start()
    deadline = None if timeout is None else t0 + timeout
    rusage = None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if deadline is not None and time.perf_counter() > deadline:
            proc.kill()
            proc.wait()
            done.set()
            raise BenchError(f"`{' '.join(cmd)}` did not finish within {timeout}s")
        time.sleep(0.005)
    secs = time.perf_counter() - t0
    done.set()
    if sampling:
        sampler.join()
    out_f.seek(0)
    err_f.seek(0)
    return Measured(secs, proc.returncode, out_f.read().decode("utf-8", "replace"),
                    err_f.read().decode("utf-8", "replace"),
                    round(peak[0] / 1024, 1) if sampling and peak[0] else None,
                    round(rusage.ru_maxrss / 1024, 1) if rusage is not None else None,
                    round(rusage.ru_utime + rusage.ru_stime, 3) if rusage is not None else None)


@dataclass
class Row:
    label: str
    n: int
    generate_seconds: float = 0.0
    commonplace_seconds: float | None = None
    docs_per_second: float | None = None
    build_exit_code: int | None = None
    build_report: dict = field(default_factory=dict)
    commonplace_peak_mb: float | None = None  # tree PSS (see run_measured)
    commonplace_maxrss_mb: float | None = None
    mkdocs_seconds: float | None = None
    mkdocs_docs_per_second: float | None = None
    mkdocs_peak_mb: float | None = None
    speedup: float | None = None
    hugo_seconds: float | None = None
    hugo_peak_mb: float | None = None
    hugo_maxrss_mb: float | None = None
    hugo_ratio: float | None = None  # hugo seconds / commonplace seconds (> 1: commonplace ahead)


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


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def settle(*trees: Path) -> bool:
    """Before a timed build: write back and drop the kernel's page cache (root on Linux
    only), then read `trees` (the corpus) back in, so every build starts from the same
    warm corpus and an otherwise empty cache. On the 2-core VM here, creating 10,000 page
    files took 2.7 s longer with each earlier build's files still cached (1.6 s, 4.5, 7.1,
    9.9 in four rounds; 1.4-1.7 s each with the cache dropped between them), which moved
    a 10k build by seconds from one run to the next. True if the cache was dropped."""
    dropped = False
    if os.geteuid() == 0 and DROP_CACHES.exists():
        os.sync()
        try:
            DROP_CACHES.write_text("1\n")
            dropped = True
        except OSError:
            pass
    for tree in trees:
        for path in tree.rglob("*"):
            if path.is_file():
                path.read_bytes()
    return dropped


class Commonplace:
    def __init__(self, exe: str, timeout: float | None, with_index: bool = False) -> None:
        self.exe = exe
        self.timeout = timeout
        self.no_embed = True  # until the CLI says it does not know the flag
        # The issue's comparison is rendering only: the site, without search indexes.
        self.with_index = with_index

    def cmd(self, corpus: Path, out: Path) -> list[str]:
        cmd = [self.exe, "build", str(corpus), "--out", str(out)]
        if self.no_embed:
            cmd.append("--no-embed")
        if not self.with_index:
            cmd.append("--no-index")
        return cmd + ["--json"]

    def build(self, corpus: Path, out: Path) -> tuple[Measured, dict]:
        """One clean build; returns its measurement and the scalar fields of its JSON report."""
        while True:
            trash = out.parent / TRASH
            set_aside(out, trash)
            set_aside(corpus / ".commonplace", trash)
            cmd = self.cmd(corpus, out)
            proc = run_measured(cmd, self.timeout)
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
            return proc, _summary(report)


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


def mkdocs_build(corpus: Path, base: Path, timeout: float | None) -> Measured:
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
    proc = run_measured(cmd, timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or "").strip().splitlines()[-15:])
        raise BenchError(f"mkdocs build failed with exit code {proc.returncode}:\n{tail}")
    return proc


# Front matter keys Hugo gives a meaning of its own (`url` would move the page, `aliases`
# writes redirect pages): renamed in Hugo's copy of the corpus, the rest kept as written.
_HUGO_RESERVED = ("url", "aliases", "slug", "layout", "draft", "outputs", "cascade", "headless", "build",
                  "weight", "expiryDate", "publishDate", "lastmod", "linkTitle", "markup", "sitemap")

_HUGO_CONFIG = """baseURL = "http://localhost/"
title = "commonplace benchmark corpus"
[markup.tableOfContents]
startLevel = 2
endLevel = 4
"""
_HUGO_LAYOUTS = {
    "baseof.html": (
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{{ .Title }} · {{ .Site.Title }}</title></head><body>\n"
        "<nav><ul>{{ range .Site.Sections }}<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}</a></li>{{ end }}</ul></nav>\n"
        "<main>{{ block \"main\" . }}{{ end }}</main></body></html>\n"),
    "single.html": "{{ define \"main\" }}<h1>{{ .Title }}</h1>\n{{ .TableOfContents }}\n{{ .Content }}{{ end }}\n",
    "list.html": ("{{ define \"main\" }}<h1>{{ .Title }}</h1>\n{{ .Content }}\n<ul>{{ range .Pages }}"
                  "<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}</a></li>{{ end }}</ul>{{ end }}\n"),
}


def _hugo_text(text: str) -> str:
    """One document as Hugo's copy holds it: reserved front matter keys renamed `cp_<key>`."""
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---", 3)
    if end < 0:
        return text
    lines = text[4:end].split("\n")
    for i, line in enumerate(lines):
        key = line.split(":", 1)[0]
        if key in _HUGO_RESERVED and line.startswith(key + ":"):
            lines[i] = "cp_" + line
    return "---\n" + "\n".join(lines) + text[end:]


def hugo_project(corpus: Path, base: Path) -> Path:
    """A Hugo site whose content is a copy of `corpus` (the root `index.md` becomes the
    home page's `_index.md`) with a minimal layout: section navigation on every page, a
    table of contents on each document, list pages for sections and tags."""
    proj = base / f"hugo-project-{corpus.name}"
    set_aside(proj, base / TRASH)
    content = proj / "content"
    for src in sorted(corpus.rglob("*.md")):
        rel = src.relative_to(corpus)
        if any(part.startswith(".") for part in rel.parts):
            continue
        dst = content / ("_index.md" if rel.as_posix() == "index.md" else rel)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(_hugo_text(src.read_text(encoding="utf-8")), encoding="utf-8")
    (proj / "hugo.toml").write_text(_HUGO_CONFIG, encoding="utf-8")
    layouts = proj / "layouts" / "_default"
    layouts.mkdir(parents=True)
    for name, text in _HUGO_LAYOUTS.items():
        (layouts / name).write_text(text, encoding="utf-8")
    return proj


def hugo_build(proj: Path, base: Path, timeout: float | None, to_disk: bool = False) -> Measured:
    """Time `hugo` on a project made by `hugo_project` (in memory unless `to_disk`)."""
    site = base / f"hugo-site-{proj.name}"
    set_aside(site, base / TRASH)
    set_aside(proj / "resources", base / TRASH)  # Hugo's own cache: every build starts clean
    cmd = ["hugo", "--quiet", "--source", str(proj)]
    cmd += ["--destination", str(site)] if to_disk else ["--renderToMemory"]
    proc = run_measured(cmd, timeout)
    if proc.returncode != 0:
        tail = "\n".join(((proc.stderr or "") + (proc.stdout or "")).strip().splitlines()[-15:])
        raise BenchError(f"hugo failed with exit code {proc.returncode}:\n{tail}")
    return proc


def _fmt(v: float | None, spec: str, suffix: str = "") -> str:
    return "-" if v is None else format(v, spec) + suffix


def render_budget_mb(n: int) -> float:
    """The render-only build's memory budget (docs/decisions/2026-11-24-memory-budget.md):
    1,000 MB at 10,000 documents, in proportion below and above, never under 300 MB."""
    return max(300.0, 1000.0 * n / 10_000)


def render_table(result: dict) -> str:
    rows: list[Row] = [Row(**{k: v for k, v in r.items()}) for r in result["rows"]]
    head = ("corpus", "docs", "commonplace s", "peak MB", "hugo s", "peak MB", "hugo/cp",
            "mkdocs s", "peak MB", "mkdocs/cp")
    body = [
        (r.label, f"{r.n:,}", _fmt(r.commonplace_seconds, ".2f"), _fmt(r.commonplace_peak_mb, ",.0f"),
         _fmt(r.hugo_seconds, ".2f"), _fmt(r.hugo_peak_mb, ",.0f"), _fmt(r.hugo_ratio, ".2f", "x"),
         _fmt(r.mkdocs_seconds, ".2f"), _fmt(r.mkdocs_peak_mb, ",.0f"), _fmt(r.speedup, ".1f", "x"))
        for r in rows
    ]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]

    def line(cells) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [
        f"commonplace: {result['commonplace']}",
        f"command:     commonplace build CORPUS --out OUT{' --no-embed' if result['no_embed'] else ''}{'' if result.get('with_index') else ' --no-index'} --json"
        + ("" if result["no_embed"] else "   (this commonplace has no --no-embed: the time may include embedding)"),
        f"hugo:        {result.get('hugo', {}).get('status', '-')}",
        f"mkdocs:      {result['mkdocs']['status']}",
        f"timing:      wall clock incl. process start, best of {result['repeat']}, clean builds, seed {result['seed']}",
        "memory:      peak MB = largest sum of PSS over the build's processes (sampled every 0.1 s)",
        f"load:        {result.get('load', '-')}",
        "",
        line(head),
        line(["-" * w for w in widths]),
        *(line(b) for b in body),
    ]
    full = next((r for r in rows if r.label == "full"), None)
    if full is not None and full.commonplace_seconds is not None:
        out += ["", f"{full.n:,}-document build: {full.commonplace_seconds:.2f} s ({full.docs_per_second:,.0f} docs/s)"]
    for r in rows:
        if r.commonplace_peak_mb is not None:
            budget = render_budget_mb(r.n)
            out.append(f"memory budget ({r.label}, {r.n:,} docs): {budget:,.0f} MB, peak {r.commonplace_peak_mb:,.0f} MB: "
                       + ("held" if r.commonplace_peak_mb <= budget else "OVER BUDGET"))
    out += ["", "largest single process (ru_maxrss), MB: " + "; ".join(
        f"{r.label} commonplace {_fmt(r.commonplace_maxrss_mb, ',.0f')}, hugo {_fmt(r.hugo_maxrss_mb, ',.0f')}"
        for r in rows)]
    stage_lines = []
    for r in rows:
        stages = r.build_report.get("stages") if isinstance(r.build_report, dict) else None
        if isinstance(stages, dict) and stages:
            parts = ", ".join(f"{k} {v:.2f}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in stages.items())
            stage_lines.append(f"  {r.label} ({r.n:,}): {parts}")
    if stage_lines:
        out += ["", "build stages reported by commonplace (seconds):", *stage_lines]
    return "\n".join(out)


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


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
    hugo_ver = None if args.no_hugo else hugo_version()
    use_hugo = hugo_ver is not None
    if args.no_hugo:
        hugo_status = "skipped (--no-hugo)"
    elif hugo_ver is None:
        hugo_status = "not on PATH: hugo column skipped (e.g. apt-get install hugo)"
        log("hugo is not on PATH; skipping the hugo comparison")
    else:
        hugo_status = (f"hugo {hugo_ver}, {'to disk' if args.hugo_disk else '--renderToMemory'}, minimal layout "
                       "(section nav, table of contents, list pages)")

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
    against = None
    load_before = _load()
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
            project = hugo_project(corpus, base) if use_hugo else None
            times = []
            # With --against, the full corpus's repeats are the alternating pairs (below).
            for i in range(1 if args.against and label == "full" else args.repeat):
                # commonplace and hugo alternate, so a change in the machine's load hits both
                log(f"[{label}] commonplace build ({i + 1}/{args.repeat}) ...")
                m, report = cp.build(corpus, base / f"site-commonplace-{n}")
                times.append(m.seconds)
                row.build_exit_code, row.build_report = m.returncode, report
                row.commonplace_peak_mb = _max(row.commonplace_peak_mb, m.peak_pss_mb)
                row.commonplace_maxrss_mb = _max(row.commonplace_maxrss_mb, m.maxrss_mb)
                log(f"[{label}]   {m.seconds:.2f} s (exit {m.returncode}), peak {m.peak_pss_mb} MB")
                if project is not None:
                    log(f"[{label}] hugo build ({i + 1}/{args.repeat}) ...")
                    h = hugo_build(project, base, args.timeout, args.hugo_disk)
                    row.hugo_seconds = _min(row.hugo_seconds, round(h.seconds, 3))
                    row.hugo_peak_mb = _max(row.hugo_peak_mb, h.peak_pss_mb)
                    row.hugo_maxrss_mb = _max(row.hugo_maxrss_mb, h.maxrss_mb)
                    log(f"[{label}]   {h.seconds:.2f} s, peak {h.peak_pss_mb} MB")
            row.commonplace_seconds = round(min(times), 3)
            row.docs_per_second = round(row.n / min(times), 1)
            if row.hugo_seconds is not None:
                row.hugo_ratio = round(row.hugo_seconds / min(times), 2)
            if use_mkdocs and label == "compare":
                mtimes = []
                for i in range(args.repeat):
                    log(f"[{label}] mkdocs build ({i + 1}/{args.repeat}) ...")
                    mk = mkdocs_build(corpus, base, args.timeout)
                    mtimes.append(mk.seconds)
                    row.mkdocs_peak_mb = _max(row.mkdocs_peak_mb, mk.peak_pss_mb)
                    log(f"[{label}]   {mk.seconds:.2f} s, peak {mk.peak_pss_mb} MB")
                row.mkdocs_seconds = round(min(mtimes), 3)
                row.mkdocs_docs_per_second = round(row.n / min(mtimes), 1)
                row.speedup = round(min(mtimes) / min(times), 2)
            rows.append(row)
            if args.against and label == "full":
                against = _against(args, cp, corpus, base)
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
        "hugo": {"available": hugo_ver is not None, "used": use_hugo, "version": hugo_ver, "status": hugo_status,
                 "to_disk": bool(args.hugo_disk)},
        "load": load_before + " before, " + _load() + " after",
        "seed": args.seed,
        "repeat": args.repeat,
        "workdir": str(base) if args.workdir else None,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "rows": [asdict(r) for r in rows],
    }
    for r in result["rows"]:
        result[r["label"]] = r
    if against is not None:
        result["against"] = against
    return result


def _against(args: argparse.Namespace, cp: "Commonplace", corpus: Path, base: Path) -> dict:
    """`--against OTHER`: this build and OTHER's on the full corpus, in turn (bench_against)."""
    try:
        from .bench_against import run_against
    except ImportError:
        from bench_against import run_against  # type: ignore[no-redef]
    other = Commonplace(args.against, args.timeout, args.with_index)
    load = _load()
    result = run_against(cp, other, corpus, base, args.repeat, log)
    result.load = f"{load} before, {_load()} after"
    return result.summary()


def main(argv: list[str] | None = None) -> int:
    if "--parse-cache" in (sys.argv[1:] if argv is None else argv):  # rebuilds with the parse cache on and off
        try:
            from .bench_parse_cache import main as parse_cache_main
        except ImportError:
            from bench_parse_cache import main as parse_cache_main  # type: ignore[no-redef]
        return parse_cache_main(argv)
    ap = argparse.ArgumentParser(prog="bench_build", description="Benchmark `commonplace build` (and mkdocs).")
    ap.add_argument("--n", type=int, default=10_000, help="full corpus size (default 10000; 0 skips)")
    ap.add_argument("--compare-n", type=int, default=2_000,
                    help="corpus size also built with mkdocs (default 2000; 0 skips)")
    ap.add_argument("--no-mkdocs", action="store_true", help="do not run mkdocs")
    ap.add_argument("--no-hugo", action="store_true", help="do not run hugo (run by default when on PATH)")
    ap.add_argument("--hugo-disk", action="store_true",
                    help="hugo writes its site to disk like commonplace (default: --renderToMemory)")
    ap.add_argument("--with-index", action="store_true",
                    help="also build the BM25 index (default: rendering only, --no-index)")
    ap.add_argument("--workdir", type=Path, help="keep corpora and sites here instead of a temp dir")
    ap.add_argument("--seed", type=int, default=0, help="corpus generator seed (default 0)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the best is reported")
    ap.add_argument("--timeout", type=float, default=None, help="seconds allowed per build subprocess")
    ap.add_argument("--commonplace", metavar="PATH",
                    help="commonplace executable to time (default: the one next to this Python, else PATH)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--against", metavar="PATH",
                    help="another commonplace executable: after the full corpus's own timing, both build it "
                         "--repeat times in alternating order (best, median, ratio; bench_against)")
    ap.add_argument("--real", action="store_true",
                    help="also build a public Obsidian vault and a large markdown repository (bench_real)")
    ap.add_argument("--real-dir", type=Path, default=Path("bench-real"), help="where --real clones and builds")
    ap.add_argument("--vault-repo", default=None, help="git URL or path of the vault (default: obsidian-help)")
    ap.add_argument("--vault-dir", default=None, help="folder of the vault inside its repository (default: en)")
    ap.add_argument("--markdown-repo", default=None, help="git URL or path of the markdown repository (default: tldr)")
    ap.add_argument("--markdown-dir", default=None, help="its folder of pages (default: pages)")
    args = ap.parse_args(argv)
    if args.real:
        return _main_real(args)
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
        if "against" in result:
            try:
                from .bench_against import render_against
            except ImportError:
                from bench_against import render_against  # type: ignore[no-redef]
            print(render_against(result["against"]))
    return 0


def _main_real(args: argparse.Namespace) -> int:
    """`--real`: the synthetic corpora (unless --n 0 --compare-n 0), then the real ones."""
    try:
        from .bench_real import MARKDOWN, VAULT, render_real, run_real
    except ImportError:
        from bench_real import MARKDOWN, VAULT, render_real, run_real  # type: ignore[no-redef]
    if args.n or args.compare_n:
        code = main([a for a in sys.argv[1:] if a != "--real"])
        if code:
            return code
    exe = args.commonplace or find_commonplace()
    if exe is None:
        log("error: no `commonplace` executable")
        return 1
    rows = run_real(exe, args.real_dir.resolve(), log, args.vault_repo or VAULT[1], args.vault_dir or VAULT[2],
                    args.markdown_repo or MARKDOWN[1], args.markdown_dir or MARKDOWN[2])
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else render_real(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
