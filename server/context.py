"""What every part of the server shares, in a leaf module (Flask's `current_app` pattern).

`ServerConfig` (how the server was started), `ServerState` (the live corpus, the config and
the tokens of one app) and `state()`, the per-app accessor the blueprints use. Nothing here
imports the app factory or a blueprint, so routes can import it without a circle.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonplace.compiler.live.contract import LiveContract

DEFAULT_MAX_BODY = 1024 * 1024
EXTENSION = "commonplace"  # key of the state in app.extensions


def is_loopback(host: str) -> bool:
    h = host.strip().strip("[]").lower()
    if h in ("localhost", "ip6-localhost") or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def is_trusted_proxy(addr: str, proxies: list[str]) -> bool:
    """`addr` is one of the operator's `--trusted-proxy` addresses or networks."""
    try:
        ip = ipaddress.ip_address(addr.strip().strip("[]"))
    except ValueError:
        return False
    for p in proxies:
        try:
            if ip in ipaddress.ip_network(p, strict=False):
                return True
        except ValueError:
            continue
    return False


@dataclass
class ServerConfig:
    corpus: Path
    out: Path
    host: str = "127.0.0.1"
    port: int = 8766
    no_auth: bool = False  # only honoured on a loopback bind: no token needed for anything
    loopback_reads: bool = False  # reads from this machine need no token (loopback binds only)
    max_body: int = DEFAULT_MAX_BODY
    allowed_hosts: list[str] = field(default_factory=list)  # extra Host names (non-loopback binds)
    public_url: str | None = None
    trusted_proxies: list[str] = field(default_factory=list)  # --trusted-proxy: addresses/networks
    migrate_roots: list[str] = field(default_factory=list)  # --migrate-root: folders /v1/migrate may read
    threads: int = 8  # waitress's worker threads (--threads): live-reload streams take at most half

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


class ServerState:
    """What the routes share: the live corpus, config, tokens."""

    def __init__(self, live: LiveContract, config: ServerConfig) -> None:
        from .tokens import TokenStore

        self.live = live
        self.config = config
        self.root = Path(config.corpus).resolve()
        self.out = Path(config.out).resolve()
        self.tokens = TokenStore(self.root)
        self.started = time.time()
        self.open_error: str | None = None  # set when the backend failed to open
        # `serve` sets a gate and opens it once the index is loaded and the
        # watcher runs: until then /healthz says 503 even if the corpus is built.
        self.gate: threading.Event | None = None

    @property
    def ready(self) -> bool:
        if self.gate is not None and not self.gate.is_set():
            return False
        return bool(self.live.ready)

    def redact(self, text: str | None) -> str | None:
        """A message with the server's own filesystem paths replaced by placeholders."""
        if text is None:
            return None
        for path, name in ((self.out, "<out>"), (self.root, "<corpus>"), (Path.home(), "~")):
            text = text.replace(str(path), name)
        return text

    def excluded(self) -> tuple[Path, ...]:
        """Folders inside the corpus that are not corpus content (the site output)."""
        from commonplace.compiler.writes import excluded_folders

        return excluded_folders(self.root, self.out)


def state() -> ServerState:
    """The state of the app handling the current request."""
    from flask import current_app

    return current_app.extensions[EXTENSION]
