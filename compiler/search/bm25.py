"""The BM25 index: the only module that uses the Whoosh API (Whoosh-Reloaded 2.7.5).

One Whoosh document per chunk. Text fields use `text.analyze` (identifier-aware,
stemmed); `title` carries the title and aliases, `headings` the heading path, `body` the
chunk text, `meta` the path words and tags. Ranking is Whoosh's BM25F with per-field
boosts set on the query terms (title 3, headings 2, meta 1.5, body 1). Queries are built
here from a `ParsedQuery`, never by Whoosh's query parser, so no input can raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from whoosh import fields, formats, index, scoring
from whoosh import query as wq
from whoosh.analysis import Token, Tokenizer
from whoosh.system import pack_uint

from .text import analyze, term_counts, unique_terms, weighted_terms

FIELD_BOOSTS = {"title": 3.0, "headings": 2.0, "meta": 1.5, "body": 1.0}
MAX_QUERY_TERMS = 48
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

    Same postings and field lengths as the analyzer would give; about 3x less Python work
    per posting when indexing (the index is built in pure Python, so this matters).
    """

    def word_values(self, value: str, analyzer: Any, **kwargs: Any):
        fb = self.field_boost
        return ((w, n, n * fb, pack_uint(n)) for w, n in term_counts(value).items())


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
        title=_text_field(ana),
        headings=_text_field(ana),
        body=_text_field(ana),
        meta=_text_field(ana),
    )


def weighting() -> scoring.WeightingModel:
    return scoring.BM25F(B=0.75, K1=1.2)


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

    def fields(self) -> dict[str, str]:
        out = {
            "cid": str(self.cid), "path": self.path, "kind": self.kind, "type": self.type or "note",
            "tags": ",".join(t.replace(",", " ") for t in self.tags), "title": self.title,
            "headings": self.headings, "body": self.body, "meta": self.meta,
        }
        if self.status:
            out["status"] = self.status
        if self.date:
            out["date"] = self.date
        return out


class BM25Writer:
    """Applies one batch of changes to a Whoosh index directory, then commits."""

    def __init__(self, directory: Path, create: bool, bulk: bool = False):
        directory.mkdir(parents=True, exist_ok=True)
        if create or not index.exists_in(str(directory)):
            self.ix = index.create_in(str(directory), make_schema())
        else:
            self.ix = index.open_dir(str(directory))
        self._w = self.ix.writer(limitmb=256 if bulk else 64)

    def delete_paths(self, paths: Iterable[str]) -> None:
        for p in paths:
            self._w.delete_by_term("path", p)

    def add(self, docs: Iterable[ChunkDoc]) -> None:
        for d in docs:
            self._w.add_document(**d.fields())

    def commit(self, optimize: bool = False) -> None:
        self._w.commit(optimize=optimize)
        self.ix.close()

    def cancel(self) -> None:
        try:
            self._w.cancel()
        finally:
            self.ix.close()


def open_index(directory: Path) -> Any:
    return index.open_dir(str(directory))


@dataclass
class BM25Hit:
    cid: int
    path: str
    score: float
    coverage: float = 1.0  # share of the query's (weighted) terms the chunk matched


class BM25Searcher:
    """A searcher over one generation's Whoosh index; reused across queries."""

    def __init__(self, directory: Path):
        self.ix = open_index(directory)
        self.searcher = self.ix.searcher(weighting=weighting())
        self._kind_mask: Any = None

    def close(self) -> None:
        self.searcher.close()
        self.ix.close()

    @property
    def doc_count(self) -> int:
        return self.searcher.doc_count()

    def _df(self, term: str) -> int:
        s = self.searcher
        return max(s.doc_frequency(f, term) for f in FIELD_BOOSTS)

    def build_query(self, words: str, phrases: Sequence[str] = (), prefixes: Sequence[str] = (),
                    fielded: Sequence[tuple[str, str]] = ()) -> tuple[Any, dict[str, float]]:
        """OR of every query term over the text fields: (query or None, {term: weight}).

        Weights: whole identifiers 2, words 1, identifier parts 0.5 (see `text`); they
        scale the field boosts and define a hit's `coverage`.
        """
        weights = weighted_terms(" ".join([words, *phrases]))
        if len(weights) > MAX_QUERY_TERMS:
            # Long pastes: keep the rarest terms the index actually has.
            scored = [(self._df(t), i, t) for i, t in enumerate(weights)]
            present = [x for x in scored if x[0] > 0]
            present.sort()
            keep = {t for _, _, t in present[:MAX_QUERY_TERMS]}
            weights = {t: w for t, w in weights.items() if t in keep}
        clauses: list[Any] = []
        for t, w in weights.items():
            for f, boost in FIELD_BOOSTS.items():
                clauses.append(wq.Term(f, t, boost=boost * w))
        for p in prefixes:
            for t in unique_terms(p)[:1]:
                if len(t) >= MIN_PREFIX:
                    for f, boost in FIELD_BOOSTS.items():
                        clauses.append(wq.Prefix(f, t, boost=boost * 0.5))
                    weights.setdefault(t, 1.0)
        field_map = {"title": ["title"], "heading": ["headings"], "headings": ["headings"], "body": ["body"],
                     "path": ["meta"], "tag": ["meta"], "tags": ["meta"]}
        for name, value in fielded:
            for t in unique_terms(value):
                for f in field_map.get(name, []):
                    clauses.append(wq.Term(f, t, boost=FIELD_BOOSTS[f] * 2))
                weights.setdefault(t, 1.0)
            if name in {"tag", "tags"}:
                clauses.append(wq.Term("tags", value.lower(), boost=3.0))
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

    def search(self, q: Any, limit: int, filter: Any = None, mask: Any = None, group: bool = True,
               weights: dict[str, float] | None = None) -> list[BM25Hit]:
        """Top `limit` chunks, or with `group` the best chunk of each of the top `limit` documents.

        Grouping is done here rather than with Whoosh's `collapse`, which ignores
        `filter`/`mask` (FilterCollector feeds the collapse child directly). With
        `weights`, each hit gets its `coverage` of the query terms.
        """
        if q is None:
            return []
        kwargs: dict[str, Any] = {}
        if filter is not None:
            kwargs["filter"] = filter
        if mask is not None:
            kwargs["mask"] = mask
        if weights:
            kwargs["terms"] = True
        if weights:
            # Coverage counts informative terms more: weight x idf (unseen terms are rare).
            weights = {t: w * self.searcher.idf("body", t) for t, w in weights.items()}
        total = sum(weights.values()) if weights else 0.0
        fetch = max(limit * 8, 40) if group else limit
        while True:
            results = self.searcher.search(q, limit=fetch, **kwargs)
            out: list[BM25Hit] = []
            seen: set[str] = set()
            for hit in results:
                stored = hit.fields()
                path = stored["path"]
                if group:
                    if path in seen:
                        continue
                    seen.add(path)
                h = BM25Hit(int(stored["cid"]), path, float(hit.score))
                if weights and total > 0:
                    matched = {t.decode("utf-8") if isinstance(t, bytes) else t for _f, t in hit.matched_terms()}
                    h.coverage = min(1.0, sum(weights.get(t, 0.0) for t in matched) / total)
                out.append(h)
                if len(out) >= limit:
                    break
            if len(out) >= limit or results.scored_length() < fetch or fetch >= 20_000:
                return out
            fetch *= 4

    def all_paths_docnums(self) -> list[str]:
        """docnum -> path, for turning path sets into Whoosh filters quickly."""
        reader = self.searcher.reader()
        col = reader.column_reader("path")
        return [col[i] for i in range(reader.doc_count_all())]
