"""A two-node Ray cluster on loopback for tests and benchmarks (issue 21).

    python -m tests.benchmarks.ray_loopback [--port 26379] [--cpus 1,1] [--object-store-mb 400]

starts a head node and a second node, each a `ray start --block` child of this process
with its own CPU count, prints `ready ADDRESS` and keeps them until stdin closes or
SIGTERM, then stops exactly those two processes (and so everything they started).

Loopback only: where `unshare -n` works (root, Linux) the cluster lives in a network
namespace of its own that has nothing but `lo`, so Ray can neither bind nor talk
anywhere else; other processes join it with `nsenter --net=/proc/PID/ns/net`
(`LoopbackCluster.run`). Elsewhere the nodes get `--node-ip-address 127.0.0.1`.
Token authentication is on, with a token made for this cluster (`RAY_AUTH_TOKEN`):
nothing is read from or written to ~/.ray.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]


def _netns_works() -> bool:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _ray_bin() -> str:
    return str(Path(sys.executable).with_name("ray"))


def serve(port: int, cpus: list[int], store_mb: int) -> int:
    """Inside the namespace (or not): start the nodes, report, wait, stop them."""
    if os.environ.get("COMMONPLACE_NETNS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    env = dict(os.environ)
    tmp = Path(env["COMMONPLACE_RAY_TMP"])
    common = ["--node-ip-address=127.0.0.1", f"--object-store-memory={store_mb * 1024 * 1024}", "--block",
              "--disable-usage-stats", f"--temp-dir={tmp}"]
    procs: list[subprocess.Popen] = []

    def stop(*_: Any) -> None:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    head = subprocess.Popen([_ray_bin(), "start", "--head", f"--port={port}", f"--num-cpus={cpus[0]}",
                             "--include-dashboard=false", *common],
                            env=env, stdout=subprocess.DEVNULL, stderr=open(tmp.parent / "head.log", "wb"))
    procs.append(head)
    address = f"127.0.0.1:{port}"
    if not _wait_for_nodes(address, 1, env):
        print("failed: the head node did not start", flush=True)
        stop()
    for i, n in enumerate(cpus[1:], 1):
        procs.append(subprocess.Popen([_ray_bin(), "start", f"--address={address}", f"--num-cpus={n}", *common],
                                      env=env, stdout=subprocess.DEVNULL,
                                      stderr=open(tmp.parent / f"node{i}.log", "wb")))
    if not _wait_for_nodes(address, len(cpus), env):
        print("failed: the second node did not join", flush=True)
        stop()
    print(f"ready {address}", flush=True)
    try:
        sys.stdin.read()  # until the owner closes our stdin
    finally:
        stop()
    return 0


def _wait_for_nodes(address: str, n: int, env: dict[str, str], timeout: float = 120) -> bool:
    code = ("import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
            "print(sum(1 for x in ray.nodes() if x['Alive']))")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r = subprocess.run([sys.executable, "-c", code, address], capture_output=True, text=True, env=env, timeout=60)
            if r.returncode == 0 and r.stdout.strip().splitlines() and int(r.stdout.strip().splitlines()[-1]) >= n:
                return True
        except subprocess.TimeoutExpired:
            pass
        time.sleep(1)
    return False


class LoopbackCluster:
    """Start with `with LoopbackCluster() as c:`; `c.run(cmd)` runs a command that can
    reach it (`c.address`), `c.env` is the environment such a command needs."""

    def __init__(self, port: int = 26379, cpus: tuple[int, ...] = (1, 1), store_mb: int = 400):
        self.port, self.cpus, self.store_mb = port, cpus, store_mb
        self.address = f"127.0.0.1:{port}"
        self.netns = _netns_works()
        self._tmp = Path(tempfile.mkdtemp(prefix="cp-ray-"))
        self.env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
                        RAY_USAGE_STATS_ENABLED="0", COMMONPLACE_RAY_TMP=str(self._tmp / "r"),
                        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")])))
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "LoopbackCluster":
        cmd = [sys.executable, "-m", "tests.benchmarks.ray_loopback", "--port", str(self.port),
               "--cpus", ",".join(map(str, self.cpus)), "--object-store-mb", str(self.store_mb)]
        env = dict(self.env)
        if self.netns:
            cmd = ["unshare", "-n", *cmd]
            env["COMMONPLACE_NETNS"] = "1"
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=str(REPO))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("ready"):
            self.__exit__()
            raise RuntimeError(f"the loopback Ray cluster did not start: {line or 'no output'} "
                               f"(logs in {self._tmp})")
        return self

    def prefix(self) -> list[str]:
        """What to put before a command so it runs where the cluster is reachable."""
        assert self.proc is not None
        return ["nsenter", f"--net=/proc/{self.proc.pid}/ns/net"] if self.netns else []

    def popen(self, cmd: list[str], **kw: Any) -> subprocess.Popen:
        return subprocess.Popen([*self.prefix(), *cmd], env=kw.pop("env", self.env), **kw)

    def run(self, cmd: list[str], timeout: float = 1800, **kw: Any) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix(), *cmd], env=kw.pop("env", self.env), capture_output=True, text=True,
                              timeout=timeout, **kw)

    def processes(self) -> dict[int, str]:
        """Every process of this cluster (the holder's descendants): pid -> command line."""
        assert self.proc is not None
        parents: dict[int, int] = {}
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        family, grew = {self.proc.pid}, True
        while grew:
            more = {p for p, pp in parents.items() if pp in family} - family
            family |= more
            grew = bool(more)
        out = {}
        for pid in family - {self.proc.pid}:
            try:
                out[pid] = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                pass
        return out

    def kill(self) -> None:
        """SIGKILL every process of the cluster at once: the cluster is lost mid-work."""
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.terminate()
                self.proc.wait(timeout=30)
        shutil.rmtree(self._tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=26379)
    ap.add_argument("--cpus", default="1,1", help="CPUs of each node, head first")
    ap.add_argument("--object-store-mb", type=int, default=400)
    a = ap.parse_args()
    if "COMMONPLACE_RAY_TMP" not in os.environ:  # not setdefault: its argument would make a dir every run
        os.environ["COMMONPLACE_RAY_TMP"] = tempfile.mkdtemp(prefix="cp-ray-") + "/r"
    Path(os.environ["COMMONPLACE_RAY_TMP"]).parent.mkdir(parents=True, exist_ok=True)
    return serve(a.port, [int(x) for x in a.cpus.split(",")], a.object_store_mb)


if __name__ == "__main__":
    sys.exit(main())
