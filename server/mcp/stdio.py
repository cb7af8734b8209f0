"""`commonplace mcp`: the MCP server over stdin/stdout.

stdout carries only protocol. The SDK's `stdio_server` keeps the wire on a private copy of
fd 1 and points fd 1 itself at stderr while it serves, so anything else that writes to
stdout (a library's print, a progress bar, a child process) lands on stderr; logging is
set up on stderr before anything loads.

`initialize` is answered at once: the corpus opens in a background thread (or not at all
when a `commonplace serve` runs for it) and the embedding model loads on the first search
that needs it. SIGTERM or SIGINT (a host closing the server) ends it: writes under way
finish first (up to 20 s), then the corpus is closed and the process exits 0; so does the
end of stdin.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import anyio

from .backend import LocalCorpus, StdioBackend


def _stderr_logging(verbose: bool) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("commonplace").setLevel(logging.INFO if verbose else logging.WARNING)


def say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed by the host: nothing to tell
        pass


async def _stop_on_signal(backend: StdioBackend) -> None:
    """Close the corpus and leave. The SDK reads stdin in a worker thread that a
    cancellation cannot interrupt while the host keeps the pipe open, so a clean return
    through the event loop is not possible; `close` first lets writes under way finish
    (up to 20 s), leaves an unfinished open alone (builds are crash safe), then the
    process exits 0."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: backend.close(wait_open=False))
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(0)


async def _serve(backend: StdioBackend) -> None:
    from mcp.server.stdio import stdio_server

    from .server import build_server

    warming: list[threading.Thread] = []

    def warm() -> None:
        # Once the handshake is done; a client that skips it (the 2026 protocol era)
        # opens the corpus with its first call instead.
        if not warming:
            warming.append(threading.Thread(target=backend.warm, name="commonplace-mcp-warm", daemon=True))
            warming[0].start()

    server = build_server(backend, on_initialized=warm)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, backend)
        async with stdio_server() as (read_stream, write_stream):
            relay_send, relay_recv = anyio.create_memory_object_stream(0)  # type: ignore[var-annotated]
            tg.start_soon(_answer_bad_lines, read_stream, relay_send, write_stream)
            await server.run(relay_recv, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()  # the client closed stdin: stop the signal watcher too


async def _answer_bad_lines(read_stream: Any, relay: Any, write_stream: Any) -> None:
    """Pass the client's messages on; answer a line that is not JSON with JSON-RPC's
    -32700 (parse error) and JSON that is not a JSON-RPC message with -32600 (invalid
    request), id null, instead of the SDK's silence."""
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    async with relay:
        async for item in read_stream:
            if not isinstance(item, Exception):
                await relay.send(item)
                continue
            errors = getattr(item, "errors", None)
            kinds = {e.get("type") for e in errors()} if callable(errors) else set()
            code, message = (-32700, "Parse error: the line is not JSON") if "json_invalid" in kinds or not kinds \
                else (-32600, "Invalid request: not a JSON-RPC 2.0 message")
            error = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
            await write_stream.send(SessionMessage(error))


def serve_stdio(root: Path, out: Path, *, embed: bool = True, watch: bool = False, verbose: bool = False,
                actor: str | None = None) -> int:
    """Serve until the client closes stdin or a signal arrives; returns the exit code."""
    _stderr_logging(verbose)
    local = LocalCorpus(root, out, embed=embed, watch=watch)
    backend = StdioBackend(local, actor=actor)
    say(f"commonplace mcp: serving {local.root} over stdio")
    code = 0
    try:
        anyio.run(_serve, backend)
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # noqa: BLE001 - say it in one line, not a traceback on the host's log
        if _client_gone(exc):
            return 0
        logging.getLogger("commonplace.mcp").debug("stdio server failed", exc_info=True)
        say(f"commonplace mcp: stopped on an error: {type(exc).__name__}: {exc}")
        code = 1
    finally:
        backend.close()
    return code


def _client_gone(exc: BaseException) -> bool:
    """The error is only the client's end of a pipe closing under a write: a hang-up."""
    leaves, todo = [], [exc]
    while todo:
        e = todo.pop()
        inner = getattr(e, "exceptions", None)
        if inner:
            todo.extend(inner)
        else:
            leaves.append(e)
    return bool(leaves) and all(isinstance(e, (BrokenPipeError, ConnectionResetError)) for e in leaves)

