"""What a write's answer says about its refresh (`LiveContract.commit`, group-committed in
the compiler's `live_writes`): `indexed`, and a note when the site or the index lags."""

from __future__ import annotations

from typing import Any

from commonplace.compiler.live.contract import LiveContract


def note(done: Any) -> str | None:
    """The answer's message for a `live_writes.Committed` (None: nothing to say)."""
    if done.failed is not None:
        return f"written, but updating the site and index failed ({done.failed}); it will be retried"
    if not done.indexed:
        return "written; the search index will include it once embedding succeeds"
    return None


def refresh(live: LiveContract, paths: list[str]) -> tuple[bool, str | None]:
    """Rebuild what `paths` touch (shared with concurrent writers). Never raises: a write
    that landed is not undone by a failed index update; the answer says `indexed: false`
    and the next refresh catches up."""
    done = live.commit(paths)
    return done.indexed, note(done)


def purge(live: LiveContract) -> None:
    """After a forget: drop the forgotten text from derived state (`LiveContract.purge`)."""
    live.purge()
