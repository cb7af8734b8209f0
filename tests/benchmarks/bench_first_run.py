"""First-run benchmark: how long a person waits for a usable wiki.

    python -m tests.benchmarks.bench_first_run [--n 2000] [--n 10000] [--docs] [--real] [--corpus DIR --query W]
                                               [--rounds 1]
                                               [--model default] [--model static] [--site-only] [--quartz DIR]
                                               [--workdir DIR] [--json]

For each corpus (synthetic `corpus_gen` corpora of the given sizes, a copy of this
repository's `docs/` with --docs, and with --real the public Obsidian vault and the
plain-markdown repository of `bench_real`, cloned into the workdir on first use, never
kept in this repository), in one run, cold (no output folder, no
`CORPUS/.commonplace`: no index, no embedding cache; the model's own conversion cache in
`~/.cache/commonplace/` is warmed once before timing, by a build of a three-note corpus;
before each timed build the kernel's page cache is written back and dropped when run as
root, and the corpus read back in, `bench_build.settle`, so the build that runs second
does not pay for the first one's files):

1. `commonplace build CORPUS --out OUT --no-embed`: wall seconds and peak memory;
2. `commonplace build CORPUS --out OUT` (embeddings on), timed by this harness from the
   process start: "site ready" when its `Site ready` line reaches stdout; "bm25
   searchable" when a BM25 query made in this process right after that line returns the
   corpus's hits; "all vectors" when the build exits (then the index's meta must say
   vectors == chunks); peak memory (the largest sum of PSS over the build's process tree,
   `bench_build.run_measured`'s sampling).

Both builds' CPU seconds are reported too (user + system of the process tree: the whole
`--no-embed` build, and the build with embeddings up to its `Site ready` line), with their
ratio: on a machine others share, wall time moves with their work, CPU time far less.

With several `--model`s (`default`: all-MiniLM-L6-v2; `static`: the static tier
distilled from it), step 2 runs once per model after the same `--no-embed` build, one row
each; the models' own caches in `~/.cache/commonplace/` are warmed first, outside the timing.

`--quartz DIR` also builds each corpus with Quartz 4 (`npx quartz build` in DIR, a
checkout outside this repository with its `npm ci` done; content/ is replaced by a copy
of the corpus), once to warm it, then once per round in the same alternation, and
reports its wall and CPU time beside commonplace's site ready.

`--site-only` stops the second build (SIGTERM) once BM25 answered, so "all vectors" is not
measured: the site-ready ratio of a big corpus in minutes, not the embedding's hour.
`--rounds N` repeats both builds N times, alternating which goes first, and reports the
median of each figure. The target is "site ready" within 1.25x of the `--no-embed`
build. The machine's load average is printed before and after each corpus, since a
shared machine moves these numbers. Prints a table (or JSON) on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    from .bench_build import TRASH, _children, _load, _pss_kb, empty_trash, find_commonplace, set_aside, settle
    from .bench_real import MARKDOWN, VAULT, fetch
    from .corpus_gen import generate
except ImportError:  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_build import TRASH, _children, _load, _pss_kb, empty_trash, find_commonplace, set_aside, settle  # type: ignore
    from bench_real import MARKDOWN, VAULT, fetch  # type: ignore[no-redef]
    from corpus_gen import generate  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[2]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Row:
    corpus: str
    documents: int = 0
    chunks: int = 0
    no_embed_seconds: float = 0.0
    no_embed_peak_mb: float = 0.0
    site_ready_seconds: float = 0.0  # harness clock, process start to the `Site ready` line
    site_ready_reported: float = 0.0  # what the line says (from inside the build)
    bm25_searchable_seconds: float = 0.0
    all_vectors_seconds: float = 0.0
    vectors: int = 0
    peak_mb: float = 0.0
    ratio: float = 0.0  # site ready / --no-embed build
    # CPU seconds (user + system) of the build's process tree: the whole --no-embed build,
    # and the build with embeddings up to its `Site ready` line. Other work on a shared
    # machine moves these far less than wall time.
    no_embed_cpu: float = 0.0
    site_ready_cpu: float = 0.0
    cpu_ratio: float = 0.0
    all_vectors_cpu: float = 0.0  # the build with embeddings, whole (when waited for)
    quartz_seconds: float = 0.0  # `npx quartz build` of the same corpus (--quartz), wall
    quartz_cpu: float = 0.0
    quartz_vs_site_ready: float = 0.0  # Quartz's build / commonplace's site ready (> 1: commonplace first)
    load_before: str = ""
    load_after: str = ""


class Sampler:
    """Peak PSS (MB) of a process tree, sampled every 0.1 s."""

    def __init__(self, pid: int):
        self.pid, self.peak = pid, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(0.1):
            self.peak = max(self.peak, sum(_pss_kb(p) for p in _children({self.pid})))

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return round(self.peak / 1024, 1)


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of `pid`, its live descendants and the children they reaped."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for p in _children({pid}):
        try:
            fields = open(f"/proc/{p}/stat", "rb").read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / tick


def cold(corpus: Path, out: Path, trash: Path) -> None:
    set_aside(out, trash)
    set_aside(corpus / ".commonplace", trash)


def no_embed_build(exe: str, corpus: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, peak MB and CPU seconds (the build and the workers it reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([exe, "build", str(corpus), "--out", str(out), "--no-embed"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    sampler = Sampler(proc.pid)
    _, err = proc.communicate()
    secs = time.perf_counter() - t0
    peak = sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"--no-embed build failed: {err.decode()[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return secs, peak, cpu


def bm25_hits(corpus: Path, query: str) -> int:
    from commonplace.compiler.search.read.engine import SearchEngine

    engine = SearchEngine(corpus)
    try:
        return len(engine.search({"query": query, "k": 5, "mode": "bm25"})["results"])
    finally:
        engine.close()


def model_env(model: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if model:
        env["COMMONPLACE_EMBED_MODEL"] = model
    return env


def full_build(exe: str, corpus: Path, out: Path, query: str, row: Row, site_only: bool = False,
               model: str | None = None) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([exe, "build", str(corpus), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=model_env(model))
    sampler = Sampler(proc.pid)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read() if proc.stderr else ""), daemon=True)
    reader.start()
    assert proc.stdout is not None
    first = proc.stdout.readline()
    row.site_ready_seconds = round(time.perf_counter() - t0, 2)
    row.site_ready_cpu = round(tree_cpu(proc.pid), 2)
    if not first.startswith("Site ready in "):
        proc.wait()
        raise RuntimeError(f"expected the site ready line, got {first!r}; stderr: {''.join(err)[-2000:]}")
    row.site_ready_reported = float(first.split()[3])
    if bm25_hits(corpus, query) == 0:
        raise RuntimeError(f"no bm25 hits for {query!r} right after the site ready line")
    row.bm25_searchable_seconds = round(time.perf_counter() - t0, 2)
    if site_only:
        # SIGTERM, which the build turns into an interrupt once its site is ready: a
        # SIGINT is ignored by a process started in the background of a shell.
        proc.send_signal(signal.SIGTERM)
        proc.communicate()
        row.peak_mb = sampler.stop()
        reader.join()
        if proc.returncode not in (0, 130):
            raise RuntimeError(f"build exited {proc.returncode}: {''.join(err)[-2000:]}")
        read_counts(corpus, row)
        return
    proc.stdout.read()
    proc.wait()
    row.all_vectors_seconds = round(time.perf_counter() - t0, 2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row.all_vectors_cpu = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
    row.peak_mb = sampler.stop()
    reader.join()
    if proc.returncode != 0:
        raise RuntimeError(f"build failed: {''.join(err)[-2000:]}")
    read_counts(corpus, row)
    if row.vectors != row.chunks:
        raise RuntimeError(f"build ended with {row.vectors} vectors for {row.chunks} chunks")


def read_counts(corpus: Path, row: Row) -> None:
    gen = (corpus / ".commonplace" / "index" / "CURRENT").read_text().strip()
    meta = json.loads((corpus / ".commonplace" / "index" / gen / "meta.json").read_text())
    row.chunks, row.vectors, row.documents = meta["chunks"], meta["vectors"], meta["documents"]


QUARTZ_ASIDE = "content.before-bench"  # a Quartz checkout's own content/, kept once


def quartz_missing(qdir: Path) -> str | None:
    """Why Quartz cannot be run from `qdir`, or None."""
    if shutil.which("node") is None or shutil.which("npx") is None:
        return "node/npx is not installed"
    if not (qdir / "quartz" / "bootstrap-cli.mjs").is_file():
        return f"{qdir} is not a Quartz 4 checkout (no quartz/bootstrap-cli.mjs)"
    if not (qdir / "node_modules").is_dir():
        return f"{qdir} has no node_modules (run `npm ci` there)"
    return None


def quartz_content(qdir: Path, corpus: Path) -> None:
    """Put a copy of `corpus` in the Quartz checkout's content/ (its own content set aside once)."""
    content, aside = qdir / "content", qdir / QUARTZ_ASIDE
    if content.exists() and not aside.exists():
        content.rename(aside)
    shutil.rmtree(content, ignore_errors=True)
    shutil.copytree(corpus, content, ignore=shutil.ignore_patterns(".commonplace"))


def quartz_build(qdir: Path) -> tuple[float, float]:
    """`npx quartz build` in `qdir`: wall and CPU seconds (node and what it reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(["npx", "quartz", "build"], cwd=qdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True)
    secs = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or "Done processing" not in proc.stdout:
        raise RuntimeError(f"quartz build failed ({proc.returncode}): {proc.stdout[-2000:]}")
    return secs, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def warm_model(exe: str, base: Path, model: str | None = None) -> None:
    """Convert the model once (its cache lives in ~/.cache/commonplace), outside the timing."""
    tiny = base / f"warm-{model or 'configured'}"
    tiny.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        (tiny / f"n{i}.md").write_text(f"# Warm {i}\n\nA note to load the model with, number {i}.\n")
    subprocess.run([exe, "build", str(tiny), "--out", str(base / "warm-site")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=model_env(model))


def run(args: argparse.Namespace) -> list[Row]:
    exe = find_commonplace()
    if exe is None:
        raise SystemExit("no `commonplace` executable next to this Python or on PATH")
    holder = None
    if args.workdir:
        base = Path(args.workdir).resolve()
        base.mkdir(parents=True, exist_ok=True)
    else:
        holder = tempfile.TemporaryDirectory(prefix="commonplace-first-run-")
        base = Path(holder.name)
    trash = base / TRASH
    corpora: list[tuple[str, Path, str]] = []
    for n in args.n:
        corpus = base / f"synthetic-{n}"
        if not (corpus / "index.md").exists():
            log(f"generating {n:,} documents ...")
            generate(corpus, n, seed=0)
        corpora.append((f"synthetic {n:,}", corpus, "database replica"))
    if args.docs:
        corpus = base / "docs"
        set_aside(corpus, trash)
        shutil.copytree(REPO / "docs", corpus, ignore=shutil.ignore_patterns(".commonplace"))
        corpora.append(("docs/", corpus, "embedding cache"))
    if args.real:
        for (name, url, folder), repo, query in ((VAULT, args.vault_repo, "canvas"),
                                                 (MARKDOWN, args.markdown_repo, "archive")):
            clone = fetch(repo or url, base / "real" / name, log)
            corpora.append((f"{name} ({Path(repo or url).name}/{folder})", clone / folder, query))
    for path in args.corpus or []:  # a folder already here (a clone extracted by hand, say)
        corpus = Path(path).resolve()
        corpora.append((corpus.name, corpus, args.query))
    import commonplace.compiler.search.read.engine  # noqa: F401 - imported before the clock runs

    models = args.model or [None]
    for model in models:
        log(f"warming the model's conversion cache ({model or 'configured model'}) ...")
        warm_model(exe, base, model)
    qdir = Path(args.quartz).resolve() if args.quartz else None
    if qdir is not None and (why := quartz_missing(qdir)):
        log(f"skipping Quartz: {why}")
        qdir = None
    rows = []
    try:
        for label, corpus, query in corpora:
            if qdir is not None:
                quartz_content(qdir, corpus)
                log(f"[{label}] warming Quartz (its first build bundles itself) ...")
                quartz_build(qdir)
            load_before = _load()
            runs: dict[str | None, list[Row]] = {m: [] for m in models}
            out = base / f"site-{corpus.name}"
            for i in range(args.rounds):
                plain = Row(label)
                done: dict[str | None, Row] = {}
                steps = ["plain", *models] + (["quartz"] if qdir is not None else [])
                for step in (steps if i % 2 == 0 else steps[::-1]):
                    if step == "quartz":
                        assert qdir is not None
                        settle(qdir / "content")
                        log(f"[{label}] round {i + 1}: npx quartz build ...")
                        plain.quartz_seconds, plain.quartz_cpu = (round(x, 2) for x in quartz_build(qdir))
                        continue
                    cold(corpus, out, trash)
                    # The earlier build's files, set aside, would otherwise still be in the
                    # page cache (and partly unwritten) while this one runs: that slowed
                    # whichever build went second (`bench_build.settle`).
                    dropped = settle(corpus)
                    if step == "plain":
                        log(f"[{label}] round {i + 1}: --no-embed build (page cache "
                            f"{'dropped' if dropped else 'kept: not root'}) ...")
                        plain.no_embed_seconds, plain.no_embed_peak_mb, plain.no_embed_cpu = (
                            round(x, 2) for x in no_embed_build(exe, corpus, out))
                    else:
                        log(f"[{label}] round {i + 1}: build with embeddings ({step or 'configured model'}) ...")
                        row = done[step] = Row(f"{label}, {step}" if step else label)
                        full_build(exe, corpus, out, query, row, site_only=args.site_only, model=step)
                for model, row in done.items():
                    row.no_embed_seconds, row.no_embed_peak_mb = plain.no_embed_seconds, plain.no_embed_peak_mb
                    row.no_embed_cpu = plain.no_embed_cpu
                    row.quartz_seconds, row.quartz_cpu = plain.quartz_seconds, plain.quartz_cpu
                    if row.quartz_seconds:
                        log(f"[{row.corpus}]   quartz {row.quartz_seconds} s ({row.quartz_cpu} CPU s)")
                    log(f"[{row.corpus}]   --no-embed {row.no_embed_seconds} s ({row.no_embed_cpu} CPU s); site ready "
                        f"{row.site_ready_seconds} s ({row.site_ready_cpu} CPU s), all vectors "
                        f"{row.all_vectors_seconds or '-'} s ({row.all_vectors_cpu or '-'} CPU s)")
                    runs[model].append(row)
            rows.extend(median_row(r, load_before, _load()) for r in runs.values())
    finally:
        empty_trash(trash)
        if holder is not None:
            holder.cleanup()
    return rows


def median_row(runs: list[Row], load_before: str, load_after: str) -> Row:
    """Each figure's median over the rounds (counts from the last round)."""
    row = runs[-1]
    for name in ("no_embed_seconds", "no_embed_peak_mb", "site_ready_seconds", "site_ready_reported",
                 "bm25_searchable_seconds", "all_vectors_seconds", "peak_mb", "no_embed_cpu", "site_ready_cpu", "all_vectors_cpu",
                 "quartz_seconds", "quartz_cpu"):
        setattr(row, name, round(statistics.median(getattr(r, name) for r in runs), 2))
    row.ratio = round(row.site_ready_seconds / row.no_embed_seconds, 2)
    row.cpu_ratio = round(row.site_ready_cpu / row.no_embed_cpu, 2) if row.no_embed_cpu else 0.0
    if row.quartz_seconds and row.site_ready_seconds:
        row.quartz_vs_site_ready = round(row.quartz_seconds / row.site_ready_seconds, 2)
    row.load_before, row.load_after = load_before, load_after
    return row


def table(rows: list[Row]) -> str:
    head = ("corpus", "docs", "chunks", "--no-embed s", "site ready s", "ratio", "CPU s: --no-embed / site ready",
            "CPU ratio", "bm25 searchable s",
            "all vectors s (CPU s)", "peak MB (no-embed / full)", "load before -> after")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in (
            r.corpus, r.documents or "-", r.chunks or "-", r.no_embed_seconds, f"{r.site_ready_seconds} ({r.site_ready_reported})",
            f"{r.ratio}x", f"{r.no_embed_cpu} / {r.site_ready_cpu}", f"{r.cpu_ratio}x", r.bm25_searchable_seconds,
            f"{r.all_vectors_seconds} ({r.all_vectors_cpu})" if r.all_vectors_seconds else "not waited",
            f"{r.no_embed_peak_mb} / {r.peak_mb}",
            f"{r.load_before} -> {r.load_after}")) + " |")
    quartz = [r for r in rows if r.quartz_seconds]
    if quartz:
        lines += ["", "| corpus | Quartz build s | Quartz CPU s | commonplace site ready s | Quartz / site ready |",
                  "|---|---|---|---|---|"]
        lines += [f"| {r.corpus} | {r.quartz_seconds} | {r.quartz_cpu} | {r.site_ready_seconds} | "
                  f"{r.quartz_vs_site_ready}x |" for r in quartz]
    lines.append("")
    lines.append("site ready: harness clock from process start (the build's own figure in brackets); "
                 f"target: ratio <= 1.25. {os.cpu_count()} CPUs.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, action="append", help="synthetic corpus size (repeatable; default 2000)")
    p.add_argument("--docs", action="store_true", help="also this repository's docs/ (copied)")
    p.add_argument("--real", action="store_true", help="also the public vault and markdown repository (cloned)")
    p.add_argument("--vault-repo", help="git URL or path standing in for the vault's repository")
    p.add_argument("--markdown-repo", help="git URL or path standing in for the markdown repository")
    p.add_argument("--corpus", action="append", help="a corpus folder to measure as it is (repeatable)")
    p.add_argument("--query", default="the", help="the BM25 query that must answer on --corpus folders")
    p.add_argument("--model", action="append", help="embedding model of the full build (repeatable)")
    p.add_argument("--rounds", type=int, default=1, help="builds of each kind, alternating (medians reported)")
    p.add_argument("--site-only", action="store_true", help="stop the build with embeddings once BM25 answers")
    p.add_argument("--quartz", metavar="DIR", help="also `npx quartz build` each corpus in this Quartz 4 checkout "
                   "(after `npm ci`; its content/ is replaced by a copy of the corpus, the original kept as "
                   f"{QUARTZ_ASIDE}/), alternating with the builds; skipped with a message without node or the checkout")
    p.add_argument("--workdir", help="keep corpora and sites here")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.n is None:
        args.n = [] if args.docs or args.real or args.corpus else [2000]
    rows = run(args)
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
