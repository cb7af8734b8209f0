"""Server benchmark: `commonplace serve` under load on loopback.

    python -m tests.benchmarks.bench_server [--n 10000] [--workdir DIR] [--clients 8]
                                            [--seconds 20] [--no-embed] [--json]
                                            [--phases bm25,hybrid,active-memory,reads,mixed]
                                            [--am-clients 1] [--rss-budget-mb MB]

Generates a corpus with `corpus_gen` (kept in --workdir, default a temporary folder; an
existing corpus there is reused, and so are its built site and indexes), starts
`commonplace serve --no-auth --port 0` (waitress, 8 threads) as a subprocess and waits for
`/healthz` (that time includes any build and the model load), then runs, each for
--seconds with --clients concurrent clients (threads of this process, one keep-alive
HTTP connection each):

1. search, mode bm25
2. search, mode hybrid (needs embeddings; skipped with --no-embed)
3. active memory (`POST /v1/active-memory`, Dory's defaults: include_wake, budget 400,
   timeout 1200 ms) with --am-clients clients (default 1, as an agent calls it once per
   turn); the prompt is a corpus query put as a question, and one in four asks about
   yesterday, which adds the session search;
4. reads: the mixed phase's reads alone (search hybrid or bm25 3 in 4, get 1 in 4), the
   read-only baseline the mixed phase's reads are compared with;
5. mixed 90/10: 90% reads (as in `reads`), 10% writes (an append of one unique line to the
   client's own `inbox/bench-<client>.md`). Besides each operation, a `reads` row pools
   every read of the phase.

`--phases` runs a subset (names: bm25, hybrid, active-memory, reads, mixed). The serve
process's peak RSS is printed; with `--rss-budget-mb` a run past it fails (exit 1).

Queries are drawn (seeded) from the corpus itself: a title, a heading or a few words of a
document, so most have answers. Every answer is checked (status 200, JSON shape); after
the mixed run every appended line is looked up on disk: it must be there exactly once.

Prints a table (or JSON with --json) on stdout, with the serve process's CPU time (user +
system, its children too) while the phases ran, per request served; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    from .corpus_gen import generate
except ImportError:  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus_gen import generate  # type: ignore[no-redef]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass
class Phase:
    name: str
    clients: int
    seconds: float = 0.0
    requests: int = 0
    errors: int = 0
    by_op: dict[str, list[float]] = field(default_factory=dict)
    error_samples: list[str] = field(default_factory=list)

    def add(self, op: str, ms: float) -> None:
        self.by_op.setdefault(op, []).append(ms)

    def row(self, op: str | None = None) -> dict[str, Any]:
        if op is None:
            lat = [x for v in self.by_op.values() for x in v]
        elif op == "reads":  # every operation but writes
            lat = [x for k, v in self.by_op.items() if k != "write" for x in v]
        else:
            lat = self.by_op.get(op, [])
        return {
            "phase": self.name, "op": op or "all", "clients": self.clients, "requests": len(lat),
            "rps": round(len(lat) / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(percentile(lat, 0.50), 1), "p95_ms": round(percentile(lat, 0.95), 1),
            "p99_ms": round(percentile(lat, 0.99), 1), "errors": self.errors if op is None else None,
        }


class Client:
    def __init__(self, host: str, port: int) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=120)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")


def queries_from(corpus: Path, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    files = sorted(p for p in corpus.rglob("*.md") if ".commonplace" not in p.parts)
    out: list[str] = []
    for p in rng.sample(files, min(n, len(files))):
        text = p.read_text("utf-8", "replace")
        heads = re.findall(r"^#{1,3} (.+)$", text, re.M)
        words = re.findall(r"[A-Za-z][A-Za-z+_-]{3,}", text.split("---", 2)[-1])
        pick = rng.random()
        if heads and pick < 0.4:
            out.append(rng.choice(heads))
        elif len(words) > 6:
            i = rng.randrange(len(words) - 5)
            out.append(" ".join(words[i: i + rng.randint(2, 5)]))
        else:
            out.append(p.stem.replace("-", " "))
    return out


def run_phase(name: str, host: str, port: int, clients: int, seconds: float,
              pick: Any, root: Path, appended: dict[int, list[str]] | None = None, seed: int = 0) -> Phase:
    phase = Phase(name, clients)
    lock = threading.Lock()
    stop = time.perf_counter() + seconds
    start = threading.Barrier(clients + 1)

    def worker(cid: int) -> None:
        c = Client(host, port)
        rng = random.Random(1000 + cid + 7919 * seed)  # each phase its own draws
        seq = 0
        start.wait()
        while time.perf_counter() < stop:
            op, method, path, body = pick(rng, cid, seq)
            seq += 1
            t0 = time.perf_counter()
            try:
                status, answer = c.call(method, path, body)
                ok = status == 200 and isinstance(answer, dict)
                if ok and op.startswith("search"):
                    ok = isinstance(answer.get("results"), list)
                if ok and op == "active_memory":
                    ok = answer.get("kind") in ("memory", "none") and isinstance(answer.get("block"), str)
                if ok and op == "write":
                    ok = answer.get("action") in ("created", "appended")
                    if ok and appended is not None:
                        appended.setdefault(cid, []).append(body["content"])
            except Exception as exc:  # noqa: BLE001 - counted as an error
                status, answer, ok = 0, str(exc), False
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                if ok:
                    phase.add(op, ms)
                else:
                    phase.errors += 1
                    if len(phase.error_samples) < 5:
                        phase.error_samples.append(f"{op} {status} {str(answer)[:200]}")

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    phase.seconds = time.perf_counter() - t0
    phase.requests = sum(len(v) for v in phase.by_op.values()) + phase.errors
    return phase


def _status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def server_memory(pid: int) -> dict[str, float]:
    """The serve process's peak RSS (VmHWM) and, at the end of the run, the RSS of it and
    its children (embedding workers, if any), in MB."""
    tree, todo = 0, [pid]
    while todo:
        p = todo.pop()
        tree += _status_kb(p, "VmRSS")
        try:
            with open(f"/proc/{p}/task/{p}/children", encoding="ascii") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return {"peak_rss": round(_status_kb(pid, "VmHWM") / 1024, 1), "tree_rss": round(tree / 1024, 1)}


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by the serve process and its children
    (running ones read live, finished ones as the process has waited for them). The
    machine may be shared: CPU per request says what wall time hides under load."""
    total, todo = 0.0, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15 if p == pid else 13]) / tick  # utime stime (cutime cstime)
            with open(f"/proc/{p}/task/{p}/children", encoding="ascii") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError, IndexError):
            pass
    return total


def generation_number(corpus: Path) -> int:
    """The live index generation's number (each refresh that indexes, and each background
    merge, makes one)."""
    try:
        return int((corpus / ".commonplace" / "index" / "CURRENT").read_text("ascii").strip()[1:])
    except (OSError, ValueError):
        return 0


def start_server(corpus: Path, out: Path, embed: bool, threads: int) -> tuple[subprocess.Popen, str, int, float]:
    cmd = [sys.executable, "-c", "from commonplace.server.cli import main; main()", "serve", str(corpus),
           "--out", str(out), "--port", "0", "--no-auth", "--threads", str(threads)]
    if not embed:
        cmd.append("--no-embed")
    env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://([\d.]+):(\d+)", line)
    if not m:
        raise SystemExit(f"server did not start: {line}{proc.stdout.read()}")
    host, port = m.group(1), int(m.group(2))
    url = f"http://{host}:{port}"
    log(f"server at {url}; waiting for /healthz (build + model load)")
    last = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
                if r.status == 200:
                    break
        except Exception:  # noqa: BLE001 - 503 or not listening yet
            pass
        if proc.poll() is not None:
            raise SystemExit("server exited:\n" + proc.stdout.read())
        if time.perf_counter() - last > 60:
            log(f"  ... still starting ({time.perf_counter() - t0:.0f} s)")
            last = time.perf_counter()
        time.sleep(0.5)
    ready = time.perf_counter() - t0

    def drain() -> None:  # keep the pipe from filling up
        for _ in proc.stdout:  # type: ignore[union-attr]
            pass

    threading.Thread(target=drain, daemon=True).start()
    return proc, host, port, ready


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--threads", type=int, default=8, help="server worker threads")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--phases", default="bm25,hybrid,active-memory,reads,mixed",
                    help="comma-separated subset of bm25, hybrid, active-memory, reads, mixed")
    ap.add_argument("--am-clients", type=int, default=1, help="clients in the active-memory phase")
    ap.add_argument("--rss-budget-mb", type=float, default=None,
                    help="fail (exit 1) when the serve process's peak RSS passes this many MB")
    args = ap.parse_args(argv)
    wanted = {p.strip() for p in args.phases.split(",") if p.strip()}

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-server-"))
    corpus, out = work / "corpus", work / "site"
    if not (corpus / "index.md").exists():
        log(f"generating {args.n} documents in {corpus}")
        generate(corpus, args.n, seed=args.seed)
    for p in corpus.glob("inbox/bench-*.md"):
        p.unlink()  # appends from an earlier run
    embed = not args.no_embed
    proc, host, port, ready = start_server(corpus, out, embed, args.threads)
    log(f"ready after {ready:.1f} s")
    queries = queries_from(corpus, 500, args.seed)
    docs = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.md") if ".commonplace" not in p.parts)
    rng0 = random.Random(args.seed)
    get_paths = rng0.sample(docs, min(500, len(docs)))
    phases: list[Phase] = []
    appended: dict[int, list[str]] = {}
    generations = 0
    cpu = 0.0  # the serve process's CPU seconds while the phases ran (warm-ups left out)

    def phase(*a: Any, **kw: Any) -> Phase:
        nonlocal cpu
        c0 = server_cpu(proc.pid)
        try:
            return run_phase(*a, **kw)
        finally:
            cpu += server_cpu(proc.pid) - c0

    try:
        status, st = Client(host, port).call("GET", "/v1/status")
        def search(mode: str) -> Any:
            return lambda rng, cid, seq: (f"search_{mode}", "POST", "/v1/search",
                                          {"query": rng.choice(queries), "k": 10, "mode": mode})

        Client(host, port).call("POST", "/v1/search", {"query": "warm", "mode": "hybrid" if embed else "bm25"})
        if "bm25" in wanted:
            log("phase: search bm25")
            phases.append(phase("search bm25", host, port, args.clients, args.seconds, search("bm25"), corpus))
        if embed and "hybrid" in wanted:
            log("phase: search hybrid")
            phases.append(phase("search hybrid", host, port, args.clients, args.seconds, search("hybrid"), corpus))

        def active_memory(rng: random.Random, cid: int, seq: int) -> Any:
            q = rng.choice(queries)
            prompt = f"what did we do yesterday about {q}?" if rng.random() < 0.25 else f"what do we know about {q}?"
            return ("active_memory", "POST", "/v1/active-memory", {"prompt": prompt, "agent": "bench"})

        if "active-memory" in wanted:
            Client(host, port).call("POST", "/v1/active-memory", {"prompt": "warm up", "agent": "bench"})
            log(f"phase: active memory ({args.am_clients} client(s))")
            phases.append(phase("active memory", host, port, args.am_clients, args.seconds, active_memory,
                                    corpus))

        def mixed(rng: random.Random, cid: int, seq: int, writes: float = 0.10) -> Any:
            # The same draws with or without writes: the reads phase asks what mixed's reads ask.
            r = rng.random()
            if r < 0.10:
                if writes:
                    line = f"- bench c{cid} s{seq} {rng.getrandbits(48):012x}"
                    # Title and type as Dory's clients send them: the first append creates the file.
                    return ("write", "POST", "/v1/write", {"kind": "append", "target": f"inbox/bench-{cid}.md",
                                                           "content": line, "frontmatter": {
                                                               "title": f"Bench {cid}", "type": "capture"}})
                r = 0.10 + rng.random() * 0.90
            if r < 0.325:
                return ("get", "GET", f"/v1/get?path={urllib.request.quote(rng.choice(get_paths))}", None)
            mode = "hybrid" if embed and rng.random() < 0.5 else "bm25"
            return (f"search_{mode}", "POST", "/v1/search", {"query": rng.choice(queries), "k": 10, "mode": mode})

        if {"reads", "mixed"} & wanted:
            # Every query's vector once, so neither of the two compared phases pays for
            # embedding queries the other found cached (the engine keeps 1,024 of them).
            log(f"warming {len(queries)} queries")
            warm = Client(host, port)
            for q in queries:
                warm.call("POST", "/v1/search", {"query": q, "k": 10, "mode": "hybrid" if embed else "bm25"})
        if "reads" in wanted:
            log("phase: reads (the mixed phase without its writes)")
            phases.append(phase("reads", host, port, args.clients, args.seconds,
                                    lambda rng, cid, seq: mixed(rng, cid, seq, writes=0.0), corpus, seed=1))
        if "mixed" in wanted:
            log("phase: mixed 90/10")
            g0 = generation_number(corpus)
            phases.append(phase("mixed 90/10", host, port, args.clients, args.seconds, mixed, corpus, appended,
                                    seed=2))
            generations = generation_number(corpus) - g0
    finally:
        memory = server_memory(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()

    lost = dup = 0
    for cid, lines in appended.items():
        text = (corpus / f"inbox/bench-{cid}.md").read_text("utf-8")
        for line in lines:
            c = text.count(line + "\n")
            lost += c == 0
            dup += c > 1
    rows = []
    for ph in phases:
        rows.append(ph.row())
        if len(ph.by_op) > 1:
            for op in sorted(ph.by_op):
                rows.append(ph.row(op))
            if "write" in ph.by_op:
                rows.append(ph.row("reads"))
    report = {
        "n_documents": len(docs), "embed": embed, "clients": args.clients, "server_threads": args.threads,
        "seconds_per_phase": args.seconds, "startup_seconds": round(ready, 1),
        "index": {k: st.get(k) for k in ("documents", "chunks", "vectors", "model", "dimensions")} if isinstance(st, dict) else {},
        "rows": rows, "writes_checked": sum(len(v) for v in appended.values()), "writes_lost": lost,
        "writes_duplicated": dup, "error_samples": [e for ph in phases for e in ph.error_samples],
        "cpus": os.cpu_count(), "server_memory_mb": memory, "index_generations_in_mixed": generations,
        "server_cpu_seconds": round(cpu, 2), "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
    served = sum(r["requests"] for r in (ph.row() for ph in phases))
    report["server_cpu_ms_per_request"] = round(1000 * cpu / served, 3) if served else None
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"commonplace serve, {len(docs)} documents, {args.clients} clients, {args.seconds:.0f} s per phase, "
              f"{os.cpu_count()} CPUs; ready after {ready:.1f} s; index: {report['index']}")
        print()
        print("| phase | op | clients | requests | req/s | p50 ms | p95 ms | p99 ms | errors |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['phase']} | {r['op']} | {r['clients']} | {r['requests']} | {r['rps']} | {r['p50_ms']} | "
                  f"{r['p95_ms']} | {r['p99_ms']} | {'' if r['errors'] is None else r['errors']} |")
        print()
        print(f"writes checked: {report['writes_checked']}, lost: {lost}, duplicated: {dup}; "
              f"index generations made in the mixed phase: {generations} (refreshes and merges)")
        print(f"server memory: peak RSS {memory['peak_rss']} MB (the serve process), "
              f"{memory['tree_rss']} MB with its children at the end")
        print(f"server CPU in the phases: {report['server_cpu_seconds']} s, "
              f"{report['server_cpu_ms_per_request']} ms per request; load at the end {report['load']}")
        for e in report["error_samples"]:
            print(f"error: {e}")
    over = args.rss_budget_mb is not None and memory["peak_rss"] > args.rss_budget_mb
    if over:
        print(f"over budget: peak RSS {memory['peak_rss']} MB > {args.rss_budget_mb} MB", file=sys.stderr)
    return 0 if not (lost or dup or over or any(ph.errors for ph in phases)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
