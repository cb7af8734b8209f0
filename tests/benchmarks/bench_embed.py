"""Embedding throughput on a fixed sample of corpus chunks: the quick A/B harness for issue 22.

    python -m tests.benchmarks.bench_embed [--workdir DIR] [--docs 450] [--every 3]
        [--precisions fp32,bf16,int8,static] [--threads 1] [--chunking 256:16,192:16,128:16,256:0]

Takes `--docs` documents (seeded) of the 10,000-document `corpus_gen` corpus, chunks them
as a build does, and prints two tables:

- chunking: per `max_tokens:overlap`, the chunks, distinct texts, tokens the model sees
  (with [CLS]/[SEP]), the share that is the `title > heading` prefix, and the padding the
  build's batching adds (groups of 256 sorted by characters, batches of 8 by tokens);
- throughput: per precision, one `OpenVINOEmbedder` with `--threads` threads (a build
  worker has one) encoding every `--every`-th chunk of the default chunking in the
  build's groups; chunks/s, tokens/s, cosine to sentence-transformers fp32 (min, p01,
  mean), and the tokenizer's share of the time. `static` is the static tier distilled
  from the model (`embedding/static_backend.py`): a vector space of its own, so it has no
  cosine to fp32. `cpu chunks/s` divides by the process's CPU seconds, which other work on
  a shared machine moves less than the wall clock.

`int8` needs the int8 model in the user cache; it is made on first use (~20 s). The fp32
reference is cached in the workdir. Run it through the shared lock:
`flock /tmp/cp-bench.lock python -m tests.benchmarks.bench_embed --workdir /tmp/bemb`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "tests.benchmarks"

from .corpus_gen import generate  # noqa: E402

GROUP, BATCH = 256, 8  # index_vectors.EMBED_GROUP, openvino_backend.OV_BATCH


def sample_docs(work: Path, n: int, docs: int, seed: int) -> list[Any]:
    from commonplace.compiler.build.pipeline import load_corpus

    corpus = work / f"corpus-{n}-{seed}"
    if not corpus.exists():
        generate(corpus, n, seed)
    all_docs = sorted(load_corpus(corpus).docs, key=lambda d: d.path)
    return random.Random(seed).sample(all_docs, min(docs, len(all_docs)))


def chunk_texts(docs: list[Any], max_tokens: int, overlap: int) -> list[tuple[str, str]]:
    """(prefix, embed text) per chunk, in document order."""
    from commonplace.compiler.search.index.chunk import ChunkConfig, chunk_documents, token_counter

    cfg = ChunkConfig(max_tokens=max_tokens, overlap=overlap)
    return [(c.prefix, c.embed_text) for _, cs in chunk_documents(docs, token_counter(None), cfg) for c in cs]


def padding(texts: list[str], lengths: list[int]) -> float:
    """Share of padded positions the build's batching adds (0.02 = 2%)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    padded = 0
    for g in range(0, len(order), GROUP):
        group = sorted(order[g : g + GROUP], key=lambda i: -lengths[i])
        for b in range(0, len(group), BATCH):
            batch = group[b : b + BATCH]
            padded += lengths[batch[0]] * len(batch)
    return padded / max(1, sum(lengths)) - 1


def chunking_row(docs: list[Any], spec: str) -> dict[str, Any]:
    from commonplace.compiler.search.index.chunk import token_counter

    mt, ov = (int(x) for x in spec.split(":"))
    pairs = chunk_texts(docs, mt, ov)
    texts = [t for _, t in pairs]
    counter = token_counter(None)
    lengths = [n + 2 for n in counter.count_many(texts)]
    prefix = sum(counter.count_many([p for p, _ in pairs if p]))
    return {"chunking": spec, "chunks": len(texts), "distinct": len(set(texts)), "tokens": sum(lengths),
            "prefix_share": prefix / sum(lengths), "padding": padding(texts, lengths)}


def reference(work: Path, texts: list[str]) -> Any:
    import numpy as np

    key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    f = work / f"fp32-{key}.npy"
    if f.exists():
        return np.load(f)
    from sentence_transformers import SentenceTransformer

    from commonplace.compiler.search.embedding import resolve_model

    st = SentenceTransformer(resolve_model(None).location, device="cpu")
    v = st.encode(texts, normalize_embeddings=True, batch_size=32, show_progress_bar=False)
    np.save(f, v)
    return v


def static_row(texts: list[str]) -> dict[str, Any]:
    from commonplace.compiler.search.embedding import make_embedder, resolve_model

    e = make_embedder(resolve_model("static"))
    e.encode(texts[:16])  # load (distils once) and warm up
    t0, c0 = time.perf_counter(), time.process_time()
    for g in range(0, len(texts), GROUP):
        e.encode(texts[g : g + GROUP])
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    nan = float("nan")
    return {"precision": "static", "threads": 1, "chunks_per_s": len(texts) / secs, "cpu_chunks_per_s":
            len(texts) / cpu, "tokens_per_s": nan, "cos_min": nan, "cos_p01": nan, "cos_mean": nan,
            "tokenizer_share": nan, "probe": None}


def throughput_row(texts: list[str], precision: str, threads: int, ref: Any) -> dict[str, Any]:
    import numpy as np

    from commonplace.compiler.search.embedding import openvino_backend, resolve_model

    if precision == "static":
        return static_row(texts)

    m = resolve_model(None)
    if precision == "int8":
        openvino_backend.quantize(openvino_backend.export(m.location, m.model_id))
    e = openvino_backend.OpenVINOEmbedder(m, precision, threads=threads)
    e.encode(texts[:16])  # load and warm up
    t0 = time.perf_counter()
    encs = e._tok.encode_batch([t.strip() for t in texts])
    tok_s = time.perf_counter() - t0
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), e.dim), dtype=np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    for g in range(0, len(order), GROUP):
        idx = order[g : g + GROUP]
        out[idx] = e.encode([texts[i] for i in idx])
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    cos = np.sum(out * ref, axis=1)
    tokens = sum(len(x.ids) for x in encs)
    return {"precision": e.precision, "threads": threads, "chunks_per_s": len(texts) / secs,
            "cpu_chunks_per_s": len(texts) / cpu,
            "tokens_per_s": tokens / secs, "cos_min": float(cos.min()), "cos_p01": float(np.quantile(cos, 0.01)),
            "cos_mean": float(cos.mean()), "tokenizer_share": tok_s / secs, "probe": e.probe_cosine}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_embed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--n", type=int, default=10_000, help="corpus size the documents are drawn from")
    ap.add_argument("--docs", type=int, default=450, help="documents sampled (~7 chunks each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=3, help="embed every k-th chunk (1: all)")
    ap.add_argument("--precisions", default="fp32,bf16,int8")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chunking", default="256:16,192:16,128:16,256:0", help="max_tokens:overlap list")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # as in a build worker
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-embed-"))
    work.mkdir(parents=True, exist_ok=True)
    docs = sample_docs(work, args.n, args.docs, args.seed)
    rows = [chunking_row(docs, s) for s in args.chunking.split(",") if s]
    texts = [t for _, t in chunk_texts(docs, 256, 16)][:: max(1, args.every)]
    ref = reference(work, texts)
    speed = [throughput_row(texts, p, args.threads, ref) for p in args.precisions.split(",") if p]
    if args.json:
        print(json.dumps({"chunking": rows, "throughput": speed, "load": os.getloadavg()}, indent=1))
        return 0
    print(f"{len(docs)} documents of the {args.n:,}-document corpus (seed {args.seed})\n")
    print("chunking      chunks  distinct   tokens  prefix  padding")
    for r in rows:
        print(f"{r['chunking']:<12} {r['chunks']:>7,} {r['distinct']:>9,} {r['tokens']:>8,}  {r['prefix_share']:>5.1%}"
              f"  {r['padding']:>6.2%}")
    print(f"\n{len(texts):,} chunks (256:16), {args.threads} thread(s)")
    print("precision        chunks/s  cpu chunks/s  tokens/s  cos min   cos p01  cos mean  tokenizer")
    for r in speed:
        print(f"{r['precision']:<16} {r['chunks_per_s']:>8.1f} {r['cpu_chunks_per_s']:>13.1f}"
              f" {r['tokens_per_s']:>9,.0f}  {r['cos_min']:.5f}"
              f"  {r['cos_p01']:.5f}  {r['cos_mean']:.5f}  {r['tokenizer_share']:>8.1%}")
    print(f"(load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
