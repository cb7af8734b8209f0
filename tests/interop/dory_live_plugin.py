"""A pytest plugin that points Dory's own HTTP tests at a live `commonplace serve`.

Loaded into Dory's test run by dory_suite.py (`python -m pytest -p dory_live_plugin`, run in
a Dory checkout with Dory's Python); it is not a test module of this project, and it imports
nothing from commonplace (it runs in Dory's environment, not ours).

Dory's HTTP tests build their server in-process: they write a corpus under tmp_path, call
`dory_http.app.build_app(corpus_root, index_root, auth_tokens_path=..., embedder=...)` and
talk to it through `fastapi.testclient.TestClient(app)`. Before any test module is
imported, this plugin replaces both:

- `build_app` starts `commonplace serve <corpus_root> --port 0` on 127.0.0.1 (a real process
  and real sockets, with the default embedding model, as Dory's tests run with an embedder:
  its status test wants `embedding_provider: local`) and returns a handle with its URL,
  once /healthz says it is ready. The process gets the
  test's environment as it is at that moment, so `DORY_ALLOW_NO_AUTH` and
  `DORY_WEB_PASSWORD` set by a test reach it as they reach Dory's settings. Dory's token
  file becomes commonplace's: a JSON object is imported (`commonplace token import`), a
  file that is not JSON is copied as commonplace's own token file (a broken token
  configuration either way), a missing or empty file means no tokens. `index_root`
  (Dory's own index) and `embedder` are not used: commonplace builds its own indexes.
- `TestClient(app)` is an `httpx.Client` on that URL that follows redirects, as
  Starlette's test client does by default.

Every server a test started is stopped when the test ends. Each test's outcome (and the
first line of its failure) is appended as a JSON line to $DORY_SUITE_RESULTS.

Environment, set by dory_suite.py: COMMONPLACE_PYTHON (a Python with commonplace
installed), DORY_SUITE_WORKDIR (site output and server logs), DORY_SUITE_RESULTS,
DORY_SUITE_MIGRATE_ROOT (passed as --migrate-root: Dory's fixtures folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

_RUNNING: list["LiveApp"] = []


class LiveApp:
    """One `commonplace serve` over a Dory test's corpus."""

    def __init__(self, corpus_root, index_root=None, auth_tokens_path=None, embedder=None) -> None:
        self.corpus = Path(corpus_root).resolve()
        self.corpus.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="serve-", dir=os.environ["DORY_SUITE_WORKDIR"]))
        self.log_path = work / "serve.log"
        python = os.environ["COMMONPLACE_PYTHON"]
        cli = [python, "-c", "from commonplace.server.cli import main; main()"]
        if auth_tokens_path is not None:
            _carry_tokens(cli, Path(auth_tokens_path), self.corpus)
        flags = ["--port", "0", "--out", str(work / "site")]
        if os.environ.get("DORY_SUITE_MIGRATE_ROOT"):
            flags += ["--migrate-root", os.environ["DORY_SUITE_MIGRATE_ROOT"]]
        env = dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1")
        self.log = open(self.log_path, "w+", encoding="utf-8")
        self.proc = subprocess.Popen([*cli, "serve", str(self.corpus), *flags], stdout=self.log,
                                     stderr=subprocess.STDOUT, text=True, env=env)
        _RUNNING.append(self)
        self.url = self._wait_ready(timeout=120)

    def said(self) -> str:
        return self.log_path.read_text("utf-8", "replace")

    def _wait_ready(self, timeout: float) -> str:
        deadline = time.time() + timeout
        url = ""
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"commonplace serve exited ({self.proc.returncode}):\n{self.said()[-3000:]}")
            if not url:
                m = re.search(r"http://127\.0\.0\.1:\d+", self.said())
                url = m.group(0) if m else ""
            if url:
                try:
                    if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                        return url
                except httpx.HTTPError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"commonplace serve was not ready in {timeout:.0f} s:\n{self.said()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _carry_tokens(cli: list[str], dory_file: Path, corpus: Path) -> None:
    """Give commonplace the tokens of Dory's token file (see the module docstring)."""
    text = dory_file.read_text("utf-8") if dory_file.is_file() else ""
    if not text.strip():
        return
    try:
        json.loads(text)
    except ValueError:
        state = corpus / ".commonplace"
        state.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dory_file, state / "tokens.json")
        return
    subprocess.run([*cli, "token", "import", str(dory_file), "-C", str(corpus)], check=True,
                   capture_output=True, text=True)


class LiveClient(httpx.Client):
    """Stands in for Starlette's TestClient: the same calls, over a real socket."""

    __test__ = False  # a test module's `TestClient` name is this class: not a test class

    def __init__(self, app: LiveApp, base_url: str | None = None, raise_server_exceptions: bool = True,
                 root_path: str = "", follow_redirects: bool = True, **_ignored) -> None:
        super().__init__(base_url=app.url, follow_redirects=follow_redirects, timeout=120)
        self.app = app


def pytest_configure(config: pytest.Config) -> None:
    import fastapi.testclient
    import dory_http.app

    dory_http.app.build_app = LiveApp
    fastapi.testclient.TestClient = LiveClient


@pytest.fixture(autouse=True)
def _stop_live_servers():
    yield
    while _RUNNING:
        _RUNNING.pop().stop()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get("DORY_SUITE_RESULTS")
    if not path or not (report.when == "call" or report.failed or report.skipped):
        return
    message = ""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
                            "message": message}) + "\n")
