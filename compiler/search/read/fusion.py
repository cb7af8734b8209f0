"""Hybrid fusion: how a BM25 list and a vector list become one ranking, and how sure a
result is (its normalised score).

Weighted reciprocal rank fusion. A document scores the sum over the lists it appears in
of `weight / (k + rank)`; a vector hit weighs `vector_weight`, a BM25 hit
`lexical_weight` times a factor from its idf-weighted query coverage (the share of the
query's informative words its chunk contains): `coverage_floor` up to `coverage_start`,
rising linearly to 1 at `coverage_full`, times the list's gate (0 while the list's best
hit covers less than `gate_start`, 1 from `gate_full`). `FusionParams`; `DEFAULT` is the
rule in use, `LEGACY` the one before issue 19. The rule was chosen on one half of the
labelled benchmark (`tests/benchmarks/bench_quality.py`) and checked on the other half;
the table is in docs/decisions/2026-11-23-hybrid-fusion-weights.md.

The normalised score (`score_normalized`, 0-1) is the strongest of three pieces of
evidence, each mapped onto 0-1: the lexical coverage; the cosine similarity rescaled
between `COSINE_NONE` (what unrelated text scores against this model) and `COSINE_FULL`;
and how far the cosine stands above the vector list's background; then scaled a little by
the result's raw score relative to the answer's best (`spread`), so results that matched
equally well by that evidence but ranked apart do not tie; and last made to follow the
ranking (`monotone`), so that a result never scores above one ranked before it and
`min_score` keeps a prefix of the answer. It says how well a result matched, comparably
across queries, so `min_score` and the weak-list cut-off can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence


@dataclass(frozen=True)
class FusionParams:
    k: float = 60.0
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    coverage_floor: float = 1.0  # BM25 weight factor at zero coverage (1: coverage ignored)
    coverage_start: float = 0.0  # coverage where the ramp starts
    coverage_full: float = 1.0  # coverage from which a BM25 hit counts fully
    # The whole BM25 list counts by how well its best hit covers the query: 0 up to
    # gate_start, 1 from gate_full (both 0: no gate). A question none of whose pages
    # shares its informative words is a question for the vector list.
    gate_start: float = 0.0
    gate_full: float = 0.0

    def label(self) -> str:
        cov = ("no coverage" if self.coverage_floor >= 1 else
               f"cov {self.coverage_floor:g}@{self.coverage_start:g}->1@{self.coverage_full:g}")
        gate = f" gate {self.gate_start:g}->{self.gate_full:g}" if self.gate_full > 0 else ""
        return f"k={self.k:g} bm25 x{self.lexical_weight:g} vector x{self.vector_weight:g} {cov}{gate}"


# The rule before 2026-11-23 (issue 19): BM25 hits below 34% coverage weighed nothing.
LEGACY = FusionParams(k=60, coverage_floor=0.0, coverage_start=0.34, coverage_full=0.8)
PLAIN_RRF = FusionParams(k=60)
# Chosen on the benchmark's tuning half (see the module docstring).
DEFAULT = FusionParams(k=20, lexical_weight=2.0, coverage_floor=0.1, coverage_start=0.0, coverage_full=0.8,
                       gate_start=0.2, gate_full=0.4)

# Cosine similarity of all-MiniLM-L6-v2 query/chunk pairs: unrelated text and nonsense
# words reach about COSINE_NONE; the answer to a question usually scores above
# COSINE_FULL. A hit also counts by how far it stands above the list's background (the
# 10th best document's cosine): made-up words give flat lists (at most 0.12 above it),
# a paraphrased question's answer stands out by 0.17 or more (measured on the benchmark;
# see the decision).
COSINE_NONE = 0.2
COSINE_FULL = 0.6
STANDOUT_NONE = 0.06
STANDOUT_FULL = 0.26
BACKGROUND_RANK = 10
# In hybrid mode, when even the vector list's best hit scores below this (normalised),
# the hits only that list found are left out, unless the request sets `min_score`.
WEAK_VECTOR_ONLY = 0.35


def lexical_factor(coverage: float | None, p: FusionParams | None = None) -> float:
    """A BM25 hit's weight in fusion, from its query coverage (None: unknown, full weight)."""
    p = p or DEFAULT
    if coverage is None or p.coverage_floor >= 1.0:
        return p.lexical_weight
    span = max(1e-9, p.coverage_full - p.coverage_start)
    ramp = min(1.0, max(0.0, (coverage - p.coverage_start) / span))
    return p.lexical_weight * (p.coverage_floor + (1.0 - p.coverage_floor) * ramp)


def list_gate(coverages: Iterable[float | None], p: FusionParams | None = None) -> float:
    """The BM25 list's weight as a whole, from its best hit's coverage (1 without a gate)."""
    p = p or DEFAULT
    if p.gate_full <= 0:
        return 1.0
    best = max((c for c in coverages if c is not None), default=None)
    if best is None:
        return 1.0
    return min(1.0, max(0.0, (best - p.gate_start) / max(1e-9, p.gate_full - p.gate_start)))


def prior_scale(p: FusionParams | None = None) -> float:
    """Document priors (index_rows.prior) are sized against k=60, where adjacent top ranks
    differ by about 1/62; scaled by this they stay worth the same fraction of a rank."""
    return 62.0 / ((p or DEFAULT).k + 2.0)


def rrf(lists: Mapping[str, Sequence[tuple[str, float]]], k: float) -> dict[str, float]:
    """Weighted reciprocal rank fusion of ranked (key, weight) lists: {key: score}."""
    out: dict[str, float] = {}
    for items in lists.values():
        for rank, (key, weight) in enumerate(items, 1):
            out[key] = out.get(key, 0.0) + weight / (k + rank)
    return out


def lexical_weights(bm25: Sequence[tuple[str, float | None]], p: FusionParams | None = None) -> list[float]:
    """Each BM25 hit's weight in fusion: its coverage factor times the list's gate."""
    gate = list_gate((c for _k, c in bm25), p)
    return [gate * lexical_factor(c, p) for _k, c in bm25]


def fuse_keys(bm25: Sequence[tuple[str, float | None]], vector: Sequence[tuple[str, float | None]],
              p: FusionParams | None = None) -> list[str]:
    """Keys in fused order, from a BM25 list of (key, coverage) and a vector list of (key,
    cosine). Ties go to the better single rank, then the key (the engine adds priors)."""
    p = p or DEFAULT
    weights = lexical_weights(bm25, p)
    scores = rrf({"bm25": [(key, w) for (key, _c), w in zip(bm25, weights)],
                  "vector": [(key, p.vector_weight) for key, _cos in vector]}, p.k)
    best: dict[str, int] = {}
    for items in (bm25, vector):
        for rank, (key, _c) in enumerate(items, 1):
            best[key] = min(best.get(key, rank), rank)
    return sorted(scores, key=lambda key: (-scores[key], best[key], key))


def background(cosines: Sequence[float]) -> float | None:
    """The cosine of the list's BACKGROUND_RANK-th document; None when the list is shorter.
    With fewer documents than that (a new corpus, a handful of sessions) the last one is no
    background: any hit stands out above the least related note, and a question nothing
    answers ("the office wifi password" in nine notes) looked answered."""
    if len(cosines) < BACKGROUND_RANK:
        return None
    return cosines[BACKGROUND_RANK - 1]


def cosine_evidence(cosine: float | None, back: float | None = None) -> float:
    """0-1: the cosine rescaled, or how far it stands above the background, if more."""
    if cosine is None:
        return 0.0
    ev = (cosine - COSINE_NONE) / (COSINE_FULL - COSINE_NONE)
    if back is not None:
        ev = max(ev, (cosine - back - STANDOUT_NONE) / (STANDOUT_FULL - STANDOUT_NONE))
    return min(1.0, max(0.0, ev))


def better_passage(cosine: float | None, back: float | None, coverage: float | None) -> bool:
    """At equal ranks in both lists, the vector list's chunk of a page is shown when it
    matched better than the BM25 chunk covers the query: a page's first chunk holds its
    title, so it often wins BM25 for the page's name while the passage that answers is
    another chunk."""
    return cosine_evidence(cosine, back) > (coverage or 0.0)


def normalized_score(coverage: float | None, cosine: float | None, back: float | None = None) -> float:
    """How well a result matched, 0-1: the stronger of lexical coverage and vector evidence."""
    return round(max(min(1.0, max(0.0, coverage or 0.0)), cosine_evidence(cosine, back)), 4)


# How much a result's rank within its answer lowers its normalised score: the best result
# keeps its evidence score, one with half the best raw score loses SPREAD / 2 of it. Many
# pages contain every word of a short query (coverage 1.0); without this they tied at 1.0
# and `min_score` could not tell them apart.
SPREAD = 0.2


def spread(evidence: Sequence[float], scores: Sequence[float]) -> list[float]:
    """Normalised scores for one answer: each result's evidence (`normalized_score`)
    scaled by its raw score relative to the answer's best, so different raw scores never
    tie (equal raw scores keep equal values)."""
    top = max((s for s in scores if s is not None), default=0.0)
    if top <= 0:
        return [round(e, 4) for e in evidence]
    return [round(e * (1.0 - SPREAD * (1.0 - min(1.0, max(0.0, (s or 0.0) / top)))), 4)
            for e, s in zip(evidence, scores)]


STEP = 0.0001  # the smallest difference `score_normalized` shows (it has four decimals)


def ranked_scores(evidence: Sequence[float], scores: Sequence[float]) -> list[float]:
    """One answer's `score_normalized`, in ranked order: each result's evidence spread by
    its raw score (`spread`), then made to follow the ranking (`monotone`)."""
    return monotone(spread(evidence, scores), scores)


def monotone(values: Sequence[float], scores: Sequence[float]) -> list[float]:
    """`values` (one answer's normalised scores, in ranked order) made to follow the
    ranking, so `min_score` cuts a prefix of it: each value at most the one before it, and
    at least STEP below it when their raw `scores` differ, down to 0. A value out of order
    is lowered, never its betters raised: pooling them into their mean lifted the weak
    results ranked above a demoted saved report that matched well, and active memory took
    them for evidence. In order already, values are kept as they are (up to that step)."""
    out: list[float] = []
    for i, v in enumerate(values):
        v = min(1.0, max(0.0, float(v)))
        if i:
            cap = out[i - 1] if scores[i] == scores[i - 1] else out[i - 1] - STEP
            v = max(0.0, min(v, cap))
        out.append(round(v, 4))
    return out


def weak(values: Iterable[float], threshold: float | None = None) -> bool:
    """Whether no value reaches `threshold` (default `WEAK_VECTOR_ONLY`): nothing matched well."""
    limit = WEAK_VECTOR_ONLY if threshold is None else threshold
    return all(v < limit for v in values)
