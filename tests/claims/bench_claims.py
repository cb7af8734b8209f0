"""Claim store benchmark (not collected by pytest): `python tests/claims/bench_claims.py [--events N]`.

Measures log append throughput (with and without fsync), reading + folding a large log,
the build stage over many entities, and end-to-end `ClaimStore.add` latency.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

from commonplace.compiler.claims import ClaimStore, run_stage
from commonplace.compiler.claims.fold import fold
from commonplace.compiler.claims.log import ClaimLog

UTC = dt.timezone.utc


def ev(i: int, entity: str, at: dt.datetime, actor: str = "bench") -> dict:
    return {"id": f"e_{i:08d}", "claim_id": f"c_{i:08d}", "entity": entity, "kind": "fact",
            "statement": f"Statement number {i} about {entity} with some ordinary words in it",
            "event": "added", "valid_from": None, "valid_to": None, "confidence": 0.8, "evidence": None,
            "reason": None, "actor": actor, "at": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--entities", type=int, default=1_000)
    ap.add_argument("--appends", type=int, default=2_000)
    args = ap.parse_args()
    report: dict[str, float | int] = {}
    base = dt.datetime(2026, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for fsync in (False, True):
            log = ClaimLog(root / f"fs{int(fsync)}", fsync=fsync)
            s = timed(lambda: [log.append(ev(i, "person:alex", base)) for i in range(args.appends)])
            report[f"append_per_s_fsync_{fsync}"] = round(args.appends / s)

        corpus = root / "corpus"
        (corpus / "people").mkdir(parents=True)
        for j in range(args.entities):
            (corpus / f"people/p{j}.md").write_text(f"# Person {j}\n\nHuman text.\n")
        log = ClaimLog(corpus, fsync=False)
        events = [ev(i, f"person:p{i % args.entities}", base + dt.timedelta(seconds=i), actor=f"a{i % 4}")
                  for i in range(args.events)]
        report["append_many_s"] = round(timed(lambda: log.append_many(events)), 3)
        t0 = time.perf_counter()
        read = log.read()
        report["read_s"] = round(time.perf_counter() - t0, 3)
        report["fold_s"] = round(timed(lambda: fold(read.events)), 3)
        res = {}
        report["stage_first_s"] = round(timed(lambda: res.setdefault("r", run_stage(corpus))), 3)
        report["stage_pages_written"] = len(res["r"].pages_updated)
        report["stage_noop_s"] = round(timed(lambda: run_stage(corpus)), 3)
        store = ClaimStore(corpus, actor="bench")
        n = 20
        report["add_ms_at_log_size"] = args.events
        report["add_ms"] = round(timed(lambda: [store.add("person:p1", f"new fact {k}") for k in range(n)]) / n * 1000, 1)
    report["events"], report["entities"] = args.events, args.entities
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
