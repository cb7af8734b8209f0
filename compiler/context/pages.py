"""Corpus pages for evidence, read from disk and parsed once per version of the file: a
context call reads dozens of pages, and the same ones again on the next call."""

from __future__ import annotations

import datetime as dt
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable

from ..corpus.prose_dates import prose_date
from .facts import Page, page_units

Reader = Callable[[str], "tuple[str | None, str]"]  # path -> (text, modification date)

_PAGES: "OrderedDict[tuple[str, str], tuple[tuple[int, int], Page, str]]" = OrderedDict()
_PAGES_MAX = 4096
_PAGES_BYTES = 32 * 1024 * 1024  # the parsed pages kept, by their files' sizes
_PAGES_LOCK = threading.Lock()
_pages_size = [0]


def disk_reader(root: Path, limit: int = 64 * 1024) -> Reader:
    """Reads corpus files from disk (symlinks and paths leaving the corpus refused): the
    text an agent would get, also on a server restarted over a build."""
    base = str(Path(root))

    def read(path: str) -> tuple[str | None, str]:
        if not path or path.startswith("/") or ".." in path.split("/"):
            return None, ""
        try:
            st = os.lstat(os.path.join(base, path))
            if not stat.S_ISREG(st.st_mode):
                return None, ""
            with open(os.path.join(base, path), "rb") as f:
                text = f.read(limit).decode("utf-8", "replace")
            return text, prose_date(base, path, text) or mtime_date(st.st_mtime)
        except OSError:
            return None, ""

    read.root = base  # type: ignore[attr-defined]
    return read


def load_page(read: Reader, path: str) -> tuple[Page | None, str]:
    """`path` as a `Page` (and its modification date), parsed once per version of the
    file: pages are kept by (size, mtime), so a write is seen at once."""
    base = getattr(read, "root", None)
    if base is None:
        text, mdate = read(path)
        return (page_units(path, text) if text else None), mdate
    try:
        st = os.lstat(os.path.join(base, path))
    except (OSError, ValueError):
        return None, ""
    stamp = (st.st_size, st.st_mtime_ns)
    key = (base, path)
    with _PAGES_LOCK:
        hit = _PAGES.get(key)
        if hit is not None and hit[0] == stamp:
            _PAGES.move_to_end(key)
            return hit[1], hit[2]
    text, mdate = read(path)
    if not text:
        return None, mdate
    page = page_units(path, text)
    with _PAGES_LOCK:
        old = _PAGES.pop(key, None)
        if old is not None:
            _pages_size[0] -= old[0][0]
        _PAGES[key] = (stamp, page, mdate)
        _pages_size[0] += stamp[0]
        while len(_PAGES) > _PAGES_MAX or (_pages_size[0] > _PAGES_BYTES and len(_PAGES) > 1):
            _, (gone, _, _) = _PAGES.popitem(last=False)
            _pages_size[0] -= gone[0]
    return page, mdate


def mtime_date(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).date().isoformat()
