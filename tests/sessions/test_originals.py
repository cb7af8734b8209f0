"""Searching compacted sessions by their original text (compiler/sessions/originals.py):
hits map back to the session with the turn's lines in the original, ranked by BM25 over
the originals' turns, within the request's scope, merged with the engine's rows."""

from __future__ import annotations

from pathlib import Path

from commonplace.compiler.sessions import compact as cp
from commonplace.compiler.sessions import originals as og

A = "logs/sessions/a/2025-01-02-s1.md"
B = "logs/sessions/b/2025-01-03-s2.md"
TEXT = {A: "---\ntitle: s1\ntype: session\ncreated: 2025-01-02\n---\n\nuser: Good morning.\n\n"
           "assistant: The marmoset enclosure needs a new heater.\n\nuser: And the otters?\n",
        B: "---\ntitle: s2\ntype: session\ncreated: 2025-01-03\n---\n\nuser: The marmoset ate my lunch, "
           "the marmoset is a menace, marmoset again.\n"}


def _compacted(tmp_path: Path) -> list[tuple[str, str]]:
    out = []
    for rel, text in TEXT.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
        assert cp.compact_file(tmp_path, rel, "(gist)")
        data = p.read_bytes()
        assert b"marmoset" not in data  # only the original holds the words
        out.append((rel, cp.MARK.search(data.decode()).group(1)))
    return out


def test_a_hit_names_the_session_and_the_turns_lines_in_the_original(tmp_path: Path) -> None:
    sessions = _compacted(tmp_path)
    hits = og.search(tmp_path, "heater for the marmosets", sessions, 10)
    assert [h.path for h in hits] == [A, B]  # both words (stemmed) beat one word said three times
    a = hits[0]
    assert (a.unit.start, a.unit.end) == (9, 9) and a.coverage == 1.0
    original = cp.original_bytes(tmp_path, A).decode().split("\n")
    assert "marmoset enclosure" in original[a.unit.start - 1]
    assert og.search(tmp_path, "giraffe", sessions, 10) == []
    assert og.search(tmp_path, "the", sessions, 10) == []  # stop words alone find nothing


def test_scope_and_merge(tmp_path: Path) -> None:
    sessions = _compacted(tmp_path)
    fm = {"type": "session", "created": "2025-01-03"}
    assert og.in_scope(B, fm, {"path_glob": ["logs/sessions/b/*"], "since": "2025-01-03"})
    assert not og.in_scope(B, fm, {"path_glob": "logs/sessions/a/*"})
    assert not og.in_scope(B, fm, {"until": "2025-01-02"}) and not og.in_scope(B, fm, {"type": ["note"]})
    hits = og.search(tmp_path, "marmoset heater", sessions, 10)
    rows = {h.path: og.row(h, h.path, "marmoset heater") for h in hits}
    engine = [{"path": B, "lines": "1-7", "snippet": "gist"}, {"path": "people/x.md", "lines": "1-2"}]
    merged = og.merge(engine, hits, rows, 10)
    assert [r["path"] for r in merged][:1] == [B]  # found both ways ranks first
    assert merged[0]["original"]["lines"] == "7-7" and merged[0]["lines"] == "1-7"
    only = next(r for r in merged if r["path"] == A)
    assert only["in_original"] and "marmoset enclosure" in only["content"]
    assert len(og.merge(engine, hits, rows, 1)) == 1
