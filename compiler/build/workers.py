"""Running the per-document stages on every core.

Parsing and rendering are pure Python and CPU bound, so a full build splits the
documents between forked worker processes. Each worker keeps the parse trees of its
own documents between the two rounds (parse, then render once links are resolved),
so trees are never pickled; only light `Document`s and page names cross the pipe.
Small corpora and platforms without `fork` use the same functions in-process.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import pickle
import queue
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from ..model import TRANSIENT_FIELDS, Document, Warning_
from ..corpus.scan import SourceFile

PARALLEL_MIN_DOCS = 400
TICK = 100  # workers report rendering progress every TICK documents
CHUNK = 16  # most files handed to a worker at once for parsing (~15 ms of work)


def _no_progress(label: str, total: int) -> Callable[[int], None]:
    return lambda n: None


@dataclass
class Rendered:
    path: str
    url: str
    written: bool
    excerpt: str
    search_text: bytes = b""  # the sections as JSON, UTF-8 (site_search.sections_json): encoded here, in parallel
    search_terms: str = ""  # site_search.sections_terms: tokenized here, in parallel


ParseFn = Callable[[SourceFile], tuple[Document | None, list[Warning_]]]
RenderFn = Callable[[Any, Document], Rendered]


def worker_count(n_docs: int) -> int:
    """Workers for a full build; COMMONPLACE_WORKERS overrides (tests, benchmarks)."""
    if "fork" not in mp.get_all_start_methods():
        return 1
    forced = os.environ.get("COMMONPLACE_WORKERS", "")
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    if n_docs < PARALLEL_MIN_DOCS:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def _worker(conn: Any, parse_fn: ParseFn, render_fn: RenderFn) -> None:
    gc.disable()  # see build.gc_paused
    held: dict[str, Document] = {}  # parsed documents, with their parse trees
    try:
        while True:
            cmd, arg = conn.recv()
            if cmd == "parse":
                k, files = arg
                out = []
                for sf in files:
                    doc, warnings = parse_fn(sf)
                    if doc is not None:
                        held[doc.path] = doc
                        out.append((_light(doc), warnings))
                    else:
                        out.append((None, warnings))
                conn.send(("ok", (k, out)))
            elif cmd == "render":
                blob, jobs = arg
                ctx = pickle.loads(blob)
                results = []
                outbox = _Outbox(conn)
                try:
                    for i, (path, resolutions) in enumerate(jobs, 1):
                        if i % TICK == 0:
                            # The pages so far: the parent takes them in while this worker
                            # goes on, instead of all at the end of the round.
                            outbox.put(("part", results))
                            results = []
                        d = held.pop(path)
                        # Resolution happened in the parent; the links are the ones parsed here.
                        for link, (resolved, candidates) in zip(d.links, resolutions, strict=True):
                            link.resolved, link.candidates = resolved, candidates
                        results.append(render_fn(ctx, d))
                    outbox.put(("ok", results))
                finally:
                    outbox.close()  # every message sent before anything else is
            else:
                conn.send(("ok", None))
                return
    except BaseException:  # report, so the parent can fail loudly instead of hanging
        conn.send(("error", traceback.format_exc()))


class _Outbox:
    """A worker's messages sent in order from a thread, so that rendering goes on while
    the parent is busy: a part of 100 rendered pages (~1 MB with their search data) is more
    than the socket holds, and a plain send waits until the parent has read all of it."""

    def __init__(self, conn: Any):
        self.conn, self.queue = conn, queue.SimpleQueue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="worker-outbox", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (message := self.queue.get()) is not None:
            try:
                self.conn.send(message)
            except BaseException as exc:  # the parent is gone: close() raises it
                self.error = exc
                return

    def put(self, message: Any) -> None:
        self.queue.put(message)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error


_HELD = TRANSIENT_FIELDS  # stay with the worker that parsed


def _light(doc: Document) -> Document:
    """The document without its parse tree, for sending to the parent.

    The body is the tail of the text (after any frontmatter), so it travels as its
    offset in a `_BodyAt` and `_restore` cuts it again: half the bytes to pickle."""
    fields = {k: v for k, v in doc.__dict__.items() if k not in _HELD}
    text, body = doc.text, doc.body
    if text.endswith(body):
        fields["body"] = _BodyAt(len(text) - len(body))
    return Document(**fields)


class _BodyAt(int):
    """Stands for `text[offset:]` in a `Document` on its way to the parent."""


def _restore(doc: Document) -> Document:
    if isinstance(doc.body, _BodyAt):
        doc.body = doc.text[doc.body:]
    return doc


class InProcess:
    """The same interface as `Pool`, run in this process (small corpora)."""

    n = 1
    progress: Callable[[str, int], Callable[[int], None]] = staticmethod(_no_progress)

    def __init__(self, parse_fn: ParseFn, render_fn: RenderFn):
        self.parse_fn, self.render_fn = parse_fn, render_fn

    def parse(self, files: list[SourceFile]) -> list[tuple[Document | None, list[Warning_]]]:
        tick = self.progress("Parsing", len(files))
        out = []
        for sf in files:
            out.append(self.parse_fn(sf))
            tick(1)
        return out

    def render(self, ctx: Any, docs: list[Document], meanwhile: Callable[[], None] | None = None,
               take: Callable[[list[Rendered]], None] | None = None) -> list[Rendered]:
        if meanwhile is not None:
            meanwhile()  # before any result is taken in, as Pool does
        tick = self.progress("Rendering", len(docs))
        out = []
        for d in docs:
            out.append(self.render_fn(ctx, d))
            tick(1)
        if take is not None:
            take(out)
        return out

    def __enter__(self) -> "InProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


class WorkerError(RuntimeError):
    pass


def _died() -> WorkerError:
    return WorkerError("a build worker died (out of memory or killed)")


def _send(conn: Any, message: Any) -> None:
    try:
        conn.send(message)
    except OSError:
        raise _died() from None


def _receive(conn: Any) -> tuple[str, Any]:
    """A worker's next message, ("ok" | "part", value); its failure as WorkerError."""
    try:
        status, value = conn.recv()
    except (EOFError, OSError):
        raise _died() from None
    if status not in ("ok", "part"):
        raise WorkerError(f"a build worker failed:\n{value}")
    return status, value


class Pool:
    """N forked workers; each owns the documents it parsed."""

    progress: Callable[[str, int], Callable[[int], None]] = staticmethod(_no_progress)

    def __init__(self, n: int, parse_fn: ParseFn, render_fn: RenderFn):
        ctx = mp.get_context("fork")
        for fn in (parse_fn, render_fn):
            warm = getattr(fn, "prefork", None)
            if warm is not None:
                warm()  # what every worker would otherwise build for itself after the fork
        self.n = n
        self.owner: dict[str, int] = {}  # document path -> worker holding its parse tree
        self.conns = []
        self.procs = []
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, parse_fn, render_fn), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def _round(self, payloads: list[tuple[str, Any]], tick: Callable[[int], None],
               meanwhile: Callable[[], None] | None = None,
               take: Callable[[list[Any]], None] | None = None) -> list[Any]:
        """Each worker's results, in order. Workers send them in parts as they go (from a
        thread: they never wait for this process); `take` gets each part as it comes,
        after `meanwhile` (the parent's own work while the workers run)."""
        for conn, payload in zip(self.conns, payloads):
            _send(conn, payload)
        if meanwhile is not None:
            meanwhile()
        parts: list[list[Any]] = [[] for _ in self.conns]
        waiting = dict(enumerate(self.conns))
        while waiting:
            for conn in mp_connection.wait(list(waiting.values())):
                i = next(k for k, c in waiting.items() if c is conn)
                status, value = _receive(conn)
                if status == "ok":
                    del waiting[i]
                parts[i] += value
                tick(len(value))
                if take is not None:
                    take(value)
        return parts

    def parse(self, files: list[SourceFile]) -> list[tuple[Document | None, list[Warning_]]]:
        """Parse in small chunks handed out as workers ask for more.

        Workers that finish together waste no core at the end of the round (handing each
        a fixed half left one idle for 0.1 s of a 2,000-page build), and the parent takes
        in each chunk's documents while the workers go on, instead of all at the end
        (0.45 s after the last page of 10,000). Two chunks are in flight per worker so
        none waits for its next one.
        """
        tick = self.progress("Parsing", len(files))
        size = max(4, min(CHUNK, len(files) // (self.n * 8) or 4))
        chunks = [files[i:i + size] for i in range(0, len(files), size)]
        parts: list[Any] = [None] * len(chunks)
        sent = 0
        in_flight = [0] * self.n

        def hand_out(w: int) -> None:
            nonlocal sent
            if sent < len(chunks):
                _send(self.conns[w], ("parse", (sent, chunks[sent])))
                sent += 1
                in_flight[w] += 1

        for w in range(self.n):
            hand_out(w)
            hand_out(w)
        while any(in_flight):
            ready = mp_connection.wait([c for w, c in enumerate(self.conns) if in_flight[w]])
            for conn in ready:
                w = self.conns.index(conn)
                k, out = _receive(conn)[1]
                in_flight[w] -= 1
                hand_out(w)
                for doc, _ in out:
                    if doc is not None:
                        _restore(doc)
                        self.owner[doc.path] = w
                parts[k] = out
                tick(len(out))
        return [item for part in parts for item in part]

    def render(self, ctx: Any, docs: list[Document], meanwhile: Callable[[], None] | None = None,
               take: Callable[[list[Rendered]], None] | None = None) -> list[Rendered]:
        """Render `docs` on the workers that parsed them; `meanwhile` runs while they do,
        `take` gets the results in parts as they come (after `meanwhile` is done)."""
        jobs: list[list[tuple[str, Any]]] = [[] for _ in self.conns]
        for d in docs:
            # Plain tuples: pickling the Link objects again cost the parent 0.25 s a
            # worker at 10,000 pages; these take a tenth of that.
            jobs[self.owner.pop(d.path)].append((d.path, [(l.resolved, l.candidates) for l in d.links]))
        tick = self.progress("Rendering", len(docs))
        # The context (resolver, graph, titles) is the same for every worker: pickle it
        # once, not once per worker (~0.1 s a worker at 10,000 pages).
        blob = pickle.dumps(ctx, protocol=pickle.HIGHEST_PROTOCOL)
        return [r for part in self._round([("render", (blob, j)) for j in jobs], tick, meanwhile, take) for r in part]

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop", None))
                conn.recv()
            except (OSError, EOFError):
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
