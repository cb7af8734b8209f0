"""`commonplace mcp` over stdio, driven by the SDK's own client against the real console
script: the handshake, every tool with good and bad arguments, resources, the wake
prompt, a running server taking the calls, restarts over an existing build, a client that
cancels or hangs up in the middle of a call, and a start on a missing corpus."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpkit import BIN, CORPUS, Serve, child_env, http, raw_stdio, stdio_session, text, write_corpus
from toolcases import TOOL_NAMES, bad_args, good_args, op_available, required_keys, validation_message

from commonplace.server.openapi import tools_document


def test_missing_corpus_fails_at_start_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-corpus"
    r = subprocess.run([BIN, "mcp", "-C", str(missing)], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL, env=child_env())
    assert r.returncode == 2
    assert r.stdout == ""  # nothing a host could mistake for protocol
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "does not exist" in lines[0] and str(missing) in lines[0]


def test_tools_resources_and_prompt_on_a_local_corpus(corpus: Path, tmp_path: Path) -> None:
    """No server runs: the process opens the corpus itself (in the background)."""
    out = tmp_path / "site"

    async def run() -> None:
        async with stdio_session(corpus, out, "--no-embed") as s:
            assert s.server_info.name == "commonplace"
            caps = s.server_capabilities
            assert caps.tools is not None and caps.resources is not None and caps.prompts is not None
            assert "dory_wake" in s.initialize_result.instructions
            tools = (await s.list_tools()).tools
            published = {t["name"]: t for t in tools_document()["tools"]}
            assert [t.name for t in tools] == TOOL_NAMES
            for t in tools:  # same names, descriptions and input schemas as GET /v1/tools
                assert t.input_schema == published[t.name]["inputSchema"]
                assert t.description == published[t.name]["description"]

            for name in TOOL_NAMES:
                res = await s.call_tool(name, good_args(name))
                if op_available(name):
                    assert not res.is_error, (name, text(res))
                    assert required_keys(name) <= set(res.structured_content), name
                    assert json.loads(text(res)) == res.structured_content
                else:  # an operation still being written: an error answer, never a crash
                    assert res.is_error and res.structured_content["status"] == 500, (name, text(res))

                bad = bad_args(name)
                res = await s.call_tool(name, bad)
                assert res.is_error, name
                assert text(res) == validation_message(name, bad)
                assert res.structured_content["status"] == 422

            # A value out of bounds gets the HTTP API's sentence, word for word.
            res = await s.call_tool("dory_search", {"query": "billing", "k": 99})
            assert res.is_error and text(res) == "`k`: Input should be less than or equal to 50"
            res = await s.call_tool("dory_get", {"path": "../outside.md"})
            assert res.is_error and res.structured_content["status"] == 404

            listed = (await s.list_resources()).resources
            uris = {r.uri: r for r in listed}
            assert "commonplace:///core/identity.md" in uris
            assert uris["commonplace:///core/identity.md"].title == "Identity"
            assert (await s.read_resource("commonplace:///core/identity.md")).contents[0].text == \
                CORPUS["core/identity.md"]
            from mcp.shared.exceptions import MCPError

            with pytest.raises(MCPError, match="path not found: nowhere/missing.md") as missing:
                await s.read_resource("commonplace:///nowhere/missing.md")
            assert missing.value.code == -32602  # invalid params: the spec's "resource not found"

            prompts = (await s.list_prompts()).prompts
            assert [p.name for p in prompts] == ["wake"]
            assert [a.name for a in prompts[0].arguments if a.required] == ["agent"]
            woke = await s.get_prompt("wake", {"agent": "coder", "budget_tokens": "800"})
            assert "This memory belongs to the platform team." in woke.messages[0].content.text
            with pytest.raises(MCPError, match="`agent` is required"):
                await s.get_prompt("wake", {})

            # The session still answers after all of the above.
            res = await s.call_tool("dory_search", {"query": "billing migration", "mode": "bm25"})
            assert not res.is_error
            assert "people/alex.md" in [r["path"] for r in res.structured_content["results"]]

    anyio.run(run)
    assert (out / "index.html").exists()  # the local corpus was built into --out


def test_calls_go_through_a_running_server(corpus: Path, token: str, tmp_path: Path) -> None:
    """With `commonplace serve` running, `commonplace mcp` sends every call to it: each side
    finds the other's write at once, and the MCP process never builds a site of its own."""
    own_out = tmp_path / "mcp-site"
    with Serve(corpus, tmp_path / "site", "--no-embed") as srv:

        async def run() -> None:
            async with stdio_session(corpus, own_out, "--no-embed", env=child_env(COMMONPLACE_TOKEN=token)) as s:
                res = await s.call_tool("dory_write", {
                    "kind": "create", "target": "inbox/from-mcp.md", "content": "The quartz heron nests by the weir.",
                    "frontmatter": {"title": "From MCP", "type": "capture"}})
                assert not res.is_error, text(res)
                assert res.structured_content["indexed"] is True
                status, found = http(srv.url, "POST", "/v1/search", {"query": "quartz heron", "mode": "bm25"}, token)
                assert status == 200
                assert [r["path"] for r in found["results"]][:1] == ["inbox/from-mcp.md"]

                status, body = http(srv.url, "POST", "/v1/write", {
                    "kind": "create", "target": "inbox/from-http.md", "content": "The cobalt lynx sleeps at noon.",
                    "frontmatter": {"title": "From HTTP", "type": "capture"}}, token)
                assert status == 200, body
                res = await s.call_tool("dory_search", {"query": "cobalt lynx", "mode": "bm25"})
                assert [r["path"] for r in res.structured_content["results"]][:1] == ["inbox/from-http.md"]

                # The server's own validation message comes back unchanged.
                res = await s.call_tool("dory_get", {})
                assert res.is_error and text(res) == validation_message("dory_get", {})

        anyio.run(run)

        async def without_token() -> None:
            async with stdio_session(corpus, own_out, "--no-embed") as s:
                res = await s.call_tool("dory_search", {"query": "heron"})
                assert res.is_error and res.structured_content["status"] == 401
                assert "COMMONPLACE_TOKEN" in text(res)
                assert len((await s.list_tools()).tools) == len(TOOL_NAMES)  # still serving

        anyio.run(without_token)
    assert not own_out.exists()


def test_a_rejection_through_a_running_server_names_the_mcp_tool(corpus: Path, token: str, tmp_path: Path) -> None:
    """A rejected memory-write that `commonplace mcp` forwards to a running server tells the
    agent what it can do over MCP, as the server's own /mcp and a local corpus do: the
    dory_write tool and its arguments, not an HTTP route it cannot call."""
    unknown = {"action": "write", "kind": "fact", "subject": "nobody-here", "scope": "person",
               "content": "Likes tea.", "allow_canonical": True}
    with Serve(corpus, tmp_path / "site", "--no-embed") as srv:
        status, body = http(srv.url, "POST", "/v1/memory-write", unknown, token)
        assert status == 200 and "POST /v1/write" in body["message"]  # an HTTP client keeps the route

        async def run() -> str:
            async with stdio_session(corpus, tmp_path / "mcp-site", "--no-embed",
                                     env=child_env(COMMONPLACE_TOKEN=token)) as s:
                res = await s.call_tool("dory_memory_write", unknown)
                assert res.is_error and res.structured_content["result"] == "rejected", text(res)
                return text(res)

        said = anyio.run(run)
    assert "people/nobody-here.md" in said and "force_inbox=true" in said, said
    assert "the dory_write tool (kind: create" in said and "POST /v1/" not in said, said
    assert not (tmp_path / "mcp-site").exists()  # it was the server that answered


def test_restart_over_an_existing_build(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    counts: list[int] = []

    async def first() -> None:
        async with stdio_session(corpus, out, "--no-embed") as s:
            res = await s.call_tool("dory_memory_write", {
                "action": "write", "kind": "fact", "subject": "Alex", "content": "Alex keeps a saffron notebook.",
                "allow_canonical": True})
            assert not res.is_error, text(res)
            counts.append((await s.call_tool("dory_status", {})).structured_content["documents"])

    async def second() -> None:
        async with stdio_session(corpus, out, "--no-embed") as s:
            res = await s.call_tool("dory_search", {"query": "saffron notebook", "mode": "bm25"})
            assert not res.is_error
            assert "people/alex.md" in [r["path"] for r in res.structured_content["results"]]
            status = (await s.call_tool("dory_status", {})).structured_content
            assert status["documents"] == counts[0] >= len(CORPUS)

    anyio.run(first)
    manifest_dirs = list((corpus / ".commonplace" / "builds").iterdir())
    anyio.run(second)
    assert list((corpus / ".commonplace" / "builds").iterdir()) == manifest_dirs  # the same build, reused


def unbuilt_corpus(root: Path, n: int = 300) -> Path:
    """A corpus never built: the first call that needs it waits a few seconds for the build."""
    files = {f"notes/n{i:03d}.md": f"---\ntitle: Note {i}\n---\n# Note {i}\n\nFiller text {i}.\n" for i in range(n)}
    return write_corpus(root, {**CORPUS, **files})


def test_a_cancelled_call_finishes_its_write_and_the_session_goes_on(tmp_path: Path) -> None:
    """The first call on a corpus never built waits for the build; the client gives up on
    it after 0.3 s (the SDK sends notifications/cancelled). The write had started, so it
    lands whole; the next calls are answered. (2,000 notes: the build takes seconds even on
    a quiet machine, so the client always gives up first.)"""
    corpus = unbuilt_corpus(tmp_path / "fresh", n=2000)
    content = "Cancelled but kept: the amber kite.\n" * 200

    async def run() -> None:
        from mcp.shared.exceptions import MCPError

        async with stdio_session(corpus, tmp_path / "site", "--no-embed") as s:
            with pytest.raises(MCPError):
                await s.call_tool("dory_write", {"kind": "create", "target": "inbox/kite.md", "content": content,
                                                 "frontmatter": {"title": "Kite", "type": "capture"}},
                                  read_timeout_seconds=0.3)
            # The abandoned call runs on beside the next ones: wait for it to land.
            with anyio.fail_after(60):
                while (got := await s.call_tool("dory_get", {"path": "inbox/kite.md"})).is_error:
                    assert got.structured_content["status"] == 404, text(got)
                    await anyio.sleep(0.1)
            assert got.structured_content["content"].count("the amber kite") == 200
            with anyio.fail_after(60):  # and for its refresh to make it searchable
                while not (await s.call_tool("dory_search", {"query": "amber kite", "mode": "bm25"})
                           ).structured_content["results"]:
                    await anyio.sleep(0.1)

    anyio.run(run)


def test_a_client_that_hangs_up_mid_call(tmp_path: Path) -> None:
    """The client dies while a write runs: the server finishes the write, closes the corpus
    and exits 0 without a traceback; the document is whole."""
    corpus = unbuilt_corpus(tmp_path / "fresh")
    content = "Hung up on: the basalt owl.\n" * 300
    errlog = tmp_path / "stderr.log"

    async def run() -> int:
        with open(errlog, "w") as err:
            cmd = [BIN, "mcp", "-C", str(corpus), "--out", str(tmp_path / "site"), "--no-embed"]
            async with raw_stdio(cmd, child_env(), err) as (session, raw):
                await session.initialize()
                async with anyio.create_task_group() as tg:
                    async def call() -> None:
                        try:
                            await session.call_tool("dory_write", {
                                "kind": "create", "target": "inbox/owl.md", "content": content,
                                "frontmatter": {"title": "Owl", "type": "capture"}})
                        except Exception:  # noqa: BLE001 - the line is cut: no answer expected
                            pass

                    tg.start_soon(call)
                    await anyio.sleep(1.0)  # the call is waiting for the first build
                    await raw.hang_up()
                    tg.cancel_scope.cancel()
                with anyio.fail_after(120):
                    return await raw.proc.wait()

    code = anyio.run(run)
    log = errlog.read_text()
    assert code == 0, log
    assert "Traceback" not in log
    written = corpus / "inbox" / "owl.md"
    assert written.exists()  # the write was under way: it completes rather than vanish
    assert written.read_text().count("the basalt owl") == 300


def test_resources_come_in_pages(tmp_path: Path) -> None:
    files = {f"notes/n{i:03d}.md": f"---\ntitle: Note {i}\n---\n# Note {i}\n\nNumber {i}.\n" for i in range(450)}
    corpus = write_corpus(tmp_path / "many", files)

    async def run() -> None:
        async with stdio_session(corpus, tmp_path / "site", "--no-embed") as s:
            from mcp_types import PaginatedRequestParams

            uris: list[str] = []
            cursor = None
            pages = 0
            while True:
                page = await s.list_resources(params=PaginatedRequestParams(cursor=cursor))
                uris += [r.uri for r in page.resources]
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert pages == 3
            assert uris == sorted(f"commonplace:///{p}" for p in files)
            last = await s.read_resource(uris[-1])
            assert "Number 449." in last.contents[0].text

    anyio.run(run)


@pytest.mark.slow
@pytest.mark.e2e
def test_stdout_carries_only_protocol_while_the_model_loads(corpus: Path, tmp_path: Path) -> None:
    """The real embedding model loads for a hybrid search (and --verbose logs progress):
    every byte on stdout is a JSON-RPC message; the logs went to stderr."""
    import mcp_types as types

    errlog = tmp_path / "stderr.log"

    async def run() -> list[bytes]:
        with open(errlog, "w") as err:
            cmd = [BIN, "mcp", "-C", str(corpus), "--out", str(tmp_path / "site"), "--verbose"]
            async with raw_stdio(cmd, child_env(), err) as (session, raw):
                await session.initialize()
                t0 = time.perf_counter()
                res = await session.call_tool("dory_search", {"query": "who moves billing off the queue",
                                                              "mode": "hybrid"})
                assert not res.is_error, text(res)
                assert res.structured_content["results"]
                assert time.perf_counter() - t0 < 300
                vec = await session.call_tool("dory_search", {"query": "payments platform owner", "mode": "vector"})
                assert not vec.is_error and vec.structured_content["results"]
                await session.list_resources()
            return raw.lines

    lines = anyio.run(run)
    assert len(lines) >= 5
    for line in lines:
        msg: Any = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        assert msg.jsonrpc == "2.0"
    assert "corpus open" in errlog.read_text()


def test_sigterm_ends_the_server_cleanly(corpus: Path, tmp_path: Path) -> None:
    """A host closing the server with SIGTERM: exit code 0, no traceback."""
    import signal

    errlog = tmp_path / "stderr.log"

    async def run() -> int:
        with open(errlog, "w") as err:
            cmd = [BIN, "mcp", "-C", str(corpus), "--out", str(tmp_path / "site"), "--no-embed"]
            async with raw_stdio(cmd, child_env(), err) as (session, raw):
                await session.initialize()
                res = await session.call_tool("dory_get", {"path": "core/identity.md"})
                assert not res.is_error
                raw.proc.send_signal(signal.SIGTERM)
                with anyio.fail_after(60):
                    return await raw.proc.wait()

    assert anyio.run(run) == 0
    assert "Traceback" not in errlog.read_text()


def test_the_2026_protocol_revision_is_served(corpus: Path, tmp_path: Path) -> None:
    """A client of the 2026-07-28 revision skips `initialize` (it discovers instead)."""
    from mcp import Client, StdioServerParameters

    async def run() -> None:
        params = StdioServerParameters(command=BIN, env=child_env(),
                                       args=["mcp", "-C", str(corpus), "--out", str(tmp_path / "site"), "--no-embed"])
        async with Client(params) as c:
            assert c.protocol_version == "2026-07-28"
            res = await c.call_tool("dory_search", {"query": "billing", "mode": "bm25"})
            assert not res.is_error and res.structured_content["results"]
            page = await c.read_resource("commonplace:///core/identity.md")
            assert page.contents[0].text == CORPUS["core/identity.md"]

    anyio.run(run)
