"""A small corpus on disk opened as the live corpus's documents (links resolved, no
index), for tests that call the context builder (`wake()`, research) directly."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def opened(base: Path, files: dict[str, str]) -> Iterator[tuple[Path, dict, Any]]:
    """(the corpus root, its documents, its link resolver) over `files` written to `base/corpus`."""
    from commonplace.compiler.live.corpus import LiveCorpus

    root = base / "corpus"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    live = LiveCorpus(root, base / "site", embed=False, index=False)
    live.open()
    try:
        yield root, live.docs, live.resolver
    finally:
        live.close()
