"""/v1/wake (Dory's profiles, read from disk, within a budget) and /v1/link (neighbors,
backlinks, lint in Dory's shapes), in-process. The same routes against a live server
restarted over an existing build: test_dory_reads.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonplace.compiler.context.wake import estimate_tokens, wake


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2  # one word: max(1, ceil(4/3))
    assert estimate_tokens("a " * 100) >= 100
    assert estimate_tokens("x" * 400) == 100


def test_wake_default_sections(client) -> None:
    r = client.post("/v1/wake", json={"agent": "coder", "budget_tokens": 1500, "project": "atlas", "debug": True})
    assert r.status_code == 200
    d = r.get_json()
    assert d["profile"] == "default"
    block = d["block"]
    # core pages (no Dory names here: the pinned one, then the rest), project, the people it
    # links to, pinned decisions, sessions
    assert d["sources"] == ["core/identity.md", "core/rules.md", "projects/atlas/state.md", "people/alex.md",
                            "decisions/adr-0001-rrf.md", "logs/sessions/2025/06/2025-06-29-coder.md"]
    assert "belongs to the platform team" in block
    assert "Atlas moves billing" in block
    assert "reciprocal rank fusion" in block
    assert "Superseded text" not in block
    # a session's line says where it ended, not how it started
    assert "- logs/sessions/2025/06/2025-06-29-coder.md: Stopped at: write the rollback runbook." in block
    assert d["tokens_estimated"] == estimate_tokens(block) <= 1500


@pytest.mark.parametrize("budget", [1, 20, 60, 100, 150, 300, 1000])
def test_wake_within_budget(client, budget: int) -> None:
    d = client.post("/v1/wake", json={"agent": "a", "budget_tokens": budget, "project": "atlas", "debug": True}).get_json()
    assert estimate_tokens(d["block"]) <= budget
    assert d["tokens_estimated"] == estimate_tokens(d["block"])


def test_wake_reads_the_disk_not_the_parsed_text(live, corpus: Path) -> None:
    """A document loaded from the manifest has no text (issue 16): wake reads the file."""
    from dataclasses import replace

    docs = {p: replace(d, text="", body="") for p, d in live.docs.items()}
    r = wake(docs, root=corpus, budget_tokens=1500)
    assert "belongs to the platform team" in r.block and "Link generously" in r.block
    (corpus / "core/identity.md").write_text("---\ntitle: Identity\ntype: core\npinned: true\n---\nEdited on disk.\n")
    assert "Edited on disk." in wake(docs, root=corpus, budget_tokens=1500).block


def test_wake_truncates_long_documents(live, corpus: Path) -> None:
    p = corpus / "core/identity.md"
    p.write_text(p.read_text() + "\n".join(f"line {i} of filler text" for i in range(2000)))
    r = wake(live.docs, root=corpus, budget_tokens=500)
    assert r.tokens_estimated <= 500
    assert "wake excerpt truncated" in r.block and "core/identity.md" in r.block
    # each section is bounded: a long page is cut to its share, the next one still shows
    assert r.truncated == ["core/identity.md"] and "core/rules.md" in r.sources


def test_wake_profiles_and_options(client) -> None:
    coding = client.post("/v1/wake", json={"agent": "a", "profile": "coding", "debug": True}).get_json()
    # coding shows active, env and defaults (none here) and the pinned core pages: identity is
    # one of Dory's names that coding leaves out, shown because it is pinned; rules is not pinned
    assert [s for s in coding["sources"] if s.startswith("core/")] == ["core/identity.md"]
    assert coding["sources"][1] == "decisions/adr-0001-rrf.md"
    none = client.post("/v1/wake", json={"agent": "a", "include_recent_sessions": 0,
                                         "include_pinned_decisions": False, "debug": True}).get_json()
    assert not [s for s in none["sources"] if s.startswith(("decisions/", "logs/"))]
    missing = client.post("/v1/wake", json={"agent": "a", "project": "no-such-project"}).get_json()
    assert any("no project" in w for w in missing["warnings"])
    plain = client.post("/v1/wake", json={"agent": "a"}).get_json()
    assert set(plain) == {"profile", "block"}


def test_wake_bad_input(client) -> None:
    assert client.post("/v1/wake", json={"agent": "a", "budget_tokens": 0}).status_code == 422
    assert client.post("/v1/wake", json={"agent": "a", "budget_tokens": "lots"}).status_code == 422
    assert client.post("/v1/wake", json={"agent": ["x"]}).status_code == 422
    assert client.post("/v1/wake", json={"agent": "a", "profile": "core"}).status_code == 422
    assert client.post("/v1/wake").status_code == 422  # agent is required (Dory)


def test_link_neighbors(client) -> None:
    d = client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md", "direction": "both"}).get_json()
    assert set(d) >= {"edges", "count", "total_count", "truncated"}
    pairs = {(e["from"], e["to"]) for e in d["edges"]}
    assert ("people/alex.md", "projects/atlas/state.md") in pairs  # out
    assert ("notes/links.md", "people/alex.md") in pairs  # in
    assert all(set(e) >= {"from", "to", "anchor", "created"} for e in d["edges"])
    assert d["count"] == len(d["edges"]) == d["total_count"] and d["truncated"] is False
    out = client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md"}).get_json()
    assert out["edges"] and all(e["from"] == "people/alex.md" for e in out["edges"])  # Dory's default: out


def test_link_depth_and_truncation(client) -> None:
    d1 = client.post("/v1/link", json={"op": "neighbors", "path": "notes/links.md", "depth": 1}).get_json()
    d2 = client.post("/v1/link", json={"op": "neighbors", "path": "notes/links.md", "depth": 3}).get_json()
    assert d2["total_count"] > d1["total_count"]
    assert {e["depth"] for e in d2["edges"]} >= {1, 2}
    t = client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md", "direction": "both",
                                      "max_edges": 1}).get_json()
    assert t["count"] == 1 and t["total_count"] > 1 and t["truncated"] is True


def test_link_resolves_names(client) -> None:
    d = client.post("/v1/link", json={"op": "backlinks", "path": "Alex"}).get_json()
    assert d["path"] == "people/alex.md"
    assert {e["from"] for e in d["edges"]} == {"core/rules.md", "projects/atlas/state.md", "notes/links.md"}
    assert {e["anchor"] for e in d["edges"]} == {"Alex"}


def test_link_lint(client) -> None:
    d = client.post("/v1/link", json={"op": "lint"}).get_json()
    assert {"from": "notes/links.md", "to": "missing page", "reason": "target file does not exist", "line": 6} in d["broken"]
    assert any(s["from"] == "notes/links.md" and s["to"] == "Link notes" for s in d["self_links"])
    assert d["count"] == len(d["broken"])
    one = client.post("/v1/link", json={"op": "lint", "path": "people/alex.md"}).get_json()
    assert one["broken"] == [] and one["self_links"] == [] and one["count"] == 0


def test_link_errors(client) -> None:
    assert client.post("/v1/link", json={"op": "neighbors"}).status_code == 400
    assert client.post("/v1/link", json={"op": "explode", "path": "x"}).status_code == 422
    assert client.post("/v1/link", json={"op": "neighbors", "path": "nope.md"}).status_code == 404
    assert client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md", "depth": 11}).status_code == 422
    r = client.post("/v1/link", json={"op": "neighbors", "path": "../etc/passwd"})
    assert r.status_code == 400 and "escapes corpus root" in r.get_json()["detail"]
    assert client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md", "max_edges": 0}).status_code == 422
    assert client.post("/v1/link", json={"op": "neighbors", "path": "notes/../people/alex.md"}).status_code == 200
