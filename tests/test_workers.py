"""The build's worker pool: chunked parsing keeps order, reports progress, fails loudly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commonplace.compiler.scan import scan
from commonplace.compiler.stages import parse_file, render_page
from commonplace.compiler.workers import Pool, WorkerError

from tests.benchmarks.corpus_gen import generate


@pytest.fixture()
def files(tmp_path: Path):
    generate(tmp_path / "c", 150, seed=11)
    found, _ = scan(tmp_path / "c", tmp_path / "site")
    return found


def test_chunked_parse_keeps_input_order_and_counts_progress(files):
    ticks: list[int] = []
    with Pool(2, parse_file, render_page) as pool:
        pool.progress = lambda label, total: ticks.append  # type: ignore[assignment]
        got = pool.parse(files)
        assert len(set(pool.owner.values())) == 2  # both workers took chunks
    assert [doc.path for doc, _ in got] == [f.path for f in files]
    assert sum(ticks) == len(files)


def _fails_on(name: str, how: str):
    def parse_fn(sf):
        if sf.path.endswith(name):
            if how == "raise":
                raise RuntimeError("kaboom in " + sf.path)
            os._exit(3)
        return parse_file(sf)

    return parse_fn


@pytest.mark.parametrize("how, message", [("raise", "kaboom in"), ("exit", "died")])
def test_a_failing_worker_fails_the_parse_loudly(files, how, message):
    victim = files[len(files) // 2].path.rsplit("/", 1)[-1]
    with Pool(2, _fails_on(victim, how), render_page) as pool:
        with pytest.raises(WorkerError, match=message):
            pool.parse(files)
