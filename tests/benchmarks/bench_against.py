"""Two `commonplace` executables on one corpus, in turn: `bench_build --against OTHER`.

    python -m tests.benchmarks.bench_build --n 10000 --compare-n 0 --no-hugo --no-mkdocs \\
        --against /path/to/older/commonplace --repeat 5

A regression is a small difference on a shared, noisy machine, so the two builds are
timed in the same run and in alternating order (A B, B A, A B, ...): a change in the
machine's load during the run hits both alike. Each build is clean and render-only
(`--no-embed --no-index`, as `bench_build`). Prints, for each executable, every time,
the best and the median, and the ratio of this build to the other one for both.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Against:
    n: int
    this: str
    other: str
    this_s: list[float] = field(default_factory=list)
    other_s: list[float] = field(default_factory=list)
    this_cpu: list[float] = field(default_factory=list)
    other_cpu: list[float] = field(default_factory=list)
    load: str = ""

    def summary(self) -> dict:
        out = {"n": self.n, "this": self.this, "other": self.other, "this_s": self.this_s,
               "other_s": self.other_s, "this_cpu": self.this_cpu, "other_cpu": self.other_cpu, "load": self.load}
        for key, a, b in (("", self.this_s, self.other_s), ("cpu_", self.this_cpu, self.other_cpu)):
            if a and b:
                out[f"{key}best_ratio"] = min(a) / min(b)
                out[f"{key}median_ratio"] = statistics.median(a) / statistics.median(b)
        return out


def run_against(this, other, corpus: Path, base: Path, repeat: int, log) -> Against:
    """`this` and `other` are `bench_build.Commonplace`s; each builds `corpus` `repeat`
    times, alternating which goes first."""
    result = Against(0, this.exe, other.exe)
    pair = [("this", this), ("other", other)]
    for i in range(repeat):
        for name, cp in (pair if i % 2 == 0 else pair[::-1]):
            log(f"[against] {name} build ({i + 1}/{repeat}) ...")
            m, report = cp.build(corpus, base / f"site-against-{name}")
            (result.this_s if name == "this" else result.other_s).append(round(m.seconds, 3))
            if m.cpu_seconds is not None:
                (result.this_cpu if name == "this" else result.other_cpu).append(m.cpu_seconds)
            result.n = int(report.get("documents", 0) or result.n)
            log(f"[against]   {m.seconds:.2f} s, cpu {m.cpu_seconds} s (exit {m.returncode})")
    return result


def render_against(r: dict) -> str:
    lines = [
        "", f"same run, alternating, render-only, {r['n']:,} documents (load {r['load']}):",
        "| build | measure | runs | best | median |", "|---|---|---|---:|---:|",
    ]
    for key in ("this", "other"):
        for what, times in (("wall s", r[f"{key}_s"]), ("CPU s", r.get(f"{key}_cpu") or [])):
            if times:
                lines.append(f"| {key}: {r[key]} | {what} | {', '.join(f'{t:.2f}' for t in times)} | {min(times):.2f} | "
                             f"{statistics.median(times):.2f} |")
    for what, key in (("wall", ""), ("CPU", "cpu_")):
        if f"{key}best_ratio" in r:
            lines.append(f"this / other, {what}: best {r[f'{key}best_ratio']:.3f}x, median {r[f'{key}median_ratio']:.3f}x "
                         f"({100 * (r[f'{key}median_ratio'] - 1):+.1f}% by the median)")
    return "\n".join(lines)
