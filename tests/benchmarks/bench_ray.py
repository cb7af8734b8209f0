"""The local engine against `--engine ray` on a two-node loopback cluster (issue 21).

    python -m tests.benchmarks.bench_ray [--n 2000,10000] [--engines local,ray] [--workdir DIR] [--json]
    python -m tests.benchmarks.bench_ray --n 0 --embed-compare 2048   # actors vs Ray Data only

For each size: a generated corpus (`corpus_gen`), two copies; a clean build with
embeddings of each (no index, no embedding cache), one with the local engine, one with
`--engine ray` against `ray_loopback.LoopbackCluster` (a head and a second node, one CPU
each, so both engines have two cores). Printed per build: wall time, chunks embedded,
embedding seconds and chunks/s per worker (two local embedding processes; two actors),
the driver's own seconds (the build's time not spent waiting for the cluster) and their
share of the wall time, with the stage times the driver spends them on.

`--embed-compare N`: N chunk texts of the corpus embedded on the same cluster twice, by
the engine's actors (`ray_embed`) and by Ray Data's `map_batches` with an actor pool of
the same size (needs `ray[data]`), each from a cold start (model loads included) and
again warm.

The machine is shared: each build line carries the 1-minute load average before it
started and the machine's CPU busy share while it ran (from /proc/stat), so a number
measured under load says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.benchmarks.corpus_gen import generate  # noqa: E402
from tests.benchmarks.ray_loopback import LoopbackCluster  # noqa: E402

CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]


class CpuMeter:
    """The machine's CPU busy share over an interval, from /proc/stat."""

    @staticmethod
    def _read() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            vals = [int(x) for x in f.readline().split()[1:]]
        idle = vals[3] + vals[4]
        return sum(vals) - idle, sum(vals)

    def __enter__(self) -> "CpuMeter":
        self.load_before = os.getloadavg()[0]
        self.busy0, self.total0 = self._read()
        self.peak = self.load_before
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(5):
            self.peak = max(self.peak, os.getloadavg()[0])

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        busy1, total1 = self._read()
        self.busy = (busy1 - self.busy0) / max(1, total1 - self.total0)


def _build(cmd: list[str], runner: Any = None) -> tuple[float, dict, CpuMeter]:
    for attempt in (1, 2):
        with CpuMeter() as meter:
            t0 = time.perf_counter()
            if runner is None:
                r = subprocess.run(cmd, capture_output=True, text=True, cwd=str(REPO))
            else:
                r = runner(cmd)
            wall = time.perf_counter() - t0
        # In a checkout others edit, a file saved between the driver's code check and a
        # node's differs (the engine refuses, writing nothing): that build runs once more.
        if attempt == 1 and r.returncode == 1 and "fingerprint" in r.stderr:
            print(f"  (code changed during the node check; once more: {r.stderr.strip()[-200:]})", flush=True)
            continue
        break
    if r.returncode not in (0, 1) or not r.stdout.strip().startswith("{"):
        raise SystemExit(f"build failed ({r.returncode}): {r.stderr[-2000:]}")
    return wall, json.loads(r.stdout), meter


def row(engine: str, n: int, wall: float, report: dict, meter: CpuMeter, workers: int) -> dict[str, Any]:
    x, st = report["extra"], report["stages"]
    out: dict[str, Any] = {"engine": engine, "docs": n, "chunks": x.get("chunks", 0), "wall_s": round(wall, 1),
                           "build_s": report["seconds"], "load_before": round(meter.load_before, 2),
                           "load_peak": round(meter.peak, 2), "cpu_busy": round(meter.busy, 3)}
    if engine == "local":
        embedded, embed_s = x.get("chunks_embedded", 0), st.get("index.embed", 0.0)
        # Embedding workers run while this process chunks and indexes: the driver's own time
        # is everything but the embedding wait, which the stages do not separate; shown as
        # the build's time outside index.embed.
        driver = report["seconds"] - embed_s
    else:
        e = x["engine"]
        embedded, embed_s = e["chunks_embedded"], e["embed_seconds"]
        d = e["driver_seconds"]
        waits = d.get("task_wait", 0) + d.get("embed_wait", 0) + d.get("fetch_pages", 0)
        driver = report["seconds"] - waits
        out["driver_parts"] = {k: round(v, 1) for k, v in d.items()}
        out["cluster_wait_s"] = round(waits, 1)
    out.update(embedded=embedded, embed_s=round(embed_s, 1),
               chunks_per_s_per_worker=round(embedded / embed_s / workers, 1) if embed_s else 0.0,
               driver_s=round(driver, 1), driver_share=round(driver / report["seconds"], 3),
               stages={k: round(v, 1) for k, v in st.items() if v >= 0.05})
    return out


def bench_size(n: int, work: Path, cluster: LoopbackCluster, seed: int, engines: list[str]) -> list[dict[str, Any]]:
    src = work / f"src-{n}" / "corpus"
    if not src.exists():
        generate(src, n, seed=seed)
    rows = []
    for engine in engines:
        base = work / f"{engine}-{n}"
        trash = work / ".trash" / f"{engine}-{n}-{time.time_ns()}"
        if base.exists():  # renamed, not deleted, while anything is timed (see bench_build)
            trash.parent.mkdir(parents=True, exist_ok=True)
            base.rename(trash)
        shutil.copytree(src, base / "corpus")
        cmd = [*CLI, "build", str(base / "corpus"), "--out", str(base / "site"), "--json"]
        if engine == "local":
            wall, report, meter = _build(cmd)
            rows.append(row(engine, n, wall, report, meter, workers=2))
        else:
            cmd += ["--engine", "ray", "--address", cluster.address]
            wall, report, meter = _build(cmd, lambda c: cluster.run(c, timeout=7200, cwd=str(REPO)))
            rows.append(row(engine, n, wall, report, meter, workers=report["extra"]["engine"]["cpus"]))
        print(_line(rows[-1]), flush=True)
    return rows


def _line(r: dict[str, Any]) -> str:
    return (f"{r['engine']:<6}{r['docs']:>8,}{r['chunks']:>9,}{r['wall_s']:>9.1f}{r['embed_s']:>9.1f}"
            f"{r['chunks_per_s_per_worker']:>10.1f}{r['driver_s']:>9.1f}{r['driver_share']:>8.1%}"
            f"{r['load_before']:>8.2f}{r['cpu_busy']:>7.0%}")


HEADER = (f"{'engine':<6}{'docs':>8}{'chunks':>9}{'wall s':>9}{'embed s':>9}{'ch/s/wkr':>10}{'driver s':>9}"
          f"{'share':>8}{'load0':>8}{'busy':>7}")


# --------------------------------------------------------------------------- actors vs Ray Data


def _texts(corpus: Path, n: int) -> list[str]:
    from commonplace.compiler.markdown.parse import parse
    from commonplace.compiler.search.index.chunk import ChunkConfig, chunk_documents, token_counter

    docs = []
    for p in sorted(corpus.rglob("*.md")):
        doc, _ = parse(p.relative_to(corpus).as_posix(), p.read_bytes())
        if doc is not None:
            docs.append(doc)
    texts: list[str] = []
    for _, chunks in chunk_documents(docs, token_counter(None), ChunkConfig()):
        texts.extend(c.embed_text for c in chunks)
        if len(texts) >= n:
            break
    return texts[:n]


def embed_compare(address: str, corpus: Path, n: int) -> dict[str, Any]:
    """Runs inside the cluster's network: the engine's actors, then Ray Data, cold and warm."""
    import numpy as np
    import ray

    from commonplace.compiler.engines.ray_cluster import connect
    from commonplace.compiler.engines.ray_embed import GROUP, _Dispatch, start_actors, stop_actors
    from commonplace.compiler.engines.ray_tasks import Embedder
    from commonplace.compiler.search.embedding.base import precision_setting

    texts = _texts(corpus, n)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    from commonplace.compiler.engines import EngineError

    try:
        cluster = connect(address)
    except EngineError:  # a file saved by someone else during the code check: once more
        cluster = connect(address)
    out: dict[str, Any] = {"texts": len(texts), "workers": cluster.cpus}

    def actors_run(actors: list[Any]) -> float:
        got: dict[int, Any] = {}
        t0 = time.perf_counter()
        d = _Dispatch(actors, lambda key, vecs, prec: got.update(zip(key, vecs)))
        for i in range(0, len(order), GROUP):
            g = order[i:i + GROUP]
            d.submit(g, [texts[j] for j in g])
        d.close()
        d.join()
        assert d.error is None and len(got) == len(texts), d.error
        return time.perf_counter() - t0

    t0 = time.perf_counter()
    actors = start_actors(cluster.cpus, None, len(texts))
    actors_run(actors)
    out["actors_cold_s"] = round(time.perf_counter() - t0, 2)
    out["actors_warm_s"] = round(actors_run(actors), 2)
    stop_actors(actors)

    import ray.data

    class Batch:
        def __init__(self) -> None:
            self.e = Embedder(None, precision_setting(), len(texts))

        def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
            vecs, _ = self.e.embed(list(batch["text"]))
            return {"i": batch["i"], "vec": vecs}

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False

    def data_run() -> float:
        t = time.perf_counter()
        ds = ray.data.from_items([{"i": j, "text": texts[j]} for j in order])
        res = ds.map_batches(Batch, batch_size=GROUP, concurrency=cluster.cpus, num_cpus=1,
                             batch_format="numpy").take_all()
        assert len(res) == len(texts) and np.asarray(res[0]["vec"]).shape[0] > 0
        return time.perf_counter() - t

    out["data_cold_s"] = round(data_run(), 2)
    out["data_warm_s"] = round(data_run(), 2)  # a new actor pool each run: map_batches starts its own
    cluster.close()
    return out


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="2000", help="comma-separated corpus sizes (0: none)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench-ray"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default="local,ray", help="which builds to time, in this order")
    ap.add_argument("--embed-compare", type=int, default=0, metavar="N",
                    help="also embed N texts with the engine's actors and with Ray Data map_batches")
    ap.add_argument("--object-store-mb", type=int, default=2000, help="per node")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--inside", nargs=3, metavar=("ADDRESS", "CORPUS", "N"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inside:  # the --embed-compare half, run where the cluster is reachable
        print(json.dumps(embed_compare(a.inside[0], Path(a.inside[1]), int(a.inside[2]))))
        return 0
    sizes = [int(x) for x in a.n.split(",") if int(x) > 0]
    engines = [e for e in a.engines.split(",") if e]
    if not set(engines) <= {"local", "ray"}:
        raise SystemExit(f"--engines: local and/or ray, not {a.engines!r}")
    a.workdir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    compare: dict[str, Any] | None = None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=str(REPO)).stdout.strip()
    print(f"two-node loopback Ray cluster (1 CPU each) vs the local engine (2 cores); {os.cpu_count()} CPUs here; "
          f"commit {commit or '?'}; {time.strftime('%Y-%m-%d %H:%M')}; load {_load()}")
    with LoopbackCluster(port=26395, store_mb=a.object_store_mb) as cluster:
        print(f"cluster in its own network namespace: {cluster.netns}")
        print(HEADER, flush=True)
        for n in sizes:
            rows += bench_size(n, a.workdir, cluster, a.seed, engines)
        if a.embed_compare:
            src = a.workdir / f"src-{sizes[0] if sizes else 2000}" / "corpus"
            if not src.exists():
                generate(src, 2000, seed=a.seed)
            r = cluster.run([sys.executable, "-m", "tests.benchmarks.bench_ray", "--inside", cluster.address, str(src),
                             str(a.embed_compare)], timeout=3600, cwd=str(REPO))
            if r.returncode != 0:
                raise SystemExit(f"embed comparison failed: {r.stderr[-3000:]}")
            compare = json.loads(r.stdout.strip().splitlines()[-1])
    for r in rows:
        if r["engine"] == "ray":
            print(f"ray {r['docs']:,}: driver parts {r['driver_parts']}; stages {r['stages']}")
    if compare:
        t = compare["texts"]
        print(f"\nembedding {t:,} texts on {compare['workers']} actors (model loads included in cold):")
        for name, key in (("engine actors", "actors"), ("Ray Data map_batches", "data")):
            cold, warm = compare[f"{key}_cold_s"], compare[f"{key}_warm_s"]
            print(f"  {name:<22} cold {cold:>6.1f} s ({t / cold:5.1f} texts/s)   warm {warm:>6.1f} s ({t / warm:5.1f} texts/s)")
    print(f"load at the end: {_load()}")
    if a.json:
        print(json.dumps({"builds": rows, "embed_compare": compare}, indent=1))
    trash = a.workdir / ".trash"
    if trash.exists():
        shutil.rmtree(trash, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
