"""Disk full and read-only corpus: a write that cannot be completed fails with a clear error
(HTTP: the error envelope with 503 `write_failed`, never a 500; CLI: exit 1 and a message),
leaves the previous file intact and leaves no temp file behind.

Faults are injected where compiler/writes.py touches the disk (temp file open, write,
fsync, rename, hard link, mkdir) and where the claim log appends (os.write, fsync). Tests
run as root, where chmod does not stop writes; when this process may mount a tmpfs, the
last two tests also fill a real tiny filesystem (ENOSPC) and remount it read-only (EROFS).
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

from commonplace.compiler import fsutil
from commonplace.compiler import writes as w
from hostilekit import Env, check_response

ENOSPC = OSError(errno.ENOSPC, "No space left on device")
EROFS = OSError(errno.EROFS, "Read-only file system")


def _tmp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.endswith(".tmp"))


class Fault:
    """One way the disk refuses. `install(monkeypatch)` arms it."""

    def __init__(self, name: str, kinds: tuple[str, ...], install: Callable[[Any], None]) -> None:
        self.name, self.kinds, self.install = name, kinds, install

    def __repr__(self) -> str:
        return self.name


def _raise(exc: OSError) -> Callable[..., Any]:
    def f(*a: Any, **k: Any) -> Any:
        raise OSError(exc.errno, exc.strerror)

    return f


def _partial_open(exc: OSError) -> Callable[..., Any]:
    """open() whose temp files take half the bytes, then fail (a disk filling up mid-write)."""
    real_open = builtins.open

    class Half:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            raise OSError(exc.errno, exc.strerror)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.fh, name)

        def __enter__(self) -> "Half":
            return self

        def __exit__(self, *a: Any) -> None:
            self.fh.close()

    def fake(file: Any, mode: str = "r", *a: Any, **k: Any) -> Any:
        fh = real_open(file, mode, *a, **k)
        return Half(fh) if "x" in mode or str(file).endswith(".tmp") else fh

    return fake


def _only_tmp(real: Callable[..., Any], exc: OSError, arg: int = 0) -> Callable[..., Any]:
    def f(*a: Any, **k: Any) -> Any:
        if str(a[arg]).endswith(".tmp"):
            raise OSError(exc.errno, exc.strerror)
        return real(*a, **k)

    return f


def _mkdir_fails(exc: OSError) -> Callable[..., Any]:
    """Path.mkdir refusing new folders (an existing one is still EEXIST, as on Linux)."""
    real = Path.mkdir

    def f(self: Path, *a: Any, **k: Any) -> None:
        if self.exists():
            return real(self, *a, **k)
        raise OSError(exc.errno, exc.strerror)

    return f


FAULTS = [
    Fault("fsync-enospc", ("append", "replace", "create"), lambda mp: mp.setattr(w.os, "fsync", _raise(ENOSPC))),
    Fault("fsync-erofs", ("append", "replace", "create"), lambda mp: mp.setattr(w.os, "fsync", _raise(EROFS))),
    Fault("partial-write-enospc", ("append", "replace", "create"), lambda mp: mp.setattr(fsutil, "open", _partial_open(ENOSPC), raising=False)),
    Fault("open-tmp-erofs", ("append", "replace", "create"), lambda mp: mp.setattr(fsutil, "open", _raise(EROFS), raising=False)),
    Fault("rename-erofs", ("append", "replace"), lambda mp: mp.setattr(w.os, "replace", _only_tmp(os.replace, EROFS))),
    Fault("rename-enospc", ("append", "replace"), lambda mp: mp.setattr(w.os, "replace", _only_tmp(os.replace, ENOSPC))),
    Fault("link-enospc", ("create",), lambda mp: mp.setattr(w.os, "link", _only_tmp(os.link, ENOSPC))),
    Fault("mkdir-erofs", ("create-in-new-folder",), lambda mp: mp.setattr(Path, "mkdir", _mkdir_fails(EROFS))),
    Fault("mkdir-enospc", ("create-in-new-folder",), lambda mp: mp.setattr(Path, "mkdir", _mkdir_fails(ENOSPC))),
    Fault("fsync-enospc-new-folder", ("create-in-new-folder",), lambda mp: mp.setattr(w.os, "fsync", _raise(ENOSPC))),
    Fault("fchmod-eperm", ("append", "replace"), lambda mp: mp.setattr(w.os, "fchmod", _raise(OSError(errno.EPERM, "Operation not permitted")))),
]
CASES = [(f, k) for f in FAULTS for k in f.kinds]


def _request(kind: str, env: Env, client: Any) -> tuple[dict[str, Any], str]:
    if kind == "append":
        return {"kind": "append", "target": "notes/plain.md", "content": "lost line\n"}, "notes/plain.md"
    if kind == "replace":
        h = client.get("/v1/get", query_string={"path": "notes/links.md", "debug": "1"}).get_json()["hash"]
        return {"kind": "replace", "target": "notes/links.md", "content": "# Replaced\n", "expected_hash": h}, "notes/links.md"
    if kind == "create":
        return {"kind": "create", "target": f"inbox/new-{uuid.uuid4().hex[:6]}.md", "content": "new\n",
                "frontmatter": {"title": "New", "type": "capture"}}, ""  # Dory: a new file needs title and type
    return {"kind": "create", "target": f"folder-{uuid.uuid4().hex[:6]}/new.md", "content": "new\n",
            "frontmatter": {"title": "New", "type": "note"}}, ""


@pytest.mark.parametrize("fault,kind", CASES, ids=[f"{f.name}-{k}" for f, k in CASES])
def test_failed_write_over_http(fault: Fault, kind: str, env: Env, client, monkeypatch, corpus_files) -> None:
    body, existing = _request(kind, env, client)
    before_bytes = (env.corpus / existing).read_bytes() if existing else None
    before = corpus_files()
    with monkeypatch.context() as mp:
        fault.install(mp)
        r = client.post("/v1/write", json=body, headers=env.auth)
    data = check_response(r, env, 503, f"{fault.name} {kind}")
    assert data["error"]["code"] == "write_failed", data
    msg = data["error"]["message"]
    assert ("no space" in msg or "read-only" in msg) and "nothing was changed" in msg, msg
    if existing:
        assert (env.corpus / existing).read_bytes() == before_bytes, "the previous file changed"
    assert corpus_files() == before, "a failed write left files behind"
    assert _tmp_files(env.corpus) == []


@pytest.mark.parametrize("fault,kind", CASES, ids=[f"{f.name}-{k}" for f, k in CASES])
def test_failed_write_by_cli(fault: Fault, kind: str, env: Env, client, cli, monkeypatch, corpus_files) -> None:
    body, existing = _request(kind, env, client)
    before_bytes = (env.corpus / existing).read_bytes() if existing else None
    before = corpus_files()
    args = ["write", body["target"], "-C", env.corpus, "--kind", body["kind"], "--content", body["content"], "--no-build"]
    if "expected_hash" in body:
        args += ["--expected-hash", body["expected_hash"]]
    with monkeypatch.context() as mp:
        fault.install(mp)
        r = cli(*args)
    assert r.exit_code == 1, r
    assert "no space" in r.stderr or "read-only" in r.stderr, r
    if existing:
        assert (env.corpus / existing).read_bytes() == before_bytes
    assert corpus_files() == before
    assert _tmp_files(env.corpus) == []


def _log_lines(root: Path) -> list[dict[str, Any]]:
    out = []
    for p in sorted((root / "claims").rglob("*.jsonl")) if (root / "claims").exists() else []:
        for line in p.read_bytes().split(b"\n"):
            if line:
                out.append(json.loads(line))  # every line parses: no partial line left
    return out


def _half_then_fail(exc: OSError) -> Callable[..., int]:
    real = os.write
    state = {"n": 0}

    def f(fd: int, data: bytes) -> int:
        state["n"] += 1
        if state["n"] == 1 and len(data) > 1:
            return real(fd, data[: len(data) // 2])  # a short write, as on a filling disk
        raise OSError(exc.errno, exc.strerror)

    return f


CLAIM_FAULTS = {
    "write-enospc": lambda mp: mp.setattr(os, "write", _raise(ENOSPC)),
    "short-write-then-enospc": lambda mp: mp.setattr(os, "write", _half_then_fail(ENOSPC)),
    "fsync-erofs": lambda mp: mp.setattr(os, "fsync", _raise(EROFS)),
}


@pytest.mark.parametrize("name", sorted(CLAIM_FAULTS))
def test_failed_memory_write(name: str, env: Env, client, cli, monkeypatch) -> None:
    lines_before = len(_log_lines(env.corpus))
    page = env.corpus / "people" / "alex.md"
    page_before = page.read_bytes()
    with monkeypatch.context() as mp:
        CLAIM_FAULTS[name](mp)
        r = client.post("/v1/memory-write", json={"action": "write", "kind": "fact", "subject": "Alex", "content": f"likes tea ({name})",
                                                  "allow_canonical": True}, headers=env.auth)
    data = check_response(r, env, 503, f"memory-write {name}")
    assert data["error"]["code"] == "write_failed", data
    assert len(_log_lines(env.corpus)) == lines_before
    assert page.read_bytes() == page_before
    with monkeypatch.context() as mp:
        CLAIM_FAULTS[name](mp)
        r2 = cli("claim", "add", "Alex", f"likes coffee ({name})", "-C", env.corpus)
    assert r2.exit_code == 1, r2
    assert "space" in r2.stderr.lower() or "read-only" in r2.stderr.lower(), r2
    assert len(_log_lines(env.corpus)) == lines_before
    assert page.read_bytes() == page_before
    assert _tmp_files(env.corpus) == []
    # And once the disk is back, the same write works and the log stays well-formed.
    r = client.post("/v1/memory-write", json={"action": "write", "kind": "fact", "subject": "Alex", "content": f"likes tea ({name})", "allow_canonical": True},
                    headers=env.auth)
    check_response(r, env, 200, "memory-write after recovery")
    assert len(_log_lines(env.corpus)) == lines_before + 1


# --------------------------------------------------------------------------- a real tiny filesystem


def _can_mount(tmp: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe = tmp / "probe"
    probe.mkdir()
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], check=True)
    return ok


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Any:
    if not _can_mount(tmp_path):
        pytest.skip("cannot mount a tmpfs here; the simulated faults above cover ENOSPC and EROFS")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _real_env(mnt: Path, tmp_path: Path) -> tuple[Env, Any, Any]:
    from commonplace.compiler.live.corpus import LiveCorpus
    from commonplace.server import ServerConfig, create_app
    from hostilekit import make_env

    env = make_env(mnt)
    env.site = tmp_path / "site"  # the site lives elsewhere: only the corpus fills up
    live = LiveCorpus(env.corpus, env.site, embed=False)
    live.open()
    app = create_app(live, ServerConfig(corpus=env.corpus, out=env.site))
    return env, live, app.test_client()


def _fill(mnt: Path) -> None:
    """Fill the filesystem to the last byte (unbuffered writes, smaller and smaller)."""
    fd = os.open(mnt / "filler.bin", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)


def test_real_disk_full(tiny_fs: Path, tmp_path: Path, cli) -> None:
    env, live, client = _real_env(tiny_fs, tmp_path)
    target = env.corpus / "notes" / "plain.md"
    original = target.read_bytes()
    _fill(tiny_fs)
    big = "x" * 200_000 + "\n"
    r = client.post("/v1/write", json={"kind": "append", "target": "notes/plain.md", "content": big}, headers=env.auth)
    data = check_response(r, env, 503, "append on a full disk")
    assert "no space" in data["error"]["message"], data
    assert target.read_bytes() == original and _tmp_files(env.corpus) == []
    r = client.post("/v1/write", json={"kind": "create", "target": "inbox/big.md", "content": big,
                                       "frontmatter": {"title": "Big", "type": "capture"}}, headers=env.auth)
    check_response(r, env, 503, "create on a full disk")
    assert not (env.corpus / "inbox" / "big.md").exists()
    r = cli("write", "notes/plain.md", "-C", env.corpus, "--content", big, "--no-build")
    assert r.exit_code == 1 and "no space" in r.stderr, r
    assert target.read_bytes() == original and _tmp_files(env.corpus) == []
    lines = len(_log_lines(env.corpus))
    r = client.post("/v1/memory-write", json={"action": "write", "kind": "fact", "subject": "Alex", "content": "y" * 1500, "allow_canonical": True},
                    headers=env.auth)
    check_response(r, env, 503, "memory-write on a full disk")
    assert len(_log_lines(env.corpus)) == lines  # and every line parses
    # Space comes back: the same write now lands.
    (tiny_fs / "filler.bin").unlink()
    r = client.post("/v1/write", json={"kind": "append", "target": "notes/plain.md", "content": "after\n"}, headers=env.auth)
    check_response(r, env, 200, "append after space is freed")
    live.close()


def test_real_read_only_corpus(tiny_fs: Path, tmp_path: Path, cli) -> None:
    env, live, client = _real_env(tiny_fs, tmp_path)
    target = env.corpus / "notes" / "plain.md"
    original = target.read_bytes()
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    for body in ({"kind": "append", "target": "notes/plain.md", "content": "z\n"},
                 {"kind": "create", "target": "inbox/new.md", "content": "z\n", "frontmatter": {"title": "N", "type": "capture"}},
                 {"kind": "create", "target": "newfolder/new.md", "content": "z\n", "frontmatter": {"title": "N", "type": "note"}}):
        r = client.post("/v1/write", json=body, headers=env.auth)
        data = check_response(r, env, 503, f"read-only {body['kind']} {body['target']}")
        assert "read-only" in data["error"]["message"], data
    r = client.post("/v1/memory-write", json={"action": "write", "kind": "fact", "subject": "Alex", "content": "likes tea", "allow_canonical": True}, headers=env.auth)
    check_response(r, env, 503, "read-only memory-write")
    r = cli("write", "notes/plain.md", "-C", env.corpus, "--content", "z", "--no-build")
    assert r.exit_code == 1 and "read-only" in r.stderr, r
    r = cli("claim", "add", "Alex", "likes tea", "-C", env.corpus)
    assert r.exit_code == 1, r
    assert target.read_bytes() == original
    # Reads keep working on a read-only corpus.
    r = client.get("/v1/get", query_string={"path": "notes/plain.md"}, headers=env.auth)
    check_response(r, env, 200, "read on a read-only corpus")
    r = client.post("/v1/search", json={"query": "quagga", "mode": "bm25"}, headers=env.auth)
    check_response(r, env, 200, "search on a read-only corpus")
    try:
        live.close()
    except OSError:
        pass  # the manifest cannot be saved on a read-only corpus
