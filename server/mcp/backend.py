"""Where an MCP request runs: a registry route, JSON arguments in, the answer out.

A backend validates the arguments with the route's request model (so a bad argument gets
the HTTP API's 422 message, word for word) and runs the route's operation, raising
`ApiError` for anything the HTTP API would answer with an error status.

- `LocalCorpus`: this process's own `LiveCorpus`, opened in a background thread so that
  `initialize` never waits for a build; the embedding model loads on the first search
  that needs it. Writes go through the same operations as `/v1/write` (corpus write lock,
  atomic replace, refresh of the site and indexes).
- `StdioBackend` (`commonplace mcp`): when a `commonplace serve` runs for the corpus, every
  call goes to it over HTTP (`server/client.py`), so the server and this process see each
  other's writes at once; otherwise the local corpus answers. A forwarded call says it
  is MCP's (`TRANSPORT_HEADER`): the server's hints then name tools, as they do over /mcp.

The HTTP transport inside `commonplace serve` has its own backend over the app's state
(`http.py`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlencode

from ..errors import ApiError, not_ready  # noqa: F401 - not_ready: also mcp.http's
from ..ops import TRANSPORT_HEADER, OpContext
from ..registry import Route
from ..validation import validate

if TYPE_CHECKING:
    from commonplace.compiler.live.contract import LiveContract

log = logging.getLogger("commonplace.mcp")

REMOTE_TIMEOUT = 300.0  # a first search may load the model; a big refresh takes a while
DRAIN_SECONDS = 20.0  # on a signal, how long writes under way may take to finish
# What `status` sees while the corpus opens (the members of `LiveContract` it reads then).
_NOT_OPEN = SimpleNamespace(ready=False, embed=True, last_build=None, last_refresh=None)


def _version() -> str:
    from commonplace.compiler import __version__

    return __version__


class Backend:
    """Runs registry routes for MCP. `root` and `out` locate the corpus (resources list it)."""

    root: Path
    out: Path | None

    def call(self, route: Route, args: dict[str, Any], actor: str | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def excluded(self) -> tuple[Path, ...]:
        from commonplace.compiler.writes import excluded_folders

        return excluded_folders(self.root, self.out)

    def close(self, wait_open: bool = True) -> None:
        pass


class LocalCorpus:
    """A `LiveCorpus` of this process, opened once in a background thread.

    `live(wait=True)` blocks until it is open; an open that failed is tried again by the
    next call that needs the corpus (the error might have been fixed meanwhile)."""

    def __init__(self, root: Path, out: Path, *, embed: bool = True, watch: bool = False) -> None:
        self.root = Path(root).resolve()
        self.out = Path(out).resolve()
        self.embed = embed
        self.watch = watch
        self._live: LiveContract | None = None
        self._error: str | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def error(self) -> str | None:
        return self._error

    def start(self) -> None:
        """Open in the background (again, if the last attempt failed)."""
        with self._lock:
            if self._closed:
                return
            if self._thread is not None and not (self._done.is_set() and self._error):
                return
            self._error = None
            self._done.clear()
            self._thread = threading.Thread(target=self._open, name="commonplace-mcp-open", daemon=True)
            self._thread.start()

    def _open(self) -> None:
        t0 = time.perf_counter()
        try:
            from commonplace.compiler.live.corpus import LiveCorpus

            live = LiveCorpus(self.root, self.out, embed=self.embed)
            self._live = live  # `status` reports ready=false until open() returns
            result = live.open()
            if self.watch:
                live.watch(echo=lambda line: log.info("watch: %s", line))
            log.info("corpus open in %.1f s (%s documents)", time.perf_counter() - t0,
                     getattr(result, "documents", "?"))
        except Exception as exc:  # noqa: BLE001 - reported to every call that needs the corpus
            self._live = None
            self._error = f"{type(exc).__name__}: {str(exc)[:300]}"
            log.warning("cannot open the corpus: %s", self._error)
        finally:
            self._done.set()

    def live(self, wait: bool = True) -> Any:
        if not wait:
            live = self._live
            return live if live is not None else _NOT_OPEN
        self.start()
        if self._thread is None or self._closed:
            raise ApiError(503, "shutting_down", "the MCP server is shutting down")
        self._done.wait()
        live = self._live
        if self._error is not None or live is None:
            raise not_ready(self._error or "it was closed")
        return live

    def resync(self) -> None:
        """Catch up with changes made while another process (a server) did the writing."""
        live = self._live
        if live is not None and self._done.is_set() and live.ready:
            try:
                live.refresh([], rescan=True)
            except Exception as exc:  # noqa: BLE001 - the next write refreshes what it touches
                log.warning("rescanning the corpus failed: %s", exc)

    def close(self, wait_open: bool = True) -> None:
        """Close the corpus (a write in flight finishes first: closing takes the write
        lock). With `wait_open=False` an open still under way is abandoned instead."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            if not wait_open and not self._done.is_set():
                return
            thread.join()
        live, self._live = self._live, None
        if live is not None:
            try:
                live.close()
            except Exception as exc:  # noqa: BLE001 - closing saves a cache only
                log.warning("closing the corpus failed: %s", exc)


def run_local(route: Route, args: dict[str, Any], ctx: Callable[[], OpContext]) -> dict[str, Any]:
    """Validate (the 422 comes first, as over HTTP), then run the operation."""
    if route.model is None or route.handler is None:
        raise ApiError(400, "not_a_tool", f"{route.name} is not an operation MCP can call")
    req = validate(route.model, body=args)
    return route.call(ctx(), req)


def call_server(url: str, route: Route, args: dict[str, Any]) -> dict[str, Any]:
    """The route on a running `commonplace serve` (token from COMMONPLACE_TOKEN)."""
    from ..client import ServerError, call

    method = "POST" if "POST" in route.methods else route.methods[0]
    path, body = route.path, args
    if method == "GET":
        scalars = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in args.items() if v is not None}
        path, body = f"{path}?{urlencode(scalars)}" if scalars else path, None
    try:
        # The server words its hints for MCP (the tool to call, not the HTTP route).
        return call(url, method, path, body, timeout=REMOTE_TIMEOUT, headers={TRANSPORT_HEADER: "mcp"})
    except ServerError as exc:
        err = exc.error if isinstance(exc.error, dict) else {}
        message = str(err.get("message") or f"HTTP {exc.status}")
        if exc.status == 401:
            have = bool(os.environ.get("COMMONPLACE_TOKEN"))
            message += (f" (from the commonplace server for this corpus at {url}: "
                        + ("COMMONPLACE_TOKEN is not a valid token for it)" if have else
                           "set COMMONPLACE_TOKEN in this MCP server's environment to a token of it, "
                           "see `commonplace token new`)"))
        raise ApiError(exc.status, str(err.get("code") or "http_error"), message) from None
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ApiError(503, "server_unreachable", f"the commonplace server for this corpus at {url} did not "
                                                  f"answer ({reason}); retry shortly") from None


class StdioBackend(Backend):
    """`commonplace mcp`: a running server for the corpus if there is one, else local."""

    def __init__(self, local: LocalCorpus, actor: str | None = None) -> None:
        self.local = local
        self.root = local.root
        self.out = local.out
        self.actor = actor
        self.started = time.time()
        self._server: tuple[str, int] | None = None  # (url, pid) of a server seen healthy
        self._remote_used = False
        self._lock = threading.Lock()
        self._writes = 0  # local writes under way (a signal lets them finish)
        self._idle = threading.Condition()

    # ----- finding a server ------------------------------------------------------
    def server(self) -> str | None:
        """The URL of a running server for the corpus, or None.

        A server seen healthy once stays in use while `.commonplace/server.json` names it
        and its process lives: a server busy with writes may miss the 0.3 s health check,
        and falling back to local writes then would hide them from its search until it
        rescans."""
        from ..client import server_file, server_url

        try:
            info = json.loads(server_file(self.root).read_text("utf-8"))
            url, pid = str(info["url"]).rstrip("/"), int(info["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            self._server = None
            return None
        if not _alive(pid):
            self._server = None
            return None
        if self._server == (url, pid):
            return url
        found = server_url(self.root)
        self._server = (found, pid) if found else None
        return found

    def warm(self) -> None:
        """At start: open the local corpus in the background unless a server answers."""
        if self.server() is None:
            self.local.start()

    # ----- calls -----------------------------------------------------------------
    def call(self, route: Route, args: dict[str, Any], actor: str | None = None) -> dict[str, Any]:
        url = self.server()
        if url is not None:
            self._remote_used = True
            return call_server(url, route, args)
        if self._remote_used:
            with self._lock:
                if self._remote_used:  # the server stopped: see what it wrote meanwhile
                    self._remote_used = False
                    self.local.resync()
        if not route.writes:
            return run_local(route, args, lambda: self._context(route, actor))
        with self._idle:
            self._writes += 1
        try:
            return run_local(route, args, lambda: self._context(route, actor))
        finally:
            with self._idle:
                self._writes -= 1
                self._idle.notify_all()

    def _context(self, route: Route, actor: str | None) -> OpContext:
        live = self.local.live(wait=route.needs_ready)
        return OpContext(live=live, root=self.root, out=self.out, excluded=self.excluded(),
                         actor=actor or self.actor, server_info=self.info, transport="mcp")

    def info(self) -> dict[str, Any]:
        return {"version": _version(), "uptime_s": round(time.time() - self.started, 1), "transport": "mcp-stdio",
                "error": self.local.error}

    def close(self, wait_open: bool = True, drain: float = DRAIN_SECONDS) -> None:
        """Let local writes under way finish (up to `drain` seconds), then close."""
        with self._idle:
            self._idle.wait_for(lambda: self._writes == 0, timeout=drain)
        self.local.close(wait_open=wait_open)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return pid > 0
