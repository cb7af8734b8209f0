"""The contract of a live corpus, as the server (and MCP) depend on it.

`LiveCorpus` (`live.py`) is the implementation; the server types its `live` against this
`Protocol`, not against the class, so it needs none of the build machinery to import, and
a test may stand in an object with the same members. Only typing is imported here.

The server reads its live corpus only through these members, never by probing
(`getattr`/`hasattr`): `tests/test_live_contract.py` fails on a new probe.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Iterable, Mapping, Protocol

if TYPE_CHECKING:
    from ..build.pipeline import BuildResult
    from ..corpus.links import LinkGraph, Resolver
    from .corpus import RefreshResult
    from .commit import Committed, Written
    from ..model import Document
    from ..search import SearchRequest
    from ..writes import WriteRequest


class LiveContract(Protocol):
    root: Path  # the corpus folder, resolved
    out: Path  # the site folder, resolved
    embed: bool  # vectors are kept (False: BM25 only)
    index: bool  # search indexes are kept at all
    vectors: str  # "now", or "later": ready on BM25, the vectors embedded behind it
    ready: bool  # open() has finished
    write_lock: ContextManager[Any]  # held by every refresh; re-entrant
    last_build: "BuildResult | None"
    last_refresh: "RefreshResult | None"

    # ----- reads
    @property
    def docs(self) -> "dict[str, Document]": ...

    @property
    def graph(self) -> "LinkGraph": ...

    @property
    def resolver(self) -> "Resolver": ...

    def search(self, request: "SearchRequest | Mapping[str, Any] | str") -> dict[str, Any]: ...

    # ----- the write path (`live_writes`)
    def write(self, request: "WriteRequest", excluded: tuple[Path, ...] = ()) -> "Written": ...

    def commit(self, paths: Iterable[str], *, before: dict[str, set[str]] | None = None,
               purge: bool = False) -> "Committed": ...

    def purge(self) -> None: ...

    # ----- lifecycle and refreshes
    def open(self) -> Any: ...

    def preload(self) -> None: ...  # the search index (and the model) loaded before the first request

    def close(self, wait: float | None = None) -> None: ...  # wait: seconds for background threads (None: theirs)

    def refresh(self, paths: Iterable[str], rescan: bool = False) -> "RefreshResult": ...

    def watch(self, echo: Any = print) -> None: ...
