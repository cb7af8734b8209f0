"""Parse cache benchmark: rebuilds of an unchanged corpus with the cache on and off.

    python -m tests.benchmarks.bench_build --parse-cache [--compare-n 2000] [--n 10000] [--repeat 3]
                                           [--workdir DIR] [--json]
    (or python -m tests.benchmarks.bench_parse_cache with the same options)

For each synthetic corpus (`corpus_gen`, seed 0), render only (`--no-embed --no-index`),
with `COMMONPLACE_PARSE_CACHE=0` ("off", the build without the cache) and `=1` ("on"),
the two alternating, `--repeat` times each, medians reported (wall and CPU seconds of the
build's process tree, and its `update` stage, which holds parsing and rendering):

* **cold**: no output folder, no `.commonplace/` (so "on" pays for writing every entry);
* **--clean**: `build --clean` into a new output folder, the state folder kept (so "on"
  loads every document from a warm cache);
* **template change**: a build over the last output with a new `--site-url`, which changes
  the build's fingerprint as a template change does: every page is rendered again.

The kernel's page cache is dropped before every timed build (`bench_build.settle`), so
the cache's files are read from disk. The machine's load is printed with each corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

try:
    from .bench_build import TRASH, Commonplace, _load, empty_trash, find_commonplace, log, run_measured, set_aside, settle
    from .corpus_gen import generate
except ImportError:  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_build import (TRASH, Commonplace, _load, empty_trash, find_commonplace, log,  # type: ignore
                             run_measured, set_aside, settle)
    from corpus_gen import generate  # type: ignore[no-redef]

KINDS = ("cold", "--clean", "template change")


def _timed(cp: Commonplace, cmd: list[str], cache: bool, corpus: Path) -> dict:
    settle(corpus)
    os.environ["COMMONPLACE_PARSE_CACHE"] = "1" if cache else "0"
    try:
        m = run_measured(cmd, cp.timeout)
    finally:
        os.environ.pop("COMMONPLACE_PARSE_CACHE", None)
    if m.returncode not in (0, 1):
        raise RuntimeError(f"`{' '.join(cmd)}` failed ({m.returncode}): {m.stderr[-1500:]}")
    report = json.loads(m.stdout)
    return {"wall": m.seconds, "cpu": m.cpu_seconds or 0.0, "update": report.get("stages", {}).get("update", 0.0),
            "peak_mb": m.peak_pss_mb or 0.0}


def measure(cp: Commonplace, corpus: Path, base: Path, repeat: int) -> dict:
    trash = base / TRASH
    out = base / f"site-{corpus.name}"
    runs: dict[str, dict[str, list[dict]]] = {k: {"off": [], "on": []} for k in KINDS}
    state = corpus / ".commonplace"
    n = 0
    for i in range(repeat):
        for mode in (("off", "on") if i % 2 == 0 else ("on", "off")):
            cache = mode == "on"
            set_aside(out, trash)
            set_aside(state, trash)
            log(f"  round {i + 1}, cache {mode}: cold ...")
            runs["cold"][mode].append(_timed(cp, cp.cmd(corpus, out), cache, corpus))
            set_aside(out, trash)
            log(f"  round {i + 1}, cache {mode}: --clean ...")
            runs["--clean"][mode].append(_timed(cp, cp.cmd(corpus, out)[:-1] + ["--clean", "--json"], cache, corpus))
            n += 1
            log(f"  round {i + 1}, cache {mode}: template change ...")
            cmd = cp.cmd(corpus, out)[:-1] + ["--site-url", f"https://bench-{n}.example.org/", "--json"]
            runs["template change"][mode].append(_timed(cp, cmd, cache, corpus))
    empty_trash(trash)
    out_rows = {}
    for kind, modes in runs.items():
        out_rows[kind] = {mode: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]}
                          for mode, rs in modes.items()}
    return out_rows


def run(args: argparse.Namespace) -> dict:
    exe = args.commonplace or find_commonplace()
    if exe is None:
        raise SystemExit("no `commonplace` executable")
    cp = Commonplace(exe, args.timeout)
    holder = None
    if args.workdir:
        base = Path(args.workdir).resolve()
        base.mkdir(parents=True, exist_ok=True)
    else:
        holder = tempfile.TemporaryDirectory(prefix="commonplace-parse-cache-")
        base = Path(holder.name)
    result = {"cpus": os.cpu_count(), "repeat": args.repeat, "corpora": {}}
    try:
        for n in [x for x in (args.compare_n, args.n) if x]:
            corpus = base / f"corpus-{n}"
            if not (corpus / "index.md").exists():
                log(f"generating {n:,} documents ...")
                generate(corpus, n, seed=args.seed)
            load = _load()
            log(f"[{n:,}] load {load}")
            rows = measure(cp, corpus, base, args.repeat)
            result["corpora"][str(n)] = {"rows": rows, "load": f"{load} -> {_load()}"}
    finally:
        if holder is not None:
            holder.cleanup()
    return result


def render(result: dict) -> str:
    lines = ["| corpus | rebuild | wall s off -> on | CPU s off -> on | update stage s off -> on | load |",
             "|---|---|---|---|---|---|"]
    for n, got in result["corpora"].items():
        for kind, modes in got["rows"].items():
            off, on = modes["off"], modes["on"]
            cells = [f"{off[k]} -> {on[k]} ({(on[k] / off[k] - 1) * 100:+.0f}%)" if off[k] else "-"
                     for k in ("wall", "cpu", "update")]
            lines.append(f"| {int(n):,} | {kind} | " + " | ".join(cells) + f" | {got['load']} |")
    lines.append("")
    lines.append(f"medians of {result['repeat']} alternating runs each; {result['cpus']} CPUs; "
                 "render only (--no-embed --no-index)")
    return "\n".join(lines)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--compare-n", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--commonplace", metavar="PATH")
    ap.add_argument("--json", action="store_true")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    ap.add_argument("--parse-cache", action="store_true", help=argparse.SUPPRESS)  # as bench_build passes it
    args = ap.parse_args(argv)
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
