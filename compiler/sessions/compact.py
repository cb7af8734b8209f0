"""Compaction of old session transcripts, with recovery.

A compacted transcript keeps its frontmatter (plus `compacted: {at, blob, size}`), its
digest as the gist (so search still finds it), and a reference to the blob holding the
original bytes (`blobs.py`). `uncompact_file` puts the original back byte for byte;
`original_bytes` reads it without changing anything.

Crash safety: the blob is written first (atomically; an orphan blob after a crash is
harmless and reused), then the transcript is replaced atomically. A kill at any point
leaves the old transcript or the new one, never a mix, and never a transcript whose
blob is missing.

Which sessions: those older than a threshold, but never the most recent third of the
sessions (by date), whatever their age; a transcript already compacted is left alone,
so running it again changes nothing.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..markdown import frontmatter as fm
from ..fsutil import atomic_replace
from . import blobs
from .digest import session_date, session_meta

MARK = re.compile(r"<!-- commonplace:compacted blob=sha256:([0-9a-f]{64}) -->")
SESSIONS = "logs/sessions"


@dataclass
class Candidate:
    path: str
    date: str  # YYYY-MM-DD (frontmatter, else the file's modification day)
    compacted: bool


def is_compacted(data: bytes) -> bool:
    return MARK.search(data.decode("utf-8", "replace")) is not None


def compacted_text(original: bytes, sha: str, gist: str, at: str) -> bytes:
    text = original.decode("utf-8", "replace")
    try:
        raw, _, _ = fm.split(text)
        meta = dict(fm.load(raw)) if raw is not None else {}
    except fm.FrontmatterError:
        meta = {"title": "Session", "type": "session"}
    title = meta.get("title") or "Session"
    meta["compacted"] = {"at": at, "blob": blobs.blob_rel(sha), "sha256": sha, "size": len(original)}
    from ..writes.compose import compose

    body = (f"# {title} (compacted)\n\n{gist.strip()}\n\n"
            f"<!-- commonplace:compacted blob=sha256:{sha} -->\n"
            f"The original ({len(original):,} bytes) is kept in `{blobs.blob_rel(sha)}`; "
            f"`commonplace uncompact` puts it back.\n")
    return compose(meta, body).encode("utf-8")


def compact_file(root: Path, rel: str, gist: str, at: str | None = None) -> bool:
    """Compact one transcript (the caller holds the corpus write lock). False when it
    was already compacted."""
    full = Path(root) / rel
    original = full.read_bytes()
    if is_compacted(original):
        return False
    at = at or dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    sha = blobs.put(root, original, at, gist, rel)
    atomic_replace(full, compacted_text(original, sha, gist, at))
    return True


def original_bytes(root: Path, rel: str, data: bytes | None = None) -> bytes:
    """The transcript as it was before compaction (or as it is, if it never was)."""
    data = (Path(root) / rel).read_bytes() if data is None else data
    m = MARK.search(data.decode("utf-8", "replace"))
    return blobs.get(root, m.group(1)) if m else data


def uncompact_file(root: Path, rel: str) -> bool:
    """Put the original back (the caller holds the write lock). False if not compacted."""
    full = Path(root) / rel
    data = full.read_bytes()
    if not is_compacted(data):
        return False
    atomic_replace(full, original_bytes(root, rel, data))
    return True


def candidates(root: Path) -> list[Candidate]:
    base = Path(root) / SESSIONS
    out = []
    if not base.is_dir():
        return out
    for full in sorted(base.rglob("*.md")):
        if full.is_symlink() or not full.is_file() or any(p.startswith(".") for p in full.relative_to(root).parts):
            continue
        data = full.read_bytes()
        date = session_date(session_meta(data))
        if not date or not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
            date = dt.datetime.fromtimestamp(full.stat().st_mtime, dt.timezone.utc).date().isoformat()
        out.append(Candidate(full.relative_to(root).as_posix(), date, is_compacted(data)))
    return out


def plan(root: Path, older_than_days: float, now: dt.datetime | None = None) -> tuple[list[str], list[str]]:
    """(transcripts to compact, transcripts kept because they are in the recent third)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    cutoff = (now - dt.timedelta(days=older_than_days)).date().isoformat()
    every = sorted(candidates(root), key=lambda c: (c.date, c.path))
    recent = every[len(every) - math.ceil(len(every) / 3):] if every else []
    protected = {c.path for c in recent}
    todo = [c.path for c in every if not c.compacted and c.path not in protected and c.date < cutoff]
    return todo, sorted(protected)
