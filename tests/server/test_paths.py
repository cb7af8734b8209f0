"""Path safety: get and write refuse every way out of the corpus (400 or 404, never 200/500)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from srvkit import tree_files

from commonplace.compiler import writes as w

HOSTILE = [
    "../outside.md",
    "../../etc/passwd",
    "notes/../../outside.md",
    "/etc/passwd",
    "/tmp/x.md",
    "%2e%2e/outside.md",
    "%252e%252e/outside.md",
    "..%2foutside.md",
    "notes%2f..%2f..%2foutside.md",
    "..\\outside.md",
    "notes\\..\\..\\outside.md",
    "C:\\Windows\\x.md",
    "C:/x.md",
    "notes/a.md\x00.txt",
    "\x00",
    ".commonplace/tokens.json",
    ".commonplace/tokens.md",
    ".commonplace/../people/alex.md",
    ".git/config",
    "notes/.hidden.md",
    ".hidden/x.md",
    "\uff0e\uff0e/outside.md",  # fullwidth dots fold to '..'
    "\u2024\u2024/outside.md",  # one-dot leaders
    "~/x.md",
    "",
    " ",
    "notes//a.md",
    "./notes/a.md",
    "notes/./a.md",
    "a" * 300 + ".md",
    "notes/\u202eexe.md",
    "notes/a\u200b.md",
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    p = tmp_path / "outside.md"
    p.write_text("# outside secret\n")
    return p


@pytest.mark.parametrize("bad", HOSTILE)
def test_normalize_refuses(bad: str) -> None:
    with pytest.raises(w.InvalidTarget):
        w.normalize_target(bad)


@pytest.mark.parametrize("good", ["a.md", "notes/a.md", "logs/daily/2025-06-30.md", "people/zoë.md",
                                  "notes/with space.md", "notes/a..b.md", "notes/%x.md"])
def test_normalize_accepts(good: str) -> None:
    assert w.normalize_target(good) == good


@pytest.mark.parametrize("bad", HOSTILE)
def test_get_refuses(client, bad: str, outside: Path) -> None:
    r = client.get("/v1/get", query_string={"path": bad})
    assert r.status_code in (400, 404), r.get_json()
    assert set(r.get_json()["error"]) >= {"code", "message", "type"}
    assert "outside secret" not in r.get_data(as_text=True)
    r = client.post("/v1/get", json={"path": bad})
    assert r.status_code in (400, 404)


@pytest.mark.parametrize("bad", HOSTILE)
def test_write_refuses(open_client, corpus: Path, bad: str, outside: Path) -> None:
    before = tree_files(corpus.parent)
    for kind in ("create", "append"):
        r = open_client.post("/v1/write", json={"kind": kind, "target": bad, "content": "pwned"})
        assert r.status_code in (400, 404), (bad, r.get_json())
    after = tree_files(corpus.parent)
    assert before == after
    assert outside.read_text() == "# outside secret\n"


def test_raw_url_encoded_traversal(client, outside: Path) -> None:
    for raw in ("/v1/get?path=..%2Foutside.md", "/v1/get?path=%2e%2e%2foutside.md",
                "/v1/get?path=%252e%252e%252foutside.md", "/v1/get?path=notes%5c..%5c..%5coutside.md",
                "/v1/get?path=a%00.md"):
        r = client.get(raw)
        assert r.status_code in (400, 404), raw
        assert "outside secret" not in r.get_data(as_text=True)


def test_symlinks_leaving_the_corpus(corpus: Path, outside: Path, open_client, client) -> None:
    (corpus / "notes").mkdir(exist_ok=True)
    os.symlink(outside, corpus / "notes/link.md")
    os.symlink(outside.parent, corpus / "escape")
    os.symlink(corpus / ".commonplace", corpus / "state")
    (corpus / ".commonplace").mkdir(exist_ok=True)
    (corpus / ".commonplace/tokens.md").write_text("secret token file\n")
    for path in ("notes/link.md", "escape/outside.md", "state/tokens.md", "state/tokens.json"):
        r = client.get("/v1/get", query_string={"path": path})
        assert r.status_code in (400, 404), path
        r = open_client.post("/v1/write", json={"kind": "append", "target": path, "content": "x"})
        assert r.status_code in (400, 404), path
        if "/" in path and not path.startswith("notes/"):  # new files under a folder link that leaves
            r = open_client.post("/v1/write", json={"kind": "create", "target": path.split("/")[0] + "/new.md", "content": "x"})
            assert r.status_code in (400, 404), path
    assert outside.read_text() == "# outside secret\n"
    assert not (outside.parent / "new.md").exists()


def test_symlink_inside_the_corpus_is_readable(corpus: Path, client) -> None:
    os.symlink(corpus / "people/alex.md", corpus / "notes/alex-link.md")
    r = client.get("/v1/get", query_string={"path": "notes/alex-link.md"})
    assert r.status_code == 200 and "Alex" in r.get_json()["content"]


def test_tokens_file_never_served(corpus: Path, client, token: str) -> None:
    assert (corpus / ".commonplace/tokens.json").exists()
    for path in (".commonplace/tokens.json", ".commonplace/tokens", "%2ecommonplace/tokens.json"):
        r = client.get("/v1/get", query_string={"path": path})
        assert r.status_code in (400, 404)
        assert token not in r.get_data(as_text=True)
    for url in ("/.commonplace/tokens.json", "/%2ecommonplace/tokens.json", "/../.commonplace/tokens.json"):
        r = client.get(url)
        assert r.status_code == 404
        assert token not in r.get_data(as_text=True)


def test_output_folder_inside_corpus_is_not_writable(tmp_path: Path) -> None:
    root = tmp_path / "c"
    (root / "site").mkdir(parents=True)
    with pytest.raises(w.InvalidTarget):
        w.apply_write(root, w.WriteRequest("create", "site/x.md", "x"), excluded=(root / "site",))


def test_site_never_serves_outside_out(client, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    for url in ("/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
                "/.commonplace-site", "/_/../../secret.txt", "/a%00b", "/..\\secret.txt"):
        r = client.get(url)
        assert r.status_code in (400, 404), url
        assert "top secret" not in r.get_data(as_text=True)


def test_site_symlink_out_of_out_dir(client, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    os.symlink(tmp_path / "secret.txt", tmp_path / "site" / "leak.txt")
    r = client.get("/leak.txt")
    assert r.status_code == 404 and "top secret" not in r.get_data(as_text=True)
