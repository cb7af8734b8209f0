"""Writes that say what they did, against a live `commonplace serve` (real sockets):

- a semantic write about a person with no page is rejected, and the page it tells the
  agent to create is the one later writes resolve to: the claim store's own slug
  (`people/søren-ødegård.md`), not an ASCII-folded one (`people/sren-degard.md`) that
  would be a different entity id;
- `POST /v1/write` with an empty body (a create with `content: ""`, an append of
  whitespace) keeps Dory's 200 but says, in `warnings`, that nothing of substance was
  written.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from srvkit import CORPUS, post_ok, write_files

NAME = "Søren Ødegård"
PAGE = "people/søren-ødegård.md"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from dorylive import Server

    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("write-honesty")
    root = write_files(base / "corpus", CORPUS)
    token = TokenStore(root).create("test")
    server = Server(root, base / "site").start()
    server.token = token
    server.root = root
    yield server
    server.stop()


def _fact(content: str, **extra: Any) -> dict[str, Any]:
    return {"action": "write", "subject": NAME, "kind": "fact", "content": content, "allow_canonical": True,
            **extra}


def _empty_warnings(d: dict[str, Any]) -> list[str]:
    return [w for w in d.get("warnings", []) if "empty" in w or "whitespace" in w]


@pytest.mark.parametrize("extra", [{}, {"scope": "person"}], ids=["no-scope", "scope-person"])
def test_unknown_person_rejection_names_the_page_that_resolves(srv: Any, extra: dict[str, Any]) -> None:
    from commonplace.compiler.claims.entities import entity_path, slugify

    d = post_ok(srv, "/v1/memory-write", _fact("Søren reviews the storage design.", dry_run=True, **extra))
    assert d["result"] == "rejected" and d["resolved"] is False, d
    assert entity_path("person", slugify(NAME)) == PAGE  # the claim store's rule
    assert PAGE in d["message"], d["message"]
    assert "sren-degard" not in d["message"], d["message"]


def test_following_the_rejection_resolves_later_writes(srv: Any) -> None:
    d = post_ok(srv, "/v1/memory-write", _fact("Søren reviews the storage design."))
    assert d["result"] == "rejected", d
    m = re.search(r"create (?:the page, e\.g\. )?(people/\S+?\.md)", d["message"])
    assert m, d["message"]
    suggested = m.group(1)
    made = post_ok(srv, "/v1/write", {"kind": "create", "target": suggested, "content": f"# {NAME}\n",
                                      "frontmatter": {"title": NAME, "type": "person"}})
    assert made["path"] == suggested == PAGE, made
    again = post_ok(srv, "/v1/memory-write", _fact("Søren reviews the storage design."))
    assert again["result"] == "written", again
    assert again["target_path"] == PAGE and again["subject_ref"] == "person:søren-ødegård", again
    by_id = post_ok(srv, "/v1/memory-write", {**_fact("Søren prefers written reviews."),
                                              "subject": "person:søren-ødegård", "kind": "preference"})
    assert by_id["result"] == "written" and by_id["target_path"] == PAGE, by_id


def test_create_with_empty_content_says_nothing_was_written(srv: Any) -> None:
    d = post_ok(srv, "/v1/write", {"kind": "create", "target": "notes/blank.md", "content": "",
                                   "frontmatter": {"title": "Blank", "type": "note"}})
    assert d["action"] == "created", d  # Dory accepts it: still a 200
    said = _empty_warnings(d)
    assert len(said) == 1 and "notes/blank.md" in said[0] and "empty" in said[0], d
    assert (srv.root / "notes/blank.md").exists()


def test_dry_run_of_an_empty_create_says_so_too(srv: Any) -> None:
    d = post_ok(srv, "/v1/write", {"kind": "create", "target": "notes/blank-dry.md", "dry_run": True,
                                   "frontmatter": {"title": "Blank", "type": "note"}})  # content defaults to ""
    assert d["action"] == "would_create", d
    assert len(_empty_warnings(d)) == 1, d


def test_create_whose_content_is_only_frontmatter_says_so(srv: Any) -> None:
    d = post_ok(srv, "/v1/write", {"kind": "create", "target": "notes/only-meta.md",
                                   "content": "---\ntitle: Only meta\ntype: note\n---\n\n  \n"})
    assert d["action"] == "created", d
    assert len(_empty_warnings(d)) == 1, d


def test_append_of_whitespace_says_nothing_was_appended(srv: Any) -> None:
    before = (srv.root / "people/sam.md").read_text("utf-8")
    d = post_ok(srv, "/v1/write", {"kind": "append", "target": "people/sam.md", "content": "  \n\t \n"})
    assert d["action"] == "appended", d
    said = _empty_warnings(d)
    assert len(said) == 1 and "whitespace" in said[0] and "people/sam.md" in said[0], d
    assert "Sam owns the on-call rotation." in (srv.root / "people/sam.md").read_text("utf-8")
    assert before.split("---", 2)[2].strip() in (srv.root / "people/sam.md").read_text("utf-8")


def test_replace_with_an_empty_body_says_the_page_is_now_empty(srv: Any) -> None:
    post_ok(srv, "/v1/write", {"kind": "create", "target": "notes/to-clear.md", "content": "Some text.\n",
                               "frontmatter": {"title": "To clear", "type": "note"}})
    got = srv.request("GET", "/v1/get?path=notes/to-clear.md&debug=true", token=srv.token).json()
    d = post_ok(srv, "/v1/write", {"kind": "replace", "target": "notes/to-clear.md", "content": "\n",
                                   "expected_hash": got["hash"]})
    assert d["action"] == "replaced", d
    assert len(_empty_warnings(d)) == 1, d


def test_writes_with_text_have_no_empty_warning(srv: Any) -> None:
    d = post_ok(srv, "/v1/write", {"kind": "create", "target": "notes/full.md", "content": "Real text.\n",
                                   "frontmatter": {"title": "Full", "type": "note"}})
    assert not _empty_warnings(d), d
    d = post_ok(srv, "/v1/write", {"kind": "append", "target": "notes/full.md", "content": "More text."})
    assert not _empty_warnings(d), d
