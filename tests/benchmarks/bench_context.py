"""What an agent reads, measured: active memory, wake and a search-paste baseline on two
generated corpora (issue 28).

    python tests/benchmarks/bench_context.py [--conversations 3] [--seeds 2] [--budget 600] [--embed]
        [--only dialogue|week] [--http] [--scale N] [--locomo DIR [--layout turn|session] [--both]]
        [--pasted] [--paired]

Corpora (built fresh under a temporary folder, or --workdir):

- `dialogue-plain`: long conversations, one file per turn (`quality/dialogue.py`: `Name:
  message`), questions with gold evidence turns and short answers (a temporal question's
  answer is the turn's date);
- `dialogue-transcript`: the same turns as a chat export writes them (title and first line
  `Name — 1:56 pm`, then the message), the format issue 28 was measured on;
- `week`: an agent's week (`quality/agent_week.py`): people, projects and decisions written
  through `/v1/memory-write`, replaced and forgotten facts, sessions whose updates change a
  durable fact, filler notes sharing the questions' words. One corpus per seed.

- `locomo` (`--locomo DIR`, only it): a public long-conversation benchmark's conversation
  files (`quality/locomo.py`: all conversations in one corpus, a file per turn in the
  transcript format, questions but the adversarial ones); per-category rows follow the
  table. `--layout session`: a file per session instead (`locomo-session`), as a chat log
  kept one file per conversation; a question's evidence is then its sessions. With `--workdir` the corpus and its build are kept and reused between runs (only
  changed files are rewritten; the embedding cache makes a rebuild cheap). A `--scale`
  corpus kept in `--workdir` is reused with its build as it is.

Systems, each answering every question within the same token budget:

- `active`: `/v1/active-memory` with the question as the prompt (Dory's defaults otherwise);
- `wake`: `/v1/wake` (the week corpus: with the project the question names, if any);
- `paste`: `/v1/search` hybrid top 10, pasted as `path: snippet` lines while they fit.

Each timed call starts without remembered query embeddings. The calls go through the
server's routes in process (Flask's test client over
`create_app` and a `LiveCorpus`, the objects `commonplace serve` runs): the same code as
over HTTP, without the sockets. `--http` asks a `commonplace serve --no-auth` subprocess
over real sockets instead (its query embeddings stay remembered between the systems, so
the second system asked, paste, is timed with the prompt's embedding ready). Without
`--embed` the corpus has no vectors and hybrid search is its BM25 side.

`--scale N` runs only one corpus of N documents, for latency at size: the dialogue
corpus's conversations (their questions are asked) inside a synthetic notes corpus
(`corpus_gen`) that makes up the rest; active memory and paste only.

`--pasted` asks every question after the same pasted traceback (about 1,100 characters),
as an agent host sends a user's whole message: what a long prompt costs active memory and
paste.

`--paired` asks two questions of the same half in one prompt ("<first>, and <second>"),
each prompt scored twice, for each question: the rows `first` and `second` say how much
of each one's evidence and answer the block holds.

Columns (per system, held-out questions: every other question of each corpus is kept
for tuning and not reported unless --tuning): evidence = share of gold paths present in
the block; answer = share of questions (with an answer) whose answer words are all in
the block; forbidden = questions whose block holds replaced or forgotten text (must be 0);
bookkeeping = share of block lines that are ids, marker comments, frontmatter fences or
keys, or audit lines; tokens = mean block tokens (the wake estimate); p50 ms (wall) and cpu
p50 ms (the process's CPU time per call, `time.process_time`: on a shared machine the wall
time grows with the load, the CPU time much less); the load average is printed per corpus.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.quality import agent_week, dialogue, locomo  # noqa: E402

BOOKKEEPING = [
    re.compile(r"\b[ce]_[0-9a-f]{12,}\b"),  # claim and event ids
    re.compile(r"<!--\s*commonplace:"),  # marker comments
    re.compile(r"^\s*---\s*$"),  # frontmatter fences
    re.compile(r"^\s*(title|type|aliases|tags|created|updated|status|source_kind|entity_id|claim_ids|"
               r"canonical_target|origin_surface|temperature):\s"),  # frontmatter keys
    re.compile(r"Claim (add|replace|forget):|Semantic write `?\w+`?|Raw input:|sources/semantic/"),  # audit
    re.compile(r"\d{2}:\d{2} UTC · (added|replaced|retired|forgot)"),  # timeline lines
]


def estimate(text: str) -> int:
    from commonplace.compiler.context.tokens import estimate_tokens

    return estimate_tokens(text)


def open_app(root: Path, site: Path, embed: bool) -> tuple[Any, Any]:
    from commonplace.compiler.live.corpus import LiveCorpus
    from commonplace.server import ServerConfig, create_app

    live = LiveCorpus(root, site, embed=embed, index=True)
    live.open()
    app = create_app(live, ServerConfig(corpus=root, out=site, loopback_reads=True, no_auth=True))
    app.testing = True
    return live, app.test_client()


class HttpClient:
    """The two calls the bench makes, over real sockets to a `commonplace serve` subprocess
    (`--http`), shaped like Flask's test client."""

    class Answer:
        def __init__(self, status: int, body: bytes) -> None:
            self.status_code, self._body = status, body

        def get_json(self) -> Any:
            return json.loads(self._body)

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def _call(self, method: str, path: str, body: Any = None) -> "HttpClient.Answer":
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            r = conn.getresponse()
            return HttpClient.Answer(r.status, r.read())
        finally:
            conn.close()

    def post(self, path: str, json: Any = None) -> "HttpClient.Answer":  # noqa: A002 - the test client's name
        return self._call("POST", path, json)

    def get(self, path: str) -> "HttpClient.Answer":
        return self._call("GET", path)


def open_http(root: Path, site: Path, embed: bool) -> tuple[Any, Any]:
    from tests.benchmarks.bench_server import start_server

    proc, host, port, _ = start_server(root, site, embed, threads=4)
    return proc, HttpClient(host, port)


def scale_corpus(work: Path, n: int, conversations: int) -> dict[str, Any]:
    """`n` documents: the dialogue corpus's conversations (their questions are asked) inside
    a synthetic notes corpus (`corpus_gen`: people, projects, decisions, daily notes, ...)
    that makes up the rest, for latency at size."""
    from tests.benchmarks import corpus_gen

    root = work / f"scale-{n}"
    if (work / f"scale-{n}-site").is_dir() and (root / "talk").is_dir():
        # Kept from an earlier run (--workdir): the questions only, the corpus and its
        # build as they are (generating is deterministic; rewriting would re-index all).
        with tempfile.TemporaryDirectory() as tmp:
            inner = dialogue_corpus(Path(tmp), conversations)
    else:
        inner = dialogue_corpus(root / "talk", conversations)
        have = sum(1 for _ in (root / "talk").rglob("*.md"))
        corpus_gen.generate(root, max(0, n - have), seed=7)
    qs = [{**q, "relevant": [f"talk/dialogue-plain/{p}" for p in q["relevant"]]} for q in inner["questions"]]
    return {"name": f"scale-{n}", "root": root, "questions": qs, "calls": [], "projects": []}


def transcript_turns(root: Path) -> None:
    """Turn files as a chat export writes them (the format issue 28 measured on): a title
    and a first line naming the speaker and the time, then the message."""
    for n, f in enumerate(sorted(root.rglob("turn-*.md"))):
        text = f.read_text("utf-8")
        head, body = text.split("\n---\n", 1)
        speaker, message = body.strip().split(": ", 1)
        hour, minute = 9 + (n * 7) % 12, (n * 13) % 60
        stamp = f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
        head = re.sub(r'(?m)^title: .*$', f'title: "{speaker} — {stamp}"', head)
        f.write_text(f"{head}\n---\n**{speaker}** — {stamp}\n\n{message}\n", "utf-8")


def dialogue_corpus(work: Path, conversations: int, style: str = "plain") -> dict[str, Any]:
    root = work / f"dialogue-{style}"
    questions = []
    for i in range(conversations):
        for q in dialogue.generate(root / f"conv-{i}", seed=100 + i, name=f"conv-{i}"):
            questions.append({"text": q.text, "relevant": [f"conv-{i}/{p}" for p in q.relevant],
                              "answer": q.answer, "forbidden": []})
    if style == "transcript":
        transcript_turns(root)
    return {"name": f"dialogue-{style}", "root": root, "questions": questions, "calls": [], "projects": []}


def locomo_corpus(work: Path, src: Path, layout: str = "turn") -> dict[str, Any]:
    name = "locomo" if layout == "turn" else f"locomo-{layout}"
    root = work / name
    return {"name": name, "root": root, "questions": locomo.load(src, root, layout), "calls": [], "projects": []}


def week_corpus(work: Path, seed: int) -> dict[str, Any]:
    root = work / f"week-{seed}"
    p = agent_week.plan(seed)
    for rel, text in p["files"].items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return {"name": f"week-{seed}", "root": root, **p}


def paste(client: Any, question: str, budget: int) -> str:
    r = client.post("/v1/search", json={"query": question, "k": 10, "mode": "hybrid"}).get_json()
    lines: list[str] = []
    for hit in r.get("results", []):
        line = f"{hit['path']}: {' '.join(str(hit.get('snippet') or '').split())}"
        if estimate("\n".join([*lines, line])) > budget:
            break
        lines.append(line)
    return "\n".join(lines)


def ask(system: str, client: Any, q: dict[str, Any], budget: int, projects: list[str]) -> str:
    if system == "active":
        r = client.post("/v1/active-memory", json={"prompt": q["text"], "agent": "bench",
                                                   "budget_tokens": min(budget, 1200)})
        return r.get_json()["block"]
    if system == "wake":
        named = next((p for p in projects if p in q["text"].casefold()), None)
        r = client.post("/v1/wake", json={"agent": "bench", "budget_tokens": budget, "project": named})
        return r.get_json()["block"]
    return paste(client, q["text"], budget)


def score(block: str, q: dict[str, Any]) -> dict[str, Any]:
    low = block.casefold()
    rel = q["relevant"]
    evidence = sum(1 for p in rel if p.casefold() in low) / len(rel) if rel else None
    answer = None
    if q["answer"]:
        answer = float(all(w.casefold() in low for w in q["answer"].split()))
    forbidden = int(any(f.casefold() in low for f in q["forbidden"]))
    lines = [ln for ln in block.split("\n") if ln.strip()]
    noisy = sum(1 for ln in lines if any(p.search(ln) for p in BOOKKEEPING))
    return {"evidence": evidence, "answer": answer, "forbidden": forbidden,
            "bookkeeping": noisy / len(lines) if lines else 0.0, "tokens": estimate(block)}


def run(corpus: dict[str, Any], budget: int, embed: bool, tuning: bool, http: bool = False,
        systems: tuple[str, ...] = ("active", "wake", "paste"), both: bool = False) -> Any:
    """The systems' scores on one half of the questions (`tuning`), or on both halves
    (`both`: a list `[held-out, tuning]`) from one opening of the corpus."""
    site = corpus["root"].parent / (corpus["root"].name + "-site")
    live, client = (open_http if http else open_app)(corpus["root"], site, embed)
    try:
        for path, body in corpus["calls"]:
            r = client.post(path, json=body)
            if r.status_code != 200:
                raise SystemExit(f"{corpus['name']}: {path} {body} -> {r.status_code} {r.get_json()}")
        settle(client, embed)
        if both:
            return [ask_all(corpus, client, budget, http, systems, t) for t in (False, True)]
        return ask_all(corpus, client, budget, http, systems, tuning)
    finally:
        if http:
            live.terminate()
            live.wait(timeout=60)
        else:
            live.close()


def ask_all(corpus: dict[str, Any], client: Any, budget: int, http: bool, systems: tuple[str, ...],
            tuning: bool) -> dict[str, Any]:
    picked = [q for i, q in enumerate(corpus["questions"]) if (i % 2 == 0) == tuning]
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    times: dict[str, list[float]] = {s: [] for s in systems}
    cpu: dict[str, list[float]] = {s: [] for s in systems}
    for s in systems:  # warm: the first call of each route loads its module
        ask(s, client, picked[0], budget, corpus["projects"])
    for q in picked:  # systems in turn per question: background work weighs on all alike
        for s in systems:
            if not http:
                forget_queries()
            c0, t0 = time.process_time(), time.perf_counter()
            block = ask(s, client, q, budget, corpus["projects"])
            times[s].append((time.perf_counter() - t0) * 1000)
            cpu[s].append((time.process_time() - c0) * 1000)
            rows[s].append({**score(block, q), "category": q.get("category")})
    out: dict[str, Any] = {s: summarize(rows[s], times[s], cpu[s]) for s in systems}
    out["_n"] = {"load": os.getloadavg()[0]}
    out["_n"].update(questions=len(picked), files=sum(1 for _ in corpus["root"].rglob("*.md")))
    cats = sorted({str(r["category"]) for r in rows[systems[0]] if r["category"]})
    out["_cat"] = {c: {s: summarize([r for r in rows[s] if str(r["category"]) == c], [0.0])
                       for s in systems} | {"n": sum(1 for r in rows[systems[0]] if str(r["category"]) == c)}
                   for c in cats}
    return out


def forget_queries() -> None:
    """Drop the engines' remembered query embeddings: each system pays for its own, the
    way the first call with a new prompt does (else the second system asked would get
    the first one's for free)."""
    from commonplace.compiler.search.read import engine

    for e in list(getattr(engine, "_engines", {}).values()):
        getattr(e, "_qvec", {}).clear()


def settle(client: Any, embed: bool, timeout: float = 2400) -> None:
    """Wait until the index is whole (every chunk embedded, with --embed), so no system is
    timed against the background embedding."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        st = client.get("/v1/status").get_json()
        if st.get("ready") and (not embed or (not st.get("pending") and st.get("vectors") == st.get("chunks"))):
            return
        time.sleep(1)
    raise SystemExit("the index did not settle")


def summarize(rows: list[dict[str, Any]], times: list[float], cpu: list[float] | None = None) -> dict[str, Any]:
    def mean(key: str) -> float:
        vals = [r[key] for r in rows if r[key] is not None]
        return sum(vals) / len(vals) if vals else float("nan")

    return {"evidence": 100 * mean("evidence"), "answer": 100 * mean("answer"),
            "forbidden": sum(r["forbidden"] for r in rows), "bookkeeping": 100 * mean("bookkeeping"),
            "tokens": mean("tokens"), "p50": statistics.median(times) if times else 0.0,
            "cpu50": statistics.median(cpu) if cpu else float("nan")}


def table(name: str, res: dict[str, dict[str, Any]], budget: int, split: str,
          systems: tuple[str, ...] = ("active", "wake", "paste")) -> str:
    n = res["_n"]
    lines = [f"{name}: {n['files']} files, {n['questions']} {split} questions, budget {budget} tokens, "
             f"load average {n['load']:.1f} after the calls",
             f"{'system':<8} {'evidence %':>10} {'answer %':>9} {'forbidden':>9} {'bookkeep %':>10} "
             f"{'tokens':>7} {'p50 ms':>7} {'cpu p50 ms':>10}"]
    for system in systems:
        r = res[system]
        lines.append(f"{system:<8} {r['evidence']:>10.1f} {r['answer']:>9.1f} {r['forbidden']:>9d} "
                     f"{r['bookkeeping']:>10.1f} {r['tokens']:>7.0f} {r['p50']:>7.1f} {r['cpu50']:>10.1f}")
    a, p = res["active"], res["paste"]
    lines.append(f"active - paste: evidence {a['evidence'] - p['evidence']:+.1f} points, "
                 f"answer {a['answer'] - p['answer']:+.1f} points")
    for cat, by in res.get("_cat", {}).items():  # per question category (locomo)
        a, p = by["active"], by["paste"]
        lines.append(f"  {cat:<12} n={by['n']:<4} active {a['evidence']:5.1f} / {a['answer']:5.1f}   "
                     f"paste {p['evidence']:5.1f} / {p['answer']:5.1f}   "
                     f"diff {a['evidence'] - p['evidence']:+5.1f} / {a['answer'] - p['answer']:+5.1f}")
    return "\n".join(lines)


def paired(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two questions of one half asked in one prompt, scored once for each (`first`,
    `second`); the halves stay on their parity (even: tuning, odd: held-out)."""
    halves = []
    for half in (questions[0::2], questions[1::2]):
        out = []
        for a, b in zip(half[0::2], half[1::2]):
            first, _, rest = b["text"].partition(" ")
            asks = first.casefold() in ("what", "when", "where", "who", "which", "why", "how", "is", "did", "does")
            text = a["text"].rstrip(" ?") + ", and " + (first.casefold() + " " + rest if asks else b["text"])
            out += [{**a, "text": text, "category": "first"}, {**b, "text": text, "category": "second"}]
        halves.append(out)
    return [q for pair in zip(*halves) for q in pair]


# A user's message before the question: a traceback pasted while at work (`--pasted`)
PASTED = """I'm in the middle of refactoring the ingestion worker and hit this again, pasting the whole thing:

Traceback (most recent call last):
  File "/srv/app/worker/ingest.py", line 214, in run_batch
    rows = self.reader.fetch(batch_id, limit=self.config.batch_size)
  File "/srv/app/worker/reader.py", line 88, in fetch
    cursor.execute(QUERY, (batch_id, limit))
psycopg2.errors.QueryCanceled: canceling statement due to statement timeout
CONTEXT: while scanning relation "events_2026_11"

The batch size is 5000 and the timeout is 30s. It only happens on Mondays after the weekly rollup,
which makes me think the vacuum hasn't caught up. Before I dig into that though, quick unrelated question
while I remember it, from the notes: """


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=2, help="how many agent's-week corpora (seeds 1..N)")
    ap.add_argument("--budget", type=int, default=600)
    ap.add_argument("--embed", action="store_true", help="embed the corpora (hybrid with vectors)")
    ap.add_argument("--tuning", action="store_true", help="report the tuning half instead of the held-out half")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--http", action="store_true",
                    help="ask a `commonplace serve` subprocess over real sockets instead of the routes in process")
    ap.add_argument("--scale", type=int, default=0, metavar="N",
                    help="only a corpus of N documents (the dialogue inside synthetic notes): latency at size")
    ap.add_argument("--only", choices=("dialogue", "week"), default=None, help="only these corpora")
    ap.add_argument("--locomo", type=Path, default=None, metavar="DIR",
                    help="only the long-conversation benchmark whose conversation .json files are in DIR")
    ap.add_argument("--layout", choices=("turn", "session"), default="turn",
                    help="--locomo: a file per turn, or per session (a chat log kept one file per conversation)")
    ap.add_argument("--both", action="store_true", help="report the held-out and the tuning half")
    ap.add_argument("--pasted", action="store_true", help="every question after a pasted traceback (a long prompt)")
    ap.add_argument("--paired", action="store_true", help="two questions in one prompt, each scored")
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-context-"))
    # A kept --locomo corpus is reused (only changed turns are rewritten), and so is a
    # kept --scale corpus with its build.
    if not args.locomo and not (args.scale and args.workdir):
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    if args.locomo:
        corpora = [locomo_corpus(work, args.locomo, args.layout)]
    elif args.scale:
        corpora = [scale_corpus(work, args.scale, args.conversations)]
    else:
        corpora = [] if args.only == "week" else [dialogue_corpus(work, args.conversations, style)
                                                  for style in ("plain", "transcript")]
        corpora += [] if args.only == "dialogue" else [week_corpus(work, s) for s in range(1, args.seeds + 1)]
    if args.pasted:
        for c in corpora:
            c["name"] += " (pasted)"
            c["questions"] = [{**q, "text": PASTED + q["text"]} for q in c["questions"]]
    if args.paired:
        for c in corpora:
            c["name"] += " (paired)"
            c["questions"] = paired(c["questions"])
    systems = ("active", "paste") if args.scale or args.locomo else ("active", "wake", "paste")
    split = "tuning" if args.tuning else "held-out"
    how = "commonplace serve over HTTP (real sockets)" if args.http else "in-process server routes (Flask test client)"
    print(f"bench_context: {how}, {'hybrid with vectors' if args.embed else 'no vectors (hybrid = BM25)'}")
    try:
        for c in corpora:
            res = run(c, args.budget, args.embed, args.tuning, args.http, systems, args.both)
            for half, r in zip(("held-out", "tuning"), res) if args.both else [(split, res)]:
                print(table(c["name"], r, args.budget, half, systems), flush=True)
                print()
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
