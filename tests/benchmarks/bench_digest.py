"""Digest quality and compaction throughput on long dialogues, in two shapes.

    python -m tests.benchmarks.bench_digest [--seeds 4] [--sessions 16] [--turns 20]

Two transcript shapes, each as session files (`Speaker: text` turns):
- `dialogue`: the long-dialogue generator (tests/benchmarks/quality/dialogue.py), two
  people chatting over dated sessions, facts among small talk and distractors;
- `coding`: agent-coding transcripts (tests/benchmarks/quality/coding_sessions.py), a user
  and an assistant with tool output, tracebacks and diffs around a few points.
Each shape is measured on the seeds the digest's rules were tuned on (0..seeds-1) and on
held-out seeds (1000..), never looked at while tuning. Reported per shape and split:
- evidence kept: the share of question-answering evidence turns whose content survives in
  their session's digest (at least 80% of the turn's content words appear in the digest's
  items; `verbatim` counts turns whose every sentence is an item as it was said);
- compression: digest tokens / session tokens (same estimator as wake), for the items, for
  the whole page body (everything under the frontmatter: source line, headings, speakers,
  line references) against the session's body, and for the whole file (frontmatter too:
  title, generator, source hashes) against the session's whole file;
- compaction and uncompaction throughput (MB/s and files/s) over the dialogue sessions and
  over long transcripts, and the time of a search by original text over them (`originals`:
  the first query reads and parses the blobs, the next ones use the parsed originals).
Target (issue 31): >= 80% of evidence kept at <= 25% of the session's tokens.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from commonplace.compiler.sessions import digest as dg
from tests.benchmarks.quality.dialogue import conversation


def transcripts(seed: int, sessions: int, turns: int) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """({path: text}, [(path, evidence turn text)])."""
    tl, placed = conversation(seed, sessions, turns)
    files: dict[int, list[str]] = {}
    dates = {}
    for t in tl:
        files.setdefault(t.session, []).append(f"{t.speaker}: {t.text}")
        dates[t.session] = t.date.isoformat()
    out = {}
    for s, lines in files.items():
        path = f"logs/sessions/bench/conv-{seed}/session-{s:02d}.md"
        out[path] = (f"---\ntitle: Conversation {seed}, session {s}\ntype: session\ncreated: '{dates[s]}'\n---\n\n"
                     + "\n".join(lines) + "\n")
    evidence = []
    for pl in placed:
        for s, speaker, text in pl["refs"]:
            evidence.append((f"logs/sessions/bench/conv-{seed}/session-{s + 1:02d}.md", text))
    return out, evidence


def coding_transcripts(seed: int, sessions: int, turns: int) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The agent-coding shape (quality/coding_sessions.py): ({path: text}, [(path, evidence)])."""
    from tests.benchmarks.quality.coding_sessions import session

    out, evidence = {}, []
    for i in range(sessions):
        text, points = session(seed, i, turns)
        path = f"logs/sessions/bench/code-{seed}/session-{i:02d}.md"
        out[path] = text
        evidence += [(path, p) for p in points]
    return out, evidence


SHAPES = {"dialogue": transcripts, "coding": coding_transcripts}
HELD_OUT = 1000  # held-out seeds start here; the digest's rules were tuned on seeds below it


def measure(shape: str, seeds: list[int], sessions: int, turns: int) -> tuple[dict[str, float], dict[str, str]]:
    """(the digest's numbers on these conversations, their transcripts)."""
    from commonplace.compiler.sessions.transcript import Turn

    kept = verbatim = total = 0
    ratios_items, ratios_page, ratios_file = [], [], []
    all_files: dict[str, str] = {}
    for seed in seeds:
        files, evidence = SHAPES[shape](seed, sessions, turns)
        all_files.update(files)
        digests = {}
        for path, text in files.items():
            title = "Digest: " + str(dg.session_meta(text.encode()).get("title"))  # as /v1/digest titles it
            d = dg.build(dg.digest_path(path), title, [(path, text.encode())], None)
            digests[path] = d
            body_tokens = d.session_tokens
            ratios_items.append(dg.estimate_tokens(d.sections_markdown()) / body_tokens)
            ratios_page.append(dg.estimate_tokens(d.body()) / body_tokens)
            ratios_file.append(dg.estimate_tokens(d.text()) / dg.estimate_tokens(text))
        for path, text in evidence:
            d = digests[path]
            items = " ".join(i.text for i in d.items)
            words = {w.lower() for w in dg.content_words(items)}
            need = [w.lower() for w in dg.content_words(text)]
            total += 1
            if need and sum(w in words for w in need) / len(need) >= 0.8:
                kept += 1
            sents = Turn(0, None, text, 0, 0).sentences()
            if all(any(s == i.text for i in d.items) for s in sents):
                verbatim += 1
    return {"sessions": len(all_files), "evidence": total, "kept": kept / total, "verbatim": verbatim / total,
            "ratio_items": statistics.mean(ratios_items), "ratio_items_max": max(ratios_items),
            "ratio_page": statistics.mean(ratios_page), "ratio_page_max": max(ratios_page),
            "ratio_file": statistics.mean(ratios_file)}, all_files


def run(seeds: int, sessions: int, turns: int) -> dict[str, Any]:
    rows, dialogue = {}, {}
    for shape in SHAPES:
        for split, chosen in (("tuning", list(range(seeds))), ("held-out", list(range(HELD_OUT, HELD_OUT + seeds)))):
            rows[(shape, split)], files = measure(shape, chosen, sessions, turns)
            if shape == "dialogue" and split == "tuning":
                dialogue = files
    thr = compaction_throughput(dialogue)
    # Long transcripts too: each conversation's sessions end to end, eight times over (~180 KB each).
    big = {f"logs/sessions/bench/long-{i}.md": "---\ntitle: long\ntype: session\n---\n\n" + "\n".join(
        t.split("---\n", 2)[2] for t in list(dialogue.values())[i * sessions:(i + 1) * sessions]) * 8
        for i in range(seeds)}
    thr.update({f"big_{k}": v for k, v in compaction_throughput(big).items()})
    return {"rows": rows, **thr}


def originals_search(root: Path, rels: list[str]) -> dict[str, float]:
    """Milliseconds per `originals: true` search over these compacted transcripts: the
    first query (blobs read and parsed) and the next ones (parsed originals cached)."""
    from commonplace.compiler.sessions import compact as cp
    from commonplace.compiler.sessions import originals as og

    og._cache.clear()
    og._cache_chars = 0
    sessions = [(rel, cp.MARK.search((root / rel).read_text("utf-8")).group(1)) for rel in rels]
    t0 = time.perf_counter()
    og.search(root, "kayaking on the lake at dawn", sessions, 10)
    t1 = time.perf_counter()
    queries = ["new job at the startup", "adopted a kitten from the shelter", "trip to Reykjavik", "charity 10k"]
    for q in queries:
        og.search(root, q, sessions, 10)
    t2 = time.perf_counter()
    return {"search_cold_ms": (t1 - t0) * 1000, "search_warm_ms": (t2 - t1) * 1000 / len(queries)}


def compaction_throughput(files: dict[str, str]) -> dict[str, float]:
    from commonplace.compiler.sessions import compact as cp

    tmp = Path(tempfile.mkdtemp(prefix="bench-digest-"))
    try:
        for rel, text in files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        size = sum(len(t.encode()) for t in files.values())
        t0 = time.perf_counter()
        done = [cp.compact_file(tmp, rel, gist="(bench gist)") for rel in sorted(files)]
        t1 = time.perf_counter()
        search = originals_search(tmp, sorted(files))
        t1b = time.perf_counter()
        for rel in sorted(files):
            cp.uncompact_file(tmp, rel)
        t2 = time.perf_counter()
        assert all(done) and all((tmp / r).read_text("utf-8") == t for r, t in files.items())
        return {"files": len(files), "mb": size / 1e6, "compact_mb_s": size / 1e6 / (t1 - t0),
                "uncompact_mb_s": size / 1e6 / (t2 - t1b), "compact_files_s": len(files) / (t1 - t0),
                "uncompact_files_s": len(files) / (t2 - t1b), **search}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--sessions", type=int, default=16)
    ap.add_argument("--turns", type=int, default=20)
    a = ap.parse_args()
    r = run(a.seeds, a.sessions, a.turns)
    print(f"{a.seeds} conversations x {a.sessions} sessions x {a.turns} turns per shape and split "
          f"(tuning seeds 0-{a.seeds - 1}, held-out seeds {HELD_OUT}-{HELD_OUT + a.seeds - 1})")
    print("| shape | split | sessions | evidence | kept | verbatim | items/session (mean, max) "
          "| page body/session (mean, max) | page file/session file |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (shape, split), m in r["rows"].items():
        print(f"| {shape} | {split} | {m['sessions']} | {m['evidence']} | {m['kept']:.1%} | {m['verbatim']:.1%} "
              f"| {m['ratio_items']:.1%}, {m['ratio_items_max']:.1%} | {m['ratio_page']:.1%}, {m['ratio_page_max']:.1%} "
              f"| {m['ratio_file']:.1%} |")
    print()
    print("| throughput | value |\n|---|---|")
    print(f"| compaction ({r['files']} dialogue sessions, {r['mb']:.2f} MB) | {r['compact_mb_s']:.2f} MB/s, "
          f"{r['compact_files_s']:.0f} files/s |")
    print(f"| uncompaction | {r['uncompact_mb_s']:.2f} MB/s, {r['uncompact_files_s']:.0f} files/s |")
    print(f"| compaction ({r['big_files']} long transcripts, {r['big_mb']:.2f} MB) | {r['big_compact_mb_s']:.2f} MB/s, "
          f"{r['big_compact_files_s']:.0f} files/s |")
    print(f"| uncompaction (long transcripts) | {r['big_uncompact_mb_s']:.2f} MB/s, "
          f"{r['big_uncompact_files_s']:.0f} files/s |")
    print(f"| search by original text, {r['files']} compacted sessions (first query, next ones) | "
          f"{r['search_cold_ms']:.0f} ms, {r['search_warm_ms']:.1f} ms |")
    print(f"| search by original text, {r['big_files']} long compacted transcripts (first, next) | "
          f"{r['big_search_cold_ms']:.0f} ms, {r['big_search_warm_ms']:.1f} ms |")


if __name__ == "__main__":
    main()
