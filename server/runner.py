"""The server's lifecycle under waitress: bind first (a port in use fails at once), answer
/healthz with 503 while the corpus opens in a thread (build, index, model, watcher), then
open the gate, record the URL in `.commonplace/server.json` for the command line, and on
exit remove it and close the corpus."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .client import server_file
from .context import EXTENSION, ServerConfig

if TYPE_CHECKING:
    from commonplace.compiler.live.contract import LiveContract


class BindError(Exception):
    pass


def _json_channel_class() -> Any:
    """waitress's channel with its own refusals (400 bad request line, 413 body too large,
    431 headers) answered in the API's JSON body instead of plain text."""
    from waitress.channel import HTTPChannel
    from waitress.task import ErrorTask

    from .errors import ApiError

    codes = {400: "bad_request", 413: "too_large", 431: "headers_too_large", 408: "timeout"}

    class JsonErrorTask(ErrorTask):
        def execute(self) -> None:
            e = self.request.error
            message = f"{e.reason}: {e.body}".strip().rstrip(":")
            body = json.dumps(ApiError(e.code, codes.get(e.code, "http_error"), message).body()).encode("utf-8")
            self.status = f"{e.code} {e.reason}"
            self.response_headers.extend([("Content-Type", "application/json"), ("Cache-Control", "no-store")])
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)
            if e.code == 413:
                self.channel.linger_wanted = True

    class JsonChannel(HTTPChannel):
        """After a 413 the client is often still sending its body: closing at once would
        reset the connection under it before it reads the answer. So the answer is sent,
        the sending side shut, and what still arrives is read and dropped (up to
        LINGER_BYTES or LINGER_SECONDS) before the socket closes."""

        error_task_class = JsonErrorTask
        linger_wanted = False
        lingering = False
        linger_until = 0.0
        linger_left = 0

        def handle_close(self) -> None:
            if self.linger_wanted and not self.lingering and self.connected:
                try:
                    self.socket.shutdown(socket.SHUT_WR)
                except OSError:
                    return HTTPChannel.handle_close(self)
                self.lingering, self.will_close = True, False
                self.linger_until, self.linger_left = time.time() + LINGER_SECONDS, LINGER_BYTES
                return None
            return HTTPChannel.handle_close(self)

        def readable(self) -> bool:
            return True if self.lingering else HTTPChannel.readable(self)

        def writable(self) -> bool:
            return False if self.lingering else HTTPChannel.writable(self)

        def handle_read(self) -> None:
            if not self.lingering:
                return HTTPChannel.handle_read(self)
            try:
                data = self.socket.recv(65536)
            except OSError:
                data = b""
            self.linger_left -= len(data)
            if not data or self.linger_left <= 0 or time.time() > self.linger_until:
                self.lingering = self.linger_wanted = False
                HTTPChannel.handle_close(self)
            return None

    return JsonChannel


LINGER_BYTES = 256 * 1024 * 1024  # read and dropped after a 413, at most
LINGER_SECONDS = 30.0


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def write_server_file(root: Path, url: str) -> None:
    path = server_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def remove_server_file(root: Path) -> None:
    path = server_file(root)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("pid") == os.getpid():
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def warm_up(live: LiveContract, embed: bool, say: Callable[[str], None]) -> None:
    """Load the search index (and, with embeddings, the model) before the first request."""
    live.preload()  # says nothing of a failure: the probe below finds an unreadable index
    # The same search again (cheap once loaded), to rebuild an index that cannot be read.
    hybrid = embed and live.vectors != "later"
    probe = {"query": "warm up", "k": 1, "mode": "hybrid" if hybrid else "bm25"}
    try:
        live.search(probe)
    except Exception as exc:  # noqa: BLE001 - an empty corpus has no index yet; serve anyway
        if live.index and live.docs and _rebuilt(live, embed, exc):
            try:
                live.search(probe)
                return
            except Exception as again:  # noqa: BLE001 - still serving: the site and reads work
                exc = again
        say(f"note: search warm-up failed ({type(exc).__name__}); the first query will load it")


def _rebuilt(live: LiveContract, embed: bool, exc: BaseException) -> bool:
    """A search index that exists but cannot be read (a truncated Whoosh segment or HNSW
    file) is built afresh, with a warning, rather than failing every search."""
    from commonplace.compiler.search import rebuild_indexes, unreadable

    if not unreadable(exc):
        return False
    try:
        with live.write_lock:
            rebuild_indexes(live.root, list(live.docs.values()), exc, embed=embed)
    except Exception:  # noqa: BLE001 - said by the caller's note
        return False
    return True


SWITCH_INTERVAL = None  # seconds; None keeps Python's (5 ms). See set_switch_interval.


def set_switch_interval() -> None:
    """How long a thread holding the GIL keeps it while others wait: the refresh's Python
    work against the searches (COMMONPLACE_SWITCH_INTERVAL overrides, in seconds)."""
    value: Any = os.environ.get("COMMONPLACE_SWITCH_INTERVAL") or SWITCH_INTERVAL
    if value:
        try:
            sys.setswitchinterval(float(value))
        except ValueError:  # not a number, or not > 0: said, and Python's kept
            print(f"note: COMMONPLACE_SWITCH_INTERVAL={value!r} is not a number of seconds > 0; ignored",
                  file=sys.stderr)


STOP_WAIT = 5.0  # seconds a stopping server waits for its vector filler and BM25 merger


def _busy() -> bool:
    """Whether a background thread of ours (filler, merger, ...) still runs."""
    return any(t.is_alive() and t.name.startswith("commonplace-") and t is not threading.current_thread()
               for t in threading.enumerate())


def leave(code: int) -> None:
    """Exit now, without waiting for daemon threads or running the interpreter's
    finalization; the streams and logs are flushed first."""
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run(app: Any, live: LiveContract, cfg: ServerConfig, *, threads: int, watch: bool, embed: bool,
        say: Callable[[str], None], warn: Callable[[str], None]) -> int:
    """Serve until SIGTERM or Ctrl-C; returns the exit code."""
    import waitress

    set_switch_interval()
    root = Path(cfg.corpus)
    try:
        server = waitress.create_server(
            app, host=cfg.host, port=cfg.port, threads=threads, ident="commonplace",
            max_request_body_size=cfg.max_body, clear_untrusted_proxy_headers=False,
            channel_timeout=120, connection_limit=200,
        )
    except OSError as exc:  # (proxy headers reach the app: routes/guard.py decides whom to trust)
        raise BindError(f"cannot listen on {cfg.host}:{cfg.port}: {exc.strerror or exc}") from None
    server.channel_class = _json_channel_class()
    effective = getattr(server, "effective_port", cfg.port)
    url = f"http://{url_host(cfg.host)}:{effective}"
    cfg.port = effective
    say(f"commonplace: serving {root} at {url} (building and loading; /healthz says when ready)")
    state = app.extensions[EXTENSION]
    state.gate = threading.Event()

    def start() -> None:
        try:
            result = live.open()
            warm_up(live, embed, warn)
            if watch:
                live.watch(echo=lambda line: say(f"watch: {line}"))
        except Exception as exc:  # noqa: BLE001 - reported, then the server stops
            state.open_error = f"{type(exc).__name__}: {str(exc)[:300]}"
            warn(f"error: cannot open the corpus: {state.open_error}")
            os.kill(os.getpid(), signal.SIGTERM)
            return
        # A wildcard bind is reached on loopback by local clients (`commonplace search`).
        # The file is written before the gate opens: a client that saw /healthz say ready
        # finds it (the -n 2 suite read it in the gap once).
        local = url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:")
        write_server_file(root, local)
        state.gate.set()
        docs = getattr(result, "documents", None)
        say(f"commonplace: ready at {url}" + (f" ({docs} documents)" if docs is not None else "")
            + ("; watching for changes" if watch else ""))
        sys.stdout.flush()
        if embed and live.vectors == "later":  # ready without the model: load it now, not in the first query
            try:
                live.search({"query": "warm up", "k": 1, "mode": "hybrid"})
            except Exception:  # noqa: BLE001 - the first hybrid query loads it instead
                pass
        if os.environ.get("COMMONPLACE_MCP_PRELOAD", "1") == "0":
            return  # the first /mcp request loads it (the test suite's servers, most never asked)
        try:  # load the MCP SDK now rather than in the first /mcp request (about a second)
            from .mcp.http import bridge

            bridge(app)
        except Exception as exc:  # noqa: BLE001 - /mcp will try again on its first request
            warn(f"note: MCP over HTTP not preloaded ({type(exc).__name__}: {exc})")

    def on_term(signum: int, frame: Any) -> None:
        raise SystemExit(0 if not state.open_error else 1)

    signal.signal(signal.SIGTERM, on_term)
    opener = threading.Thread(target=start, name="commonplace-open", daemon=True)
    opener.start()
    code = 0
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit) as exc:
        code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 0
    finally:
        remove_server_file(root)
        try:
            server.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            live.close(wait=STOP_WAIT)
        except Exception:  # noqa: BLE001
            pass
        if opener.is_alive() or _busy():
            # Still opening, or (once ready) preloading the MCP SDK: an import that took 8 s
            # at load 7 and that cannot be interrupted; or embedding or merging behind the
            # server past STOP_WAIT (a model load, a publish). Everything is saved by now,
            # so the process leaves without the interpreter's teardown, which a thread
            # inside an import once turned into "FATAL: exception not rethrown" (SIGABRT).
            say("commonplace: stopped")
            leave((code or 1) if state.open_error else code)
        say("commonplace: stopped")
    if state.open_error:  # waitress's loop swallows on_term's SystemExit: the code is set here
        code = code or 1
    return code
