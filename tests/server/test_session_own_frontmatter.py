"""A session transcript that starts with its own frontmatter, against a live `commonplace
serve` (real sockets): it is stored with one frontmatter block, the transcript's fields
merged in (the server's fields win, Dory's title among them; the transcript's title leads
its body as a heading), the body the transcript alone; malformed frontmatter is kept as
inert text, never as a second fence block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from srvkit import CORPUS, post_ok, started

from commonplace.compiler.markdown import frontmatter as fm

SESSION = "logs/sessions/claude-code/2026-12-04-ci-cleanup.md"
TRANSCRIPT = (
    "---\ntitle: lanternfish CI cleanup\ntype: session\ncreated: 2026-12-04\ntags: [ci]\n---\n\n"
    "user: Tomás moved the nightly fuzz job to 04:30 UTC because it clashed with the mirror sync.\n\n"
    "assistant: Noted. The lanternfish nightly fuzz job now runs at 04:30 UTC.\n"
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("write-fixes"), CORPUS)
    server.root = server.corpus
    yield server
    server.stop()


def _split(path: Path) -> tuple[dict[str, Any], str]:
    raw, body, _ = fm.split(path.read_text("utf-8"))
    assert raw is not None
    return fm.load(raw), body


def _ingest(srv: Any, path: str, content: str, **extra: Any) -> dict[str, Any]:
    body = {"path": path, "content": content, "agent": "claude-code", "device": "sam-laptop",
            "session_id": "s-20261204-1", "status": "done", "captured_from": "claude-code",
            "updated": "2026-12-04T10:15:00Z", **extra}
    return post_ok(srv, "/v1/session-ingest", body)


# --------------------------------------------------------------------------- 1. session frontmatter


def test_ingest_merges_the_transcripts_own_frontmatter(srv: Any) -> None:
    d = _ingest(srv, SESSION, TRANSCRIPT)
    assert d["action"] == "created" and d["indexed"] is True, d
    text = (srv.root / SESSION).read_text("utf-8")
    assert text.count("\n---\n") == 1 and text.startswith("---\n"), text  # one block, opened and closed once
    meta, body = _split(srv.root / SESSION)
    assert meta["title"] == "claude-code session s-20261204-1"  # Dory's title for a session
    assert meta["type"] == "session" and meta["status"] == "done" and meta["session_id"] == "s-20261204-1"
    assert meta["created"] == "2026-12-04T10:15:00Z"  # the server's fields win
    assert meta["tags"] == ["ci"]  # the transcript's other fields are kept
    assert body.lstrip().startswith("# lanternfish CI cleanup\n\nuser: Tomás moved") and "title:" not in body
    # the same turn again changes nothing
    assert _ingest(srv, SESSION, TRANSCRIPT)["action"] == "unchanged"
    hits = post_ok(srv, "/v1/search", {"query": "nightly fuzz job 04:30", "mode": "recall", "corpus": "sessions",
                                       "k": 3})["results"]
    hit = next(h for h in hits if h["path"] == SESSION)
    assert "title:" not in hit["snippet"] and "type: session" not in hit["snippet"], hit
    assert hit["title"] == "claude-code session s-20261204-1", hit


def test_ingest_keeps_malformed_frontmatter_as_inert_text(srv: Any) -> None:
    path = "logs/sessions/claude-code/2026-12-04-bad-yaml.md"
    content = "---\ntitle: [unclosed\ntype: session\n---\n\nuser: the broken header stays readable.\n"
    d = _ingest(srv, path, content)
    assert d["action"] == "created" and any("frontmatter" in w for w in d.get("warnings", [])), d
    text = (srv.root / path).read_text("utf-8")
    meta, body = _split(srv.root / path)
    assert meta["title"] == "claude-code session s-20261204-1" and meta["type"] == "session"
    assert "title: [unclosed" in body and "user: the broken header stays readable." in body
    # kept verbatim inside a code block: no second `---` fence pair after the server's block
    fenced, _, rest = body.lstrip("\n").partition("\n```\n")
    assert fenced.startswith("```text\n---\ntitle: [unclosed\ntype: session\n---"), text
    assert "---" not in rest and "user: the broken header stays readable." in rest, text


def test_ingest_leaves_a_transcript_that_only_looks_fenced_alone(srv: Any) -> None:
    """Turns between rules are the transcript, not frontmatter: nothing is lifted out."""
    path = "logs/sessions/claude-code/2026-12-04-rules.md"
    content = "---\nuser: first turn\n\nassistant: first answer\n---\n\nuser: second turn\n"
    _ingest(srv, path, content)
    meta, body = _split(srv.root / path)
    assert "user" not in meta and meta["title"] == "claude-code session s-20261204-1"
    assert "user: first turn" in body and "assistant: first answer" in body and "user: second turn" in body
