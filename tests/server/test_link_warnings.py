"""A write that changes where other documents' links go says so (issue 30, finding 10):
against a live `commonplace serve` (real sockets, no embeddings).

`[[identity]]` in notes/jo.md resolves to core/identity.md until a notes/identity.md
exists: then the nearest-folder rule sends it there. `[[Identity]]` (by title) moves to
any new `Identity.md`: a stem in the link's own case comes before a title. The write still succeeds; its answer
lists the moved link in `warnings`. A write that moves no link has no `warnings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dorylive import Server
from srvkit import write_files

CORPUS = {
    "core/identity.md": "---\ntitle: Identity\ntype: core\n---\n# Identity\n\nWho this memory belongs to.\n",
    "notes/jo.md": "---\ntitle: Jo\n---\n# Jo\n\nJo follows [[identity]] and [[core/identity]].\n",
    "people/sam.md": "---\ntitle: Sam\n---\n# Sam\n\nSam reads [[Identity]] too.\n",
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("linkwarn")
    root = base / "corpus"
    write_files(root, CORPUS)
    token = TokenStore(root).create("api")
    server = Server(root, base / "site").start()
    yield server, token, root
    server.stop()


def _write(srv: Any, body: dict[str, Any]) -> dict[str, Any]:
    server, token, _ = srv
    r = server.request("POST", "/v1/write", body, token=token)
    assert r.status == 200, r.text
    return r.json()


def test_an_unrelated_create_does_not_warn(srv: Any) -> None:
    d = _write(srv, {"kind": "create", "target": "notes/groceries.md", "content": "Milk and [[identity]].",
                     "frontmatter": {"title": "Groceries", "type": "capture"}})
    assert d["action"] == "created" and "warnings" not in d, d


def test_a_create_that_repoints_a_link_warns_and_still_writes(srv: Any) -> None:
    root: Path = srv[2]
    body = {"kind": "create", "target": "notes/identity.md", "content": "A note about identity.",
            "frontmatter": {"title": "Identity notes", "type": "capture"}}
    dry = _write(srv, {**body, "dry_run": True})
    assert dry["action"] == "would_create" and "warnings" not in dry  # dry runs do not predict moves
    d = _write(srv, body)
    assert d["action"] == "created" and d["indexed"] is True and (root / "notes/identity.md").exists()
    # Jo's and groceries' [[identity]] are in notes/: the new note is nearer. Jo's
    # [[core/identity]] names a path, Sam's [[Identity]] the title: both stay.
    assert d["warnings"] == [
        "[[identity]] in notes/groceries.md now resolves to notes/identity.md (was core/identity.md)",
        "[[identity]] in notes/jo.md now resolves to notes/identity.md (was core/identity.md)",
    ], d
    # A second write that moves nothing says nothing.
    d = _write(srv, {"kind": "append", "target": "notes/identity.md", "content": "More."})
    assert d["action"] == "appended" and "warnings" not in d, d


def test_a_capitalised_stem_takes_a_title_link(srv: Any) -> None:
    """The issue's case: a new `Identity.md` anywhere takes `[[Identity]]` from the page
    titled Identity."""
    d = _write(srv, {"kind": "create", "target": "ideas/Identity.md", "content": "An idea.",
                     "frontmatter": {"title": "An idea", "type": "idea"}})
    assert d["action"] == "created", d
    assert d["warnings"] == ["[[Identity]] in people/sam.md now resolves to ideas/Identity.md (was core/identity.md)"]


def test_warnings_say_ambiguous_and_broken_and_cap_the_list() -> None:
    from commonplace.compiler.live.commit import relink_warnings
    from commonplace.compiler.build.state import Relink

    moved = [Relink("a.md", "X", "wiki", "x.md", None, ("x.md", "n/x.md")),
             Relink("b.md", "x.md", "md", "x.md", None),
             Relink("c.md", "Y", "wiki", "y.md", "n/y.md")]  # another writer's move in a shared refresh
    assert relink_warnings(moved, ["n/x.md", "x.md"]) == [
        "[[X]] in a.md is now ambiguous between x.md, n/x.md (was x.md)",
        "[x.md](x.md) in b.md is now broken (was x.md)",
    ]
    many = [Relink(f"p{i}.md", "X", "embed", "x.md", "n/x.md") for i in range(8)]
    lines = relink_warnings(many, ["n/x.md"])
    assert lines[0] == "![[X]] in p0.md now resolves to n/x.md (was x.md)"
    assert len(lines) == 6 and lines[-1] == "... and 3 more links now resolve differently"


def test_a_replace_that_renames_says_the_link_broke(srv: Any) -> None:
    """A link that resolved only through a title breaks when a replace changes the title;
    a create that mends a broken link moves nothing that resolved, so it says nothing."""
    _write(srv, {"kind": "append", "target": "notes/jo.md", "content": "Jo is in the [[Crew]]."})
    d = _write(srv, {"kind": "create", "target": "notes/team.md", "content": "The team.",
                     "frontmatter": {"title": "Crew", "type": "capture"}})
    assert "warnings" not in d, d
    d = _write(srv, {"kind": "replace", "target": "notes/team.md", "content": "The team, renamed.",
                     "frontmatter": {"title": "Team", "type": "capture"}, "expected_hash": d["hash"]})
    assert d["action"] == "replaced", d
    assert d["warnings"] == ["[[Crew]] in notes/jo.md is now broken (was notes/team.md)"], d
