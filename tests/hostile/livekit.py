"""Live servers for the hostile suite: `commonplace serve` as a subprocess (waitress, real
sockets) over a hostile environment (hostilekit.make_env), one per set of flags, kept for
the module and stopped at its end. Reuses tests/server/dorylive.py's Server and client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from dorylive import Answer, Server  # noqa: E402

from hostilekit import Env, make_env  # noqa: E402

WEB_PASSWORD = "pw-live"  # every live server has a wiki password (COMMONPLACE_WEB_PASSWORD)
WEB_PASSWORD_ENV = "COMMONPLACE_WEB_PASSWORD"
__all__ = ["Answer", "Server", "LiveServers", "live_servers"]


class LiveServers:
    """One server (and its own corpus) per tuple of flags, started on first use."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.running: dict[tuple[str, ...], tuple[Server, Env]] = {}

    def get(self, flags: tuple[str, ...], env_vars: dict[str, str] | None = None) -> tuple[Server, Env]:
        key = flags + tuple(f"{k}={v}" for k, v in sorted((env_vars or {}).items()))
        if key not in self.running:
            env = make_env(self.base / f"srv{len(self.running)}")
            server = Server(env.corpus, env.site, *(fill(f, env) for f in flags),
                            env={WEB_PASSWORD_ENV: WEB_PASSWORD, **(env_vars or {})}).start()
            self.running[key] = (server, env)
        return self.running[key]

    def stop_all(self) -> None:
        for server, _ in self.running.values():
            if server.proc is not None and server.proc.poll() is None:
                server.stop()
        self.running.clear()


@pytest.fixture(scope="module")
def live_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServers]:
    servers = LiveServers(tmp_path_factory.mktemp("live"))
    yield servers
    servers.stop_all()


def fill(text: str, env: Env) -> str:
    """{outside}, {corpus} and {base} in a case's flags, path or body: the real folders."""
    return text.replace("{outside}", str(env.outside)).replace("{corpus}", str(env.corpus)).replace(
        "{base}", str(env.base))


def send(server: Server, case: Any, env: Env) -> Answer:
    """A LiveCase sent as is (headers with TOKEN filled in, folders in the path and body)."""
    import http.client
    import json

    headers = {k: v.replace("TOKEN", env.token) for k, v in case.headers}
    data = case.body
    if data is not None and not isinstance(data, bytes):
        data = fill(json.dumps(data), env).encode("utf-8")
    if data is not None and case.ctype:
        headers["Content-Type"] = case.ctype
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        try:
            conn.request(case.method, fill(case.path, env), body=data, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            pass
        r = conn.getresponse()
        return Answer(r.status, r.getheaders(), r.read())
    finally:
        conn.close()
