"""A query model that is still loading holds no other search (issue 28: the first active
memory after a restart took the whole model load, ~1.5 s, against Dory's 1.2 s timeout).

A search held the engine's lock while it embedded its query; the server's warm-up
search, loading the model right after the server said ready, held every words-only
search behind it. The embedding is now made before the lock (`read/prefetch.py`).
"""

from __future__ import annotations

import threading

from searchkit import FakeEmbedder, doc

FILES = {
    "notes/ferry.md": doc("Ferry", "The ferry leaves the harbour at 07:40 every weekday.\n"),
    "notes/tide.md": doc("Tides", "High tide tables are pinned in the harbour office.\n"),
}


class SlowToLoad(FakeEmbedder):
    """Its first query embedding waits until `go` is set: a model still loading."""

    def __init__(self) -> None:
        super().__init__()
        self.go, self.inside = threading.Event(), threading.Event()

    def encode_query(self, text: str):
        self.inside.set()
        assert self.go.wait(30), "never released"
        return super().encode_query(text)


def test_a_words_only_search_is_not_held_by_a_model_loading(indexed) -> None:
    from commonplace.compiler.search.read.engine import SearchEngine

    root, _ = indexed(FILES)
    slow = SlowToLoad()
    engine = SearchEngine(root, embedder=slow)
    answers: dict[str, dict] = {}
    loading = threading.Thread(target=lambda: answers.update(hybrid=engine.search(
        {"query": "when does the ferry leave", "mode": "hybrid"})), daemon=True)
    loading.start()
    assert slow.inside.wait(30)  # the hybrid search is embedding its query (the model "loading")
    words = threading.Thread(target=lambda: answers.update(bm25=engine.search(
        {"query": "ferry harbour", "mode": "bm25"})), daemon=True)
    words.start()
    words.join(20)
    finished_while_loading = not words.is_alive() and "hybrid" not in answers
    slow.go.set()
    loading.join(20)
    assert finished_while_loading, "the words-only search waited for the model"
    assert [r["path"] for r in answers["bm25"]["results"]][:1] == ["notes/ferry.md"]
    assert answers["hybrid"]["results"][0]["path"] == "notes/ferry.md"


class NotLoaded(FakeEmbedder):
    """Reports `loaded` as a real embedder does: False until its first query embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded, self.go = False, threading.Event()

    def encode_query(self, text: str):
        assert self.go.wait(30), "never released"
        self.loaded = True
        return super().encode_query(text)


def test_active_memory_searches_by_words_while_the_model_loads_and_loads_it(indexed) -> None:
    """The first call after a restart does not wait for the model: it searches by words
    and says so; the model is loaded behind it, and later calls use it."""
    import time

    from commonplace.compiler.search.read.engine import open_engine
    from commonplace.server.ops.query_model import model_ready

    root, _ = indexed(FILES)
    slow = NotLoaded()
    engine = open_engine(root, embedder=slow)
    engine.search({"query": "ferry", "mode": "bm25"})  # the index is open, the model is not
    assert model_ready(root) is False and model_ready(root) is False  # one load, not two
    slow.go.set()
    t0 = time.time()
    while not model_ready(root):
        assert time.time() - t0 < 20, "the model was never loaded"
        time.sleep(0.05)
    assert slow.calls == 1
