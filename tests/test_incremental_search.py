"""Incremental builds give the same search answers as clean builds."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant

from commonplace.compiler.build.pipeline import BuildOptions, build

from test_incremental import IncrementalEqualsClean


QUERIES = ["text", "edited body", "alpha", "shared", "words here", "links", "heading", "zeta person", "missing"]


def search_results(corpus: Path) -> dict[str, list]:
    from commonplace.compiler.search.read.engine import SearchEngine

    engine = SearchEngine(corpus)
    try:
        out = {}
        for q in QUERIES:
            for mode in ("bm25", "exact"):
                res = engine.search({"query": q, "mode": mode, "k": 20, "corpus": "all"})
                out[f"{mode}:{q}"] = [(r["path"], r["lines"], r["title"], r["snippet"]) for r in res["results"]]
        return out
    finally:
        engine.close()


class IncrementalSearchEqualsClean(IncrementalEqualsClean):
    """The same edits; after each step the search indexes answer like a clean build's."""

    @invariant()
    def incremental_site_equals_clean_site(self):
        self.steps += 1
        build(BuildOptions(corpus=self.corpus, out=self.tmp / "site-inc", embed=False))
        clean_corpus = self.tmp / f"clean-{self.steps}" / self.corpus.name
        shutil.copytree(self.corpus, clean_corpus, ignore=shutil.ignore_patterns(".commonplace"))
        build(BuildOptions(corpus=clean_corpus, out=self.tmp / f"clean-site-{self.steps}", embed=False))
        assert search_results(self.corpus) == search_results(clean_corpus)
        shutil.rmtree(clean_corpus.parent)
        shutil.rmtree(self.tmp / f"clean-site-{self.steps}")


IncrementalSearchEqualsClean.TestCase.settings = settings(
    max_examples=6, stateful_step_count=6, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_incremental_search_equals_clean = IncrementalSearchEqualsClean.TestCase
