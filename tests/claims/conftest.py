"""Fixtures for the claim store tests: a small corpus with entity pages, a fake clock."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Callable

import pytest

from commonplace.compiler.claims import ClaimStore

from claimtools import FILES, FakeClock

UTC = dt.timezone.utc

@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(dt.datetime(2026, 3, 1, 9, 0, 0, tzinfo=UTC))


@pytest.fixture
def store(corpus: Path, clock: FakeClock) -> ClaimStore:
    return ClaimStore(corpus, actor="tester", fsync=False, now=clock)


@pytest.fixture
def make_store(corpus: Path, clock: FakeClock) -> Callable[..., ClaimStore]:
    def _make(actor: str = "tester", **kw) -> ClaimStore:
        return ClaimStore(corpus, actor=actor, fsync=False, now=kw.pop("now", clock), **kw)

    return _make
