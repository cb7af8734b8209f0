"""Search results as the API returns them: one dict per hit, with a plain-text snippet,
the stale warning and the page titles that snippets show for wikilinks; `content` is the
chunk's markdown without the claim store's markers, ids and escapes (`clean_content`)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from .query import SearchRequest
from .snippet import make_snippet
from .snippet_clean import clean_content


class TitleResolver:
    """The title of the page a wikilink target names (path, path without .md, file stem or
    title, any case). Looked up per target and remembered for one index generation, so
    nothing loads a table of every title after each write."""

    def __init__(self, db: Any):
        self._db = db
        self._cache: dict[str, str | None] = {}

    def __call__(self, target: str) -> str | None:
        key = target.strip().lower().removeprefix("./")
        if key.endswith(".md"):
            key = key[:-3]
        if not key:
            return None
        if key not in self._cache:
            if len(self._cache) > 10_000:
                self._cache.clear()
            like = "%/" + key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ".md"
            rows = self._db.execute(
                "SELECT path, title FROM docs WHERE lower(path) IN (?, ?) OR lower(path) LIKE ? ESCAPE '\\' "
                "OR lower(title) = ? LIMIT 3", [key, key + ".md", like, key]).fetchall()
            exact = [t for p, t in rows if p.lower() in (key, key + ".md")]
            self._cache[key] = exact[0] if exact else (rows[0][1] if len(rows) == 1 else None)
        return self._cache[key]


def build_results(db: Any, root: Path, hits: Sequence[Any], req: SearchRequest, terms: list[str],
                  prefixes: list[str], titles: Callable[[str], str | None],
                  idf: Callable[[str], float]) -> list[dict]:
    """The response's `results` for engine hits (path, cid, score, norm, needle, ranks)."""
    if not hits:
        return []
    ids = [h.cid for h in hits]
    chunks = {r["id"]: r for r in db.execute(
        f"SELECT id, path, start_line, end_line, heading, text FROM chunks WHERE id IN ({','.join('?' * len(ids))})",
        ids)}
    paths = list(dict.fromkeys(h.path for h in hits))
    docs = {r["path"]: r for r in db.execute(
        f"SELECT * FROM docs WHERE path IN ({','.join('?' * len(paths))})", paths)}
    out = []
    term_set = set(terms)
    weights = {t: idf(t) for t in term_set} if term_set and req.snippets else None  # the rarest words pick the window
    for h in hits:
        c, d = chunks.get(h.cid), docs.get(h.path)
        if c is None or d is None:
            continue
        snippet = make_snippet(c["text"], term_set, prefixes, needle=h.needle, style=req.snippet_marks,
                               titles=titles, weights=weights) if req.snippets else ""
        if not snippet and req.snippets:  # the chunk is all bookkeeping (a Timeline): another one speaks
            snippet = next((s for s in (make_snippet(t, term_set, prefixes, needle=h.needle,
                                                     style=req.snippet_marks, titles=titles, weights=weights)
                                        for t in _other_chunks(db, h.path, h.cid)) if s), "")
        r: dict[str, Any] = {
            "path": h.path,
            "lines": f"{c['start_line']}-{c['end_line']}",
            "title": d["title"],
            "snippet": snippet,
            "evidence_class": d["evidence_class"],
            "confidence": d["confidence"],
            "stale_warning": stale_note(root, d),
            "score": round(h.score, 6),
            "score_normalized": h.norm,
        }
        if req.include_content:
            r["content"] = clean_content(c["text"])
        if req.debug:
            r["frontmatter"] = json.loads(d["frontmatter"])
            r["heading"] = c["heading"]
            r["chunk_id"] = h.cid
            if h.ranks:
                r["ranks"] = dict(h.ranks)
        out.append(r)
    return out


def _other_chunks(db: Any, path: str, cid: int) -> Any:
    """The texts of a document's other chunks, in order (lazily: the first that gives a
    snippet ends the walk)."""
    for (text,) in db.execute("SELECT text FROM chunks WHERE path = ? AND id != ? ORDER BY id", [path, cid]):
        yield text


def stale_note(root: Path, d: Any) -> str | None:
    notes = []
    if d["superseded_by"]:
        notes.append(f"superseded by {d['superseded_by']}")
    elif d["status"] == "superseded":
        notes.append("marked superseded")
    try:
        st = os.stat(root / d["path"])
    except OSError:
        notes.append("the file was deleted after indexing")
    else:
        if st.st_mtime_ns != d["mtime_ns"] or st.st_size != d["size"]:
            try:
                h = "sha256:" + hashlib.sha256((root / d["path"]).read_bytes()).hexdigest()
            except OSError:
                h = None
            if h != d["hash"]:
                notes.append("the file changed after indexing; run `commonplace build`")
    return "; ".join(notes) or None
