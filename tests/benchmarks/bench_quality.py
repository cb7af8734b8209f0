"""Search quality benchmark: R@5, R@10 and MRR per mode, corpus and category, with the
hybrid fusion parameters chosen on one half of the questions and reported on the other.

    python -m tests.benchmarks.bench_quality [--workdir DIR] [--reuse] [--conversations 8] [--json]
        [--model static]

Corpora (all built here, with the real default model, all-MiniLM-L6-v2, from its wheel, or
`--model`, e.g. `static`, the static tier distilled from it):

- `dialogue`: `--conversations` generated conversations (`quality/dialogue.py`), one short
  file per turn, long questions: the case of issue 19. Conversations with an even number
  tune, odd ones are held out (whole corpora apart, as the issue's own split did).
- `docs`: a copy of this repository's docs/ (or `--docs DIR`, to compare two versions of
  the code on the same pages) with hand-written paraphrased questions
  (`quality/docs_questions.py`); alternate questions tune / are held out.
- `notes`: the search tests' hand-written memory corpus (tests/search/retrieval_corpus.py:
  keyword, identifier and lexically disjoint paraphrase questions); alternate halves.
- `synthetic`: `corpus_gen` (300 documents) with questions derived from its text
  (`quality/synthetic.py`); alternate questions tune / are held out.

Steps: build each corpus; for every question take the engine's two candidate lists (depth
50: BM25 with each hit's query coverage, vector with each hit's cosine) and the engine's
own top 10 in each mode; then fuse the candidate lists offline under every rule of a small
grid (`compiler/search/read/fusion.py`'s formula), choose the rule on the tuning half (largest
worst-corpus margin of hybrid R@10 over the better single mode, then mean R@10, then MRR)
and report it on the held-out half next to today's and plain RRF. Also measures nonsense
queries (how many hybrid results they get, and their normalised scores) and where weak
vector-only hits are cut. `--reuse` keeps built corpora and cached candidate lists in
`--workdir` while the search code is unchanged (then the analysis alone takes about 10 s).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "tests.benchmarks"

from .quality import dialogue, docs_questions, synthetic  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MODES = ("bm25", "vector", "hybrid")
NONSENSE = ["xyzzy", "plugh frobozz", "qwertyuiop zxcvbnm", "blorptastic snargle", "vvv kkk jjj",
            "glarb fnord wibble"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- corpora


def make_corpora(work: Path, conversations: int, reuse: bool, docs: Path = REPO / "docs") -> list[dict[str, Any]]:
    """[{name, root, group, questions: [{category, text, relevant, split}]}]"""
    out = []

    def prepared(root: Path) -> bool:
        return reuse and (root / ".commonplace" / "index" / "CURRENT").exists()

    for i in range(conversations):
        root = work / f"dialogue-{i}"
        if not prepared(root):
            shutil.rmtree(root, ignore_errors=True)
        qs = dialogue.generate(root, seed=i, name=f"dialogue-{i}")
        split = "tune" if i % 2 == 0 else "test"
        out.append({"name": f"dialogue-{i}", "root": root, "group": "dialogue",
                    "questions": [dict(category=q.category, text=q.text, relevant=q.relevant, split=split)
                                  for q in qs]})
    root = work / "docs"
    if not prepared(root):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(docs, root, ignore=shutil.ignore_patterns(".commonplace"))
    dq = []
    for j, (cat, text, rel) in enumerate(docs_questions.QUESTIONS):
        for p in rel:
            if not (root / p).is_file():
                raise SystemExit(f"docs question {text!r}: {p} is not in docs/ any more; update quality/docs_questions.py")
        dq.append(dict(category=cat, text=text, relevant=rel, split="tune" if j % 2 == 0 else "test"))
    out.append({"name": "docs", "root": root, "group": "docs", "questions": dq})
    root = work / "notes"
    if not prepared(root):
        shutil.rmtree(root, ignore_errors=True)
    rc = _retrieval_corpus()
    rc.write(root)
    out.append({"name": "notes", "root": root, "group": "notes",
                "questions": [dict(category=kind, text=text, relevant=rel, split="tune" if j % 2 == 0 else "test")
                              for j, (kind, text, rel) in enumerate(rc.QUESTIONS)]})
    root = work / "synthetic"
    if not prepared(root):
        shutil.rmtree(root, ignore_errors=True)
    sq = synthetic.generate(root, n=300, seed=0)
    out.append({"name": "synthetic", "root": root, "group": "synthetic",
                "questions": [dict(category=q.category, text=q.text, relevant=q.relevant,
                                   split="tune" if j % 2 == 0 else "test") for j, q in enumerate(sq)]})
    return out


def _retrieval_corpus() -> Any:
    """tests/search/retrieval_corpus.py: the search tests' hand-written notes and questions."""
    import importlib.util

    path = REPO / "tests" / "search" / "retrieval_corpus.py"
    spec = importlib.util.spec_from_file_location("retrieval_corpus", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def build(corpus: dict[str, Any]) -> float:
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.search.index.stage import build_indexes

    t0 = time.perf_counter()
    root = corpus["root"]
    # a clean index every time (the search code may have changed); the embedding cache stays
    shutil.rmtree(root / ".commonplace" / "index", ignore_errors=True)
    report = build_indexes(root, load_corpus(root).docs)
    if report.embeddings_pending:
        raise SystemExit(f"{corpus['name']}: {report.embeddings_pending} chunks not embedded")
    return time.perf_counter() - t0


def collect(corpus: dict[str, Any]) -> None:
    """Adds to each question its candidate lists and the engine's top 10 per mode."""
    from commonplace.compiler.search.read.engine import SearchEngine

    engine = SearchEngine(corpus["root"])
    try:
        for q in corpus["questions"]:
            q["candidates"] = engine.candidates(q["text"], corpus="all")
            q["engine"] = {}
            for mode in MODES:
                res = engine.search({"query": q["text"], "mode": mode, "k": 10, "corpus": "all"})
                q["engine"][mode] = [[r["path"], r["score_normalized"]] for r in res["results"]]
        corpus["nonsense"] = []
        for text in NONSENSE:
            res = engine.search({"query": text, "k": 20, "corpus": "all"})
            c = engine.candidates(text, corpus="all")
            corpus["nonsense"].append({"text": text, "count": res["count"], "warnings": res["warnings"],
                                       "candidates": c})
    finally:
        engine.close()


# --------------------------------------------------------------------------- metrics


def metrics(ranked: list[str], relevant: list[str]) -> tuple[float, float, float]:
    rel = set(relevant)
    r5 = len(set(ranked[:5]) & rel) / len(rel)
    r10 = len(set(ranked[:10]) & rel) / len(rel)
    first = next((i for i, p in enumerate(ranked[:10], 1) if p in rel), None)
    return r5, r10, (1.0 / first if first else 0.0)


def mean3(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    if not rows:
        return (float("nan"),) * 3  # type: ignore[return-value]
    return tuple(100 * sum(r[i] for r in rows) / len(rows) for i in range(3))  # type: ignore[return-value]


def fused(q: dict[str, Any], params: Any, drop: float | None = None) -> list[str]:
    from commonplace.compiler.search.read import fusion

    bm = [(p, c) for p, c in q["candidates"]["bm25"]]
    vec = [(p, c) for p, c in q["candidates"]["vector"]]
    order = fusion.fuse_keys(bm, vec, params)
    vlist = q["candidates"]["vector"]
    if drop is not None and vlist:  # the engine's cut: the vector list's best hit is weak
        back = fusion.background([c for _, c in vlist])
        if fusion.normalized_score(None, vlist[0][1], back) < drop:
            in_bm = {p for p, _ in bm}
            order = [p for p in order if p in in_bm]
    return order


def single(q: dict[str, Any], mode: str) -> list[str]:
    return [p for p, _ in q["candidates"][mode]]


def evaluate(questions: list[dict[str, Any]], params: Any, drop: float | None = None) -> dict[str, tuple]:
    return {"bm25": mean3([metrics(single(q, "bm25"), q["relevant"]) for q in questions]),
            "vector": mean3([metrics(single(q, "vector"), q["relevant"]) for q in questions]),
            "hybrid": mean3([metrics(fused(q, params, drop), q["relevant"]) for q in questions])}


def grid() -> list[Any]:
    from commonplace.compiler.search.read.fusion import LEGACY, PLAIN_RRF, FusionParams

    out = [LEGACY, PLAIN_RRF]
    for k, lw, floor, full, gate in itertools.product((20, 60), (1.0, 1.5, 2.0, 3.0), (0.0, 0.1, 0.2, 0.35, 1.0),
                                                      (0.4, 0.6, 0.8), ((0, 0), (0.2, 0.4), (0.3, 0.5), (0.3, 0.6))):
        if floor >= 1.0 and full != 0.4:
            continue
        out.append(FusionParams(k=k, lexical_weight=lw, coverage_floor=floor, coverage_start=0.0,
                                coverage_full=1.0 if floor >= 1 else full, gate_start=gate[0], gate_full=gate[1]))
    return out


def choose(corpora: list[dict[str, Any]]) -> tuple[Any, list[tuple]]:
    """The rule chosen on the tuning half: the largest worst-corpus margin of hybrid R@10
    over the better single mode, then the best mean R@10 over the corpora, then the
    largest worst-corpus MRR margin."""
    groups = sorted({c["group"] for c in corpora})
    tune = {g: [q for c in corpora if c["group"] == g for q in c["questions"] if q["split"] == "tune"]
            for g in groups}
    scored = []
    for p in grid():
        margins, mrr_margins, r10s = [], [], []
        for g in groups:
            m = evaluate(tune[g], p)
            margins.append(m["hybrid"][1] - max(m["bm25"][1], m["vector"][1]))
            mrr_margins.append(m["hybrid"][2] - max(m["bm25"][2], m["vector"][2]))
            r10s.append(m["hybrid"][1])
        scored.append((min(margins), statistics.mean(r10s), min(mrr_margins), p))
    scored.sort(key=lambda t: (-round(t[0], 6), -round(t[1], 6), -round(t[2], 6)))
    return scored[0][3], scored


# --------------------------------------------------------------------------- report


def fmt(m: tuple) -> str:
    return f"{m[0]:5.1f} {m[1]:5.1f} {m[2]:5.1f}"


def report(corpora: list[dict[str, Any]], chosen: Any, scored: list[tuple], drop: float) -> str:
    from commonplace.compiler.search.read import fusion

    lines = []
    rules = [("hybrid today", fusion.LEGACY), ("plain RRF", fusion.PLAIN_RRF), ("chosen", chosen)]
    groups = sorted({c["group"] for c in corpora})
    lines.append("R@5 R@10 MRR (percent), k=10; offline fusion of the engine's depth-50 lists")
    for name, p in rules:
        lines.append(f"  {name}: {p.label()}")
    lines.append(f"{'split':<6} {'corpus':<10} {'n':>4}  {'bm25':>17}  {'vector':>17}  "
                 + "  ".join(f"{name:>17}" for name, _ in rules))
    for split in ("tune", "test"):
        for g in groups + ["all"]:
            qs = [q for c in corpora if g in (c["group"], "all") for q in c["questions"] if q["split"] == split]
            base = evaluate(qs, fusion.PLAIN_RRF)
            hy = [evaluate(qs, p)["hybrid"] for _, p in rules]
            lines.append(f"{split:<6} {g:<10} {len(qs):>4}  {fmt(base['bm25']):>17}  {fmt(base['vector']):>17}  "
                         + "  ".join(f"{fmt(h):>17}" for h in hy))
    lines.append("")
    lines.append("held-out half by category (R@10): bm25 / vector / today / chosen")
    cats = sorted({(c["group"], q["category"]) for c in corpora for q in c["questions"]})
    for g, cat in cats:
        qs = [q for c in corpora if c["group"] == g for q in c["questions"] if q["split"] == "test"
              and q["category"] == cat]
        a, b = evaluate(qs, fusion.LEGACY), evaluate(qs, chosen)
        lines.append(f"  {g:<10} {cat:<12} n={len(qs):>3}  {a['bm25'][1]:5.1f} / {a['vector'][1]:5.1f} / "
                     f"{a['hybrid'][1]:5.1f} / {b['hybrid'][1]:5.1f}")
    lines.append("")
    lines.append("best rules on the tuning half (worst-corpus margin R@10, mean R@10, worst-corpus margin MRR):")
    for margin, r10, mrr, p in scored[:8]:
        lines.append(f"  {margin:+5.1f} {r10:5.1f} {mrr:+5.1f}  {p.label()}")
    lines.append("")
    lines.append("the engine itself (hybrid = chosen rule + priors + weak-list cut), held-out half:")
    for g in groups + ["all"]:
        qs = [q for c in corpora if g in (c["group"], "all") for q in c["questions"] if q["split"] == "test"]
        row = [fmt(mean3([metrics([p for p, _ in q["engine"][m]], q["relevant"]) for q in qs])) for m in MODES]
        lines.append(f"  {g:<10} n={len(qs):>4}  " + "  ".join(f"{m} {r}" for m, r in zip(MODES, row)))
    lines.append("")
    lines.append(_calibration(corpora, chosen, drop))
    return "\n".join(lines)


def _calibration(corpora: list[dict[str, Any]], chosen: Any, drop: float) -> str:
    from commonplace.compiler.search.read import fusion

    lines = ["weak-list cut-off (vector-only hits left out when the vector list's best normalised score is "
             "below it), tuning half:",
             "  cut   R@10 all   dialogue  docs  notes  synthetic   nonsense: hybrid results per query (mean)"]
    tune = [q for c in corpora for q in c["questions"] if q["split"] == "tune"]
    nonsense = [n for c in corpora for n in c["nonsense"]]
    for cut in (None, 0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
        per = []
        for g in ("dialogue", "docs", "notes", "synthetic"):
            qs = [q for c in corpora if c["group"] == g for q in c["questions"] if q["split"] == "tune"]
            per.append(evaluate(qs, chosen, cut)["hybrid"][1])
        kept = statistics.mean(min(20, len(fused(n, chosen, cut))) for n in nonsense)
        lines.append(f"  {'none' if cut is None else f'{cut:.2f}':<5} {evaluate(tune, chosen, cut)['hybrid'][1]:6.1f}"
                     f"   {per[0]:8.1f} {per[1]:5.1f} {per[2]:6.1f} {per[3]:9.1f}   {kept:5.1f}")
    top_rel, top_non, out_rel, out_non = [], [], [], []
    for c in corpora:
        for q in c["questions"]:
            cos = dict(q["candidates"]["vector"])
            back = fusion.background([x for _, x in q["candidates"]["vector"]])
            top_rel.extend(cos[p] for p in q["relevant"] if p in cos)
            out_rel.extend(cos[p] - back for p in q["relevant"][:1] if p in cos and back is not None)
        for n in c["nonsense"]:
            if n["candidates"]["vector"]:
                top_non.append(n["candidates"]["vector"][0][1])
                out_non.append(top_non[-1] - fusion.background([x for _, x in n["candidates"]["vector"]]))
    if top_rel and top_non:
        qs = statistics.quantiles(top_rel, n=10)
        lines.append(f"  cosine of relevant hits: p10 {qs[0]:.3f}, median {statistics.median(top_rel):.3f}, "
                     f"p90 {qs[-1]:.3f}; nonsense queries' best cosine: max {max(top_non):.3f}, "
                     f"median {statistics.median(top_non):.3f}")
        qo = statistics.quantiles(out_rel, n=10)
        lines.append(f"  standout over the 10th cosine: first relevant hit p10 {qo[0]:.3f}, median "
                     f"{statistics.median(out_rel):.3f}; nonsense queries' best hit max {max(out_non):.3f}, "
                     f"median {statistics.median(out_non):.3f}")
    got = [(n["text"], c["name"], n["count"], bool(n["warnings"])) for c in corpora for n in c["nonsense"]]
    lines.append(f"  engine on nonsense queries: {sum(g[2] for g in got)} results over {len(got)} queries, "
                 f"{sum(g[3] for g in got)} with a warning; docs corpus: "
                 + ", ".join(f"{t!r} {n}" for t, name, n, _ in got if name == "docs"))
    lines.append(f"  (engine cut-off in use: {drop})")
    return "\n".join(lines)


def fingerprint() -> str:
    """The search code's identity: cached lists are reused only while it is unchanged."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((REPO / "compiler" / "search").rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_quality", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--conversations", type=int, default=8)
    ap.add_argument("--docs", type=Path, default=REPO / "docs",
                    help="the docs corpus to copy (default: this checkout's docs/, which changes as it grows)")
    ap.add_argument("--reuse", action="store_true", help="reuse built corpora and cached lists in --workdir")
    ap.add_argument("--json", action="store_true", help="print the per-question data as JSON instead")
    ap.add_argument("--model", default=None, help="embedding model (default: the configured one)")
    args = ap.parse_args(argv)
    if args.model:
        os.environ["COMMONPLACE_EMBED_MODEL"] = args.model
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from commonplace.compiler.search.read import fusion

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpora = make_corpora(work, args.conversations, args.reuse, args.docs)
    cache = work / "lists.json"
    cached = json.loads(cache.read_text()) if args.reuse and cache.exists() else {}
    if cached.get("_code") != fingerprint():
        cached = {"_code": fingerprint()}
    for c in corpora:
        key = c["name"]
        if key in cached and [q["text"] for q in cached[key]["questions"]] == [q["text"] for q in c["questions"]]:
            c["questions"], c["nonsense"] = cached[key]["questions"], cached[key]["nonsense"]
            continue
        log(f"{c['name']}: build ({len(c['questions'])} questions) ...")
        secs = build(c)
        log(f"  built in {secs:.1f} s; searching ...")
        collect(c)
        cached[key] = {"questions": c["questions"], "nonsense": c["nonsense"]}
        cache.write_text(json.dumps(cached))
    chosen, scored = choose(corpora)
    if args.json:
        print(json.dumps({c["name"]: {"questions": c["questions"], "nonsense": c["nonsense"]} for c in corpora}))
    else:
        print(report(corpora, chosen, scored, fusion.WEAK_VECTOR_ONLY))
        from commonplace.compiler.search.embedding.base import resolve_model

        print(f"({time.perf_counter() - t0:.0f} s; model {resolve_model(None).model_id}; "
              f"engine default rule: {fusion.DEFAULT.label()})")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
