"""Durable file operations shared by every writer of corpus files.

A write goes to a temp file in the target's folder, is flushed and fsynced, then renamed
over the target (or hard-linked, for a create that must never clobber) and the folder is
fsynced. A reader sees the old bytes or the new, never a mix, and a returned write
survives a crash or power loss.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

_TMP_TAIL = re.compile(r"(\d+)\.[0-9a-f]{8}\.tmp")


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def makedirs(path: Path) -> None:
    """mkdir -p that fsyncs the parent of every folder it creates."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        fsync_dir(d.parent)


def unlink_quiet(p: Path) -> None:
    try:
        p.unlink()
    except FileNotFoundError:
        pass


def tmp_name(path: Path) -> Path:
    """Hidden (never a document) and tagged with our pid, so a sweep can tell a dead
    writer's leftovers from a live writer's."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def sweep_stale_tmp(path: Path) -> None:
    """Remove temp files that killed writers left next to `path` (their pid is gone)."""
    prefix = f".{path.name}."
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        m = _TMP_TAIL.fullmatch(name[len(prefix):])
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # that writer is alive (or the pid was reused): leave it
        except ProcessLookupError:
            pass
        except OSError:
            continue
        unlink_quiet(path.parent / name)


def write_tmp(path: Path, data: bytes, mode: int | None = None) -> Path:
    """A complete, fsynced temp file next to `path`, ready to be renamed or linked."""
    sweep_stale_tmp(path)
    tmp = tmp_name(path)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
    except BaseException:
        unlink_quiet(tmp)
        raise
    return tmp


def atomic_replace(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically, keeping an existing file's permissions."""
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = write_tmp(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quiet(tmp)
        raise
    fsync_dir(path.parent)


def atomic_create(path: Path, data: bytes) -> bool:
    """Like `atomic_replace`, but never replaces an existing file, even in a race (the
    content is complete before the name appears). False when the name is taken."""
    tmp = write_tmp(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        unlink_quiet(tmp)
    fsync_dir(path.parent)
    return True


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` durably (see `atomic_replace`), creating its folders."""
    makedirs(path.parent)
    atomic_replace(path, data)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write `path` only if it does not exist (never overwrites, even in a race), creating
    its folders. False when the name is taken."""
    makedirs(path.parent)
    return atomic_create(path, data)


def inside(root: Path, rel: str) -> Path:
    """`root/rel`, refusing (ValueError) anything that resolves outside `root` (symlinked folders)."""
    root = root.resolve()
    full = root / rel
    real = full.resolve()
    if not real.is_relative_to(root):
        raise ValueError(f"{rel} resolves outside the corpus")
    return full
