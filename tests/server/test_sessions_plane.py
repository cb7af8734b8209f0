"""Sessions become memory (issue 31) over HTTP, against a live `commonplace serve` (waitress,
real sockets, tokens): session ingest -> digest -> proposals (list, show, apply, a changed
route refused, reject), compaction with `get uncompact=true` and /v1/uncompact, erasure of
a claim leaving no trace in any file of the corpus or the site, and a restart.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dorylive import Server
from srvkit import CORPUS, write_files

S1 = "logs/sessions/coder/2026-01-05-s1.md"
TRANSCRIPT = ("user: We decided to use SQLite for the Atlas cache.\n\n"
              "assistant: Noted. Alex owns the Atlas migration and ships it on Friday.\n\n"
              "user: What retention policy should the pelican invoices follow?\n\n"
              "assistant: I'll draft the pelican retention policy by Monday.\n")


def ingest(server: Server, token: str, path: str, content: str, updated: str) -> dict[str, Any]:
    body = {"path": path, "content": content, "agent": "coder", "device": "laptop", "session_id": path[-6:-3],
            "status": "done", "captured_from": "test", "updated": updated}
    r = server.request("POST", "/v1/session-ingest", body, token=token)
    assert r.status == 200, r.text
    return r.json()


def call(server: Server, token: str, path: str, body: Any = None, status: int = 200) -> dict[str, Any]:
    r = server.request("POST", path, body or {}, token=token)
    assert r.status == status, r.text
    return r.json()


def search(server: Server, token: str, query: str, **kw: Any) -> list[str]:
    return [h["path"] for h in call(server, token, "/v1/search", {"query": query, "k": 10, "mode": "bm25", **kw})["results"]]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("sessions-plane")
    root = write_files(base / "corpus", CORPUS)
    token = TokenStore(root).create("reviewer")
    server = Server(root, base / "site").start()
    yield server, root, token, base
    if server.proc and server.proc.poll() is None:
        server.stop()


def test_digest_of_an_ingested_session_and_its_proposals(env) -> None:
    server, root, token, _ = env
    ingest(server, token, S1, TRANSCRIPT, "2026-01-05T10:00:00Z")
    d = call(server, token, "/v1/digest", {"session": S1})
    assert d["path"] == "logs/digests/sessions/coder/2026-01-05-s1.md" and d["saved"] and d["action"] == "created"
    page = (root / d["path"]).read_text("utf-8")
    assert "## Decisions" in page and "We decided to use SQLite for the Atlas cache. (L" in page
    assert "Alex owns the Atlas migration" in page and f"Session: `{S1}`" in page
    # Same sessions, same page: nothing changes the second time.
    again = call(server, token, "/v1/digest", {"session": S1, "propose": False})
    assert again["action"] == "unchanged" and (root / d["path"]).read_text("utf-8") == page
    assert d["path"] in search(server, token, "SQLite Atlas cache decided")
    stored = [p for p in d["proposals"] if p["stored"]]
    assert {p["section"] for p in stored} == {"decision", "fact"}
    # Proposals, not writes: no claim was recorded and no decision page exists yet.
    assert not (root / "claims").exists()
    listed = call(server, token, "/v1/proposals", {})
    assert {p["id"] for p in listed["proposals"]} == {p["id"] for p in stored}
    day = call(server, token, "/v1/digest", {"date": "2026-01-05", "propose": False})
    assert day["path"] == "logs/digests/daily/2026-01-05.md" and day["digest"]["sources"] == [S1]
    r = server.request("POST", "/v1/digest", {"session": "people/alex.md"}, token=token)
    assert r.status == 400
    assert server.request("POST", "/v1/digest", {"date": "1999-01-01"}, token=token).status == 404


def test_apply_goes_through_memory_write_and_moves_the_proposal(env) -> None:
    server, root, token, _ = env
    fact = next(p for p in call(server, token, "/v1/proposals", {})["proposals"] if p["kind"] == "fact")
    shown = call(server, token, "/v1/proposals/show", {"id": fact["id"]})
    assert shown["planned"]["target_path"] == "people/alex.md" and "+" in shown["preview"]
    assert shown["source_paths"][0].startswith(S1 + "#L")
    r = call(server, token, "/v1/proposals/apply", {"id": fact["id"]})
    assert r["applied"] and r["result"] == "written" and r["target_path"] == "people/alex.md" and r["claim_ids"]
    assert "Alex owns the Atlas migration" in (root / "people/alex.md").read_text("utf-8")
    assert not (root / f"inbox/proposed/{fact['id']}.md").exists()
    assert (root / f"inbox/applied/{fact['id']}.md").is_file()
    assert call(server, token, "/v1/proposals", {"status": "applied"})["proposals"][0]["outcome"]["result"] == "written"
    again = server.request("POST", "/v1/proposals/apply", {"id": fact["id"]}, token=token)
    assert again.status == 409 and again.json()["error"]["code"] == "already_settled"
    # The same statement written directly gives the same kind of claim; only provenance differs.
    claims = "".join(p.read_text() for p in (root / "claims").rglob("*.jsonl"))
    assert "Alex owns the Atlas migration" in claims and S1 in claims


def test_apply_refuses_a_changed_route(env) -> None:
    server, root, token, _ = env
    p = call(server, token, "/v1/memory-propose", {"action": "write", "kind": "fact", "subject": "AK",
                                                   "content": "AK prefers morning standups."})
    assert p["stored"] and p["planned"]["subject_ref"] == "person:alex"
    assert call(server, token, "/v1/memory-propose", {"action": "write", "kind": "fact", "subject": "AK",
                                                      "content": "AK prefers morning standups."})["existing"]
    # The alias moves to another person: the proposal would now land elsewhere.
    for rel, old, new in (("people/alex.md", "aliases: [Alex, AK]", "aliases: [Alex]"),
                          ("people/sam.md", "canonical: true", "canonical: true\naliases: [AK]")):
        h = server.request("GET", f"/v1/get?path={rel}&debug=true", token=token).json()["hash"]
        text = (root / rel).read_text("utf-8").replace(old, new)
        call(server, token, "/v1/write", {"kind": "replace", "target": rel, "content": text, "expected_hash": h})
    r = server.request("POST", "/v1/proposals/apply", {"id": p["id"]}, token=token)
    assert r.status == 409 and r.json()["error"]["code"] == "route_changed", r.text
    msg = r.json()["error"]["message"]
    assert "planned person:alex at people/alex.md" in msg and ("person:sam" in msg or "ambiguous" in msg), msg
    assert (root / f"inbox/proposed/{p['id']}.md").is_file()  # still waiting, nothing written
    assert "morning standups" not in (root / "people/sam.md").read_text("utf-8")
    r = call(server, token, "/v1/proposals/reject", {"id": p["id"], "reason": "AK is someone else now"})
    assert r["rejected"] and r["path"] == f"inbox/rejected/{p['id']}.md"
    assert "AK is someone else now" in (root / r["path"]).read_text("utf-8")
    assert server.request("POST", "/v1/proposals/show", {"id": "p-000000000000"}, token=token).status == 404
    assert server.request("POST", "/v1/proposals/show", {"id": "../etc"}, token=token).status == 422
    # A proposal file edited into nonsense is named, never a crash.
    (root / "inbox/proposed/p-0123456789ab.md").write_text("---\ntitle: [unclosed\n---\nbroken\n")
    listed = call(server, token, "/v1/proposals", {})
    assert [u["path"] for u in listed["unreadable"]] == ["inbox/proposed/p-0123456789ab.md"]
    r = server.request("POST", "/v1/proposals/apply", {"id": "p-0123456789ab"}, token=token)
    assert r.status == 409 and r.json()["error"]["code"] == "proposal_unreadable"
    (root / "inbox/proposed/p-0123456789ab.md").unlink()


def test_compaction_keeps_the_gist_searchable_and_the_original_recoverable(env) -> None:
    server, root, token, _ = env
    olds = {}
    for i, day in enumerate(("2025-01-03", "2025-01-04")):
        rel = f"logs/sessions/coder/{day}-old{i}.md"
        ingest(server, token, rel, f"user: The flamingo ledger{i} must balance before the audit.\n\n"
                                   f"assistant: Agreed, we decided to reconcile ledger{i} weekly.\n", f"{day}T09:00:00Z")
        olds[rel] = (root / rel).read_bytes()
    assert call(server, token, "/v1/compact", {"older_than_days": 30, "dry_run": True})["count"] == 2
    r = call(server, token, "/v1/compact", {"older_than_days": 30})
    sessions = list((root / "logs/sessions").rglob("*.md"))
    assert sorted(r["compacted"]) == sorted(olds)
    assert r["kept_recent"] == -(-len(sessions) // 3)  # the newest third, whatever their age
    assert call(server, token, "/v1/compact", {"older_than_days": 30})["count"] == 0  # idempotent
    for rel, original in olds.items():
        text = (root / rel).read_text("utf-8")
        assert "commonplace:compacted" in text and "agent: coder" in text
        got = server.request("GET", f"/v1/get?path={rel}&uncompact=true", token=token).json()
        assert got["content"].encode("utf-8") == original
    assert (root / S1).read_bytes().count(b"compacted") == 0  # the recent third is never compacted
    assert "logs/sessions/coder/2025-01-03-old0.md" in search(server, token, "reconcile ledger0 weekly",
                                                              corpus="sessions")
    rel = "logs/sessions/coder/2025-01-04-old1.md"
    r = call(server, token, "/v1/uncompact", {"path": rel})
    assert r["uncompacted"] and (root / rel).read_bytes() == olds[rel]
    assert server.request("POST", "/v1/uncompact", {"path": "people/alex.md"}, token=token).status == 400


def test_compacted_sessions_are_found_by_their_original_text_on_request(env) -> None:
    server, root, token, _ = env
    rel = "logs/sessions/coder/2024-06-01-zoo.md"
    ingest(server, token, rel, "user: We decided to move the archive to cold storage.\n\n"
                               "assistant: Fine.\n\nuser: Ok, marmosets.\n", "2024-06-01T09:00:00Z")
    call(server, token, "/v1/compact", {"older_than_days": 30})
    assert b"marmoset" not in (root / rel).read_bytes()  # the gist kept the decision, not the small talk
    assert rel not in search(server, token, "marmosets", corpus="sessions")
    found = call(server, token, "/v1/search", {"query": "marmosets", "corpus": "sessions", "originals": True})
    hit = next(h for h in found["results"] if h["path"] == rel)
    assert hit["in_original"] and "marmosets" in hit["snippet"] and hit["evidence_class"] == "session"
    start, end = (int(x) for x in hit["lines"].split("-"))
    got = server.request("GET", f"/v1/get?path={rel}&uncompact=true&from={start}&lines={end - start + 1}",
                         token=token).json()
    assert got["content"] == "user: Ok, marmosets.\n"
    # found by its gist and its original: the gist's row, with the original's turn beside it
    both = call(server, token, "/v1/search", {"query": "archive cold storage", "corpus": "all", "mode": "bm25",
                                              "originals": True})
    row = next(h for h in both["results"] if h["path"] == rel)
    assert "in_original" not in row and "cold storage" in row["original"]["snippet"]
    # the scope applies to the originals too; durable search has no sessions to look in
    assert rel not in [h["path"] for h in call(server, token, "/v1/search", {
        "query": "marmosets", "corpus": "sessions", "originals": True,
        "scope": {"path_glob": "logs/sessions/other/*"}})["results"]]
    r = server.request("POST", "/v1/search", {"query": "marmosets", "originals": True}, token=token)
    assert r.status == 400 and "corpus sessions or all" in r.json()["error"]["message"]
    recall = call(server, token, "/v1/search", {"query": "marmosets", "mode": "recall", "originals": True})
    assert rel in [h["path"] for h in recall["results"]]


def _trace(root: Path, site: Path, needle: bytes) -> list[str]:
    hits = []
    for base in (root, site):
        for here, dirs, files in os.walk(base):
            for f in files:
                p = Path(here) / f
                try:
                    if needle in p.read_bytes().lower():
                        hits.append(str(p))
                except OSError:
                    pass
    return hits


def test_purge_of_a_claim_erases_it_from_the_log_and_everything_derived(env) -> None:
    server, root, token, base = env
    secret = "Sam keeps the zanzibar quokka passphrase in a drawer."
    w = call(server, token, "/v1/memory-write", {"action": "write", "kind": "fact", "subject": "Sam Reyes",
                                                 "content": secret, "allow_canonical": True})
    assert w["result"] == "written", w
    cid = w["claim_ids"][0]
    # an old session quoting it, compacted: the words are in its blob (and its gist)
    old = "logs/sessions/coder/2023-05-01-drawer.md"
    ingest(server, token, old, f"user: {secret}\n\nassistant: Ok, noted.\n", "2023-05-01T09:00:00Z")
    assert old in call(server, token, "/v1/compact", {"older_than_days": 30})["compacted"]
    blob_hits = [p for p in _trace(root, base / "site", b"zanzibar") if p.endswith(".blob")]
    assert len(blob_hits) == 1
    assert search(server, token, "zanzibar quokka passphrase")
    assert _trace(root, base / "site", b"zanzibar")
    dry = call(server, token, "/v1/purge", {"target": f"claim:{cid}"})
    assert dry["dry_run"] and dry["claims"] == [cid] and _trace(root, base / "site", b"zanzibar")
    r = server.request("POST", "/v1/purge", {"target": f"claim:{cid}", "dry_run": False, "reason": "erase it"},
                       token=token)
    assert r.status == 400 and "allow_canonical" in r.text
    r = call(server, token, "/v1/purge", {"target": f"claim:{cid}", "dry_run": False, "reason": "user asked",
                                          "allow_canonical": True})
    assert r["erased"] and r["claim_logs"]
    assert _trace(root, base / "site", b"zanzibar") == []
    assert search(server, token, "zanzibar quokka passphrase") == []
    assert old not in search(server, token, "zanzibar quokka", corpus="sessions", originals=True)
    assert not Path(blob_hits[0]).exists()  # the old blob is gone; the redacted original is kept
    got = server.request("GET", f"/v1/get?path={old}&uncompact=true", token=token).json()
    assert "[erased]" in got["content"] and "Ok, noted." in got["content"]
    log = "".join(p.read_text() for p in (root / "claims").rglob("*.jsonl"))
    assert cid in log and '"erased":true' in log  # the redaction event: who and when, no text
    # forget, by contrast, keeps history in the log
    w2 = call(server, token, "/v1/memory-write", {"action": "write", "kind": "fact", "subject": "Sam Reyes",
                                                  "content": "Sam collects vintage barometers.", "allow_canonical": True})
    call(server, token, "/v1/memory-write", {"action": "forget", "kind": "fact", "subject": "Sam Reyes",
                                             "content": "vintage barometers", "allow_canonical": True})
    log = "".join(p.read_text() for p in (root / "claims").rglob("*.jsonl"))
    assert "Sam collects vintage barometers." in log and w2["claim_ids"][0] in log


def test_restart_over_the_build(env) -> None:
    server, root, token, base = env
    server.stop()
    again = Server(root, base / "site").start()
    try:
        listed = call(again, token, "/v1/proposals", {"status": "all"})
        assert {p["status"] for p in listed["proposals"]} >= {"applied", "rejected"}
        rel = "logs/sessions/coder/2025-01-03-old0.md"
        assert rel in search(again, token, "reconcile ledger0 weekly", corpus="sessions")
        found = call(again, token, "/v1/search", {"query": "marmosets", "corpus": "sessions", "originals": True})
        assert "logs/sessions/coder/2024-06-01-zoo.md" in [h["path"] for h in found["results"]]
        assert call(again, token, "/v1/uncompact", {"path": rel})["uncompacted"]
        assert search(again, token, "zanzibar quokka passphrase") == []
        assert _trace(root, base / "site", b"zanzibar") == []  # the restart's build brings nothing back
        d = call(again, token, "/v1/digest", {"session": S1, "propose": False})
        assert d["action"] == "unchanged"
    finally:
        again.stop()
        server.proc = None
