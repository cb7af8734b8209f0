"""Fixtures for the MCP tests (helpers in mcpkit.py and toolcases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcpkit import write_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def token(corpus: Path) -> str:
    from commonplace.server.tokens import TokenStore

    return TokenStore(corpus).create("tests")
