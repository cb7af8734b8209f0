"""When a page's hand-written text last changed, kept across the claim store's rewrites.

A page without a date in its frontmatter is dated by its file's modification time. The
claim store rewrites an entity page for every claim written about it, which moved the
date of every sentence a person wrote on it to today: an agent then read a milestone set
weeks ago as today's news, and a session that had changed it as older than the page.

When the claim store rewrites a page and leaves its hand-written text (the body outside
the managed `<!-- commonplace:...:start/end -->` sections) as it was, it records the text's
hash and its date in `.commonplace/prose-dates.json`: the date recorded before, else the
file's modification time before the write. A reader takes that date only while the
page's hand-written text still has that hash; any other change to it (a person's edit, a
replace that rewrites a sentence, a linked decision) and the page's file date holds again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import threading
from pathlib import Path

from ..fsutil import atomic_write

FILE = ".commonplace/prose-dates.json"
_MANAGED = re.compile(r"<!-- commonplace:([\w-]+):start -->.*?<!-- commonplace:\1:end -->", re.S)
_FRONT = re.compile(r"\A\ufeff?---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_cache: dict[str, tuple[tuple[int, int], dict]] = {}
_lock = threading.Lock()


def prose_hash(text: str) -> str:
    """The hash of the text a person wrote: no frontmatter, no managed sections, spacing
    aside (the claim store may add or drop blank lines around its sections)."""
    body = _MANAGED.sub(" ", _FRONT.sub("", text, count=1))
    return hashlib.sha1(" ".join(body.split()).encode("utf-8")).hexdigest()


def _table(root: Path | str) -> dict:
    path = os.path.join(str(root), FILE)
    try:
        st = os.stat(path)
    except OSError:
        return {}
    stamp = (st.st_size, st.st_mtime_ns)
    with _lock:
        hit = _cache.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError):
        table = {}
    table = table if isinstance(table, dict) else {}
    with _lock:
        _cache[path] = (stamp, table)
    return table


def prose_date(root: Path | str, rel: str, text: str) -> str | None:
    """The date the page's hand-written text was last changed, when a claim write recorded
    it and the text is still the same; else None (the file's date holds)."""
    entry = _table(root).get(rel)
    if not isinstance(entry, dict) or not isinstance(entry.get("date"), str):
        return None
    return entry["date"] if entry.get("hash") == prose_hash(text) else None


def remember(root: Path, rel: str, old: bytes | None, old_mtime: float | None, new: bytes) -> None:
    """After the claim store rewrote `rel` from `old` to `new` (call it under the claim
    lock): keep the hand-written text's date when the rewrite left that text alone."""
    if old is None or old_mtime is None:
        return
    old_text, new_text = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
    before, after = prose_hash(old_text), prose_hash(new_text)
    table = dict(_table(root))
    if before != after:
        if table.pop(rel, None) is None:
            return
    else:
        entry = table.get(rel)
        kept = entry.get("date") if isinstance(entry, dict) and entry.get("hash") == before else None
        date = kept or dt.datetime.fromtimestamp(old_mtime, dt.timezone.utc).date().isoformat()
        if entry == {"hash": after, "date": date}:
            return
        table[rel] = {"hash": after, "date": date}
    atomic_write(Path(root) / FILE, json.dumps(table, sort_keys=True, indent=0).encode("utf-8"))
