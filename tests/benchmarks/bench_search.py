"""Search benchmark: the full build with embeddings, embedding throughput, HNSW recall,
query latency per mode, fresh-process CLI latency and index sizes, as one table.

    python -m tests.benchmarks.bench_search [--n 10000] [--seed 0] [--workdir DIR]
                                            [--raw-sample 1500] [--queries 200] [--json]

Steps (progress on stderr, the table on stdout):

1. generate the corpus with `corpus_gen` (kept in --workdir if given);
2. `commonplace build CORPUS --out SITE --json` as a subprocess, from a clean state
   (site, `CORPUS/.commonplace/` and so the embedding cache removed first): the full
   build time, its stage timings and the index stage's chunk/embed timings;
3. embedding throughput: the build's own rate (chunks embedded / embedding seconds), and
   (last, in this process) on a random sample of the same chunks, raw
   `SentenceTransformer.encode` in fp32 (its defaults) against our in-process embedder,
   plus the cosine of every sampled vector against fp32;
4. in-process query latency, p50 and p95 per mode (a warm engine; hybrid and vector
   include embedding the query, never cached), measured first in this process;
5. HNSW recall@10 against exact (brute-force) search, for the same queries' embeddings;
6. a fresh-process `commonplace search --mode bm25` (median wall time of 5), and whether
   it imported torch;
7. index sizes on disk.
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
from typing import Any

try:
    from .bench_build import run_measured
    from .corpus_gen import generate
except ImportError:  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_build import run_measured  # type: ignore[no-redef]
    from corpus_gen import generate  # type: ignore[no-redef]

MODES = ("bm25", "hybrid", "vector", "exact")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def commonplace_exe() -> str:
    cand = Path(sys.executable).parent / "commonplace"
    return str(cand) if cand.exists() else (shutil.which("commonplace") or "commonplace")


def pct(values: list[float], p: float) -> float:
    vs = sorted(values)
    if not vs:
        return float("nan")
    k = (len(vs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(vs) - 1)
    return vs[lo] + (vs[hi] - vs[lo]) * (k - lo)


def full_build(corpus: Path, site: Path) -> dict[str, Any]:
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(corpus / ".commonplace", ignore_errors=True)
    os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    out = run_measured([commonplace_exe(), "build", str(corpus), "--out", str(site), "--json"], None)
    if out.returncode not in (0, 1):
        raise SystemExit(f"build failed ({out.returncode}):\n{out.stderr[-3000:]}")
    data = json.loads(out.stdout)
    data["wall_seconds"] = out.seconds
    # Peak memory: the largest sampled PSS sum over the build's process tree (workers
    # included), and the largest single process's ru_maxrss.
    data["peak_pss_mb"], data["maxrss_mb"] = out.peak_pss_mb, out.maxrss_mb
    return data


def sample_chunks(corpus: Path, n: int, seed: int) -> list[str]:
    from commonplace.compiler.search.index.vectors import embed_texts
    from commonplace.compiler.search.store.disk import IndexStore, open_table

    db = open_table(IndexStore(corpus).current(), readonly=True)
    ids = [r[0] for r in db.execute("SELECT id FROM chunks ORDER BY id")]
    pick = sorted(random.Random(seed).sample(ids, min(n, len(ids))))
    texts = embed_texts(db, pick)
    db.close()
    return [texts[i] for i in pick]


def throughput(texts: list[str]) -> dict[str, Any]:
    import numpy as np

    from commonplace.compiler.search.embedding import resolve_model

    ref = resolve_model(None)
    from sentence_transformers import SentenceTransformer

    raw = SentenceTransformer(ref.location, device="cpu")
    raw.encode(texts[:32])  # warm up
    t0 = time.perf_counter()
    v32 = raw.encode(texts, normalize_embeddings=True, show_progress_bar=False)
    raw_s = time.perf_counter() - t0
    # Ours as the build runs it: one single-threaded worker per core, length-sorted groups.
    from commonplace.compiler.search.embedding import EmbeddingPool, pool_workers

    pool = EmbeddingPool(None)
    try:
        list(pool.imap([texts[:8]] * pool.workers))  # warm up: workers import torch, load the model
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        groups = [order[i : i + 256] for i in range(0, len(order), 256)]
        got = np.empty_like(v32)
        t0 = time.perf_counter()
        precision = None
        for gi, vecs, precision in pool.imap([[texts[j] for j in g] for g in groups]):
            got[groups[gi]] = vecs
        ours_s = time.perf_counter() - t0
    finally:
        pool.close()
    cos = np.sum(got * v32, axis=1)
    tokens = sum(len(e) for e in raw.tokenizer(texts, truncation=True, max_length=512)["input_ids"])
    return {
        "sample": len(texts),
        "mean_tokens": tokens / len(texts),
        "raw_fp32_chunks_per_s": len(texts) / raw_s,
        "ours_chunks_per_s": len(texts) / ours_s,
        "ours_precision": precision,
        "workers": pool_workers(),
        "min_cosine_vs_fp32": float(cos.min()),
        "mean_cosine_vs_fp32": float(cos.mean()),
    }


def queries(corpus: Path, n: int, seed: int) -> list[str]:
    """Realistic queries: titles, heading phrases, questions, identifiers from the corpus."""
    from commonplace.compiler.search.store.disk import IndexStore, open_table

    rng = random.Random(seed)
    db = open_table(IndexStore(corpus).current(), readonly=True)
    titles = [r[0] for r in db.execute("SELECT title FROM docs WHERE is_session = 0")]
    heads = [r[0].split(" > ")[-1] for r in db.execute("SELECT DISTINCT heading FROM chunks") if r[0]]
    texts = [r[0] for r in db.execute("SELECT text FROM chunks ORDER BY id LIMIT 5000")]
    db.close()
    import re

    idents = sorted({m for t in texts for m in re.findall(r"`([\w./+#-]+)`", t)}) or ["svc-auth-v2"]
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            out.append(rng.choice(titles))
        elif kind == 1:
            out.append(f"what did we decide about the {rng.choice(heads).lower()}?")
        elif kind == 2:
            out.append(rng.choice(idents))
        elif kind == 3:
            words = rng.choice(texts).split()
            s = rng.randrange(max(1, len(words) - 8))
            out.append(" ".join(words[s : s + 6]))
        else:
            out.append(f"how does {rng.choice(titles).lower()} relate to {rng.choice(heads).lower()}")
    return out


def latency(corpus: Path, qs: list[str]) -> dict[str, dict[str, float]]:
    from commonplace.compiler.search.read.engine import SearchEngine

    engine = SearchEngine(corpus)
    for q in qs[:10]:  # warm up: open indexes, load the model, fill caches
        for mode in MODES:
            engine.search({"query": q, "mode": mode})
    out = {}
    for mode in MODES:
        times = []
        for q in qs:
            engine._qvec.clear()  # measure the query embedding every time (the engine caches them)
            t0 = time.perf_counter()
            engine.search({"query": q, "mode": mode})
            times.append((time.perf_counter() - t0) * 1000)
        out[mode] = {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95), "n": len(times)}
    return out


def hnsw_recall(corpus: Path, qs: list[str]) -> dict[str, Any]:
    import numpy as np

    from commonplace.compiler.search.embedding import get_embedder
    from commonplace.compiler.search.store.disk import IndexStore, Meta, open_table
    from commonplace.compiler.search.store.vectors import VectorIndex, exact_knn

    gen = IndexStore(corpus).current()
    meta = Meta.load(gen)
    index = VectorIndex.load(gen / "vectors.hnsw", meta.dim, deleted=meta.deleted_vectors)
    db = open_table(gen, readonly=True)
    ids = [r[0] for r in db.execute("SELECT id FROM chunks WHERE has_vector = 1 ORDER BY id")]
    db.close()
    matrix = index.get(ids)
    emb = get_embedder(meta.model_location or meta.model)
    qv = emb.encode(qs)
    hits = 0
    for v in qv:
        approx = {i for i, _ in index.knn(v, 10)}
        exact = {i for i, _ in exact_knn(matrix, ids, v, 10)}
        hits += len(approx & exact)
    return {"recall_at_10": hits / (10 * len(qs)), "queries": len(qs), "vectors": len(ids)}


def fresh_cli(corpus: Path, q: str) -> dict[str, Any]:
    code = (
        "import sys, time\n"
        "from commonplace.server.cli import main\n"
        f"try:\n    main(['search', '-C', {str(corpus)!r}, '--local', '--mode', 'bm25', '--json', {q!r}])\n"
        "except SystemExit:\n    pass\n"
        "print('TORCH=' + str('torch' in sys.modules), file=sys.stderr)\n"
    )
    times, torch = [], None
    for _ in range(5):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        torch = "TORCH=True" in out.stderr
    return {"median_s": statistics.median(times), "torch_imported": torch}


def sizes(corpus: Path) -> dict[str, int]:
    from commonplace.compiler.search.store.disk import IndexStore, cache_path, dir_size

    gen = IndexStore(corpus).current()
    return {
        "whoosh": dir_size(gen / "whoosh"),
        "hnsw": (gen / "vectors.hnsw").stat().st_size if (gen / "vectors.hnsw").exists() else 0,
        "table": (gen / "table.sqlite").stat().st_size,
        "embedding_cache": cache_path(corpus).stat().st_size if cache_path(corpus).exists() else 0,
    }


# The memory budget of a 10,000-document full build (docs/decisions/2026-11-24-memory-budget.md).
BUILD_BUDGET_MB = 3000


def _mb(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.0f} MB"


def render(r: dict[str, Any]) -> str:
    b, tp, lat = r["build"], r["throughput"], r["latency"]
    ex = b["extra"]
    st = b.get("index_timings", {})
    rows = [
        ("corpus", f"{r['n']:,} documents, {ex.get('chunks', 0):,} chunks ({tp['mean_tokens']:.0f} tokens avg in sample)", ""),
        ("full build with embeddings", f"{b['wall_seconds'] / 60:.1f} min ({b['wall_seconds']:.0f} s)", "<= 6 min"),
        ("  peak memory (PSS of the tree / largest process RSS)",
         f"{_mb(b.get('peak_pss_mb'))} / {_mb(b.get('maxrss_mb'))}", f"<= {BUILD_BUDGET_MB:,} MB"),
        ("  index stage", f"{b['stages'].get('index', 0):.0f} s" + (f" (chunk {st.get('chunk', 0):.0f} s, bm25 {st.get('bm25', 0):.0f} s, "
                          f"embed {st.get('embed', 0):.0f} s, hnsw {st.get('hnsw', 0):.0f} s)" if st else ""), ""),
        ("embedding precision", f"{ex.get('embedding_precision')} (auto)", "bf16 where supported"),
        ("embedding throughput, build", f"{r['build_chunks_per_s']:.1f} chunks/s", ""),
        (f"  sample of {tp['sample']}: raw ST fp32", f"{tp['raw_fp32_chunks_per_s']:.1f} chunks/s", ""),
        (f"  sample of {tp['sample']}: ours ({tp['ours_precision']}, {tp['workers']} workers)", f"{tp['ours_chunks_per_s']:.1f} chunks/s ({tp['ours_chunks_per_s'] / tp['raw_fp32_chunks_per_s']:.2f}x)", ""),
        ("  cosine vs fp32 (min / mean)", f"{tp['min_cosine_vs_fp32']:.4f} / {tp['mean_cosine_vs_fp32']:.5f}", ">= 0.995"),
        ("HNSW recall@10 vs exact", f"{r['recall']['recall_at_10']:.4f} ({r['recall']['queries']} queries)", ">= 0.99"),
    ]
    targets = {"bm25": "p50 <= 15 ms", "hybrid": "p50 <= 30 ms"}
    for mode in MODES:
        rows.append((f"query {mode} p50 / p95", f"{lat[mode]['p50_ms']:.1f} / {lat[mode]['p95_ms']:.1f} ms", targets.get(mode, "")))
    rows.append(("fresh-process `search --mode bm25`", f"{r['cli']['median_s']:.2f} s, torch imported: {r['cli']['torch_imported']}", "< 1 s, no torch"))
    s = r["sizes"]
    rows.append(("index sizes", f"whoosh {s['whoosh'] / 1e6:.1f} MB, hnsw {s['hnsw'] / 1e6:.1f} MB, table {s['table'] / 1e6:.1f} MB, "
                 f"embedding cache {s['embedding_cache'] / 1e6:.1f} MB", ""))
    w1 = max(len(a) for a, _, _ in rows)
    w2 = max(len(b) for _, b, _ in rows)
    lines = [f"{'metric':<{w1}}  {'value':<{w2}}  target", f"{'-' * w1}  {'-' * w2}  ------"]
    lines += [f"{a:<{w1}}  {b:<{w2}}  {c}" for a, b, c in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_search", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--raw-sample", type=int, default=1500, help="chunks for the fp32 comparison")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reuse-build", action="store_true", help="skip the build if an index exists (iterating)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-search-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus, site = work / f"corpus-{args.n}-{args.seed}", work / f"site-{args.n}"
    if not corpus.exists():
        log(f"generating {args.n} documents in {corpus}")
        generate(corpus, args.n, args.seed)
    r: dict[str, Any] = {"n": args.n}
    if args.reuse_build and (corpus / ".commonplace" / "index" / "CURRENT").exists():
        log("reusing the existing index (--reuse-build): no build timing")
        r["build"] = {"wall_seconds": float("nan"), "stages": {}, "extra": {}}
    else:
        log("full build with embeddings (clean state) ...")
        r["build"] = full_build(corpus, site)
        log(f"  {r['build']['wall_seconds']:.1f} s")
    from commonplace.compiler.search.store.disk import IndexStore, Meta

    meta = Meta.load(IndexStore(corpus).current())
    r["build"]["extra"].setdefault("chunks", meta.chunks)
    r["build"]["extra"].setdefault("embedding_precision", meta.precision)
    r["build"]["index_timings"] = {k[6:]: v for k, v in r["build"]["stages"].items() if k.startswith("index.")}
    embed_s = r["build"]["index_timings"].get("embed") or r["build"]["stages"].get("index", float("nan"))
    r["build_chunks_per_s"] = r["build"]["extra"].get("chunks_embedded", meta.chunks) / embed_s if embed_s else float("nan")
    qs = queries(corpus, args.queries, args.seed)
    # Latency first, in a process that has loaded nothing else (no second model, no sample).
    log("query latency ...")
    r["latency"] = latency(corpus, qs)
    log("HNSW recall@10 ...")
    r["recall"] = hnsw_recall(corpus, qs)
    log("fresh-process bm25 CLI ...")
    r["cli"] = fresh_cli(corpus, qs[0])
    log(f"throughput on {args.raw_sample} sampled chunks (raw fp32 vs ours) ...")
    r["throughput"] = throughput(sample_chunks(corpus, args.raw_sample, args.seed))
    r["sizes"] = sizes(corpus)
    r["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(r, indent=2, default=str))
    else:
        print(render(r))
        print(f"(load average during the run: {r['load_average'][0]:.1f}; machine: {os.cpu_count()} cores)")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
