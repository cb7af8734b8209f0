"""The sessions plane as MCP tools (issue 31), with the SDK's own client over stdio against
the real console script on a local corpus: session ingest, digest, propose, list, show,
apply (and a changed route refused), reject, compact, search by original text and uncompact, and erasing a claim
with dory_purge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcpkit import stdio_session, text

S_OLD = "logs/sessions/coder/2025-02-01-a.md"
S_MID = "logs/sessions/coder/2025-02-02-b.md"
S_NEW = "logs/sessions/coder/2026-11-20-c.md"


def _ingest(path: str, content: str, updated: str) -> dict[str, Any]:
    return {"path": path, "content": content, "agent": "coder", "device": "laptop", "session_id": path[-4:-3],
            "status": "done", "captured_from": "mcp-test", "updated": updated}


def test_sessions_tools_over_stdio(corpus: Path, tmp_path: Path) -> None:
    async def run() -> None:
        async with stdio_session(corpus, tmp_path / "site", "--no-embed") as s:
            async def ok(name: str, args: dict[str, Any]) -> dict[str, Any]:
                res = await s.call_tool(name, args)
                assert not res.is_error, (name, text(res))
                return res.structured_content

            for path, day in ((S_OLD, "2025-02-01"), (S_MID, "2025-02-02"), (S_NEW, "2026-11-20")):
                body = (f"user: We decided to run the walrus backups on {day}.\n\n"
                        f"assistant: Alex owns the walrus backup rotation from {day} on.\n\nuser: Thanks, narwhal.\n")
                assert (await ok("dory_session_ingest", _ingest(path, body, f"{day}T08:00:00Z")))["stored"]
            d = await ok("dory_digest", {"session": S_NEW})
            assert d["saved"] and (corpus / d["path"]).is_file()
            assert {p["section"] for p in d["proposals"] if p["stored"]} == {"decision", "fact"}

            listed = await ok("dory_proposals_list", {})
            fact = next(p for p in listed["proposals"] if p["kind"] == "fact")
            shown = await ok("dory_proposals_show", {"id": fact["id"]})
            assert shown["planned"]["target_path"] == "people/alex.md"
            applied = await ok("dory_proposals_apply", {"id": fact["id"]})
            assert applied["applied"] and applied["result"] == "written"
            assert "walrus backup rotation" in (corpus / "people/alex.md").read_text("utf-8")

            # A proposal whose subject disappears cannot be applied.
            p = await ok("dory_memory_propose", {"action": "write", "kind": "fact", "subject": "Atlas",
                                                 "content": "Atlas moves to the new queue in March."})
            assert p["stored"] and p["planned"]["target_path"] == "projects/atlas/state.md"
            (corpus / "projects/atlas/state.md").unlink()
            res = await s.call_tool("dory_proposals_apply", {"id": p["id"]})
            assert res.is_error and res.structured_content["status"] == 409
            assert res.structured_content["error"]["code"] == "route_changed"
            rej = await ok("dory_proposals_reject", {"id": p["id"], "reason": "Atlas is gone"})
            assert rej["rejected"] and (corpus / rej["path"]).is_file()

            c = await ok("dory_compact", {"older_than_days": 30})
            every = sorted(p.relative_to(corpus).as_posix() for p in (corpus / "logs/sessions").rglob("*.md"))
            assert {S_OLD, S_MID} <= set(c["compacted"]) and S_NEW not in c["compacted"]
            assert c["kept_recent"] == -(-len(every) // 3)  # the newest third stays, whatever its age
            # the small talk is in the originals only: found there on request
            plain = await ok("dory_search", {"query": "narwhal", "corpus": "sessions"})
            assert S_OLD not in [h["path"] for h in plain["results"]]
            found = await ok("dory_search", {"query": "narwhal", "corpus": "sessions", "originals": True})
            hits = {h["path"]: h for h in found["results"]}
            assert {S_OLD, S_MID} <= set(hits) and hits[S_OLD]["in_original"]
            got = await ok("dory_get", {"path": S_OLD, "uncompact": True})
            assert "We decided to run the walrus backups on 2025-02-01." in got["content"]
            u = await ok("dory_uncompact", {"path": S_OLD})
            assert u["uncompacted"]

            w = await ok("dory_memory_write", {"action": "write", "kind": "fact", "subject": "Alex",
                                               "content": "Alex hides the okapi vault key under the mat.",
                                               "allow_canonical": True})
            erased = await ok("dory_purge", {"target": f"claim:{w['claim_ids'][0]}", "dry_run": False,
                                             "reason": "asked to erase", "allow_canonical": True})
            assert erased["erased"]
            for p in corpus.rglob("*"):
                if p.is_file():
                    assert b"okapi" not in p.read_bytes().lower(), p

    anyio.run(run)
