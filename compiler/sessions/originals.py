"""Searching compacted sessions by their original text (search with `originals: true`).

A compacted transcript is indexed by what its file now holds: frontmatter and gist. Its
original words live only in its blob (`blobs.py`), which the site and the indexes never
read. On request, a search also looks through the originals of the compacted sessions
it may return and maps each hit back to its session: the session's path, the turn's
line range in the original (what `get` with `uncompact: true` returns), and a snippet of
that turn.

How: each original is split into turns (`transcript.turns`); a turn is scored by BM25
(K1 1.2, B 0.75) over every turn of the compacted originals in play, with the search
index's own terms (`search.text`: folding, stop words, stemming), so a query finds the
same words in an original that it finds in a live transcript. A session's score is its
best turn's. Blobs never change (their name is their content's hash), so a parsed
original is cached by hash, within a bound on the text held; nothing is written.

`merge` folds these hits into the engine's answer by reciprocal rank: a session found
both ways keeps the engine's row and gains an `original` block; one found only in its
original gets a row of its own marked `in_original: true`.
"""

from __future__ import annotations

import fnmatch
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import blobs
from .transcript import turns

K1, B = 1.2, 0.75
RRF_K = 60  # reciprocal rank fusion's constant, as the engine's hybrid fusion uses
CACHE_CHARS = 64 * 1024 * 1024  # text of parsed originals kept between searches


@dataclass(frozen=True)
class Unit:
    start: int  # first line of the turn in the original (1-based, counting frontmatter)
    end: int
    speaker: str | None
    text: str


@dataclass(frozen=True)
class Parsed:
    units: tuple[Unit, ...]
    lengths: tuple[int, ...]  # terms per unit
    postings: Mapping[str, tuple[tuple[int, int], ...]]  # term -> ((unit, frequency), ...)
    chars: int


@dataclass(frozen=True)
class Hit:
    path: str
    unit: Unit
    score: float
    coverage: float  # share of the query's terms the turn holds


_cache: "OrderedDict[str, Parsed]" = OrderedDict()
_cache_chars = 0
_lock = threading.Lock()


def compacted_sha(frontmatter: Any) -> str | None:
    """The blob hash a compacted transcript's frontmatter names, or None."""
    c = frontmatter.get("compacted") if isinstance(frontmatter, Mapping) else None
    sha = c.get("sha256") if isinstance(c, Mapping) else None
    return sha if isinstance(sha, str) and len(sha) == 64 else None


def parse(original: bytes) -> Parsed:
    from ..search import term_counts

    units, lengths, postings = [], [], {}
    for t in turns(original.decode("utf-8", "replace")):
        counts = term_counts(t.text)
        if not counts:
            continue
        i = len(units)
        units.append(Unit(t.start, t.end, t.speaker, t.text))
        lengths.append(sum(counts.values()))
        for term, n in counts.items():
            postings.setdefault(term, []).append((i, n))
    return Parsed(tuple(units), tuple(lengths), {t: tuple(p) for t, p in postings.items()}, len(original))


def _parsed(root: Path, sha: str) -> Parsed | None:
    global _cache_chars
    with _lock:
        hit = _cache.get(sha)
        if hit is not None:
            _cache.move_to_end(sha)
            return hit
    try:
        p = parse(blobs.get(root, sha))
    except (blobs.BlobError, OSError):
        return None  # a missing or damaged blob is reported by uncompact, not by search
    with _lock:
        _cache[sha] = p
        _cache_chars += p.chars
        while _cache_chars > CACHE_CHARS and len(_cache) > 1:
            _, old = _cache.popitem(last=False)
            _cache_chars -= old.chars
    return p


def in_scope(path: str, fm: Mapping[str, Any], scope: Mapping[str, Any] | None) -> bool:
    """The request's scope (path_glob, type, status, tags, since, until) on a session."""
    if not scope:
        return True

    def listed(name: str) -> list[str]:
        v = scope.get(name)
        return [v] if isinstance(v, str) else [str(x) for x in v] if isinstance(v, list) else []

    globs = listed("path_glob")
    if globs and not any(fnmatch.fnmatchcase(path, g) for g in globs):
        return False
    for field, key in (("type", "type"), ("status", "status")):
        wanted = {x.lower() for x in listed(field)}
        if wanted and str(fm.get(key) or "").lower() not in wanted:
            return False
    tags = {t.lower().lstrip("#") for t in listed("tags")}
    have = fm.get("tags")
    have = [have] if isinstance(have, str) else have if isinstance(have, list) else []
    if tags and not tags & {str(t).lower().lstrip("#") for t in have}:
        return False
    day = next((str(fm[k])[:10] for k in ("date", "updated", "created") if fm.get(k)), "")
    since, until = scope.get("since"), scope.get("until")
    if since and not (day and day >= str(since)[:10]):
        return False
    if until and not (day and day <= str(until)[:10]):
        return False
    return True


def search(root: Path, query: str, sessions: Iterable[tuple[str, str]], k: int) -> list[Hit]:
    """The `k` best sessions for `query` among `sessions` ((path, blob sha)), by their
    originals' best turn."""
    from ..search import unique_terms

    terms = unique_terms(query)
    if not terms:
        return []
    parsed = [(path, p) for path, sha in sessions if (p := _parsed(root, sha)) is not None]
    n = sum(len(p.units) for _, p in parsed)
    if not n:
        return []
    avgdl = sum(sum(p.lengths) for _, p in parsed) / n
    df = {t: sum(len(p.postings.get(t, ())) for _, p in parsed) for t in terms}
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items() if d}
    best: list[Hit] = []
    for path, p in parsed:
        scores: dict[int, float] = {}
        matched: dict[int, int] = {}
        for t, w in idf.items():
            for i, tf in p.postings.get(t, ()):
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * p.lengths[i] / avgdl))
                scores[i] = scores.get(i, 0.0) + w * norm
                matched[i] = matched.get(i, 0) + 1
        if scores:
            i = max(scores, key=lambda j: (scores[j], -j))
            best.append(Hit(path, p.units[i], scores[i], matched[i] / len(terms)))
    best.sort(key=lambda h: (-h.score, h.path))
    return best[:k]


def row(hit: Hit, title: str, query: str, marks: str = "none") -> dict[str, Any]:
    """A result row for a session found in its original: the turn's lines in the original,
    a snippet of it, and the turn itself as `content`."""
    from ..search import make_snippet, unique_terms

    snippet = make_snippet(hit.unit.text, set(unique_terms(query)), style=marks)
    return {"path": hit.path, "lines": f"{hit.unit.start}-{hit.unit.end}", "title": title, "snippet": snippet,
            "content": hit.unit.text, "evidence_class": "session", "confidence": None, "stale_warning": None,
            "score": round(hit.score, 6), "score_normalized": round(hit.coverage, 4), "in_original": True}


def merge(results: list[dict[str, Any]], hits: list[Hit], rows: Mapping[str, dict[str, Any]],
          k: int) -> list[dict[str, Any]]:
    """The engine's rows and the originals' hits as one list of at most `k`, by reciprocal
    rank; `rows[path]` is the row of an original-only session (see `row`)."""
    fused: dict[str, float] = {}
    for rank, r in enumerate(results):
        fused[r["path"]] = fused.get(r["path"], 0.0) + 1 / (RRF_K + rank + 1)
    for rank, h in enumerate(hits):
        fused[h.path] = fused.get(h.path, 0.0) + 1 / (RRF_K + rank + 1)
    by_path = {r["path"]: r for r in results}
    for h in hits:
        found = rows[h.path]
        if h.path in by_path:
            by_path[h.path]["original"] = {"lines": found["lines"], "snippet": found["snippet"]}
        else:
            by_path[h.path] = found
    order = sorted(fused, key=lambda p: (-fused[p], p))
    return [by_path[p] for p in order[:k]]


def extend(root: Path, answer: dict[str, Any], query: str, k: int, docs: Iterable[tuple[str, Any, str]],
           scope: Mapping[str, Any] | None = None, marks: str = "none") -> dict[str, Any]:
    """A search answer with the compacted sessions among `docs` ((path, frontmatter,
    title) of session transcripts) searched by their original text too."""
    sessions, titles = [], {}
    for path, fm, title in docs:
        sha = compacted_sha(fm)
        if sha and in_scope(path, fm, scope):
            sessions.append((path, sha))
            titles[path] = title
    hits = search(root, query, sessions, k)
    rows = {h.path: row(h, titles[h.path], query, marks) for h in hits}
    answer["results"] = merge(answer.get("results") or [], hits, rows, k)
    answer["count"] = len(answer["results"])
    answer["compacted_searched"] = len(sessions)
    return answer


def session_docs(root: Path) -> list[tuple[str, Any, str]]:
    """(path, frontmatter, title) of every compacted transcript on disk, for a search
    without a live corpus (the command line's local search)."""
    from .compact import candidates
    from .digest import session_meta

    out = []
    for c in candidates(root):
        if c.compacted:
            fm = session_meta((Path(root) / c.path).read_bytes())
            out.append((c.path, fm, str(fm.get("title") or c.path.rsplit("/", 1)[-1][:-3])))
    return out
