"""A date for documents whose frontmatter gives none (no updated, date or created).

Recent changes, `_/recent` and the feed list documents by date; without one a new note
appeared nowhere. The date is the day (UTC) of the last git commit that touched the file
when the corpus is in a git work tree and the file is committed unchanged; otherwise the
day the file was last modified. Days, not times: the lists show days, and a file saved
twice in a day does not change the site. See docs/decisions/2026-11-23-file-dates.md.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Iterable

from ..model import Document

GIT_TIMEOUT_SECONDS = 30


def _day(seconds: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _git(root: Path, *args: str) -> subprocess.Popen | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")  # never take the index lock
    try:
        return subprocess.Popen(["git", "-C", str(root), "-c", "core.quotepath=off", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    except OSError:  # no git here
        return None


def _run(root: Path, *args: str) -> bytes | None:
    proc = _git(root, *args)
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=GIT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out if proc.returncode == 0 else None


def git_dates(root: Path, wanted: set[str]) -> dict[str, str]:
    """Corpus-relative path -> day of the last commit touching it, for the files in
    `wanted` that git tracks and that have no uncommitted change. Empty outside git."""
    prefix = _run(root, "rev-parse", "--show-prefix")
    if prefix is None:
        return {}
    prefix_s = prefix.decode("utf-8", "surrogateescape").strip()
    status = _run(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".")
    if status is None:
        return {}
    dirty = set()
    for entry in status.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) > 3:
            path = entry[3:]
            dirty.add(path[len(prefix_s):] if path.startswith(prefix_s) else path)
    todo = wanted - dirty
    found: dict[str, str] = {}
    if not todo:
        return found
    proc = _git(root, "log", "--format=%x1e%ct", "--name-only", "-z", "--no-renames", "--relative", "--", ".")
    if proc is None or proc.stdout is None:
        return found
    try:
        when = ""
        buffer = b""
        while todo:
            chunk = proc.stdout.read(65536)
            if not chunk:
                break
            buffer += chunk
            *items, buffer = buffer.split(b"\0")
            for raw in items:  # "\x1e<commit time>", then "\n<name>", "<name>", ...
                text = raw.decode("utf-8", "surrogateescape").lstrip("\n")
                if text.startswith("\x1e"):
                    when = _day(int(text[1:]))
                elif text in todo and when:
                    found[text] = when
                    todo.discard(text)
    finally:
        proc.kill()
        proc.communicate()
    return found


def file_dates(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """Path -> its fallback date (see the module docstring); a file that cannot be
    read gets none."""
    wanted = set(paths)
    if not wanted:
        return {}
    dates = git_dates(root, wanted)
    for p in wanted - set(dates):
        try:
            dates[p] = _day(os.stat(root / p).st_mtime)
        except OSError:
            pass
    return dates


def undated(d: Document) -> bool:
    return not (d.updated or d.date or d.created)


def fill(root: Path, docs: Iterable[Document]) -> None:
    """Set `file_date` on documents without a frontmatter date (and clear it on others)."""
    need = []
    for d in docs:
        if undated(d):
            need.append(d)
        else:
            d.file_date = None
    if need:
        dates = file_dates(root, [d.path for d in need])
        for d in need:
            d.file_date = dates.get(d.path)
