"""`bench_context --locomo`: a long-conversation benchmark's JSON as a corpus of turn files
(made-up conversation in the benchmark's shape; none of its data is in the project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.quality.locomo import load

CONV = {
    "speaker_a": "Ada", "speaker_b": "Ben",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Ben",
        "session_1_date_time": "4:10 pm on 2 March, 2024",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I planted tomatoes   yesterday."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a photo of a garden"},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",  # a date with no turns
    },
    "qa": [
        {"question": "When did Ada plant tomatoes?", "answer": "1 March 2024", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Ben share?", "answer": 7, "evidence": ["D1:2; D1:9"], "category": 4},
        {"question": "What is Ada's cat called?", "adversarial_answer": "Tom", "evidence": [], "category": 5},
    ],
}


def test_turn_files_and_questions(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "c1.json").write_text(json.dumps(CONV), "utf-8")
    root = tmp_path / "corpus"
    qs = load(src, root)
    one = (root / "conv-c1/session-01/D1-1.md").read_text("utf-8")
    assert one == ('---\ntitle: "Ada — 4:10 pm on 2 March, 2024"\ndate: 2024-03-02\n---\n'
                   "**Ada** — 4:10 pm on 2 March, 2024\n\nI planted tomatoes yesterday.\n")
    assert "Nice! [shares a photo of a garden]" in (root / "conv-c1/session-01/D1-2.md").read_text("utf-8")
    assert sorted(p.name for p in root.rglob("*.md")) == ["D1-1.md", "D1-2.md"]
    # the adversarial question is left out; evidence ids that name no turn are dropped
    assert [(q["relevant"], q["answer"], q["category"]) for q in qs] == [
        (["conv-c1/session-01/D1-1.md"], "1 March 2024", "temporal"),
        (["conv-c1/session-01/D1-2.md"], "7", "single-hop")]
    stamp = (root / "conv-c1/session-01/D1-1.md").stat().st_mtime_ns
    load(src, root)  # a kept corpus: unchanged files are not rewritten
    assert (root / "conv-c1/session-01/D1-1.md").stat().st_mtime_ns == stamp


def test_no_conversation_files(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no .json conversation files"):
        load(tmp_path, tmp_path / "corpus")


def test_session_files_and_questions(tmp_path: Path) -> None:
    """`--layout session`: a file per session, each turn a paragraph led by its speaker;
    a question's evidence is its session."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "c1.json").write_text(json.dumps(CONV), "utf-8")
    root = tmp_path / "corpus"
    qs = load(src, root, "session")
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*.md")) == ["conv-c1/session-01.md"]
    text = (root / "conv-c1/session-01.md").read_text("utf-8")
    assert text == ('---\ntitle: "Ada and Ben — 4:10 pm on 2 March, 2024"\ndate: 2024-03-02\n---\n'
                    "# Ada and Ben — 4:10 pm on 2 March, 2024\n\n"
                    "**Ada:** I planted tomatoes yesterday.\n\n**Ben:** Nice! [shares a photo of a garden]\n\n")
    assert [q["relevant"] for q in qs] == [["conv-c1/session-01.md"], ["conv-c1/session-01.md"]]
    with pytest.raises(SystemExit, match="turn or session"):
        load(src, root, "day")
