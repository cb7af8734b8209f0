"""The query engine: one object per corpus per process, loaded once and reused.

    engine = open_engine(corpus_root)          # cached per corpus
    response = engine.search({"query": "...", "mode": "hybrid", "k": 10})

The response is the design's `POST /v1/search` shape, `{query, count, results[], took_ms,
warnings[]}` (`results.py` makes each result; `debug` and `include_content` add fields).
`score` is the mode's own number: bm25 = Whoosh BM25F score, vector = cosine, hybrid =
weighted RRF (`fusion.py`) times (1 + scaled prior), exact = occurrences.
`score_normalized` (0-1, `fusion.normalized_score`) says how well a result matched,
comparably across modes and queries, and never rises down the ranking (`fusion.monotone`):
`min_score` keeps a prefix. Without `min_score`, hybrid leaves out weak vector-only hits
(`fusion.WEAK_VECTOR_ONLY`), and a warning says when nothing matched well. A new index
generation (the CURRENT pointer changed) is noticed before each query; the embedding
model is loaded on the first vector query only.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from ...model import is_session_path
from . import audit, engine_carry, fusion, notes, prefetch
from .query import InvalidRequest, ParsedQuery, Scope, SearchRequest, normalize_request, parse_query
from .results import TitleResolver, build_results
from .generation import Generation, Handover
from ..store.disk import IndexNotReady, IndexStore, Meta, unpin  # IndexNotReady: raised and exported here
from ..text import unique_terms

log = logging.getLogger("commonplace.search")

CANDIDATES = 50  # documents taken from each list before fusion
EXACT_MIN_FILTERED = 2000  # filtered vector search below this many chunks is brute force
MEANING_ALONE_WARNING = "no result shares a word with the query: these are matches by meaning alone"  # a paraphrase, or noise


@dataclass
class _Hit:
    path: str
    cid: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    needle: str | None = None
    coverage: float | None = None  # idf-weighted share of the query's terms in the chunk
    cosine: float | None = None  # similarity of the best chunk to the query (vector list)
    background: float | None = None  # the vector list's background cosine (fusion.background)
    norm: float = 0.0  # score_normalized, 0-1 (fusion.normalized_score)


class SearchEngine:
    def __init__(self, root: Path, embedder: Any = None):
        self.root = Path(root).resolve()
        self.store = IndexStore(self.root)
        self._embedder = embedder
        self._lock = threading.RLock()
        self.gen: Generation | None = None  # the open generation (`install`)
        self._vectors: Any = None
        self._vectors_loaded = False
        self._vectors_unreadable = False  # the open generation's HNSW file failed to load
        self._prev_vectors: Any = None  # the last generation's, until the next vector query
        self._qvec: dict[tuple, Any] = {}
        self.handover = Handover()  # writers' holds and a prepared generation (`engine_carry`)

    # The open generation's parts, for the query code (None while none is open).
    @property
    def _gen(self) -> str | None:
        return self.gen.name if self.gen is not None else None

    @property
    def meta(self) -> Meta | None:
        return self.gen.meta if self.gen is not None else None

    @property
    def _db(self) -> Any:
        return self.gen.db if self.gen is not None else None

    @property
    def _bm25(self) -> Any:
        return self.gen.bm25 if self.gen is not None else None

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        with self._lock:
            self._close()
            self._prev_vectors = None
            engine_carry.discard_prepared(self)

    def _close(self) -> None:
        gen, self.gen = self.gen, None
        self._vectors = None
        self._vectors_loaded = False
        self._vectors_unreadable = False
        if gen is not None:
            gen.close()
            unpin(self.store.dir / gen.name)

    def retire(self) -> None:
        """Close the open generation before a switch, keeping its vector index for the next."""
        if self._vectors is not None:
            self._prev_vectors = self._vectors
        self._close()

    def install(self, gen: Generation) -> None:
        """Open `gen` (opened and pinned by `engine_carry`; under the lock, after `retire`)."""
        self._close()
        self.gen = gen

    def _ensure_open(self) -> None:
        engine_carry.ensure_open(self)  # the live generation, or the one a writer hands over

    @property
    def generation(self) -> str | None:
        return self._gen

    def _vector_index(self) -> Any:
        if not self._vectors_loaded:
            self._vectors_loaded = True
            assert self.meta is not None
            path = self.store.dir / self._gen / "vectors.hnsw"  # type: ignore[operator]
            if self.meta.dim and self.meta.vectors and path.exists():
                from ..store.vectors import load_readable

                prev, self._prev_vectors = self._prev_vectors, None
                if prev is not None and prev.dim == self.meta.dim and prev.refresh(path, self.meta.deleted_vectors):
                    self._vectors = prev  # the same HNSW file: only the new delta applied
                else:  # None when the file cannot be read: bm25 answers (said in `recover`)
                    self._vectors = load_readable(path, self.meta.dim, self.meta.deleted_vectors)
                    self._vectors_unreadable = self._vectors is None
        return self._vectors

    def embedder(self) -> Any:
        if self._embedder is not None:
            return self._embedder
        from ..embedding.registry import get_embedder

        assert self.meta is not None
        return get_embedder(self.meta.model_location or self.meta.model)

    def _query_vector(self, text: str) -> Any:
        """Query embeddings, remembered per process (a repeated query costs nothing)."""
        key = (self.meta.model if self.meta else None, text)
        v = self._qvec.get(key)
        if v is None:
            v = self.embedder().encode_query(text)
            if len(self._qvec) >= 1024:
                self._qvec.pop(next(iter(self._qvec)))
            self._qvec[key] = v
        return v

    def _cached(self, key: tuple, make: Any) -> Any:
        assert self.gen is not None
        return self.gen.cached(key, make)

    # ------------------------------------------------------------------ scope
    def _doc_table(self) -> dict[str, Any]:
        gen = self.gen
        assert gen is not None
        if gen.docs is None:
            gen.docs = {r["path"]: r for r in gen.db.execute(
                "SELECT path, type, status, tags, sort_date, is_session FROM docs")}
        return gen.docs

    def _allowed_paths(self, corpus: str, scope: Scope) -> set[str] | None:
        """Paths a query may return; None means every document (no filtering at all)."""
        if corpus == "all" and scope.empty:
            return None

        def make() -> set[str]:
            out = set()
            types, statuses = set(scope.types), set(scope.statuses)
            tags = {t.lower().lstrip("#") for t in scope.tags}
            until = scope.until + "\uffff" if scope.until and len(scope.until) == 10 else scope.until
            for path, r in self._doc_table().items():
                if corpus == "durable" and r["is_session"]:
                    continue
                if corpus == "sessions" and not r["is_session"]:
                    continue
                if types and r["type"] not in types:
                    continue
                if statuses and (r["status"] or "") not in statuses:
                    continue
                if tags and not tags & {t.lower() for t in json.loads(r["tags"])}:
                    continue
                if scope.since and not (r["sort_date"] and r["sort_date"] >= scope.since):
                    continue
                if until and not (r["sort_date"] and r["sort_date"] <= until):
                    continue
                if scope.path_glob and not any(fnmatch.fnmatchcase(path, g) for g in scope.path_glob):
                    continue
                out.add(path)
            return out

        return self._cached(("paths", corpus, scope.key()), make)

    def _bm25_filter(self, corpus: str, scope: Scope) -> Any:
        """A docnum set for Whoosh's `filter`, or None. The corpus kind alone is not a
        filter but part of the query (`kind_clause`): a collector filter makes Whoosh visit
        every matching chunk instead of skipping blocks that cannot reach the top."""
        if scope.empty:
            return None
        allowed = self._allowed_paths(corpus, scope)

        def make() -> set[int]:
            paths = self._cached(("docnum-paths",), self._bm25.all_paths_docnums)
            return {i for i, p in enumerate(paths) if p in allowed}

        return self._cached(("bm25-filter", corpus, scope.key()), make)

    def _vector_filter(self, corpus: str, scope: Scope) -> set[int] | None:
        allowed = self._allowed_paths(corpus, scope)
        if allowed is None:
            return None

        def make() -> set[int]:
            ids: set[int] = set()
            plist = sorted(allowed)
            if len(plist) > len(self._doc_table()) // 2:
                for cid, path in self._db.execute("SELECT id, path FROM chunks WHERE has_vector = 1"):
                    if path in allowed:
                        ids.add(cid)
                return ids
            for i in range(0, len(plist), 500):
                batch = plist[i : i + 500]
                q = f"SELECT id FROM chunks WHERE has_vector = 1 AND path IN ({','.join('?' * len(batch))})"
                ids.update(r[0] for r in self._db.execute(q, batch))
            return ids

        return self._cached(("vec-filter", corpus, scope.key()), make)

    # ------------------------------------------------------------------ lists
    def _bm25_list(self, pq: ParsedQuery, corpus: str, scope: Scope, limit: int,
                   coverage: bool = False) -> tuple[list[_Hit], list[str]]:
        q, weights = self._bm25.build_query(pq.words, pq.phrases, pq.prefixes, pq.fielded)
        terms = list(weights)
        if q is None:
            return [], terms
        flt = self._bm25_filter(corpus, scope)
        if flt is not None and not flt:
            return [], terms
        hits = None
        if not pq.prefixes and not pq.fielded:  # plain terms: the numpy BM25F path
            hits = self._bm25.search_terms(self._bm25.term_boosts(weights), limit, corpus, allowed=flt,
                                           coverage=weights if coverage else None)
        if hits is None:
            exclude = is_session_path if corpus == "durable" and flt is None else None
            hits = self._bm25.search(self._bm25.restrict_kind(q, corpus), limit=limit, filter=flt, exclude=exclude)
        out = [_Hit(h.path, h.cid, h.score) for h in hits]
        if coverage and out:
            # How much of the query a hit matched: its weight in fusion (a page sharing one
            # common word with a question is weak evidence) and its normalised score.
            covs = [h.coverage for h in hits]
            if any(c is None for c in covs):
                covs = self._coverage(out, weights)
            for h, cov in zip(out, covs):
                h.coverage = cov
        if pq.phrases and out:
            out = self._phrase_bonus(out, pq.phrases)
        return out, terms

    def _coverage(self, hits: list[_Hit], weights: dict[str, float]) -> list[float]:
        """Share of the query's idf-weighted terms in each hit's chunk, title, heading, path, tags."""
        from ..text import term_counts

        idf = {t: w * self._bm25.idf(t) for t, w in weights.items()}
        total = sum(idf.values())
        if total <= 0:
            return [0.0] * len(hits)
        ids = [h.cid for h in hits]
        chunks = {r[0]: (r[1], r[2]) for r in self._db.execute(
            f"SELECT id, heading, text FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids)}
        paths = sorted({h.path for h in hits})
        docs = {r[0]: (r[1], r[2]) for r in self._db.execute(
            f"SELECT path, title, tags FROM docs WHERE path IN ({','.join('?' * len(paths))})", paths)}
        out = []
        for h in hits:
            heading, text = chunks.get(h.cid, ("", ""))
            title, tags = docs.get(h.path, ("", "[]"))
            have = term_counts(" ".join((title, heading, h.path[:-3], tags, text)))
            out.append(min(1.0, sum(w for t, w in idf.items() if t in have) / total))
        return out

    def _phrase_bonus(self, hits: list[_Hit], phrases: list[str]) -> list[_Hit]:
        texts = self._chunk_texts([h.cid for h in hits])
        low = [p.casefold() for p in phrases]
        for h in hits:
            t = " ".join(texts.get(h.cid, "").casefold().split())
            n = sum(1 for p in low if p in t)
            if n:
                h.score *= 1.0 + 0.5 * n
        hits.sort(key=lambda h: (-h.score, h.path))
        return hits

    def _chunk_texts(self, ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        q = f"SELECT id, text FROM chunks WHERE id IN ({','.join('?' * len(ids))})"
        return {r[0]: r[1] for r in self._db.execute(q, ids)}

    def _vector_list(self, pq: ParsedQuery, corpus: str, scope: Scope, limit: int,
                     warnings: list[str], keep: int = 0, reuse: bool = False) -> list[_Hit] | None:
        """Document list by cosine similarity; None when vectors are unavailable. `keep`: the
        list taken to that many documents is kept with the generation for a call with `reuse`
        and the same query (active memory's deeper look: one neighbour query, not two)."""
        index = self._vector_index()
        if index is None:
            warnings.append("the vector index could not be read; used bm25 only" if self._vectors_unreadable else
                            "no vectors in the index (built without embeddings, or embedding failed); used bm25 only")
            return None
        text = prefetch.embedded_text(pq)
        if not text:
            return []
        kept_key = ("vec-kept", text, corpus, scope.key())
        kept = self.gen.cache.get(kept_key) if reuse and self.gen is not None else None
        if kept is not None and len(kept) >= limit:
            return [replace(h) for h in kept[:limit]]
        try:
            qv = self._query_vector(text)
        except Exception as exc:  # noqa: BLE001 - a broken model degrades to bm25
            log.warning("query embedding failed: %s", exc)
            warnings.append(f"query embedding failed ({exc}); used bm25 only")
            return None
        if getattr(qv, "shape", (0,))[-1] != index.dim:
            warnings.append("the embedding model does not match the index; used bm25 only")
            return None
        allowed = self._vector_filter(corpus, scope)
        if allowed is not None and not allowed:
            return []
        per_doc = max(4, (self.meta.chunks // max(1, self.meta.documents)) + 1) if self.meta else 4
        docs, exact = max(limit, keep), allowed is not None and len(allowed) <= EXACT_MIN_FILTERED
        if exact:
            from ..store.vectors import exact_knn

            ids, matrix = self._cached(("vec-matrix", corpus, scope.key()),
                                       lambda: (sorted(allowed), index.get(sorted(allowed))))
        # Three chunks a document first, the full share if they crowd into fewer documents
        # (10k documents: the 300 nearest chunks held the 100 documents 700 did, in half the time).
        for want in dict.fromkeys((docs * min(per_doc, 3), docs * per_doc)):
            pairs = exact_knn(matrix, ids, qv, min(want, len(ids))) if exact else \
                index.knn(qv, want, None if allowed is None else allowed.__contains__)
            hits = self._group(pairs, docs)
            if len(hits) >= docs or len(pairs) < want:
                break
        if keep:
            self._cached(kept_key, lambda: [replace(h) for h in hits])
        return hits[:limit]

    def _group(self, pairs: list[tuple[int, float]], limit: int) -> list[_Hit]:
        if not pairs:
            return []
        ids = [p[0] for p in pairs]
        paths = {}
        for i in range(0, len(ids), 500):
            batch = ids[i : i + 500]
            q = f"SELECT id, path FROM chunks WHERE id IN ({','.join('?' * len(batch))})"
            paths.update((r[0], r[1]) for r in self._db.execute(q, batch))
        out: list[_Hit] = []
        seen: set[str] = set()
        for cid, sim in pairs:
            p = paths.get(cid)
            if p is None or p in seen:
                continue
            seen.add(p)
            out.append(_Hit(p, cid, sim, cosine=sim))
            if len(out) >= limit:
                break
        back = fusion.background([h.cosine for h in out])
        for h in out:
            h.background = back
        return out

    def _exact_list(self, needle: str, corpus: str, scope: Scope, limit: int) -> list[_Hit]:
        needle = needle.strip()
        if len(needle) >= 2 and needle[0] == needle[-1] and needle[0] in "\"'":
            needle = needle[1:-1]
        if not needle.strip():
            return []
        allowed = self._allowed_paths(corpus, scope)
        best: dict[str, _Hit] = {}
        if needle.isascii():  # SQLite's LIKE is case-insensitive for ASCII, and 2-3x faster than lower()
            pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            rows = self._db.execute(
                "SELECT id, path, text FROM chunks WHERE text LIKE ? ESCAPE '\\' ORDER BY id", [pattern])
            low = needle.lower()
            fold = str.lower
        else:
            rows = self._db.execute("SELECT id, path, text FROM chunks ORDER BY id")
            low = needle.casefold()
            fold = str.casefold
        for cid, path, text in rows:
            if allowed is not None and path not in allowed:
                continue
            n = fold(text).count(low)
            if n == 0:
                continue
            h = best.get(path)
            if h is None or n > h.score:
                best[path] = _Hit(path, cid, float(n), needle=needle)
        # Titles count too (a document whose title matches is an exact hit).
        # (No join: over a table with a delta, `docs` and `chunks` are views, and SQLite
        # materializes both for a join.)
        for path, title in self._db.execute("SELECT path, title FROM docs").fetchall():
            if path in best or (allowed is not None and path not in allowed):
                continue
            if low in fold(title):
                cid = self._db.execute("SELECT min(id) FROM chunks WHERE path = ?", [path]).fetchone()[0]
                if cid is not None:
                    best[path] = _Hit(path, cid, 1.0, needle=needle)
        priors = self._priors(list(best))
        hits = sorted(best.values(), key=lambda h: (-h.score, -priors.get(h.path, 0.0), h.path))
        return hits[:limit]

    def _priors(self, paths: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for i in range(0, len(paths), 500):
            batch = paths[i : i + 500]
            q = f"SELECT path, prior FROM docs WHERE path IN ({','.join('?' * len(batch))})"
            out.update((r[0], r[1]) for r in self._db.execute(q, batch))
        return out

    def _fuse(self, bm: list[_Hit], vec: list[_Hit], limit: int,
              params: fusion.FusionParams | None = None) -> list[_Hit]:
        """Weighted RRF of the two document lists (`fusion`), then the priors."""
        params = params or fusion.DEFAULT
        weights = fusion.lexical_weights([(h.path, h.coverage) for h in bm], params)
        scores = fusion.rrf({"bm25": [(h.path, w) for h, w in zip(bm, weights)],
                             "vector": [(h.path, params.vector_weight) for h in vec]}, params.k)
        fused: dict[str, _Hit] = {}
        best_rank: dict[str, int] = {}
        for name, hits in (("bm25", bm), ("vector", vec)):
            for rank, h in enumerate(hits, 1):
                f = fused.get(h.path)
                if f is None:
                    f = fused[h.path] = _Hit(h.path, h.cid, scores[h.path])
                    best_rank[h.path] = rank
                elif rank < best_rank[h.path] or rank == best_rank[h.path] and h.cid != f.cid and \
                        fusion.better_passage(h.cosine, h.background, f.coverage):
                    f.cid = h.cid  # the chunk from the list that ranks the document higher
                    best_rank[h.path] = rank
                f.ranks[name] = rank
                if name == "bm25":
                    f.coverage = h.coverage
                else:
                    f.cosine, f.background = h.cosine, h.background
        priors = self._priors(list(fused))
        scale = fusion.prior_scale(params)
        for f in fused.values():
            f.score *= 1.0 + scale * priors.get(f.path, 0.0)
        return sorted(fused.values(), key=lambda h: (-h.score, best_rank[h.path], h.path))[:limit]

    def candidates(self, query: str, corpus: str = "all", depth: int = CANDIDATES,
                   lists: tuple[str, ...] = ("bm25", "vector")) -> dict[str, list[tuple]]:
        """The lists fusion starts from, {"bm25": [(path, coverage)], "vector": [(path, cosine)]}."""
        req, warnings = normalize_request({"query": query, "corpus": corpus})
        pq = parse_query(req.query)
        with self._lock:
            self._ensure_open()
            vec = (self._vector_list(pq, req.corpus, req.scope, depth, warnings, reuse=True) or []) if "vector" in lists else []
            bm = self._bm25_list(pq, req.corpus, req.scope, depth, coverage=True)[0] if "bm25" in lists else []
        return {"bm25": [(h.path, h.coverage) for h in bm], "vector": [(h.path, h.cosine) for h in vec]}

    # ------------------------------------------------------------------ results
    def _results(self, hits: list[_Hit], req: SearchRequest, terms: list[str], prefixes: list[str]) -> list[dict]:
        titles = self._cached(("titles",), lambda: TitleResolver(self._db))
        return build_results(self._db, self.root, hits, req, terms, prefixes, titles, self._bm25.idf)

    # ------------------------------------------------------------------ search
    def search(self, request: Mapping[str, Any] | SearchRequest | str) -> dict[str, Any]:
        """Answer one request; see the module docstring for the response shape."""
        t0 = time.perf_counter()
        if isinstance(request, str):
            request = {"query": request}
        req, warnings = normalize_request(request)
        prefetch.query_vector(self, req)  # the model is loaded outside the lock (`prefetch`)
        with self._lock:
            self._ensure_open()
            results = self._search(req, warnings)
        return {
            "query": req.query,
            "count": len(results),
            "results": results,
            "took_ms": round((time.perf_counter() - t0) * 1000, 2),
            "warnings": warnings,
        }

    def _search(self, req: SearchRequest, warnings: list[str]) -> list[dict]:
        pq = parse_query(req.query)
        scope = req.scope
        if pq.types or pq.statuses:
            scope = Scope(scope.path_glob, sorted(set(scope.types) | set(pq.types)),
                          sorted(set(scope.statuses) | set(pq.statuses)), scope.tags, scope.since, scope.until)
        if not req.query.strip():
            warnings.append("empty query")
            return []
        k = req.k
        mode = req.mode
        prefixes = [t for p in pq.prefixes for t in unique_terms(p)[:1]]
        terms: list[str] = []
        dropped = 0
        # Default searches leave out evidence artifacts and demote other audit material
        # (`audit.py`); they look deeper so what is demoted can be replaced.
        policy = audit.applies(req.corpus, scope.empty)
        deep = max(2 * k, k + 10) if policy else k
        if mode == "exact":
            hits = self._audit(self._exact_list(req.query, req.corpus, scope, deep), policy)[:k]
            for h in hits:
                h.coverage = 1.0  # the whole query occurs verbatim
        elif mode == "bm25":
            hits, terms = self._bm25_list(pq, req.corpus, scope, deep, coverage=True)
            hits = self._audit(hits, policy)[:k]
        else:
            depth = max(CANDIDATES, k)
            if self.meta and (self.meta.pending_count or self.meta.chunks > self.meta.vectors):
                waiting = max(0, self.meta.chunks - self.meta.vectors)
                warnings.append(f"{waiting} of {self.meta.chunks} chunks ({self.meta.pending_count} document(s)) "
                                "are not embedded yet; vector results may miss them")
            vec = self._vector_list(pq, req.corpus, scope, depth, warnings, keep=req.vector_depth)
            if vec is not None:
                vec = self._audit(vec, policy, demote=False)
            if vec is None or mode == "hybrid":
                bm, terms = self._bm25_list(pq, req.corpus, scope, deep if vec is None else depth, coverage=True)
                bm = self._audit(bm, policy, demote=vec is None)
            if vec is None:  # degrade to lexical
                hits = bm[:k]
                if mode == "vector" and hits:
                    warnings.append("vector search unavailable; these are bm25 results")
            elif mode == "vector":
                hits = self._audit(vec, policy)[:k]
                # the query terms mark matches in snippets and give each hit its coverage
                weights = self._bm25.build_query(pq.words, pq.phrases, pq.prefixes, pq.fielded)[1]
                terms = list(weights)
                for h, cov in zip(hits, self._coverage(hits, weights) if hits else []):
                    h.coverage = cov
            else:
                hits = self._audit(self._fuse(bm, vec, depth), policy)
                if req.min_score is None and vec and fusion.normalized_score(
                        None, vec[0].cosine, vec[0].background) < fusion.WEAK_VECTOR_ONLY:
                    # even its best hit is weak (a made-up word has neighbours): no answer
                    keep = [h for h in hits if "bm25" in h.ranks]
                    dropped, hits = len(hits) - len(keep), keep
                hits = hits[:k]
        evidence = [fusion.normalized_score(h.coverage, h.cosine, h.background) for h in hits]
        for h, norm in zip(hits, fusion.ranked_scores(evidence, [h.score for h in hits])):
            h.norm = norm
        found = len(hits)
        if req.min_score is not None:
            hits = [h for h in hits if h.norm >= req.min_score]
        if mode != "exact" and (dropped or hits) and fusion.weak(evidence):
            what = (f"{dropped} weak match(es) by meaning alone were left out (set min_score to see them)" if dropped
                    else f"these results are weak (score_normalized below {fusion.WEAK_VECTOR_ONLY})")
            warnings.append(f"nothing matched the query well: {what}")
        elif mode == "hybrid" and hits and not any("bm25" in h.ranks for h in hits):
            warnings.append(MEANING_ALONE_WARNING)
        elif not hits:
            table = self._doc_table().values()
            sessions = req.corpus != "sessions" or any(r["is_session"] for r in table)
            outside = not scope.empty and not found and self._allowed_paths(req.corpus, scope) == set()
            warnings.append(notes.empty_scope(scope, {r["type"] for r in table}) if outside  # a mistyped type
                            else notes.empty(mode, pq, found, req.min_score, sessions))
        return self._results(hits, req, terms, prefixes)

    def _audit(self, hits: list[_Hit], policy: bool, demote: bool = True) -> list[_Hit]:
        return audit.apply(self._db, hits, policy, demote, self._cached(("audit-kinds",), dict) if policy else None)


# ---------------------------------------------------------------------- registry
_engines: dict[Path, SearchEngine] = {}
_engines_lock = threading.Lock()


def open_engine(root: Path, embedder: Any = None) -> SearchEngine:
    """The process-wide engine of a corpus (a server keeps using the same one)."""
    key = Path(root).resolve()
    with _engines_lock:
        e = _engines.get(key)
        if e is None or (embedder is not None and e._embedder is not embedder):
            if e is not None:
                e.close()
            e = _engines[key] = SearchEngine(key, embedder=embedder)
        return e


def existing_engine(root: Path) -> SearchEngine | None:
    return _engines.get(Path(root).resolve())  # as open_engine, but never makes one (a dict read)


def close_engines() -> None:
    with _engines_lock:
        for e in _engines.values():
            e.close()
        _engines.clear()


__all__ = ["SearchEngine", "open_engine", "existing_engine", "close_engines", "IndexNotReady", "InvalidRequest"]
