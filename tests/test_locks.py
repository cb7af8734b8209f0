"""compiler/locks.py: the one flock lock every corpus writer takes (writes, claims, index).

What a user would notice if it broke: a second writer that waits for a process that is not
writing (a forked build worker holding an inherited lock), a writer that hangs forever after
a fork, or a corpus that stays locked after a lock file could not be flocked.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from commonplace.compiler import locks
from commonplace.compiler.model import STATE_DIR
from commonplace.compiler.writes import WriteFailed, write_lock


def _writes(root: Path):
    return write_lock(root)


def _claims(root: Path):
    return locks.claims_lock(root)


def _index(root: Path):
    return locks.file_lock(root / STATE_DIR / "index" / ".lock")


LOCKS: dict[str, tuple[Callable, str]] = {
    "writes": (_writes, f"{STATE_DIR}/writes.lock"),
    "claims": (_claims, f"{STATE_DIR}/claims.lock"),
    "index": (_index, f"{STATE_DIR}/index/.lock"),
}

# Another process takes the same flock and prints how long it waited.
TAKER = r"""
import fcntl, os, sys, time
t0 = time.monotonic()
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print(round(time.monotonic() - t0, 2))
"""


def _wait_of_another_process(lock_file: Path) -> float:
    out = subprocess.run([sys.executable, "-c", TAKER, str(lock_file)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return float(out.stdout)


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_a_forked_child_does_not_keep_the_lock(tmp_path: Path, kind: str) -> None:
    """A child forked while the lock is held (build workers, the server) closes the
    inherited descriptor at once: once the parent releases, others get the lock at once."""
    take, rel = LOCKS[kind]
    with take(tmp_path):
        pid = os.fork()
        if pid == 0:  # child: outlive the parent's lock by a while, then vanish
            time.sleep(8)
            os._exit(0)
    try:
        assert _wait_of_another_process(tmp_path / rel) < 4.0  # did not wait for the child
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_a_forked_child_can_take_the_lock_another_thread_held(tmp_path: Path, kind: str) -> None:
    """The child starts with fresh thread locks: a lock another thread held at fork time
    (that thread does not exist in the child) must not hang the child forever."""
    take, _ = LOCKS[kind]
    holding, release = threading.Event(), threading.Event()

    def holder() -> None:
        with take(tmp_path):
            holding.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    assert holding.wait(10)
    pid = os.fork()
    if pid == 0:  # child: the parent's thread still holds the flock; wait for it, then lock
        signal.alarm(20)  # a hang ends the child with SIGALRM, failing the test
        try:
            with take(tmp_path):
                os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(3)
    time.sleep(0.3)
    release.set()
    t.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status:#x}"


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_a_failing_flock_closes_its_descriptor_and_frees_the_lock(tmp_path: Path, kind: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    take, rel = LOCKS[kind]
    with take(tmp_path):  # the lock file and its folders exist from here on
        pass
    before = _open_fds()

    def refuse(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(locks.fcntl, "flock", refuse)
    # the write path turns the OSError into its own 503 `write_failed`
    with pytest.raises(WriteFailed if kind == "writes" else OSError, match="No locks available"):
        with take(tmp_path):
            pytest.fail("the lock was taken although flock failed")
    assert _open_fds() == before  # the descriptor was closed
    assert not locks._held_fds
    monkeypatch.undo()

    # Nothing stays locked: another thread of this process and another process get it.
    got = threading.Event()

    def other() -> None:
        with take(tmp_path):
            got.set()

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert got.is_set()
    assert _wait_of_another_process(tmp_path / rel) < 2.0


def test_a_lock_file_that_cannot_be_opened_frees_the_thread_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if str(path).endswith("claims.lock"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(locks.os, "open", refuse)
    with pytest.raises(PermissionError):
        with locks.claims_lock(tmp_path):
            pass
    monkeypatch.undo()
    got = threading.Event()

    def other() -> None:
        with locks.claims_lock(tmp_path):
            got.set()

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert got.is_set()  # the RLock was released when opening failed


def test_the_lock_is_reentrant_within_a_thread_and_exclusive_across_processes(tmp_path: Path) -> None:
    lock_file = tmp_path / STATE_DIR / "claims.lock"
    with locks.claims_lock(tmp_path):
        with locks.claims_lock(tmp_path):  # a writer calling another function that locks
            pass
        # still held after the inner release: another process waits for the outer one
        proc = subprocess.Popen([sys.executable, "-c", TAKER, str(lock_file)], stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert proc.poll() is None
    out, _ = proc.communicate(timeout=30)
    assert float(out) >= 0.9
