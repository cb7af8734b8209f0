"""MCP benchmark: how fast `commonplace mcp` answers `initialize`, and what a tool call
costs over stdio and over /mcp compared with /v1.

    python -m tests.benchmarks.bench_mcp [--corpus docs] [--workdir DIR] [--repeat 5]
                                         [--calls 30] [--no-embed] [--json]

The corpus (default: the project's own docs/) is copied into --workdir (default a
temporary folder) and built once with `commonplace build`, untimed, so every start below
runs over an existing build. Then, --repeat times:

1. stdio: spawn `commonplace mcp -C CORPUS --out SITE` with the SDK's `stdio_client` and
   time, from the spawn: the `initialize` answer, `tools/list`, the first `dory_search`
   (bm25; it waits for the corpus to open), the first hybrid search (it loads the
   embedding model; skipped with --no-embed), then --calls warm bm25 searches.
2. HTTP: `commonplace serve --no-auth` on the same corpus, then the SDK's
   `streamable_http_client` on /mcp: `initialize` (the first one in the server process
   imports the SDK) and a second session's, then --calls warm bm25 searches over MCP and
   the same query over `POST /v1/search`.

Wall-clock times include interpreter start-up. The machine is shared, so the table also
prints the load average at the start and the end, and the CPU time the `commonplace mcp`
process had used when its `initialize` answer arrived (from /proc: what an idle machine
would take, give or take disk reads); compare runs made under similar load.
Prints a table on stdout (JSON with --json); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent / "commonplace")
QUERY = {"query": "how are wikilinks resolved", "k": 5, "mode": "bm25"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def env() -> dict[str, str]:
    e = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    e.pop("COMMONPLACE_TOKEN", None)
    return e


def prepare(corpus: Path, workdir: Path, embed: bool) -> tuple[Path, Path]:
    root, out = workdir / "corpus", workdir / "site"
    if not root.exists():
        shutil.copytree(corpus, root, ignore=shutil.ignore_patterns(".commonplace"))
    flags = [] if embed else ["--no-embed"]
    t0 = time.perf_counter()
    r = subprocess.run([BIN, "build", str(root), "--out", str(out), *flags], env=env(), capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"build failed: {r.stderr[-2000:]}")
    log(f"built {root} in {time.perf_counter() - t0:.1f} s (untimed)")
    return root, out


async def stdio_run(root: Path, out: Path, embed: bool, calls: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["mcp", "-C", str(root), "--out", str(out)] + ([] if embed else ["--no-embed"])
    params = StdioServerParameters(command=BIN, args=args, env=env())
    m: dict[str, Any] = {}
    with open(os.devnull, "w") as devnull:
        t0 = time.perf_counter()
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                m["initialize"] = time.perf_counter() - t0
                cpu = server_cpu(root)
                if cpu is not None:
                    m["initialize, server CPU time"] = cpu
                t = time.perf_counter()
                await s.list_tools()
                m["tools/list"] = time.perf_counter() - t
                t = time.perf_counter()
                res = await s.call_tool("dory_search", QUERY)
                assert not res.is_error, res.content[0].text
                m["first search (waits for the open)"] = time.perf_counter() - t
                m["first search, from spawn"] = time.perf_counter() - t0
                if embed:
                    t = time.perf_counter()
                    res = await s.call_tool("dory_search", {**QUERY, "mode": "hybrid"})
                    assert not res.is_error, res.content[0].text
                    m["first hybrid search (model load)"] = time.perf_counter() - t
                m["warm search"] = await _timed_calls(s, calls)
    return m


def server_cpu(root: Path) -> float | None:
    """CPU seconds (user + system) the `commonplace mcp` process for `root` has used so
    far: on a shared machine, closer than wall time to what an idle one would take."""
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"mcp" not in argv or str(root).encode() not in argv:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return None


async def _timed_calls(s: Any, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        res = await s.call_tool("dory_search", QUERY)
        assert not res.is_error, res.content[0].text
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def start_server(root: Path, out: Path, embed: bool) -> tuple[subprocess.Popen[str], str]:
    flags = [] if embed else ["--no-embed"]
    proc = subprocess.Popen([BIN, "serve", str(root), "--out", str(out), "--port", "0", "--no-auth", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env())
    assert proc.stdout is not None
    m = re.search(r"http://[\d.]+:\d+", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit("serve did not start")
    url = m.group(0)
    for _ in range(3000):
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("serve not ready")


async def http_run(url: str, calls: int) -> dict[str, Any]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    m: dict[str, Any] = {}
    for label in ("initialize, first /mcp session", "initialize, next session"):
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(120.0)) as hc:
            t0 = time.perf_counter()
            async with streamable_http_client(url + "/mcp", http_client=hc) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    m[label] = time.perf_counter() - t0
                    if label.endswith("next session"):
                        m["warm search over /mcp"] = await _timed_calls(s, calls)
    times = []
    body = json.dumps(QUERY).encode()
    for _ in range(calls):
        t = time.perf_counter()
        req = urllib.request.Request(url + "/v1/search", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            resp.read()
        times.append(time.perf_counter() - t)
    m["warm search over /v1/search"] = statistics.median(times)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=REPO / "docs")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    import anyio

    embed = not a.no_embed
    tmp = None
    workdir = a.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-mcp-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    root, out = prepare(a.corpus, workdir, embed)
    runs: list[dict[str, Any]] = []
    for i in range(a.repeat):
        runs.append(anyio.run(stdio_run, root, out, embed, a.calls))
        log(f"stdio run {i + 1}: initialize {runs[-1]['initialize']:.2f} s")
        proc, url = start_server(root, out, embed)
        try:
            runs[-1].update(anyio.run(http_run, url, a.calls))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
        log(f"http run {i + 1}: first /mcp initialize {runs[-1]['initialize, first /mcp session']:.2f} s")
    load1 = os.getloadavg()
    keys = list(runs[0])
    table = {k: {"median": statistics.median(r[k] for r in runs), "min": min(r[k] for r in runs),
                 "max": max(r[k] for r in runs)} for k in keys}
    meta = {"corpus": str(a.corpus), "repeat": a.repeat, "calls": a.calls, "embed": embed,
            "load_before": [round(x, 2) for x in load0], "load_after": [round(x, 2) for x in load1]}
    if a.json:
        print(json.dumps({"meta": meta, "seconds": table}, indent=2))
    else:
        print(f"corpus {a.corpus} (existing build), {a.repeat} runs, load average {load0[0]:.1f} -> {load1[0]:.1f}")
        print(f"| {'measure':<36} | median ms | min ms | max ms |")
        print(f"|{'-' * 38}|----------:|-------:|-------:|")
        for k, v in table.items():
            print(f"| {k:<36} | {v['median'] * 1000:9.1f} | {v['min'] * 1000:6.1f} | {v['max'] * 1000:6.1f} |")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
