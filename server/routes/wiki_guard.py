"""What stands behind the wiki's login (routes/wiki.py): a throttle on wrong passwords, and
the cookies that logging out has ended.

Throttle: per client (`guard.client_address`: the socket peer, or what a trusted proxy
says), at most MAX_FAILURES wrong passwords in WINDOW seconds, and at most GLOBAL_FAILURES
from everyone together; past that, /wiki/login answers 429 with Retry-After without
looking at the password. A right password clears its client's count.

Logout: the session and token cookies are signed and stateless, so a copy of one would
otherwise work for its 30 days after the browser forgot it. `/wiki/logout` records a hash
of each cookie it ends in `.commonplace/web-logouts.json` (until the cookie would have
expired anyway), and the wiki refuses those from then on, also after a restart.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from pathlib import Path

from commonplace.compiler.fsutil import atomic_replace

WINDOW = 60.0
MAX_FAILURES = 5
GLOBAL_FAILURES = 50
LOGOUTS_FILE = "web-logouts.json"


class LoginThrottle:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    @staticmethod
    def _trim(q: deque[float], now: float) -> None:
        while q and q[0] <= now - WINDOW:
            q.popleft()

    def wait(self, client: str, now: float | None = None) -> int:
        """Seconds this client must wait before trying again (0: it may try now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._trim(self._all, now)
            q = self._failures.get(client)
            if q is not None:
                self._trim(q, now)
                if not q:
                    del self._failures[client]
            waits = []
            if q is not None and len(q) >= MAX_FAILURES:
                waits.append(q[0] + WINDOW - now)
            if len(self._all) >= GLOBAL_FAILURES:
                waits.append(self._all[0] + WINDOW - now)
            return max(1, int(max(waits)) + 1) if waits else 0

    def failed(self, client: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._failures.setdefault(client, deque()).append(now)
            self._all.append(now)
            if len(self._failures) > 10_000:  # many clients: forget the quietest
                for key in [k for k, q in self._failures.items() if not q or q[-1] <= now - WINDOW]:
                    del self._failures[key]

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


class Logouts:
    """Hashes of the cookies logout ended, with when each would have expired."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOGOUTS_FILE
        self._lock = threading.Lock()
        self._ended: dict[str, float] | None = None

    @staticmethod
    def key(value: str) -> str:
        return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()

    def _load(self) -> dict[str, float]:
        if self._ended is None:
            try:
                data = json.loads(self.path.read_text("utf-8"))
                self._ended = {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
            except (OSError, ValueError, TypeError, AttributeError):
                self._ended = {}
        return self._ended

    def ended(self, value: str) -> bool:
        if not value:
            return False
        with self._lock:
            return self.key(value) in self._load()

    def end(self, values: list[str], until: float) -> None:
        values = [v for v in values if v]
        if not values:
            return
        with self._lock:
            ended = self._load()
            now = time.time()
            for k in [k for k, t in ended.items() if t < now]:
                del ended[k]
            for v in values:
                ended[self.key(v)] = until
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_replace(self.path, json.dumps(ended, sort_keys=True).encode("utf-8"))
