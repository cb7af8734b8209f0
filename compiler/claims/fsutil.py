"""The corpus-wide claims lock that serializes page compilation, and the durable writes
the claims code uses (built on the shared `compiler.fsutil`)."""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..fsutil import atomic_create, atomic_replace, fsync_dir, makedirs
from ..model import STATE_DIR

__all__ = ["atomic_write", "create_exclusive", "corpus_lock", "fsync_dir", "inside", "makedirs"]


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` durably (see `fsutil.atomic_replace`), creating its folders."""
    makedirs(path.parent)
    atomic_replace(path, data)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write `path` only if it does not exist (never overwrites, even in a race)."""
    makedirs(path.parent)
    return atomic_create(path, data)


class _CorpusLock:
    """Re-entrant within a thread, exclusive across threads and processes."""

    def __init__(self, lock_path: Path) -> None:
        self.lock_path = lock_path
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None

    def acquire(self) -> None:
        self.rlock.acquire()
        if self.depth == 0:
            try:
                makedirs(self.lock_path.parent)
                # Read-only is enough for flock, and still opens on a read-only corpus.
                fd = os.open(self.lock_path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
                track_fd(fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    untrack_fd(fd)
                    os.close(fd)
                    raise
            except BaseException:
                self.rlock.release()
                raise
            self.fd = fd
        self.depth += 1

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self.fd is not None:
            untrack_fd(self.fd)
            os.close(self.fd)  # closing drops the flock
            self.fd = None
        self.rlock.release()


_locks: dict[str, _CorpusLock] = {}
_locks_guard = threading.Lock()

# File descriptors that hold (or may hold) a flock right now. A child forked meanwhile
# (build workers, the server) would inherit them and keep the lock until it exits, so
# the child closes them at once; it also starts with fresh thread locks.
_held_fds: set[int] = set()
_at_fork_hooks: list[Callable[[], None]] = []


def track_fd(fd: int) -> None:
    _held_fds.add(fd)


def untrack_fd(fd: int) -> None:
    _held_fds.discard(fd)


def at_fork_in_child(hook: Callable[[], None]) -> None:
    """Register `hook` to reset module state in a forked child."""
    _at_fork_hooks.append(hook)


def _after_fork_in_child() -> None:
    global _locks, _locks_guard
    for fd in list(_held_fds):
        try:
            os.close(fd)
        except OSError:
            pass
    _held_fds.clear()
    for lock in _locks.values():
        lock.fd = None  # closed above; a release in this child must not close a reused number
    _locks = {}
    _locks_guard = threading.Lock()
    for hook in _at_fork_hooks:
        hook()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def corpus_lock(root: Path) -> Iterator[None]:
    """One claims writer per corpus at a time (CLI, server and build stage alike)."""
    key = str(root.resolve())
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = _CorpusLock(Path(key) / STATE_DIR / "claims.lock")
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def inside(root: Path, rel: str) -> Path:
    """`root/rel`, refusing anything that resolves outside the corpus (symlinked folders)."""
    root = root.resolve()
    full = root / rel
    real = full.resolve()
    if not real.is_relative_to(root):
        raise ValueError(f"{rel} resolves outside the corpus")
    return full
