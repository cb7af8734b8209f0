"""Path tricks against get and write, over HTTP and the CLI (catalogue: hostile_cases.PATHS).

Every hostile path is refused by `GET /v1/get`, `POST /v1/get`, `POST /v1/write` (create and
append, with a valid token), `commonplace get` and `commonplace write`, with the expected
status or exit code, the error envelope, no leak, and no file created or changed anywhere
(inside the corpus or next to it). Also: site URLs that try to escape the output folder,
symlinks that stay inside the corpus, and a hard link out of the corpus.
"""

from __future__ import annotations

import pytest

from hostile_cases import PATHS, SITE_URLS, PathCase
from hostilekit import HARDLINK_SECRET, OUTSIDE_SECRET, Env, assert_no_leak, check_response


def _path(case: PathCase, env: Env) -> str:
    return case.path.replace("{corpus}", str(env.corpus)).replace("{outside}", str(env.outside))


def _allow(case: PathCase, env: Env) -> list:
    # A client that sends an absolute path may see its own input echoed back.
    return [env.corpus] if "{corpus}" in case.path else ([env.outside] if "{outside}" in case.path else [])


@pytest.mark.parametrize("case", PATHS, ids=[c.id for c in PATHS])
def test_path_refused_over_http(case: PathCase, env: Env, client, corpus_files) -> None:
    path = _path(case, env)
    allow = _allow(case, env)
    before = corpus_files()

    def check(resp, statuses, what):
        text = resp.get_data(as_text=True)
        if allow:  # the echoed input is the client's own; still nothing else may leak
            for a in allow:
                text = text.replace(str(a), "<input>")
            assert resp.status_code in statuses, f"{what}: {resp.status_code} {text[:300]}"
            assert_no_leak(text, env, what)
            return resp.get_json()
        return check_response(resp, env, statuses, what)

    body = check(client.get("/v1/get", query_string={"path": path}), case.read, "GET /v1/get")
    assert body["error"]["code"] in ("not_found", "invalid_path", "invalid_parameter")
    check(client.post("/v1/get", json={"path": path, "debug": True}), case.read, "POST /v1/get")
    if path.strip():
        # link resolves names like a wikilink (trimmed, by stem or title): a 200 must name a
        # real, visible corpus document
        body = check(client.post("/v1/link", json={"op": "backlinks", "path": path}), (200, 400, 404), "POST /v1/link")
        if body and "error" not in body:
            assert (env.corpus / body["path"]).is_file() and not body["path"].startswith(".")
    body = check(client.post("/v1/wake", json={"agent": "hostile", "project": path[:500], "budget_tokens": 500}), (200, 400), "POST /v1/wake")
    if body and "block" in body:
        assert OUTSIDE_SECRET not in body["block"]
    for kind in ("create", "append"):
        body = check(client.post("/v1/write", json={"kind": kind, "target": path, "content": "hostile write\n"},
                                 headers=env.auth), case.write, f"POST /v1/write kind={kind}")
        assert body["error"]["code"] in ("invalid_path", "invalid_parameter"), body
    body = check(client.post("/v1/write", json={"kind": "replace", "target": path, "content": "x",
                                                "expected_hash": "sha256:" + "0" * 64}, headers=env.auth),
                 case.write + (404,), "POST /v1/write kind=replace")
    assert corpus_files() == before, "a refused write changed files"
    assert OUTSIDE_SECRET in (env.outside / "secret.md").read_text()


@pytest.mark.parametrize("case", PATHS, ids=[c.id for c in PATHS])
def test_path_refused_by_cli(case: PathCase, env: Env, cli, corpus_files) -> None:
    path = _path(case, env)
    allow = _allow(case, env) + [env.corpus]
    before = corpus_files()
    r = cli("get", path, "-C", env.corpus)
    assert r.exit_code == case.cli_get, r
    assert r.stderr.strip(), "a refusal says why"
    assert_no_leak(r.output, env, "commonplace get", allow_paths=allow)
    for kind in ("create", "append"):
        r = cli("write", path, "-C", env.corpus, "--out", env.site, "--kind", kind, "--content", "hostile", "--no-build")
        assert r.exit_code == case.cli_write, r
        assert_no_leak(r.output, env, "commonplace write", allow_paths=allow)
    assert corpus_files() == before, "a refused write changed files"


def test_symlink_inside_corpus_reads_but_is_never_written_through(env: Env, client, cli) -> None:
    r = client.get("/v1/get", query_string={"path": "links/inner.md"})
    body = check_response(r, env, 200, "get inner symlink")
    assert "Link notes" in body["content"]
    before = (env.corpus / "notes" / "links.md").read_bytes()
    r = client.post("/v1/write", json={"kind": "append", "target": "links/inner.md", "content": "through a link"},
                    headers=env.auth)
    check_response(r, env, 400, "write through inner symlink")
    r2 = cli("write", "links/inner.md", "-C", env.corpus, "--content", "through a link", "--no-build")
    assert r2.exit_code == 1, r2
    assert (env.corpus / "notes" / "links.md").read_bytes() == before
    assert (env.corpus / "links" / "inner.md").is_symlink()


def test_hard_link_out_of_the_corpus_is_never_written_through(env: Env, client, cli) -> None:
    """A hard link is a corpus file (reads work, by design), but a write replaces the
    link with a new file (rename), so the file outside the corpus never changes."""
    outside = env.outside / "hard.md"
    original = outside.read_bytes()
    r = client.get("/v1/get", query_string={"path": "links/hard.md", "debug": "true"})
    body = check_response(r, env, 200, "get hard link")
    assert HARDLINK_SECRET in body["content"]
    r = client.post("/v1/write", json={"kind": "append", "target": "links/hard.md", "content": "appended over HTTP"},
                    headers=env.auth)
    check_response(r, env, 200, "append to hard link")
    r2 = cli("write", "links/hard.md", "-C", env.corpus, "--content", "appended by the CLI", "--no-build")
    assert r2.exit_code == 0, r2
    assert outside.read_bytes() == original, "a write went through a hard link out of the corpus"
    text = (env.corpus / "links" / "hard.md").read_text()
    assert "appended over HTTP" in text and "appended by the CLI" in text


@pytest.mark.parametrize("url", SITE_URLS)
def test_site_url_never_escapes_the_output_folder(url: str, env: Env, client) -> None:
    r = client.get(url)
    text = r.get_data(as_text=True)
    assert r.status_code in (301, 302, 307, 308, 400, 404), f"{url}: {r.status_code} {text[:200]}"
    assert_no_leak(text + "\n".join(f"{k}: {v}" for k, v in r.headers.items()), env, url)
    if r.status_code in (301, 302, 307, 308):
        loc = r.headers["Location"]
        assert loc.startswith("/") and not loc.startswith("//"), f"{url} redirects off-site: {loc}"
