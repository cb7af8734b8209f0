"""Every example in docs/references/mcp.md runs: its shell commands, and each host
configuration, started as a host would start it and driven with the SDK's client.

The page's placeholder paths (/home/me/notes, /home/me/notes-site) become a temporary
corpus and output folder, and `<token>` the token its `token new` command printed."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpkit import BIN, Serve, child_env, write_corpus

PAGE = Path(__file__).resolve().parents[2] / "docs" / "references" / "mcp.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)


def test_the_page_has_the_examples_it_promises() -> None:
    configs = [json.loads(b) for b in blocks("json")]
    servers = [c["mcpServers"]["commonplace"] for c in configs]
    assert sum("command" in s for s in servers) == 3  # Claude Code, Claude Desktop, Cursor
    assert sum("url" in s for s in servers) == 2  # the HTTP variant for Claude Code and Cursor
    assert len(blocks("sh")) == 2


@pytest.mark.slow  # the page's build embeds with the real model; about 40 s here
def test_every_example_runs(tmp_path: Path) -> None:
    notes, site = write_corpus(tmp_path / "notes"), tmp_path / "notes-site"

    def fill(s: str, token: str = "") -> str:
        return s.replace("/home/me/notes-site", str(site)).replace("/home/me/notes", str(notes)).replace(
            "<token>", token)

    env = child_env(PATH=f"{Path(BIN).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    token = ""
    serve_args: list[str] = []
    for block in blocks("sh"):
        for line in block.strip().splitlines():
            if line.startswith("commonplace serve "):
                serve_args = shlex.split(fill(line))[2:]  # started below, on a free port
                continue
            r = subprocess.run(fill(line), shell=True, env=env, capture_output=True, text=True, timeout=600,
                               stdin=subprocess.DEVNULL)
            assert r.returncode == 0, (line, r.stderr[-2000:])
            if " token new " in line:
                token = r.stdout.strip()
    assert token.startswith("cp_") and serve_args

    configs = [json.loads(fill(b, token))["mcpServers"]["commonplace"] for b in blocks("json")]

    async def stdio(config: dict[str, Any]) -> None:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        params = StdioServerParameters(command=config["command"], args=config["args"],
                                       env={**env, **config.get("env", {})})
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                res = await s.call_tool("dory_search", {"query": "billing migration", "mode": "bm25"})
                assert not res.is_error, res.content[0].text
                assert "people/alex.md" in [x["path"] for x in res.structured_content["results"]]

    for config in configs:
        if "command" in config:
            anyio.run(stdio, config)

    async def over_http(config: dict[str, Any], url: str) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers=config["headers"]) as client:
            async with streamable_http_client(config["url"].replace("http://127.0.0.1:8766", url),
                                              http_client=client) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    res = await s.call_tool("dory_status", {})
                    assert not res.is_error, res.content[0].text

    assert serve_args[0] == str(notes)
    rest = serve_args[1:]
    out = Path(rest.pop(rest.index("--out") + 1))
    rest.remove("--out")
    with Serve(notes, out, *rest) as srv:
        for config in configs:
            if "url" in config:
                assert config["url"] == "http://127.0.0.1:8766/mcp"  # serve's default address
                anyio.run(over_http, config, srv.url)
