"""Around an index update made in this process: the searches of this process's engine
(if it has one) kept on their generation until the next one is opened for them.

Both are no-ops in a process that has searched nothing (no engine), and neither ever
fails the update it surrounds: without them, searches switch by themselves.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import engine_carry
from .engine import existing_engine


def prepare_engine_switch(root: Path) -> None:
    """Searches switch to the generation an update just published now, the opening done
    off their lock (`engine_carry.prepare_switch`)."""
    try:
        engine = existing_engine(root)
        if engine is not None:
            engine_carry.prepare_switch(engine)
    except Exception:  # noqa: BLE001 - the next search switches by itself
        pass


@contextmanager
def hold_engine(root: Path) -> Iterator[None]:
    """Around an index update and its `prepare_engine_switch`: searches stay on the
    generation they have until the prepared one is in place, instead of each new
    generation being opened under the engine's lock by whichever search sees it first
    while the writer opens it too (`engine_carry.hold`)."""
    engine = token = None
    try:
        engine = existing_engine(root)
        token = engine_carry.hold(engine) if engine is not None else None
    except Exception:  # noqa: BLE001 - without a hold, searches switch by themselves
        pass
    try:
        yield
    finally:
        if token is not None:
            engine_carry.release(engine, token)
