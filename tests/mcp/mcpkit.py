"""Helpers for the MCP tests: a small corpus, `commonplace serve` and `commonplace mcp` as
real subprocesses, and MCP sessions with the SDK's own client.

Sessions use the SDK's `ClientSession` over its `stdio_client` (which starts the
`commonplace` console script) or its `streamable_http_client` (against a real socket on
127.0.0.1). `raw_stdio` is the same stdio transport built over a process this module
controls, so a test can read every raw line the server wrote to stdout and can hang up
in the middle of a call.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

from readiness import wait_healthy
from team_corpus import CORPUS as TEAM_CORPUS, write_files

BIN = str(Path(sys.executable).parent / "commonplace")


# The kits' one fixture corpus (tests/team_corpus.py) and, on top, a capture that
# toolcases.py purges.
CORPUS = {**TEAM_CORPUS, "inbox/old.md": """---
title: Old capture
type: capture
---
# Old capture

Something to purge later.
"""}


def write_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    return write_files(root, files or CORPUS)


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               COMMONPLACE_MCP_PRELOAD="1")
    env.pop("COMMONPLACE_TOKEN", None)
    env.update(extra)
    return env


# --------------------------------------------------------------------------- HTTP server


class Serve:
    """`commonplace serve` on a free port of 127.0.0.1, until `stop()`."""

    def __init__(self, root: Path, out: Path, *args: str, ready_timeout: float = 180.0,
                 env: dict[str, str] | None = None) -> None:
        self.root = root
        self.log = out.parent / f"serve-{time.time_ns()}.log"
        self._log = open(self.log, "w")
        self.proc = subprocess.Popen([BIN, "serve", str(root), "--out", str(out), "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=self._log, text=True, env=child_env(**(env or {})))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:\d+", line)
        if not m:
            self.stop()
            raise AssertionError(f"serve did not start: {line!r} {self.log.read_text()[-2000:]}")
        self.url = m.group(0)
        deadline = time.time() + ready_timeout
        try:
            wait_healthy(self.url, self.proc, ready_timeout, said=self.log.read_text)
        except AssertionError:
            if self.proc.poll() is None:
                self.stop()
            raise
        # The command line finds the server through .commonplace/server.json, written
        # right after the gate opens.
        while not (root / ".commonplace" / "server.json").exists() and time.time() < deadline:
            time.sleep(0.05)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self._log.close()
        return self.proc.returncode

    def __enter__(self) -> "Serve":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def http(url: str, method: str, path: str, body: Any = None, token: str | None = None,
         raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One request; (status, decoded JSON body or text)."""
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            text = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as e:
        text, status = e.read().decode(), e.code
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


# --------------------------------------------------------------------------- MCP sessions


@asynccontextmanager
async def stdio_session(root: Path, out: Path, *args: str, env: dict[str, str] | None = None,
                        errlog: Any = None) -> AsyncIterator[Any]:
    """An initialized ClientSession with `commonplace mcp -C root --out out *args`."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=BIN, args=["mcp", "-C", str(root), "--out", str(out), *args],
                                   env=env or child_env())
    async with stdio_client(params, errlog=errlog or sys.stderr) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[Any]:
    """An initialized ClientSession with `url`/mcp over streamable HTTP."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0)) as client:
        async with streamable_http_client(url + "/mcp", http_client=client) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                yield session


class RawStdio:
    """The server process, the raw lines it wrote to stdout, and a way to hang up."""

    def __init__(self, proc: Any, lines: list[bytes]) -> None:
        self.proc = proc
        self.lines = lines
        self.hung_up = False

    async def hang_up(self) -> None:
        """Close both pipes, as a client that dies does."""
        self.hung_up = True
        await self.proc.stdin.aclose()
        await self.proc.stdout.aclose()


@asynccontextmanager
async def raw_stdio(cmd: list[str], env: dict[str, str], stderr: Any) -> AsyncIterator[tuple[Any, RawStdio]]:
    """A ClientSession (not yet initialized) over a process started here. Every stdout
    line is kept in `RawStdio.lines`, byte for byte, whether it parses or not."""
    import anyio
    import mcp_types as types
    from mcp import ClientSession
    from mcp.shared.message import SessionMessage

    proc = await anyio.open_process(cmd, env=env, stderr=stderr)
    raw = RawStdio(proc, [])
    in_send, in_recv = anyio.create_memory_object_stream[Any](100)
    out_send, out_recv = anyio.create_memory_object_stream[Any](100)

    async def reader() -> None:
        buf = b""
        try:
            async with in_send:
                async for chunk in proc.stdout:
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        raw.lines.append(line)
                        try:
                            item: Any = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except Exception as exc:  # noqa: BLE001 - the session sees it as a transport error
                            item = exc
                        await in_send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def writer() -> None:
        try:
            async with out_recv:
                async for msg in out_recv:
                    data = msg.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await proc.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            async with ClientSession(in_recv, out_send) as session:
                yield session, raw
            tg.cancel_scope.cancel()
    finally:
        if not raw.hung_up:
            with anyio.CancelScope(shield=True):
                await raw.hang_up()
        with anyio.move_on_after(60, shield=True):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()


def text(result: Any) -> str:
    """The text of a CallToolResult's first content block."""
    return result.content[0].text
