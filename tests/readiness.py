"""Waiting for a `commonplace serve` started by a test: the one readiness loop the kits share.

`/healthz` answers 503 while the server opens the corpus and loads the model, 200 once it
is ready; a server that exits, or never gets ready, fails the test with what it said.
"""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from typing import Callable


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60.0,
                 said: Callable[[], str] = lambda: "") -> None:
    """Poll `url`/healthz until it answers 200. `said`: the server's output, for a failure."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except urllib.error.HTTPError as e:
            assert e.code == 503, f"/healthz answered {e.code} while starting"
        except OSError:
            pass
        if proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}): {said()[-2000:]}")
        time.sleep(0.1)
    raise AssertionError(f"the server was not ready in {timeout:.0f} s")
