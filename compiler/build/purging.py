"""A purge owed by the next build.

An erase or a file purge run without a build (`--no-build`), or one whose build was
interrupted, still has deleted text in derived state: the manifest, older index
generations, the embedding and parse caches. A mark in the state folder makes the next
build purge them, whoever runs it; the build clears the mark once the index is purged."""

from __future__ import annotations

from pathlib import Path

from ..fsutil import atomic_write
from ..model import state_path

MARK = "purge-pending"


def request(root: str | Path) -> None:
    where = state_path(root)
    where.mkdir(parents=True, exist_ok=True)
    atomic_write(where / MARK, b"an erase or purge ran; the next build purges derived state\n")


def pending(root: str | Path) -> bool:
    return (state_path(root) / MARK).exists()


def done(root: str | Path) -> None:
    (state_path(root) / MARK).unlink(missing_ok=True)
