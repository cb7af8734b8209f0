"""The build's worker pool: chunked parsing keeps order, reports progress, fails loudly;
rendered pages come back in parts as the workers go."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from commonplace.compiler.corpus.scan import scan
from commonplace.compiler.build.stages import parse_file, render_page
from commonplace.compiler.build import workers
from commonplace.compiler.build.workers import Pool, Rendered, WorkerError

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


def _render_stub(ctx, d):
    return Rendered(d.path, "", False, f"excerpt of {d.path}")


def test_rendered_pages_are_taken_in_parts_after_the_parents_own_work(files, monkeypatch):
    monkeypatch.setattr(workers, "TICK", 10)  # read by the workers forked below
    events: list = []
    ticks: list[int] = []

    def meanwhile():
        time.sleep(0.3)  # the workers render meanwhile; their parts wait in their outbox
        events.append("meanwhile")

    with Pool(2, parse_file, _render_stub) as pool:
        docs = [d for d, _ in pool.parse(files) if d is not None]
        pool.progress = lambda label, total: ticks.append  # type: ignore[assignment]
        got = pool.render(None, docs, meanwhile, lambda part: events.append(list(part)))
    assert events[0] == "meanwhile"
    parts = events[1:]
    assert len(parts) > 4  # ~75 pages a worker, in parts of 10
    taken = [r.path for part in parts for r in part]
    assert sorted(taken) == sorted(r.path for r in got) == sorted(d.path for d in docs)
    assert all(r.excerpt == f"excerpt of {r.path}" for r in got)
    assert sum(ticks) == len(docs)


def test_a_failing_meanwhile_fails_the_render(files):
    def meanwhile():
        raise RuntimeError("meanwhile failed")

    with Pool(2, parse_file, _render_stub) as pool:
        docs = [d for d, _ in pool.parse(files) if d is not None]
        with pytest.raises(RuntimeError, match="meanwhile failed"):
            pool.render(None, docs, meanwhile, lambda part: None)
