"""bench_against: the two builds alternate, and the ratios come from what was measured."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.benchmarks.bench_against import render_against, run_against


class FakeBuild:
    def __init__(self, name: str, order: list[str], wall: float, cpu: float) -> None:
        self.exe, self.order, self.wall, self.cpu = name, order, wall, cpu

    def build(self, corpus: Path, out: Path):
        self.order.append(self.exe)
        return SimpleNamespace(seconds=self.wall, cpu_seconds=self.cpu, returncode=0), {"documents": 7}


def test_builds_alternate_and_ratios_follow_the_numbers(tmp_path):
    order: list[str] = []
    this, other = FakeBuild("new", order, 11.0, 22.0), FakeBuild("old", order, 10.0, 20.0)
    result = run_against(this, other, tmp_path, tmp_path, 3, lambda msg: None)
    assert order == ["new", "old", "old", "new", "new", "old"]
    r = result.summary()
    assert r["n"] == 7 and r["this_s"] == [11.0] * 3 and r["other_cpu"] == [20.0] * 3
    assert abs(r["median_ratio"] - 1.1) < 1e-9 and abs(r["cpu_best_ratio"] - 1.1) < 1e-9
    r["load"] = "1.0"
    text = render_against(r)
    assert "+10.0% by the median" in text and "| this: new | CPU s | 22.00, 22.00, 22.00 | 22.00 | 22.00 |" in text
