"""Locks that hold across threads and processes: an `flock` on a file plus a thread lock.

Every corpus writer takes one of these: the write path (`writes.lock`), the claim store
(`claims.lock`) and the search index writer (`index/.lock`). One implementation, so all
of them behave alike:

- re-entrant within a thread (a writer may call another function that locks again);
- a lock file that cannot be opened or flocked leaves nothing behind: the descriptor is
  closed and the thread lock released before the error propagates;
- fork-safe: a child forked while a lock is held (build workers, the server) closes the
  inherited descriptors at once, so it never goes on holding the parent's lock, and
  starts with fresh thread locks. Other modules with thread locks of their own register
  a reset with `at_fork_in_child`.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .fsutil import makedirs
from .model import state_path

WRITES_LOCK = "writes.lock"
CLAIMS_LOCK = "claims.lock"


class FileLock:
    """Exclusive across threads (RLock, re-entrant) and processes (flock on `path`)."""

    def __init__(self, path: Path, mode: int = 0o644) -> None:
        self.path = path
        self.mode = mode
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None

    def acquire(self) -> None:
        self.rlock.acquire()
        if self.depth == 0:
            try:
                makedirs(self.path.parent)
                # Read-only is enough for flock, and still opens on a read-only corpus.
                fd = os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, self.mode)
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


_locks: dict[str, FileLock] = {}
_locks_guard = threading.Lock()


@contextmanager
def file_lock(path: Path, mode: int = 0o644) -> Iterator[None]:
    """Hold the process-wide `FileLock` of `path` (one per resolved path)."""
    key = str(Path(path).resolve())
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = FileLock(Path(key), mode)
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def corpus_lock(root: Path, name: str, mode: int = 0o644) -> AbstractContextManager[None]:
    """The lock file `name` in the corpus's state folder."""
    return file_lock(state_path(Path(root).resolve()) / name, mode)


def claims_lock(root: Path) -> AbstractContextManager[None]:
    """One claims writer per corpus at a time (CLI, server and build stage alike)."""
    return corpus_lock(root, CLAIMS_LOCK)


# File descriptors that hold (or may hold) a flock right now. A child forked meanwhile
# would inherit them and keep the lock until it exits, so the child closes them at once.
_held_fds: set[int] = set()
_at_fork_hooks: list[Callable[[], None]] = []


def track_fd(fd: int) -> None:
    _held_fds.add(fd)


def untrack_fd(fd: int) -> None:
    _held_fds.discard(fd)


def at_fork_in_child(hook: Callable[[], None]) -> None:
    """Register `hook` to reset module state (thread locks, caches) in a forked child."""
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
