"""Search snippets give a relative time its day in the records of one day, against a live
`commonplace serve` (real sockets): "Finish them tomorrow" in Wednesday's note is Thursday."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, started

FILES = {
    "logs/daily/2026-12-02.md": "---\ntitle: 2026-12-02\ntype: daily\n---\n# Wednesday\n\n"
                                "- Wrote the first half of the release notes. Finish them tomorrow.\n"
                                "- Tomás needs the tarball checksum before Friday.\n",
    "knowledge/habits.md": "---\ntitle: Habits\n---\n# Habits\n\nNever leave the release notes for tomorrow.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("search-dates"), FILES)
    yield server
    server.stop()


def _snippets(srv: Any, query: str) -> dict[str, str]:
    d = post_ok(srv, "/v1/search", {"query": query, "k": 5, "mode": "bm25"})
    return {r["path"]: r["snippet"] for r in d["results"]}


def test_a_notes_relative_times_get_their_day(srv: Any) -> None:
    got = _snippets(srv, "release notes tomorrow")
    assert "Finish them tomorrow (2026-12-03)." in got["logs/daily/2026-12-02.md"], got
    assert "before Friday (2026-12-04)" in _snippets(srv, "tarball checksum")["logs/daily/2026-12-02.md"]


def test_a_page_of_no_one_day_is_left_as_written(srv: Any) -> None:
    got = _snippets(srv, "release notes tomorrow")
    assert "Never leave the release notes for tomorrow." in got["knowledge/habits.md"], got
