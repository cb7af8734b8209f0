"""The site's offline search at scale (issue #18): index bytes, the build time it costs,
and how fast results come in a browser opened from file://.

    python -m tests.benchmarks.bench_site_search              # 10,000 documents
    python -m tests.benchmarks.bench_site_search --n 2000 --repeat 1 --json

1. Generates a corpus (corpus_gen) and builds the site (`--no-index`: the search indexes
   of the server are another matter) twice per round in fresh processes: as shipped, and
   with the site search data switched off (no section text from the workers, no search
   files). The difference is the build-time cost of the search data; best of --repeat.
   The CPU seconds of each build (the process and its workers, median) are shown too: on
   a shared machine they move less with other work than the wall time does. Before each
   build the kernel's page cache is dropped (as root; `bench_build.settle`) and the
   corpus read back in: cached files of earlier builds slowed file creation here.
2. Sizes of `_/search-data/`: the page list, the term shards, the text shards.
3. Debian's Chromium (Playwright) opens a page from file://, opens the search and types
   words letter by letter, each in a fresh browser context: the first keystroke's time
   to results is the cold number (search code, page list, the letter's term shard and the
   text shards for the snippets all load then); every later keystroke is timed too. The
   time runs from the keydown to the results list being replaced with a match marked,
   measured in the page; and to the list with every shown snippet in (results show at
   once and the snippets follow when their page text has loaded). The next letter is
   typed when both are in.
4. With --edits N: builds a copy of the corpus in this process, then saves N pages one at
   a time (a new word appended) and applies each as `commonplace serve` does (the site
   state's update, in process), timing each refresh and the files it wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from browserkit import DESKTOP, launch, why_no_browser  # noqa: E402

try:
    from .bench_build import TRASH, empty_trash, set_aside, settle
    from .corpus_gen import generate
except ImportError:  # run as a script
    from bench_build import TRASH, empty_trash, set_aside, settle  # type: ignore[no-redef]
    from corpus_gen import generate  # type: ignore[no-redef]

WORDS = ["tokenizer", "latency", "reranker", "garbage", "allocation", "embedding", "vectorized", "quarter"]

# Run in a fresh interpreter per build; the switch turns the site search data off.
_BUILD = """
import sys, time
from pathlib import Path
if sys.argv[3] == "off":
    from commonplace.compiler.site import emit, search as site_search
    from commonplace.compiler.build import stages
    emit.search_data = lambda site, only=None: iter(())
    site_search.search_urls = lambda docs, owner=None: set()
    site_search.prepare = lambda docs, owner=None: None
    from commonplace.compiler.site.render import plain_text
    from commonplace.compiler.build.workers import Rendered
    def page_text(d):  # the excerpt alone, as from the HTML, and no search text
        d.excerpt, d.search_text = plain_text(d.html, 600), ""
        return Rendered(d.path, "", False, d.excerpt, "")
    stages.page_text = page_text
from commonplace.compiler.build.pipeline import BuildOptions, build
t0 = time.perf_counter()
r = build(BuildOptions(corpus=Path(sys.argv[1]), out=Path(sys.argv[2]), embed=False, index=False))
wall = time.perf_counter() - t0
import resource  # CPU of this process and its (joined) build workers: less moved by other load than wall time
cpu = sum(x.ru_utime + x.ru_stime for x in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
print(wall, r.documents, cpu)
"""


SETTLED: list[bool] = []  # per build: the page cache was dropped before it (`settle`)


def timed_build(corpus: Path, out: Path, search: bool) -> tuple[float, float]:
    """(wall seconds of the build, CPU seconds of the whole process and its workers)."""
    set_aside(out, out.parent / TRASH)
    set_aside(corpus / ".commonplace", out.parent / TRASH)
    empty_trash(out.parent / TRASH)
    SETTLED.append(settle(corpus))
    proc = subprocess.run([sys.executable, "-c", _BUILD, str(corpus), str(out), "on" if search else "off"],
                          capture_output=True, text=True, check=True)
    wall, _, cpu = proc.stdout.split()
    return float(wall), float(cpu)


def sizes(site: Path) -> dict:
    data = site / "_" / "search-data"
    meta = (data / "meta.js").stat().st_size + sum(p.stat().st_size for p in data.glob("p-*.js"))  # the page list
    terms = [p.stat().st_size for p in data.glob("t-*.js")]
    texts = [p.stat().st_size for p in data.glob("[0-9]*.js")]
    return {"meta_bytes": meta, "term_shards": len(terms), "term_bytes": sum(terms), "largest_term_shard": max(terms),
            "text_shards": len(texts), "text_bytes": sum(texts), "largest_text_shard": max(texts),
            "total_bytes": meta + sum(terms) + sum(texts)}


# Two times per keystroke: to the first list with a match marked (`__times`), and to the
# list with every shown result's snippet in (`__full`; results whose page text is still
# loading show as `li.r-pending`). The next letter is typed once both are in.
_TIMER = """() => {
  window.__times = []; window.__full = [];
  const input = document.querySelector('.search-box input');
  const list = document.querySelector('.search-results');
  let t0 = null, t1 = null;
  input.addEventListener('keydown', () => { t0 = t1 = performance.now(); }, true);
  new MutationObserver(() => {
    const now = performance.now();
    if (t0 !== null && list.querySelector('li mark')) { window.__times.push(now - t0); t0 = null; }
    if (t0 === null && t1 !== null && !list.querySelector('li.r-pending')) { window.__full.push(now - t1); t1 = null; }
  }).observe(list, {childList: true});
}"""


def browser_times(site: Path, words: list[str]) -> dict:
    from playwright.sync_api import sync_playwright

    cold, warm, full_cold, full_warm = [], [], [], []
    start = (site / "index.html").as_uri()
    with sync_playwright() as pw:
        browser = launch(pw)
        for word in words:
            context = browser.new_context(viewport=DESKTOP)
            page = context.new_page()
            page.goto(start)
            page.keyboard.press("/")
            page.locator(".search-box input").wait_for()
            page.evaluate(_TIMER)
            for i, ch in enumerate(word):
                page.keyboard.type(ch)
                page.wait_for_function(f"window.__times.length > {i} && window.__full.length > {i}", timeout=30000)
            times, full = page.evaluate("[window.__times, window.__full]")
            cold.append(times[0])
            warm += times[1:]
            full_cold.append(full[0])
            full_warm += full[1:]
            context.close()
        browser.close()
    warm.sort()
    full_warm.sort()
    return {"first_keystroke_ms_median": statistics.median(cold), "first_keystroke_ms_max": max(cold),
            "keystroke_ms_median": statistics.median(warm), "keystroke_ms_p95": warm[int(0.95 * (len(warm) - 1))],
            "first_keystroke_snippets_ms_median": statistics.median(full_cold),
            "first_keystroke_snippets_ms_max": max(full_cold),
            "keystroke_snippets_ms_median": statistics.median(full_warm),
            "keystroke_snippets_ms_p95": full_warm[int(0.95 * (len(full_warm) - 1))],
            "keystrokes": len(warm) + len(cold)}


def refresh_times(corpus: Path, work: Path, edits: int) -> dict:
    """p50/p95/max of one-page refreshes on a live site state (what a save under serve runs)."""
    import random
    import shutil

    from commonplace.compiler.build.pipeline import BuildOptions, _build
    from commonplace.compiler.live.corpus import _in_process
    from commonplace.compiler.corpus.scan import SourceFile

    if work.exists():
        set_aside(work, work.parent / TRASH)
    shutil.copytree(corpus, work / "corpus", ignore=shutil.ignore_patterns(".commonplace"))
    _, state = _build(BuildOptions(corpus=work / "corpus", out=work / "site", embed=False, index=False))
    paths = sorted(p for p in state.docs if not state.docs[p].is_session)
    rng = random.Random(1)
    times, emits, written = [], [], []
    for i in range(edits):
        p = rng.choice(paths)
        f = work / "corpus" / p
        f.write_text(f.read_text(encoding="utf-8") + f"\n\nAn added line with zqword{i} in it.\n", encoding="utf-8")
        t0 = time.perf_counter()
        stats = state.update([SourceFile(p, f)], [], runner_factory=_in_process)
        times.append(1000 * (time.perf_counter() - t0))
        emits.append(1000 * stats.stages.get("emit", 0.0))
        written.append(stats.pages_written)
    times.sort()
    return {"refresh_ms_p50": statistics.median(times), "refresh_ms_p95": times[int(0.95 * (len(times) - 1))],
            "refresh_ms_max": times[-1], "refresh_emit_ms_p50": statistics.median(emits),
            "refresh_files_written_max": max(written), "edits": edits}


def run(args: argparse.Namespace) -> dict:
    if args.site:  # no builds: sizes and the browser only
        out = {"documents": len(json.loads((args.site / "graph.json").read_text())["nodes"])}
        out.update(sizes(args.site))
        out.update(browser_times(args.site.resolve(), WORDS[: args.words]))
        return out
    base = args.workdir or Path(tempfile.mkdtemp(prefix="bench-site-search-"))
    base.mkdir(parents=True, exist_ok=True)
    corpus = base / f"corpus-{args.n}"
    if not (corpus / "index.md").exists():
        generate(corpus, args.n, seed=args.seed)
    site, plain = base / "site", base / "site-nosearch"
    with_search, without = [], []
    for i in range(args.repeat):
        # Alternating, so both see the same machine, and in turn first (ABBA): builds here
        # drift slower over a run, which would charge the second of every pair.
        for search in (False, True) if i % 2 == 0 else (True, False):
            (with_search if search else without).append(timed_build(corpus, site if search else plain, search=search))
    refresh = refresh_times(corpus, base / "refresh", args.edits) if args.edits else {}
    empty_trash(base / TRASH)
    out = {"documents": args.n, "build_s_without_search": min(w for w, _ in without),
           "build_s_with_search": min(w for w, _ in with_search)}
    out["search_cost_s"] = out["build_s_with_search"] - out["build_s_without_search"]
    out["search_cost_pct"] = 100 * out["search_cost_s"] / out["build_s_without_search"]
    # Each round's pair (built minutes apart, in turn): the median of their differences
    # says what a typical build pays; the best-of difference above can flatter it.
    pairs = [w2 - w1 for (w1, _), (w2, _) in zip(without, with_search)]
    out["search_cost_pair_median_s"] = statistics.median(pairs)
    out["search_cost_pair_median_pct"] = 100 * statistics.median(
        [(w2 - w1) / w1 for (w1, _), (w2, _) in zip(without, with_search)])
    # CPU seconds (median): the same difference, less moved by other work on the machine.
    out["build_cpu_s_without_search"] = statistics.median(c for _, c in without)
    out["build_cpu_s_with_search"] = statistics.median(c for _, c in with_search)
    out["page_cache_dropped"] = all(SETTLED)
    from commonplace.compiler.site import textscan
    out["text_scanner"] = "C (compiler/site/_textscan.c)" if textscan.AVAILABLE else "Python (the C scanner is not built)"
    out["builds_s"] = {"without": [round(w, 2) for w, _ in without], "with": [round(w, 2) for w, _ in with_search]}
    out.update(sizes(site))
    out.update(refresh)
    reason = why_no_browser()
    if reason:
        out["browser"] = f"skipped: {reason}"
    else:
        out.update(browser_times(site, WORDS[: args.words]))
    return out


def table(r: dict) -> str:
    mb = 1024 * 1024
    rows = [("documents", f"{r['documents']:,}")]
    if "search_cost_s" in r:
        rows += [
            ("render-only build, no site search (s)", f"{r['build_s_without_search']:.2f}"),
            ("render-only build, with site search (s)", f"{r['build_s_with_search']:.2f}"),
            ("cost of the search data, best of each", f"{r['search_cost_s']:.2f} s ({r['search_cost_pct']:.1f}%, target <= 10%)"),
            ("cost of the search data, median pair", f"{r['search_cost_pair_median_s']:.2f} s ({r['search_cost_pair_median_pct']:.1f}%)"),
            ("each build without / with (s)", f"{r['builds_s']['without']} / {r['builds_s']['with']}"),
            ("page cache dropped before each build", "yes" if r["page_cache_dropped"] else "no (not root): runs move more"),
            ("text scanner", r["text_scanner"]),
            ("CPU of a build without / with (s, median)",
             f"{r['build_cpu_s_without_search']:.2f} / {r['build_cpu_s_with_search']:.2f} "
             f"(+{r['build_cpu_s_with_search'] - r['build_cpu_s_without_search']:.2f})"),
        ]
    rows += [
        ("page list (meta.js, p-*.js)", f"{r['meta_bytes'] / mb:.2f} MB"),
        ("term shards", f"{r['term_shards']} files, {r['term_bytes'] / mb:.1f} MB, largest {r['largest_term_shard'] / mb:.2f} MB"),
        ("text shards", f"{r['text_shards']} files, {r['text_bytes'] / mb:.1f} MB, largest {r['largest_text_shard'] / 1024:.0f} KB"),
        ("search data in all", f"{r['total_bytes'] / mb:.1f} MB"),
    ]
    if "refresh_ms_p50" in r:
        rows += [
            (f"one-page refresh, {r['edits']} edits (ms)", f"p50 {r['refresh_ms_p50']:.1f}, p95 {r['refresh_ms_p95']:.1f}, "
             f"max {r['refresh_ms_max']:.1f}; emit p50 {r['refresh_emit_ms_p50']:.1f}"),
            ("files written per refresh, at most", str(r["refresh_files_written_max"])),
        ]
    if "first_keystroke_ms_median" in r:
        rows += [
            ("first keystroke -> results, cold (ms)", f"median {r['first_keystroke_ms_median']:.0f}, max {r['first_keystroke_ms_max']:.0f} (target <= 300)"),
            ("later keystrokes -> results (ms)", f"median {r['keystroke_ms_median']:.0f}, p95 {r['keystroke_ms_p95']:.0f} (target <= 50)"),
            ("first keystroke -> every snippet in (ms)", f"median {r['first_keystroke_snippets_ms_median']:.0f}, "
             f"max {r['first_keystroke_snippets_ms_max']:.0f}"),
            ("later keystrokes -> every snippet in (ms)", f"median {r['keystroke_snippets_ms_median']:.0f}, "
             f"p95 {r['keystroke_snippets_ms_p95']:.0f}"),
            ("keystrokes timed", str(r["keystrokes"])),
        ]
    else:
        rows.append(("browser", r.get("browser", "")))
    if "load" in r:
        rows.append(("load average at the end", r["load"]))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"| {k:<{width}} | {v} |" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_site_search", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="documents (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2, help="builds of each kind; the best is reported")
    ap.add_argument("--words", type=int, default=len(WORDS), help=f"words typed (at most {len(WORDS)})")
    ap.add_argument("--workdir", type=Path, help="keep the corpus and sites here (reused by later runs)")
    ap.add_argument("--edits", type=int, default=0, help="also time this many one-page refreshes (in process)")
    ap.add_argument("--site", type=Path, help="a site already built: measure sizes and the browser only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = run(args)
    r["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    r["seconds"] = time.perf_counter() - t0
    print(json.dumps(r, indent=2) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
