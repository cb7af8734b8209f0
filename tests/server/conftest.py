"""Fixtures for the server tests: a small corpus, a live corpus without embeddings, apps.

Most tests use Flask's test client (in-process, no sockets). The live corpus is the
compiler's `LiveCorpus` with `embed=False`; when it cannot search yet (no `search`
method, or no index), a plain word-matching search with the same answer shape stands in,
so these tests check the server, not the search engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from srvkit import CORPUS, open_live, write_files

@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_files(tmp_path / "corpus", CORPUS)


@pytest.fixture
def live(corpus: Path, tmp_path: Path) -> Any:
    lv = open_live(corpus, tmp_path / "site")
    yield lv
    close = getattr(lv, "close", None)
    if callable(close):
        close()


@pytest.fixture
def make_app(live: Any, corpus: Path, tmp_path: Path) -> Callable[..., Any]:
    from commonplace.server import ServerConfig, create_app

    def _make(**kw: Any) -> Any:
        backend = kw.pop("live", live)
        kw.setdefault("loopback_reads", True)  # most tests read without a token, as a local tool would
        cfg = ServerConfig(corpus=corpus, out=tmp_path / "site", **kw)
        app = create_app(backend, cfg)
        app.testing = True
        return app

    return _make


@pytest.fixture
def app(make_app: Callable[..., Any]) -> Any:
    return make_app()


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def token(corpus: Path) -> str:
    from commonplace.server.tokens import TokenStore

    return TokenStore(corpus).create("tests")


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def open_client(make_app: Callable[..., Any]) -> Any:
    """A client of a loopback server started with --no-auth."""
    return make_app(no_auth=True).test_client()
