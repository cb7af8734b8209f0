"""The browser tests' shared fixture: one Chromium per test module (Debian's, through
Playwright; `browserkit.launch`)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from browserkit import launch


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()
