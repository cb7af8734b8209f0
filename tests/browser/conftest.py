"""The browser tests' shared fixtures: one Chromium per test module (Debian's, through
Playwright; `browserkit.launch`), and `serve`, which starts `commonplace serve` over a
corpus (`browserkit.serving`) and stops it at the module's end."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from browserkit import launch, serving


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., dict[str, Any]]]:
    """serve(root, *flags) -> {"url", "token", "root"}: a server kept for the module."""
    with ExitStack() as stack:
        yield lambda root, *flags: stack.enter_context(
            serving(Path(root), tmp_path_factory.mktemp("served-site"), *flags))
