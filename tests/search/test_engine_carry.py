"""An engine that switches to the next index generation after a small update carries its
document table and scope-free filters over (patched for the changed paths) instead of
rebuilding them: it must answer exactly like an engine opened fresh on that generation."""

from __future__ import annotations

import random

from commonplace.compiler.search.read.engine import SearchEngine
from commonplace.compiler.search.read.query import Scope

from searchkit import doc, reindex

QUERIES = ["billing invoices", "meeting notes", "alpha release", "session about billing"]


def _tables(engine: SearchEngine) -> tuple:
    empty = Scope().key()
    return ({p: tuple(r) for p, r in engine._doc_table().items()},
            engine._allowed_paths("durable", Scope()), engine._vector_filter("durable", Scope()),
            engine._allowed_paths("sessions", Scope()), engine._vector_filter("sessions", Scope()), empty)


def _answers(engine: SearchEngine) -> list:
    out = []
    for q in QUERIES:
        for corpus in ("durable", "sessions", "all"):
            for mode in ("hybrid", "bm25"):
                res = engine.search({"query": q, "mode": mode, "corpus": corpus, "k": 10})
                out.append([(r["path"], r["lines"], round(r["score"], 6)) for r in res["results"]])
    return out


def test_carried_tables_and_answers_equal_a_fresh_engine(indexed, fake_embedder, monkeypatch):
    from commonplace.compiler.search.read import engine_carry

    patched = []
    real = engine_carry._patched
    monkeypatch.setattr(engine_carry, "_patched", lambda *a: patched.append(real(*a)) or patched[-1])
    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"Body {i} about billing and invoices.\n\n## Part\n\nMeeting {i}.\n")
             for i in range(20)}
    files |= {f"logs/sessions/s{i}.md": doc(f"Session {i}", f"A session about billing {i}.\n") for i in range(4)}
    root, engine = indexed(files)
    _answers(engine)  # the filters are cached now
    rng = random.Random(3)
    for step in range(10):
        kind = rng.choice(["edit", "edit", "delete", "add", "session"])
        if kind == "edit":
            f = root / f"notes/n{rng.randrange(20):02d}.md"
            f.write_text(doc(f"Note edited {step}", f"Alpha release {step} billing.\n"), encoding="utf-8")
        elif kind == "delete":
            for f in sorted((root / "notes").glob("*.md"))[:1]:
                f.unlink()
        elif kind == "add":
            (root / f"notes/new{step}.md").write_text(doc(f"New {step}", "Meeting notes, alpha.\n"), encoding="utf-8")
        else:
            (root / f"logs/sessions/new{step}.md").write_text(doc(f"S {step}", "Session about billing.\n"),
                                                              encoding="utf-8")
        reindex(root)
        answers = _answers(engine)  # switches generation, carrying its tables
        fresh = SearchEngine(root, embedder=fake_embedder)
        try:
            assert answers == _answers(fresh), f"step {step} ({kind})"
            assert _tables(engine) == _tables(fresh), f"step {step} ({kind})"
        finally:
            fresh.close()
    assert len(patched) == 10 and all(p is not None for p in patched)  # carried, not rebuilt


def test_a_generation_an_engine_has_open_outlives_later_writes(indexed):
    """Writes every second used to collect the generation a reader was still searching
    (Whoosh opens stored fields lazily): its next result failed with a TypeError."""
    from commonplace.compiler.search.store.disk import IndexStore

    files = {f"notes/n{i}.md": doc(f"Note {i}", f"Body {i} about billing.\n") for i in range(5)}
    root, engine = indexed(files)
    engine.search({"query": "billing", "mode": "bm25"})
    held = engine.generation
    store = IndexStore(root)
    for step in range(3):  # each commit collects all but the current and previous generation
        (root / "notes/n0.md").write_text(doc("Note 0", f"Body {step} about billing.\n"), encoding="utf-8")
        reindex(root)
    assert held in store.generations() and store.current_name() != held
    assert engine._bm25.searcher.stored_fields(0)  # files of the held generation still readable
    engine.search({"query": "billing", "mode": "bm25"})  # switches: the old one is released
    store.gc()
    assert held not in store.generations()


def test_carried_title_lookups_equal_fresh_ones(indexed):
    """Wikilink targets resolved before a write (by path, path suffix, stem or title) give
    the same titles after it as a fresh lookup, for the changed documents and the rest."""
    from commonplace.compiler.search.read.engine_carry import _carry_titles, delta_paths
    from commonplace.compiler.search.read.results import TitleResolver
    from commonplace.compiler.search.store.disk import IndexStore, open_table

    files = {"notes/a/alpha.md": doc("Alpha Page", "a\n"), "notes/beta.md": doc("Beta", "b\n"),
             "people/ann.md": doc("Ann", "c\n"), "gamma.md": doc("Gamma", "d\n")}
    root, _ = indexed(files, embed_=False)
    store = IndexStore(root)
    keys = ["notes/a/alpha", "a/alpha", "alpha", "alpha page", "notes/beta", "beta", "ann", "people/ann",
            "gamma", "new title", "beta renamed", "missing", "notes/a/alpha.md"]
    old_db = open_table(store.current(), readonly=True)
    old = TitleResolver(old_db)
    for k in keys:
        old(k)
    (root / "notes/a/alpha.md").write_text(doc("New Title", "a2\n"))
    (root / "notes/beta.md").unlink()
    (root / "beta.md").write_text(doc("Beta Renamed", "b2\n"))
    reindex(root, embed_=False)
    db = open_table(store.current(), readonly=True)
    try:
        changed = (delta_paths(db) or set()) | {"notes/beta.md", "beta.md", "notes/a/alpha.md"}
        carried = _carry_titles(old, changed, old_db, db)
        fresh = TitleResolver(db)
        for k in keys:
            assert carried(k) == fresh(k), k
    finally:
        db.close()
        old_db.close()


def test_prepared_switch_answers_like_a_fresh_engine(indexed, fake_embedder):
    """A writer's `prepare_switch` (the generation opened off the engine's lock, swapped in
    by the next search): answers and tables equal a fresh engine's; searches running
    meanwhile are not disturbed."""
    import threading

    from commonplace.compiler.search.read import engine_carry

    files = {f"notes/n{i:02d}.md": doc(f"Note {i}", f"Body {i} about billing and invoices.\n") for i in range(16)}
    files |= {f"logs/sessions/s{i}.md": doc(f"Session {i}", f"A session about billing {i}.\n") for i in range(3)}
    root, engine = indexed(files)
    _answers(engine)
    assert not engine_carry.prepare_switch(engine)  # nothing new to switch to
    stop, go, busy, errors = threading.Event(), threading.Event(), threading.Lock(), []

    def reader() -> None:
        while not stop.is_set():
            if not go.wait(0.01):
                continue
            with busy:
                if not go.is_set():
                    continue
                try:
                    engine.search({"query": "billing", "mode": "hybrid", "k": 5})
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    prepared = []
    try:
        for step in range(6):
            (go.set if step % 2 else go.clear)()  # odd steps: a search may switch first
            with busy:  # no search in flight past here on even steps
                pass
            (root / f"notes/n{step:02d}.md").write_text(doc(f"Retitled {step}", f"Alpha release {step}.\n"))
            if step == 3:
                (root / "logs/sessions/s0.md").unlink()
            before = engine.generation
            reindex(root)
            switched = engine_carry.prepare_switch(engine)
            if not step % 2:  # no search ran: the prepared generation waits for the next one
                assert switched and engine.generation == before and engine.handover.prepared is not None
                opened = engine.handover.prepared.gen.bm25
                engine.search({"query": "alpha", "k": 3})
                assert engine._bm25 is opened and engine.generation == engine.store.current_name()
            prepared.append(switched)
            fresh = SearchEngine(root, embedder=fake_embedder)
            try:
                assert _answers(engine) == _answers(fresh), step
                assert engine.generation == engine.store.current_name() and engine.handover.prepared is None
                assert _tables(engine) == _tables(fresh), step
            finally:
                fresh.close()
    finally:
        stop.set()
        t.join()
    assert not errors
    assert all(prepared[0::2])


def _titles_found(engine: SearchEngine, query: str) -> set[str]:
    return {r["title"] for r in engine.search({"query": query, "mode": "bm25", "k": 10})["results"]}


def test_searches_keep_their_generation_during_a_writers_hold(indexed):
    """Inside a writer's hold, searches stay on the generation they have (no switch of
    their own under the engine's lock); once the writer has prepared the new one and
    released, the next search sees the write. Without a prepared generation (the writer's
    prepare failed), the release alone makes the next search switch by itself."""
    from commonplace.compiler.search.read import engine_carry

    files = {f"notes/n{i}.md": doc(f"Note {i}", f"Body {i} about billing.\n") for i in range(6)}
    root, engine = indexed(files)
    assert "Zebra Page" not in _titles_found(engine, "zebra")
    first = engine.generation

    token = engine_carry.hold(engine)
    (root / "notes/zebra.md").write_text(doc("Zebra Page", "Zebra crossing notes.\n"))
    reindex(root)
    assert engine.store.current_name() != first
    assert "Zebra Page" not in _titles_found(engine, "zebra") and engine.generation == first  # kept
    assert engine_carry.prepare_switch(engine)
    engine_carry.release(engine, token)
    assert "Zebra Page" in _titles_found(engine, "zebra")  # the prepared generation, swapped in
    assert engine.generation == engine.store.current_name()

    token = engine_carry.hold(engine)
    (root / "notes/yak.md").write_text(doc("Yak Page", "Yak shaving notes.\n"))
    reindex(root)
    assert "Yak Page" not in _titles_found(engine, "yak")
    engine_carry.release(engine, token)  # nothing prepared
    assert "Yak Page" in _titles_found(engine, "yak")


def test_a_hold_never_keeps_a_generation_older_than_the_live_one_at_its_start(indexed, monkeypatch):
    """A hold keeps only a generation at least as new as the one live when it began (a
    write answered before it must be seen); two holds at once, or an old one, keep
    nothing."""
    from commonplace.compiler.search.read import engine_carry

    files = {f"notes/n{i}.md": doc(f"Note {i}", f"Body {i} about billing.\n") for i in range(6)}
    root, engine = indexed(files)
    _titles_found(engine, "billing")
    (root / "notes/owl.md").write_text(doc("Owl Page", "Owl notes.\n"))
    reindex(root)  # live now, not yet opened by the engine: a write answered before the hold
    token = engine_carry.hold(engine)
    assert "Owl Page" in _titles_found(engine, "owl")
    engine_carry.release(engine, token)

    a, b = engine_carry.hold(engine), engine_carry.hold(engine)
    (root / "notes/ant.md").write_text(doc("Ant Page", "Ant notes.\n"))
    reindex(root)
    assert "Ant Page" in _titles_found(engine, "ant")  # two holds: nothing kept
    engine_carry.release(engine, a)
    engine_carry.release(engine, b)

    token = engine_carry.hold(engine)
    monkeypatch.setattr(engine_carry, "HOLD_SECONDS", 0.0)  # a hold never released
    (root / "notes/elk.md").write_text(doc("Elk Page", "Elk notes.\n"))
    reindex(root)
    assert "Elk Page" in _titles_found(engine, "elk")
    engine_carry.release(engine, token)
