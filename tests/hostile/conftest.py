"""Fixtures for the hostile-input suite: one corpus per test module, surrounded by secrets.

`env` builds (once per module) a corpus next to an `outside/` folder, with symlinks and a
hard link that point out of it, a `.git/config`, hidden files and a real token created with
`compiler/tokens.py`. `client` is a Flask test client of `create_app` over a `LiveCorpus`
without embeddings, with the real auth model (loopback, tokens required for writes).
`cli` runs the `commonplace` command in-process and refuses unhandled exceptions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from hostilekit import Env, make_env

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def live(env: Env) -> Any:
    from commonplace.compiler.live.corpus import LiveCorpus

    lv = LiveCorpus(env.corpus, env.site, embed=False)
    lv.open()
    yield lv
    lv.close()


@pytest.fixture(scope="module")
def app(live: Any, env: Env) -> Any:
    from commonplace.server import ServerConfig, create_app

    application = create_app(live, ServerConfig(corpus=env.corpus, out=env.site, loopback_reads=True))
    application.testing = False  # errors go through the real handlers, as in production
    return application


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


class CliResult:
    def __init__(self, result: Any) -> None:
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        try:
            self.stderr = result.stderr
        except ValueError:  # pragma: no cover - older click mixes the streams
            self.stderr = ""
        self.output = self.stdout + "\n" + self.stderr
        self.exception = result.exception

    def __repr__(self) -> str:
        return f"<exit {self.exit_code}: {self.output[:400]!r}>"


@pytest.fixture(scope="module")
def cli() -> Callable[..., CliResult]:
    """Run `commonplace ARGS` in-process. An unhandled exception fails the test."""
    from commonplace.server.cli import main

    def _run(*args: Any, input: str | None = None) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=True)
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            import traceback

            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            raise AssertionError(f"commonplace {' '.join(map(str, args))[:200]} raised:\n{tb}")
        return CliResult(result)

    return _run


@pytest.fixture
def corpus_files(env: Env) -> Callable[[], set[str]]:
    """Snapshot of every file under the test's base folder (outside and corpus), minus
    derived state, to prove a refused request changed nothing."""

    def snap() -> set[str]:
        out = set()
        for dirpath, dirnames, filenames in os.walk(env.base):  # never follows folder links
            for name in dirnames + filenames:
                rel = (Path(dirpath) / name).relative_to(env.base).as_posix()
                if not rel.startswith(("corpus/.commonplace", "site")):
                    out.add(rel)
        return out

    return snap
