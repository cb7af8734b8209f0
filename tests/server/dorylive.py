"""A live `commonplace serve` (waitress, real sockets) for the Dory contract tests, and a
plain HTTP client that never follows redirects (the tests look at every 303) and keeps
cookies only when told to.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from srvkit import tree_files

CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]


class Answer:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def cookies(self) -> dict[str, str]:
        """Set-Cookie name -> value ('' when the cookie is deleted)."""
        out = {}
        for k, v in self.headers:
            if k.lower() == "set-cookie":
                name, _, rest = v.partition("=")
                out[name.strip()] = rest.split(";", 1)[0]
        return out

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


class Server:
    def __init__(self, corpus: Path, out: Path, *flags: str, env: dict[str, str] | None = None) -> None:
        self.corpus, self.out, self.flags = corpus, out, flags
        self.env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1", **(env or {}))
        for name in ("COMMONPLACE_WEB_PASSWORD", "DORY_WEB_PASSWORD", "COMMONPLACE_MIGRATE_ROOTS",
                     "COMMONPLACE_ALLOW_NO_AUTH", "DORY_ALLOW_NO_AUTH"):
            if name not in (env or {}):
                self.env.pop(name, None)
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 120) -> "Server":
        self.proc = subprocess.Popen([*CLI, "serve", str(self.corpus), "--out", str(self.out), "--port", "0",
                                      "--no-embed", *self.flags],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"http://[\d.]+:(\d+)", line)
        assert m, line
        self.url, self.port = m.group(0), int(m.group(1))
        from readiness import wait_healthy

        wait_healthy(self.url, self.proc, timeout, said=self.proc.stdout.read)
        return self

    def stop(self) -> str:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, out
        return out

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                headers: dict[str, str] | None = None, form: dict[str, str] | None = None,
                cookies: dict[str, str] | None = None) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        h = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            h["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode("ascii")
            h["Content-Type"] = "application/x-www-form-urlencoded"
        if token:
            h["Authorization"] = f"Bearer {token}"
        if cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        try:
            try:
                conn.request(method, path, body=data, headers=h)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered (413) and closed before the whole body was sent
            r = conn.getresponse()
            return Answer(r.status, r.getheaders(), r.read())
        finally:
            conn.close()


def corpus_files(root: Path) -> dict[str, bytes]:
    """Every file of the corpus but the state folder: to prove a refused request wrote nothing."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in tree_files(root, skip=(".commonplace",))}


def sse_events(text: str) -> list[tuple[str, Any]]:
    """(event, data) of every server-sent event frame, checking each frame's shape."""
    events = []
    assert text.endswith("\n\n"), text[-200:]
    for block in text[:-2].split("\n\n"):
        lines = block.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: "), block
        data = json.loads(lines[1][6:])
        if isinstance(data, dict):
            assert lines[1][6:] == json.dumps(data, sort_keys=True, ensure_ascii=False), "keys not sorted"
        events.append((lines[0][7:], data))
    return events
