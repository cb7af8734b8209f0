"""`commonplace build --engine ray` (issue 21) against a real two-node Ray cluster on
loopback (`tests/benchmarks/ray_loopback.py`: its own network namespace where that is
allowed, so Ray can neither bind nor talk beyond `lo`), with the real embedding model.

What a user would notice: the site is byte for byte the local build's and the vectors
match (cosine >= 0.998 each); an edit sends only its own chunks to the cluster; an
embedding actor killed mid-build is replaced and the build still matches; a cluster lost
mid-build, or one that cannot be reached, fails with a clear error and leaves the
previous site and indexes as they were. And a local build never imports Ray.

Ray is an optional extra (`pip install 'commonplace[ray]'`): without it these tests
cannot run and say so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.benchmarks.corpus_gen import generate

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]
N_DOCS = 120
MIN_COSINE = 0.998

ray = pytest.importorskip("ray", reason="Ray is the optional extra: pip install 'commonplace[ray]'")

from tests.benchmarks.ray_loopback import LoopbackCluster, _netns_works  # noqa: E402


# --------------------------------------------------------------------------- helpers


def build(corpus: Path, out: Path, *extra: str, cluster: LoopbackCluster | None = None,
          timeout: float = 1200) -> tuple[subprocess.CompletedProcess, dict]:
    cmd = [*CLI, "build", str(corpus), "--out", str(out), "--json", *extra]
    if cluster is not None:
        r = cluster.run([*cmd, "--engine", "ray", "--address", cluster.address], timeout=timeout, cwd=str(REPO))
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(REPO))
    data = json.loads(r.stdout) if r.returncode in (0, 1) and r.stdout.strip().startswith("{") else {}
    return r, data


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def index_vectors(corpus: Path) -> dict[tuple[str, int], tuple[str, "object"]]:
    """(path, chunk ordinal) -> (text hash, vector) of the live index generation."""
    from commonplace.compiler.search.store.disk import IndexStore, Meta, open_table
    from commonplace.compiler.search.store.vectors import VectorIndex

    gen = IndexStore(corpus.resolve()).current()
    assert gen is not None, "no index generation"
    meta = Meta.load(gen)
    db = open_table(gen, readonly=True)
    rows = [(r["path"], r["ordinal"], r["id"], r["text_hash"])
            for r in db.execute("SELECT path, ordinal, id, text_hash FROM chunks WHERE has_vector = 1")]
    db.close()
    index = VectorIndex.load(gen / "vectors.hnsw", meta.dim, deleted=meta.deleted_vectors)
    vecs = index.get([r[2] for r in rows])
    return {(p, o): (h, v) for (p, o, _, h), v in zip(rows, vecs)}


def assert_vectors_match(local: Path, remote: Path) -> int:
    import numpy as np

    a, b = index_vectors(local), index_vectors(remote)
    assert a.keys() == b.keys(), "the two builds indexed different chunks"
    worst = 1.0
    for k, (h, v) in a.items():
        h2, w = b[k]
        assert h == h2, f"chunk {k} has another text"
        cos = float(np.dot(v, w) / (np.linalg.norm(v) * np.linalg.norm(w)))
        assert cos >= MIN_COSINE, f"chunk {k}: cosine {cos:.5f} to the local vector"
        worst = min(worst, cos)
    return len(a)


def state_snapshot(corpus: Path, out: Path) -> dict[str, bytes]:
    """The site and the search indexes, byte for byte (the embedding cache excluded:
    vectors made before a failure are kept there on purpose)."""
    snap = {f"site/{k}": v for k, v in site_bytes(out).items()}
    index = corpus / ".commonplace" / "index"
    snap.update({f"index/{p.relative_to(index).as_posix()}": p.read_bytes()
                 for p in sorted(index.rglob("*")) if p.is_file()})
    return snap


def cache_rows(corpus: Path) -> int:
    path = corpus / ".commonplace" / "cache" / "embeddings.sqlite"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT count(*) FROM emb").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def wait_for_embedding(corpus: Path, proc: subprocess.Popen, timeout: float = 600) -> None:
    """Until the build has stored its first vectors (so the actors are mid-job)."""
    deadline = time.monotonic() + timeout
    while cache_rows(corpus) == 0:
        assert proc.poll() is None, f"the build ended before embedding: {proc.communicate()}"
        assert time.monotonic() < deadline, "no vector arrived"
        time.sleep(0.2)


def edit(corpus: Path) -> None:
    """Two documents edited, one added, one deleted."""
    docs = sorted(p for p in corpus.rglob("*.md") if ".commonplace" not in p.parts and p.name != "index.md")
    for f in docs[-3:-1]:
        f.write_text(f.read_text() + "\n\n## Follow-up\n\nThe rollback drill moved to Thursdays; see [[index]].\n")
    docs[-1].unlink()
    (corpus / "notes").mkdir(exist_ok=True)
    (corpus / "notes" / "ray-added.md").write_text(
        "---\ntitle: Ray added note\ntags: [ray]\n---\n# Ray added note\n\nWritten between two builds, "
        "about the capacity of the build cluster.\n")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def corpus_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("src") / "corpus"
    generate(root, N_DOCS, seed=21)
    # Titles from file names (a vault's setting): Ray's nodes parse bytes without the
    # corpus's settings, so the driver must hand them the rule.
    (root / "commonplace.toml").write_text('[site]\ntitles = "filename"\n')
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "Named by file.md").write_text("# A heading that is not the title\n\nBody text.\n")
    return root


@pytest.fixture(scope="module")
def reference(corpus_src: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The local engine's clean build of the corpus: (corpus, site)."""
    base = tmp_path_factory.mktemp("local")
    corpus, out = base / "corpus", base / "site"
    shutil.copytree(corpus_src, corpus)
    r, _ = build(corpus, out)
    assert r.returncode in (0, 1), r.stderr
    return corpus, out


@pytest.fixture(scope="module")
def cluster():
    with LoopbackCluster(port=26391) as c:
        yield c


def copy_of(src: Path, base: Path) -> tuple[Path, Path]:
    corpus = base / "corpus"  # same folder name as the reference: the site is named after it
    shutil.copytree(src, corpus, ignore=shutil.ignore_patterns(".commonplace"))
    return corpus, base / "site"


# --------------------------------------------------------------------------- tests


@pytest.mark.slow
def test_ray_build_is_the_local_build_and_stays_incremental(corpus_src, reference, cluster, tmp_path):
    local_corpus, local_out = reference
    corpus, out = copy_of(corpus_src, tmp_path / "ray")
    r, report = build(corpus, out, cluster=cluster)
    assert r.returncode in (0, 1), r.stderr
    engine = report["extra"]["engine"]
    assert engine["nodes"] == 2 and engine["cpus"] == 2
    assert site_bytes(out) == site_bytes(local_out)
    named = [p for p in out.rglob("*.html") if "Body text." in p.read_text(errors="replace")]
    assert named and all("<title>Named by file" in p.read_text() for p in named)
    n = assert_vectors_match(local_corpus, corpus)
    assert report["extra"]["chunks_embedded"] > 0.9 * n and report["extra"]["embeddings_pending"] == 0

    # An edit: only the changed documents' chunks are looked up, only new texts travel.
    local2, local2_out = copy_of(local_corpus, tmp_path / "local2")
    shutil.copytree(local_corpus / ".commonplace", local2 / ".commonplace")
    shutil.copytree(local_out, local2_out)
    edit(local2)
    edit(corpus)
    r, report = build(corpus, out, cluster=cluster)
    assert r.returncode in (0, 1), r.stderr
    engine = report["extra"]["engine"]
    assert report["documents_changed"] == 3 and report["documents_removed"] == 1
    assert 0 < engine["chunks_offered"] <= 40, engine  # the three documents' chunks, not the corpus's
    assert 0 < engine["chunks_embedded"] <= engine["chunks_offered"] - engine["chunks_cached"], engine
    r2, _ = build(local2, local2_out)
    assert r2.returncode in (0, 1), r2.stderr
    assert site_bytes(out) == site_bytes(local2_out)
    assert_vectors_match(local2, corpus)

    # Nothing changed: nothing is parsed, chunked or sent.
    r, report = build(corpus, out, cluster=cluster)
    assert r.returncode in (0, 1), r.stderr
    assert report["changed"] is False and report["extra"]["engine"]["chunks_offered"] == 0


@pytest.mark.slow
def test_an_embedding_actor_killed_mid_build_is_replaced(corpus_src, reference, cluster, tmp_path):
    local_corpus, local_out = reference
    corpus, out = copy_of(corpus_src, tmp_path / "ray")
    proc = cluster.popen([*CLI, "build", str(corpus), "--out", str(out), "--json", "--engine", "ray",
                          "--address", cluster.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=str(REPO))
    try:
        wait_for_embedding(corpus, proc)
        actors = [pid for pid, cmd in cluster.processes().items() if "Embedder" in cmd]
        assert actors, "no embedding actor process found"
        os.kill(actors[0], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 1), stderr
    assert stdout.lstrip().startswith("{"), (stdout[:2000], stderr[-2000:])
    report = json.loads(stdout)
    assert report["extra"]["embeddings_pending"] == 0
    assert site_bytes(out) == site_bytes(local_out)
    assert_vectors_match(local_corpus, corpus)


@pytest.mark.slow
def test_a_cluster_lost_mid_build_leaves_the_previous_site_and_indexes(corpus_src, tmp_path):
    corpus, out = copy_of(corpus_src, tmp_path / "lost")
    r, _ = build(corpus, out, "--no-embed")  # the previous build: site and BM25 index
    assert r.returncode in (0, 1), r.stderr
    edit(corpus)
    before = state_snapshot(corpus, out)
    with LoopbackCluster(port=26392) as c:
        proc = c.popen([*CLI, "build", str(corpus), "--out", str(out), "--engine", "ray", "--address", c.address],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO))
        try:
            wait_for_embedding(corpus, proc)
            c.kill()
            stdout, stderr = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1, (stdout, stderr)
    assert "Ray cluster failed" in stderr and "not touched" in stderr, stderr
    assert state_snapshot(corpus, out) == before
    assert cache_rows(corpus) > 0  # what was embedded is kept for the next build


# A driver the way the build's is run: under the guard, connected, then its local node
# dies and its next call to Ray ends the process (Ray's `_Exit(1)`, nothing printed).
_DRIVER_ENDED_BY_RAY = textwrap.dedent("""
    import os, sys
    os.environ["RAY_BACKEND_LOG_LEVEL"] = "fatal"
    from commonplace.compiler.engines import ray_guard
    ray_guard.supervise()
    ray_guard.mark("live")
    import ray
    ray.init(address=sys.argv[1], log_to_driver=False, logging_level=40)
    print("connected", flush=True)
    sys.stdin.readline()
    for _ in range(100):
        ray.put(b"x" * 1_000_000)
    print("Ray did not end the driver", flush=True)
""")


@pytest.mark.slow
def test_a_driver_that_ray_itself_ends_still_says_the_cluster_failed():
    with LoopbackCluster(port=26393) as c:
        proc = c.popen([sys.executable, "-c", _DRIVER_ENDED_BY_RAY, c.address], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO))
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "connected", proc.communicate()
        c.kill()
        time.sleep(2)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        stdout, stderr = proc.communicate(timeout=120)
    if "Ray did not end the driver" in stdout:
        pytest.fail("this Ray no longer ends a driver whose node died: ray_guard may be unneeded")
    assert proc.returncode == 1
    assert "Ray cluster failed" in stderr and "not touched" in stderr, stderr


_SILENT_PORT = textwrap.dedent("""
    import socket, subprocess, sys, threading
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    held = []
    threading.Thread(target=lambda: [held.append(s.accept()) for _ in iter(int, 1)], daemon=True).start()
    cmd = sys.argv[1:] + ["--address", f"127.0.0.1:{s.getsockname()[1]}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); sys.exit(r.returncode)
""")


def test_an_unreachable_cluster_fails_before_anything_is_written(tmp_path):
    corpus = tmp_path / "corpus"
    generate(corpus, 12, seed=4)
    out = tmp_path / "site"
    r, _ = build(corpus, out, "--no-embed")
    assert r.returncode in (0, 1), r.stderr
    edit(corpus)
    before = state_snapshot(corpus, out)

    # Nothing listens there.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    r = subprocess.run([*CLI, "build", str(corpus), "--out", str(out), "--engine", "ray", "--address",
                        f"127.0.0.1:{closed}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert f"cannot reach the Ray cluster at 127.0.0.1:{closed}" in r.stderr and "Traceback" not in r.stderr
    assert state_snapshot(corpus, out) == before

    # Something listens but never speaks Ray's protocol: a deadline, not minutes of retries.
    fresh = tmp_path / "fresh-site"
    inner = [sys.executable, "-c", _SILENT_PORT, *CLI, "build", str(corpus), "--out", str(fresh), "--engine", "ray"]
    env = dict(os.environ, COMMONPLACE_RAY_CONNECT_TIMEOUT="3", PYTHONPATH=str(REPO))
    if _netns_works():  # Ray's own address discovery stays inside a namespace with only `lo`
        inner = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *inner]
    t0 = time.monotonic()
    r = subprocess.run(inner, capture_output=True, text=True, timeout=180, env=env)
    assert r.returncode == 1, r.stderr
    assert "did not answer within 3 s" in r.stderr and "nothing was written" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    assert not fresh.exists() and state_snapshot(corpus, out) == before


def test_a_local_build_never_imports_ray(tmp_path):
    corpus = tmp_path / "notes"
    code = textwrap.dedent(f"""
        import sys
        from commonplace.server.cli import main
        for args in (["init", {str(corpus)!r}], ["build", {str(corpus)!r}, "--out", {str(tmp_path / 'site')!r}]):
            try:
                main(args)
            except SystemExit as exc:
                assert exc.code in (0, None), exc.code
        print("ray imported" if any(m == "ray" or m.startswith("ray.") for m in sys.modules) else "no ray")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "no ray"
    assert (tmp_path / "site" / "index.html").is_file()
    # --address belongs to the Ray engine
    r = subprocess.run([*CLI, "build", str(corpus), "--out", str(tmp_path / "site"), "--address", "127.0.0.1:6379"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--address needs --engine ray" in r.stderr


def _listening_addresses(root_pid: int) -> set[str]:
    """Local addresses of the TCP sockets that `root_pid` and its descendants listen on,
    read from /proc (no tool needed): what Ray's local instance bound."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    pids, todo = set(), [root_pid]
    while todo:
        pid = todo.pop()
        if pid not in pids:
            pids.add(pid)
            todo.extend(children.get(pid, ()))
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # 0A: LISTEN
                found.add(parts[1].split(":")[0][-8:] if width == 32 else parts[1].split(":")[0])
    return found


LOOPBACK_HEX = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it (also the tail of ::ffff:127.0.0.1)


def test_engine_ray_without_an_address_starts_a_loopback_instance_and_builds_the_local_site(tmp_path):
    """What a user tries first (and docs/references/ray-cluster.md offers): no --address.
    Ray starts a local instance for the build; it must outlive the thread that connected
    (its GCS and raylet die with that thread otherwise), listen on loopback only, and
    build the same site as the local engine."""
    local_corpus, ray_corpus = tmp_path / "a" / "docs", tmp_path / "b" / "docs"
    shutil.copytree(REPO / "docs", local_corpus)
    shutil.copytree(REPO / "docs", ray_corpus)
    r, _ = build(local_corpus, tmp_path / "a" / "site", "--no-embed")
    assert r.returncode in (0, 1), r.stderr
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.Popen([*CLI, "build", str(ray_corpus), "--out", str(tmp_path / "b" / "site"), "--json",
                             "--engine", "ray"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(REPO), env=env)
    seen: set[str] = set()
    deadline = time.monotonic() + 900
    while proc.poll() is None and time.monotonic() < deadline:
        seen |= _listening_addresses(proc.pid)
        time.sleep(0.5)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 1), err
    assert json.loads(out)["documents"] > 0
    assert seen, "the local Ray instance listened on nothing while it built"
    assert seen == {LOOPBACK_HEX}, f"a local Ray instance listened beyond loopback: {sorted(seen)}"
    assert site_bytes(tmp_path / "b" / "site") == site_bytes(tmp_path / "a" / "site")
    # Its vectors are there: a semantic search answers from them.
    r = subprocess.run([*CLI, "search", "why rank fusion", "--mode", "vector", "--json", "-C", str(ray_corpus)],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"]
