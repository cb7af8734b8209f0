"""The BM25 index: with `bm25_write` (the writer and its merge policy) and `bm25_postings`
(which writes a segment's postings term by term), the only modules that use the Whoosh API
(Whoosh-Reloaded 2.7.5). This one holds the schema, what a chunk stores, and the searcher.

One Whoosh document per chunk. Terms come from `text.analyze` (identifier-aware,
stemmed). Ranking is BM25F in its original form: one `text` field whose term
frequencies are the field-weighted sums over the chunk's title and aliases (x3), heading
path (x2), path words and tags (x1.5), body (x1) and the body's outgoing links, labels
and targets (x0.25: a page's own words outweigh the words of the pages it links to, so a
stub that only links to a page does not outrank it), saturated once by BM25 (K1 1.2,
B 0.75). Compared with scoring every field separately and summing, this is both the
better model (a word in title and body is not counted as two independent matches) and
four times fewer postings to walk per query term.

`title` and `meta` (path and tags) are also indexed on their own, on each document's
first chunk only, for `title:`/`path:`/`tag:` query syntax. Queries are built here from a
`ParsedQuery`, never by Whoosh's query parser, so no input can raise.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from whoosh import fields, formats, index, scoring
from whoosh import query as wq
from whoosh.analysis import Token, Tokenizer
from whoosh.reading import TermNotFound
from whoosh.system import pack_uint

from .bm25_segments import segment_cached, segment_identity
from ..text import analyze, term_counts, unique_terms, weighted_terms

FIELD_WEIGHTS = {"title": 3.0, "headings": 2.0, "meta": 1.5, "body": 1.0, "links": 0.25}
MAX_SEARCH_TERMS = 12  # Whoosh matcher path (prefix/field queries, or no fast path)
MAX_FAST_TERMS = 64
SCORED_FIELDS = ("text", "title", "meta")
COMMON_TERM_SHARE = 0.1
MIN_PREFIX = 3
MAX_PREFIX_EXPANSION = 64


class CommonplaceTokenizer(Tokenizer):
    """Whoosh adapter over `text.analyze` (tokenizing, folding, stop words, stemming)."""

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any):
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for term in analyze(value):
            t.text = term.text
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = term.text
            if positions:
                t.pos = start_pos + term.pos
            if chars:
                t.startchar = start_char + term.start
                t.endchar = start_char + term.end
            yield t


class CountedFrequency(formats.Frequency):
    """Whoosh's Frequency format, fed by `text.term_counts` instead of token objects.

    The value is a string, or a list of `(text, weight)` parts: a term's posting weight
    (its BM25 term frequency) is the weighted sum over the parts, and the field length is
    the plain token count. About 3x less Python work per posting than the token path.
    """

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any):
        fb = self.field_boost
        if isinstance(value, str):
            return ((w, n, n * fb, _uint(n)) for w, n in term_counts(value).items())
        freq: dict[str, int] = {}
        weight: dict[str, float] = {}
        for text, wt in value:
            for w, n in term_counts(text).items():
                freq[w] = freq.get(w, 0) + n
                weight[w] = weight.get(w, 0.0) + n * wt
        return ((w, n, weight[w] * fb, _uint(n)) for w, n in freq.items())


_UINTS = tuple(pack_uint(i) for i in range(256))  # posting values, shared, not one bytes each


def _uint(n: int) -> bytes:
    return _UINTS[n] if n < 256 else pack_uint(n)


def _text_field(ana: Tokenizer) -> fields.TEXT:
    f = fields.TEXT(analyzer=ana, phrase=False)
    f.format = CountedFrequency(field_boost=1.0)
    return f


def make_schema() -> fields.Schema:
    ana = CommonplaceTokenizer()
    return fields.Schema(
        cid=fields.ID(stored=True, unique=True),
        path=fields.ID(stored=True, sortable=True),
        kind=fields.ID(),  # durable | session
        type=fields.ID(),
        status=fields.ID(),
        tags=fields.KEYWORD(lowercase=True, commas=True),
        date=fields.ID(),
        text=_text_field(ana),
        title=_text_field(ana),
        meta=_text_field(ana),
    )


def weighting() -> scoring.WeightingModel:
    return scoring.BM25F(B=0.75, K1=1.2)


# Whoosh pickles the schema into every index's table of contents, naming the module of
# `CommonplaceTokenizer` and `CountedFrequency`. Indexes written before the compiler was
# arranged in rooms (2026-11-27) name this module by its old path; opening one must not
# fail (it would turn an upgrade into a broken search), so the old path stays an alias.
sys.modules.setdefault("commonplace.compiler.search.bm25", sys.modules[__name__])


@dataclass
class ChunkDoc:
    """What the BM25 index stores for one chunk."""

    cid: int
    path: str
    kind: str
    type: str
    status: str
    tags: Sequence[str]
    date: str
    title: str
    headings: str
    body: str
    meta: str
    first: bool = True  # the document's first chunk (carries `title`/`meta` for field queries)

    def fields(self) -> dict[str, Any]:
        from ..plaintext import split_links

        w = FIELD_WEIGHTS
        own, links = split_links(self.body)
        out: dict[str, Any] = {
            "cid": str(self.cid), "path": self.path, "kind": self.kind, "type": self.type or "note",
            "tags": ",".join(t.replace(",", " ") for t in self.tags),
            "text": [(self.title, w["title"]), (self.headings, w["headings"]), (self.meta, w["meta"]),
                     (own, w["body"]), (links, w["links"])],
        }
        if self.first:
            out["title"] = self.title
            out["meta"] = self.meta
        if self.status:
            out["status"] = self.status
        if self.date:
            out["date"] = self.date
        return out


def open_index(directory: Path) -> Any:
    """The Whoosh index in `directory`; `UnreadableSchema` when its schema cannot be loaded."""
    from .recover import loading_schema

    with loading_schema(Path(directory)):
        return index.open_dir(str(directory))


@dataclass
class BM25Hit:
    cid: int
    path: str
    score: float
    coverage: float | None = None  # with `search_terms(coverage=...)`


class _FastScorer:
    """BM25F over Whoosh's postings, term at a time, in numpy.

    Whoosh's own OR matcher walks every posting through a tree of Python matcher objects
    (about 5-10 us each); a question of common words touches tens of thousands of
    postings on a 10,000-document corpus. This reads each term's posting blocks from the
    same segment files (Whoosh decodes them), caches the decoded arrays per term, and
    scores with `scoring.BM25F`'s formula on the segment's byte-encoded field lengths.

    Its statistics count live chunks only: N, document frequencies and the average field
    length leave out chunks deleted but not yet merged away (Whoosh's own counts include
    them), so an incrementally updated index ranks exactly like a clean build of the same
    corpus. `LiveBM25F` gives Whoosh's matcher path the same statistics. It reads some W3
    codec internals; when anything is unexpected it raises and the caller falls back to
    Whoosh's matcher with Whoosh's statistics.
    """

    MAX_CACHED_TERMS = 4096

    def __init__(self, searcher: Any, field: str = "text", B: float = 0.75, K1: float = 1.2,
                 directory: Path | None = None):
        import numpy as np

        from whoosh.codec.whoosh3 import LENGTHS_COLUMN
        from whoosh.util.numeric import byte_to_length

        self.np = np
        self.searcher = searcher
        self.field = field
        self.B, self.K1 = B, K1
        self.total = searcher.doc_count_all()
        table = np.array([byte_to_length(i) for i in range(256)], dtype=np.float32)
        lengths = np.zeros(self.total, dtype=np.float32)
        self.leaves: list[tuple[Any, int]] = []
        self.idents: list[tuple | None] = []  # per leaf, `bm25_segments.segment_identity`
        deleted = np.zeros(self.total, dtype=bool)
        for sub, offset in searcher.leaf_searchers():
            r = sub.reader()
            n = r.doc_count_all()
            def seg_lengths(r: Any = r, n: int = n) -> Any:
                col = r._perdoc._cached_reader(f"_{field}_len", LENGTHS_COLUMN)  # W3PerDocReader
                if col is None or not n:
                    return np.zeros(0, dtype=np.float32)
                return table[np.frombuffer(col._dbfile.get(col._basepos, min(col._count, n)), dtype=np.uint8)]

            ident = segment_identity(directory, r._segment)
            self.idents.append(ident)
            raw = segment_cached((ident, n, "len", field), seg_lengths)
            lengths[offset : offset + len(raw)] = raw
            for d in (r.deleted_docs_set or ()):
                deleted[offset + d] = True
            self.leaves.append((r, offset))
        self.deleted = deleted if deleted.any() else None
        live = lengths if self.deleted is None else lengths[~deleted]
        self.n_live = int(len(live))
        self.avgfl = float(live.mean()) if len(live) and live.mean() > 0 else 1.0
        self.norm = (self.K1 * ((1 - self.B) + self.B * lengths / self.avgfl)).astype(np.float32)
        self._cache: dict[str, Any] = {}

    def postings(self, term: str) -> tuple[Any, Any]:
        got = self._cache.get(term)
        if got is not None:
            return got
        np = self.np
        ids_parts, w_parts = [], []
        btext = term.encode("utf-8")
        for (r, offset), ident in zip(self.leaves, self.idents):
            seg = segment_cached((ident, r.doc_count_all(), "post", self.field, term),
                                  lambda r=r: self._decode(r, btext))
            if seg:
                ids_parts.append(seg[0] + offset)
                w_parts.append(seg[1])
        if ids_parts:
            ids, ws = np.concatenate(ids_parts), np.concatenate(w_parts)
            if self.deleted is not None:
                keep = ~self.deleted[ids]
                ids, ws = ids[keep], ws[keep]
            got = (ids, ws)
        else:
            got = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if len(self._cache) >= self.MAX_CACHED_TERMS:
            self._cache.clear()
        self._cache[term] = got
        return got

    def _decode(self, r: Any, btext: bytes) -> tuple[Any, ...]:
        """One segment's postings of a term (segment-local ids, weights); () if absent."""
        np = self.np
        if (self.field, btext) not in r._terms:
            return ()
        ids_parts, w_parts = [], []
        m = r._terms.matcher(self.field, btext, r.schema[self.field].format)
        while m.is_active():
            m._read_ids()
            m._read_weights()
            ids_parts.append(np.asarray(m._ids, dtype=np.int64))
            w_parts.append(np.asarray(m._weights, dtype=np.float32))
            m._next_block()
        if not ids_parts:
            return ()
        return np.concatenate(ids_parts), np.concatenate(w_parts)

    def df(self, term: str) -> int:
        return int(len(self.postings(term)[0]))

    def idf(self, term: str) -> float:
        """Whoosh's idf, log(N / (df + 1)) + 1, over live chunks."""
        return math.log(max(1, self.n_live) / (self.df(term) + 1)) + 1

    def scores(self, boosts: dict[str, float]) -> Any:
        np = self.np
        acc = np.zeros(self.total, dtype=np.float32)
        k1p1 = self.K1 + 1.0
        for term, boost in boosts.items():
            ids, tf = self.postings(term)
            if not len(ids):
                continue
            acc[ids] += (boost * self.idf(term)) * (tf * k1p1) / (tf + self.norm[ids])
        return acc


class LiveBM25F(scoring.BM25F):
    """BM25F whose text-field statistics (idf, average length) come from `_FastScorer`:
    live chunks only, the same numbers the fast path uses."""

    def __init__(self, stats: Callable[[str], "_FastScorer | None"], **kwargs: Any):
        super().__init__(**kwargs)
        self._stats = stats

    def scorer(self, searcher: Any, fieldname: str, text: Any, qf: int = 1) -> Any:
        stats = self._stats(fieldname) if fieldname in SCORED_FIELDS else None
        if stats is None:
            return super().scorer(searcher, fieldname, text, qf=qf)
        term = text.decode("utf-8") if isinstance(text, bytes) else text
        sc = scoring.BM25FScorer.__new__(scoring.BM25FScorer)
        sc.idf, sc.avgfl, sc.B, sc.K1, sc.qf = stats.idf(term), stats.avgfl, self.B, self.K1, qf
        sc.setup(searcher, fieldname, text)
        return sc


def _term_docnums(np: Any, reader: Any, field: str, text: str) -> Any:
    """A segment's (segment-local) document numbers holding a term. Documents deleted in
    the generation first asked are left out; they stay deleted in every later one (a
    segment's deletions only grow), and a deleted chunk scores 0 anyway."""
    try:
        ids = list(reader.postings(field, text).all_ids())
    except TermNotFound:
        ids = []
    return np.asarray(ids, dtype=np.int64)


class BM25Searcher:
    """A searcher over one generation's Whoosh index; reused across queries."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.ix = open_index(directory)
        self._fast: dict[str, _FastScorer | None] = {}
        self._masks: dict[Any, Any] = {}
        self.searcher = self.ix.searcher(weighting=LiveBM25F(self.fast, B=0.75, K1=1.2))

    def close(self) -> None:
        self.searcher.close()
        self.ix.close()

    @property
    def doc_count(self) -> int:
        return self.searcher.doc_count()

    def _df(self, term: str) -> int:
        fast = self.fast()
        return fast.df(term) if fast is not None else self.searcher.doc_frequency("text", term)

    def term_boosts(self, weights: dict[str, float]) -> dict[str, float]:
        """Boosts for the fast path: every term the index has (the rarest `MAX_FAST_TERMS`
        for long pastes); no pruning of common terms is needed there."""
        present = {t: w for t, w in weights.items() if self._df(t) > 0}
        if len(present) > MAX_FAST_TERMS:
            keep = sorted(present, key=lambda t: -present[t] * self.idf(t))[:MAX_FAST_TERMS]
            present = {t: present[t] for t in keep}
        return present

    def _search_terms(self, weights: dict[str, float]) -> list[str]:
        """The terms worth walking postings for, in query order.

        Terms the index does not have are skipped; at most `MAX_SEARCH_TERMS`, the most
        informative first (idf x weight); and very common terms (in more than
        `COMMON_TERM_SHARE` of the chunks, near-zero idf) are dropped while at least two
        rarer ones remain. Whoosh's OR walks every posting of every term in pure Python,
        so a long question full of common words would otherwise cost 100+ ms; the
        ranking barely changes (those terms add almost nothing to BM25 scores).
        """
        n = max(1, self.searcher.doc_count_all())
        df = {t: self._df(t) for t in weights}
        by_rarity = sorted((t for t in weights if df[t] > 0), key=lambda t: df[t])
        pool = [t for i, t in enumerate(by_rarity) if i < 2 or df[t] <= COMMON_TERM_SHARE * n]
        ranked = sorted(pool, key=lambda t: -weights[t] * self.idf(t))[:MAX_SEARCH_TERMS]
        keep = set(ranked)
        return [t for t in weights if t in keep]

    def fast(self, field: str = "text") -> "_FastScorer | None":
        if field not in self._fast:
            try:
                self._fast[field] = _FastScorer(self.searcher, field, directory=self.directory)
            except Exception:  # noqa: BLE001 - unexpected codec internals: use Whoosh's matcher
                self._fast[field] = None
        return self._fast[field]

    def _session_mask(self) -> Any:
        if "sessions" not in self._masks:
            import numpy as np

            # Per segment, cached process-wide like the postings: each write's generation
            # used to walk the whole index's session postings again (11 ms at 10,000 docs).
            m = np.zeros(self.searcher.doc_count_all(), dtype=bool)
            for sub, offset in self.searcher.leaf_searchers():
                r = sub.reader()
                ident = segment_identity(self.directory, r._segment)
                local = segment_cached((ident, r.doc_count_all(), "kind", "session"),
                                       lambda r=r: _term_docnums(np, r, "kind", "session"))
                if len(local):
                    m[local + offset] = True
            self._masks["sessions"] = m
        return self._masks["sessions"]

    def search_terms(self, boosts: dict[str, float], limit: int, corpus: str = "all",
                     allowed: set[int] | None = None, coverage: dict[str, float] | None = None
                     ) -> list[BM25Hit] | None:
        """The fast path for plain term queries (see `_FastScorer`): the best chunk of each of
        the top `limit` documents. None when the fast scorer is unavailable.

        With `coverage` ({term: weight} for the whole query), each hit also gets the
        idf-weighted share of the query's terms its chunk contains."""
        fast = self.fast()
        if fast is None:
            return None
        np = fast.np
        try:
            acc = fast.scores(boosts)
        except Exception:  # noqa: BLE001
            self._fast["text"] = None
            return None
        if corpus == "durable":
            acc[self._session_mask()] = 0.0
        elif corpus == "sessions":
            acc[~self._session_mask()] = 0.0
        if allowed is not None:
            keep = np.zeros(len(acc), dtype=bool)
            if allowed:
                keep[np.fromiter(allowed, dtype=np.int64, count=len(allowed))] = True
            acc[~keep] = 0.0
        n_pos = int(np.count_nonzero(acc))
        out: list[BM25Hit] = []
        docnums: list[int] = []
        seen: set[str] = set()
        fetch = max(limit * 3, 16)
        done = 0
        order = None
        cutoff: float | None = None  # the limit-th document's score, once reached
        while done < n_pos:
            want = min(n_pos, done + fetch)
            if order is None or want > len(order):
                top = np.argpartition(-acc, want - 1)[:want] if want < len(acc) else np.arange(len(acc))
                order = top[np.lexsort((top, -acc[top]))]
            finished = False
            for d in order[done:want]:
                d = int(d)
                score = float(acc[d])
                if score <= 0 or (cutoff is not None and score < cutoff):
                    finished = True
                    break
                stored = self.searcher.stored_fields(d)
                path = stored["path"]
                if path in seen:
                    continue
                seen.add(path)
                out.append(BM25Hit(int(stored["cid"]), path, score))
                docnums.append(d)
                if len(out) == limit:
                    cutoff = score  # keep collecting documents tied with the last one
            if finished:
                break
            done = want
            fetch *= 4
        # Equal scores order by path, never by chunk numbering (which differs between an
        # incrementally updated index and a clean one).
        ranked = sorted(range(len(out)), key=lambda i: (-out[i].score, out[i].path))[:limit]
        out = [out[i] for i in ranked]
        docnums = [docnums[i] for i in ranked]
        if coverage and out:
            idf = {t: w * self.idf(t) for t, w in coverage.items()}
            total = sum(idf.values())
            got = np.zeros(len(out), dtype=np.float64)
            cand = np.asarray(docnums, dtype=np.int64)
            for t, w in idf.items():
                if self._df(t) > 0:
                    got += w * np.isin(cand, fast.postings(t)[0])
            for h, g in zip(out, got):
                h.coverage = min(1.0, float(g) / total) if total > 0 else 0.0
        return out

    def build_query(self, words: str, phrases: Sequence[str] = (), prefixes: Sequence[str] = (),
                    fielded: Sequence[tuple[str, str]] = ()) -> tuple[Any, dict[str, float]]:
        """OR of every query term: (query or None, {term: weight}).

        Weights: whole identifiers 2, words 1, identifier parts 0.5 (see `text`); they
        boost the terms and define a hit's coverage in hybrid fusion.
        """
        weights = weighted_terms(" ".join([words, *phrases]))
        clauses: list[Any] = [wq.Term("text", t, boost=weights[t]) for t in self._search_terms(weights)]
        for p in prefixes:
            for t in unique_terms(p)[:1]:
                if len(t) >= MIN_PREFIX:
                    clauses.append(wq.Prefix("text", t, boost=0.5))
                    weights.setdefault(t, 1.0)
        field_map = {"title": "title", "heading": "text", "headings": "text", "body": "text",
                     "path": "meta", "tag": "meta", "tags": "meta"}
        for name, value in fielded:
            f = field_map.get(name)
            for t in unique_terms(value):
                if f:
                    clauses.append(wq.Term(f, t, boost=4.0))
                weights.setdefault(t, 1.0)
            if name in {"tag", "tags"}:
                clauses.append(wq.Term("tags", value.lower(), boost=4.0))
        if not clauses:
            return None, {}
        return wq.Or(clauses), weights

    def filter_query(self, kinds: Sequence[str] | None = None, types: Sequence[str] = (),
                     statuses: Sequence[str] = (), tags: Sequence[str] = (), since: str | None = None,
                     until: str | None = None, paths: Iterable[str] | None = None) -> Any:
        parts: list[Any] = []
        if kinds:
            parts.append(wq.Or([wq.Term("kind", k) for k in kinds]))
        if types:
            parts.append(wq.Or([wq.Term("type", t) for t in types]))
        if statuses:
            parts.append(wq.Or([wq.Term("status", s) for s in statuses]))
        if tags:
            parts.append(wq.Or([wq.Term("tags", t.lower()) for t in tags]))
        if since or until:
            parts.append(wq.TermRange("date", since, until, startexcl=False, endexcl=False))
        if paths is not None:
            plist = list(paths)
            parts.append(wq.Or([wq.Term("path", p) for p in plist]) if plist else wq.NullQuery)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else wq.And(parts)

    def docnums(self, q: Any) -> set[int]:
        """The docnum set of a filter query (for caching filters across queries)."""
        if q is None:
            return set()
        return set(q.docs(self.searcher))

    def idf(self, term: str) -> float:
        fast = self.fast()
        return fast.idf(term) if fast is not None else self.searcher.idf("text", term)

    @staticmethod
    def restrict_kind(q: Any, corpus: str) -> Any:
        """sessions: only session chunks (a query clause). durable is not done here: an
        AndNot clause costs a skip on the session postings for every matching chunk, so
        `search(exclude=...)` drops the (few) session hits instead."""
        if q is None or corpus != "sessions":
            return q
        return wq.And([q, wq.Term("kind", "session", boost=0.0)])

    def search(self, q: Any, limit: int, filter: Any = None, mask: Any = None, group: bool = True,
               exclude: Callable[[str], bool] | None = None) -> list[BM25Hit]:
        """Top `limit` chunks, or with `group` the best chunk of each of the top `limit` documents.

        Grouping is done here rather than with Whoosh's `collapse`, which ignores
        `filter`/`mask` (FilterCollector feeds the collapse child directly). Hits whose
        path `exclude` accepts are skipped.
        """
        if q is None:
            return []
        kwargs: dict[str, Any] = {}
        if filter is not None:
            kwargs["filter"] = filter
        if mask is not None:
            kwargs["mask"] = mask
        fetch = max(limit * 2, 10) if group else limit
        while True:
            results = self.searcher.search(q, limit=fetch, **kwargs)
            out: list[BM25Hit] = []
            seen: set[str] = set()
            for hit in results:
                stored = hit.fields()
                path = stored["path"]
                if exclude is not None and exclude(path):
                    continue
                if group:
                    if path in seen:
                        continue
                    seen.add(path)
                out.append(BM25Hit(int(stored["cid"]), path, float(hit.score)))
            if len(out) >= limit or results.scored_length() < fetch or fetch >= 20_000:
                # Equal scores order by path, never by docnum (segments differ between an
                # incrementally updated index and a clean one), as in `search_terms`.
                out.sort(key=lambda h: (-h.score, h.path))
                return out[:limit]
            fetch *= 4

    def all_paths_docnums(self) -> list[str]:
        """docnum -> path, for turning path sets into Whoosh filters quickly."""
        reader = self.searcher.reader()
        col = reader.column_reader("path")
        return [col[i] for i in range(reader.doc_count_all())]
