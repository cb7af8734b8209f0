"""/v1/wake (context block within a budget) and /v1/link (neighbors, backlinks, lint)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonplace.compiler.wake import estimate_tokens, wake


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2  # one word: max(1, ceil(4/3))
    assert estimate_tokens("a " * 100) >= 100
    assert estimate_tokens("x" * 400) == 100


def test_wake_default_sections(client) -> None:
    r = client.post("/v1/wake", json={"agent": "coder", "budget_tokens": 4000, "project": "atlas"})
    assert r.status_code == 200
    d = r.get_json()
    assert d["profile"] == "default"
    block = d["block"]
    assert "coder" in block
    # core first, then project, pinned decisions (not superseded), recent sessions
    i_core = block.index("## Core")
    i_proj = block.index("## Project")
    i_dec = block.index("## Pinned decisions")
    i_ses = block.index("## Recent sessions")
    assert i_core < i_proj < i_dec < i_ses
    assert "belongs to the platform team" in block
    assert "Atlas moves billing" in block
    assert "reciprocal rank fusion" in block
    assert "Superseded text" not in block
    assert "Stopped at: write the rollback runbook" in block
    assert d["tokens"] <= 4000


@pytest.mark.parametrize("budget", [1, 20, 60, 100, 150, 300, 1000])
def test_wake_within_budget(client, budget: int) -> None:
    d = client.post("/v1/wake", json={"budget_tokens": budget, "project": "atlas"}).get_json()
    assert estimate_tokens(d["block"]) <= budget
    assert d["tokens"] == estimate_tokens(d["block"])


def test_wake_truncates_long_documents(live) -> None:
    docs = dict(live.docs)
    big = docs["core/identity.md"]
    from dataclasses import replace

    docs["core/identity.md"] = replace(big, body=big.body + "\n".join(f"line {i} of filler text" for i in range(2000)))
    r = wake(docs, budget_tokens=500)
    assert r.tokens <= 500
    assert "truncated" in r.block and "core/identity.md" in r.block
    assert any(s["truncated"] for s in r.sources)


def test_wake_profiles(client) -> None:
    core = client.post("/v1/wake", json={"profile": "core", "budget_tokens": 3000}).get_json()
    assert "## Core" in core["block"] and "## Recent sessions" not in core["block"]
    proj = client.post("/v1/wake", json={"profile": "project", "project": "Atlas"}).get_json()
    assert "## Project" in proj["block"] and "## Core" not in proj["block"]
    odd = client.post("/v1/wake", json={"profile": "coding-agent"}).get_json()
    assert odd["profile"] == "default" and odd["warnings"]
    missing = client.post("/v1/wake", json={"project": "no-such-project"}).get_json()
    assert any("no project" in w for w in missing["warnings"])


def test_wake_bad_input(client) -> None:
    assert client.post("/v1/wake", json={"budget_tokens": 0}).status_code == 400
    assert client.post("/v1/wake", json={"budget_tokens": "lots"}).status_code == 400
    assert client.post("/v1/wake", json={"agent": ["x"]}).status_code == 400
    assert client.post("/v1/wake").status_code == 200  # everything optional


def test_link_neighbors(client) -> None:
    d = client.post("/v1/link", json={"op": "neighbors", "path": "people/alex.md"}).get_json()
    assert set(d) >= {"edges", "count", "total_count", "truncated"}
    pairs = {(e["source"], e["target"]) for e in d["edges"]}
    assert ("people/alex.md", "projects/atlas/state.md") in pairs  # out
    assert ("notes/links.md", "people/alex.md") in pairs  # in
    assert d["count"] == len(d["edges"]) == d["total_count"] and d["truncated"] is False
    out = client.post("/v1/link", json={"path": "people/alex.md", "direction": "out"}).get_json()
    assert all(e["source"] == "people/alex.md" for e in out["edges"])


def test_link_depth_and_truncation(client) -> None:
    d1 = client.post("/v1/link", json={"path": "notes/links.md", "direction": "out", "depth": 1}).get_json()
    d2 = client.post("/v1/link", json={"path": "notes/links.md", "direction": "out", "depth": 3}).get_json()
    assert d2["total_count"] >= d1["total_count"]
    t = client.post("/v1/link", json={"path": "people/alex.md", "max_edges": 1}).get_json()
    assert t["count"] == 1 and t["total_count"] > 1 and t["truncated"] is True


def test_link_resolves_names(client) -> None:
    d = client.post("/v1/link", json={"op": "backlinks", "path": "Alex"}).get_json()
    assert d["path"] == "people/alex.md"
    sources = {e["source"] for e in d["edges"]}
    assert sources == {"core/rules.md", "projects/atlas/state.md", "notes/links.md"}
    assert all(e["lines"] for e in d["edges"])


def test_link_lint(client) -> None:
    d = client.post("/v1/link", json={"op": "lint"}).get_json()
    assert any(b["target"] == "missing page" and b["source"] == "notes/links.md" for b in d["broken"])
    assert any(s["source"] == "notes/links.md" for s in d["self_links"])
    assert d["count"] == len(d["broken"]) + len(d["self_links"])
    one = client.post("/v1/link", json={"op": "lint", "path": "people/alex.md"}).get_json()
    assert one["broken"] == [] and one["count"] == 0


def test_link_errors(client) -> None:
    assert client.post("/v1/link", json={"op": "neighbors"}).status_code == 400
    assert client.post("/v1/link", json={"op": "explode", "path": "x"}).status_code == 400
    assert client.post("/v1/link", json={"path": "nope.md"}).status_code == 404
    assert client.post("/v1/link", json={"path": "people/alex.md", "depth": 9}).status_code == 400
    assert client.post("/v1/link", json={"path": "../etc/passwd"}).status_code == 404
    assert client.post("/v1/link", json={"path": "people/alex.md", "max_edges": 0}).status_code == 400
