"""The one HTTP client the command line uses to talk to a running `commonplace serve`.

`serve` records its URL and pid in `.commonplace/server.json`; a server counts as running
when the pid is alive and `GET /healthz` answers 200 within 0.3 s. Requests carry the
token in COMMONPLACE_TOKEN, if set. Standard library only: no server code is imported.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SERVER_FILE = "server.json"
HEALTH_TIMEOUT = 0.3


class ServerError(Exception):
    """The server answered with an error status: `status` and the decoded `error` object."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", f"HTTP {status}"))
        self.status = status
        self.error = error


def server_file(root: Path) -> Path:
    from commonplace.compiler.model import state_path

    return state_path(root) / SERVER_FILE


def _pid_alive(pid: Any) -> bool:
    try:
        pid = int(pid)
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except (TypeError, ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def server_url(root: Path) -> str | None:
    """The URL of a live server for this corpus, or None."""
    try:
        info = json.loads(server_file(root).read_text("utf-8"))
        url = str(info["url"]).rstrip("/")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not url.startswith(("http://", "https://")) or not _pid_alive(info.get("pid")):
        return None
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=HEALTH_TIMEOUT) as r:
            if r.status != 200:
                return None
    except Exception:  # noqa: BLE001 - any failure means "no usable server"
        return None
    return url


def call(url: str, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = 300.0,
         token: str | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One JSON request (with `headers` besides the JSON and token ones). Raises
    `ServerError` for an error status, `OSError` when the server does not answer."""
    headers = {**(headers or {}), "Content-Type": "application/json"}
    token = token if token is not None else os.environ.get("COMMONPLACE_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode("utf-8") if body is not None else None
    req = urllib.request.Request(f"{url}{path}", data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            decoded = json.loads(exc.read().decode("utf-8"))
            err = decoded["error"] if isinstance(decoded.get("error"), dict) else \
                {"code": "http_error", "message": str(decoded.get("detail")), "type": "server_error"}
        except Exception:  # noqa: BLE001
            err = {"code": "http_error", "message": f"HTTP {exc.code}", "type": "server_error"}
        raise ServerError(exc.code, err) from None
