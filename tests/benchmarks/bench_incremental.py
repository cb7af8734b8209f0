"""Incremental benchmark: full builds, then save-to-searchable latency in a watcher.

    python -m tests.benchmarks.bench_incremental [--n 10000] [--edits 30] [--workdir DIR]
                                                 [--no-embed] [--skip-full-embed] [--json]

1. Generates the synthetic corpus (`corpus_gen`, seed 0) unless --workdir holds one.
2. Times a clean `commonplace build --no-embed` and (unless --skip-full-embed or
   --no-embed) a clean `commonplace build` with embeddings, as subprocesses.
3. Opens a `LiveCorpus` on the built corpus with the file watcher running, then saves
   one document at a time the way an editor does (write a temp file, rename it over
   the original), each edit inserting a unique word inside one section's paragraph, and
   measures the time from the rename until the page on disk shows the word AND a bm25
   search finds the document by it (and, with embeddings, the changed chunk is embedded).
   The page is checked every 2 ms; the search runs once a refresh has finished, else every
   25 ms (searching every 2 ms in this process took the GIL from the refresh and nearly
   doubled the latency it measured: p50 176 ms against 82 ms for the refresh alone).
Prints a table with p50/p95 and the ratio of the full no-embed build to the p50 edit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.corpus_gen import generate


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def commonplace_exe() -> str:
    here = Path(sys.executable).with_name("commonplace")
    return str(here) if here.exists() else (shutil.which("commonplace") or "commonplace")


def timed_build(corpus: Path, out: Path, *flags: str, drop: tuple[str, ...] = ("index",)) -> tuple[float, dict]:
    """A clean build: `--clean` ignores the site manifest, and the derived state named in
    `drop` (under `.commonplace/`: the index; the embedding cache too for a build with
    embeddings) is deleted first, or the index stage would find nothing to do."""
    for name in drop:
        shutil.rmtree(corpus / ".commonplace" / name, ignore_errors=True)
    t0 = time.perf_counter()
    proc = subprocess.run([commonplace_exe(), "build", str(corpus), "--out", str(out), "--clean", "--json", *flags],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    secs = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"build failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return secs, json.loads(proc.stdout)


def pick_edit(path: Path, token: str, rng: random.Random) -> str | None:
    """Insert `token` into a prose line inside a section (not frontmatter, code or tables)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    in_fm = lines[0].strip() == "---"
    in_code = False
    candidates = []
    for i, line in enumerate(lines):
        if i > 0 and in_fm and line.strip() == "---":
            in_fm = False
            continue
        if in_fm:
            continue
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line.strip() or line.startswith(("#", "|", "-", "*", "$", ">")) or line[0].isdigit():
            continue
        if len(line.split()) >= 6:
            candidates.append(i)
    if not candidates:
        return None
    i = rng.choice(candidates)
    words = lines[i].split(" ")
    words.insert(len(words) // 2, token)
    lines[i] = " ".join(words)
    return "\n".join(lines)


def save_like_an_editor(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--no-embed", action="store_true", help="no embeddings anywhere (BM25 only)")
    ap.add_argument("--skip-full-embed", action="store_true",
                    help="do not time the clean build with embeddings (reuse the index in --workdir)")
    ap.add_argument("--skip-builds", action="store_true",
                    help="time no builds: reuse the index in --workdir and the build times an earlier run "
                         "recorded there (builds.json)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    work = args.workdir or Path(tempfile.mkdtemp(prefix="cp-bench-inc-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus, out = work / "corpus", work / "site"
    if not corpus.exists():
        log(f"generating {args.n} documents in {corpus} ...")
        generate(corpus, args.n, seed=args.seed)
    embed = not args.no_embed

    times_file = work / "builds.json"
    times = json.loads(times_file.read_text()) if times_file.exists() else {}
    if args.skip_builds:  # a workdir built some other way has no build times: none are shown
        full_no_embed, full_embed = times.get("no_embed"), times.get("embed") if embed else None
        log(f"reusing the index in {corpus} and the build times in {times_file}")
    else:
        log("clean build without embeddings ...")
        full_no_embed, report = timed_build(corpus, out, "--no-embed")
        log(f"  {full_no_embed:.1f} s")
        times = {"no_embed": full_no_embed, "load": os.getloadavg()}
        full_embed = None
        if embed and not args.skip_full_embed:
            log("clean build with embeddings (this takes minutes) ...")
            full_embed, report = timed_build(corpus, out, drop=("index", "cache"))
            log(f"  {full_embed:.1f} s")
            times["embed"] = full_embed
            times["embed_stages"] = report.get("stages")
        times_file.write_text(json.dumps(times, indent=2))
    if args.edits <= 0:
        return

    from commonplace.compiler.live.corpus import LiveCorpus

    live = LiveCorpus(corpus, out, embed=embed)
    t0 = time.perf_counter()
    opened = live.open()
    open_seconds = time.perf_counter() - t0
    log(f"live corpus open: {open_seconds:.1f} s ({opened.documents_changed} documents changed)")
    if embed:
        live.search({"query": "warm up the model", "mode": "hybrid"})
    seen: dict[int, object] = {}  # refreshes (echo is called once per line: summary and warnings)

    def on_line(line: str) -> None:
        r = live.last_refresh
        if r is not None:
            seen.setdefault(id(r), r)

    live.watch(echo=on_line)

    rng = random.Random(args.seed)
    nonce = "".join(random.SystemRandom().choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
    docs = sorted(p for p in corpus.rglob("*.md") if ".commonplace" not in p.parts)
    latencies: list[float] = []
    embedded: list[int] = []
    try:
        for i in range(args.edits):
            # A per-run nonce: a rerun on the same workdir picks the same documents, which
            # still hold the previous run's words (a token seen before is no measurement).
            token = f"zqxbench{nonce}{i}w{rng.randrange(10**6)}"
            for _ in range(50):
                path = rng.choice(docs)
                text = pick_edit(path, token, rng)
                if text is not None:
                    break
            rel = path.relative_to(corpus).as_posix()
            page = out / rel[:-3] / "index.html"
            before = live.last_refresh
            t0 = time.perf_counter()
            save_like_an_editor(path, text)
            deadline = t0 + 10
            last_search = 0.0
            while time.perf_counter() < deadline:
                if token in page.read_text(encoding="utf-8", errors="replace"):
                    # Search once a refresh has finished (or every 25 ms as a fallback):
                    # a search every 2 ms would hold this process's GIL for most of the
                    # refresh it is waiting for and measure the polling, not the refresh.
                    now = time.perf_counter()
                    if live.last_refresh is not before or now - last_search >= 0.025:
                        last_search = now
                        res = live.search({"query": token, "mode": "bm25", "k": 3, "corpus": "all"})
                        if any(r["path"] == rel for r in res["results"]):
                            break
                time.sleep(0.002)
            else:
                raise SystemExit(f"edit {i} of {rel} not visible after 10 s")
            latencies.append(time.perf_counter() - t0)
            if live.last_refresh is not None:
                embedded.append(int(live.last_refresh.index.get("chunks_embedded", 0)))
            time.sleep(0.15)  # let the watcher go idle, like a person typing between saves
    finally:
        live.close()

    p50, p95 = pct(latencies, 50), pct(latencies, 95)
    done = [r for r in seen.values() if getattr(r, "changed", None)]
    refreshes = [r.seconds for r in done]
    steps: dict[str, list[float]] = {}
    for r in done:
        for k, v in getattr(r, "timings", {}).items():
            steps.setdefault(k, []).append(v)
    result = {
        "documents": args.n,
        "full_build_no_embed_s": round(full_no_embed, 2) if full_no_embed else None,
        "full_build_embed_s": round(full_embed, 1) if full_embed else None,
        "edits": len(latencies),
        "edit_p50_ms": round(p50 * 1000, 1),
        "edit_p95_ms": round(p95 * 1000, 1),
        "edit_mean_ms": round(statistics.mean(latencies) * 1000, 1),
        "refresh_p50_ms": round(pct(refreshes, 50) * 1000, 1) if refreshes else None,
        "chunks_embedded_per_edit": round(statistics.mean(embedded), 2) if embedded else None,
        "speedup_vs_full_no_embed": round(full_no_embed / p50, 1) if full_no_embed else None,
        "embeddings": embed,
        "refresh_steps_p50_ms": {k: round(pct(v, 50) * 1000, 1) for k, v in sorted(steps.items())},
        "refresh_steps_p95_ms": {k: round(pct(v, 95) * 1000, 1) for k, v in sorted(steps.items())},
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    rows = [
        ("documents", f"{args.n}"),
        ("full build, no embeddings", f"{full_no_embed:.1f} s" if full_no_embed else "not run"),
        ("full build, with embeddings", f"{full_embed:.1f} s" if full_embed else "not run"),
        ("edits measured", f"{len(latencies)}"),
        ("save -> page + searchable, p50", f"{p50 * 1000:.0f} ms"),
        ("save -> page + searchable, p95", f"{p95 * 1000:.0f} ms"),
        ("refresh itself, p50", f"{result['refresh_p50_ms']} ms"),
        ("chunks embedded per edit", f"{result['chunks_embedded_per_edit']}"),
        ("full no-embed build / p50 edit", f"{result['speedup_vs_full_no_embed']}x" if full_no_embed else "-"),
        ("load average (1, 5, 15 min)", " ".join(str(x) for x in result["load_average"])),
    ]
    rows += [(f"  {k}, p50 / p95", f"{v} / {result['refresh_steps_p95_ms'][k]} ms")
             for k, v in result["refresh_steps_p50_ms"].items()]
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
