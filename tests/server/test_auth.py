"""Tokens and the auth policy; Host and Origin checks."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from commonplace.server.tokens import TokenError, TokenStore, hash_token

REMOTE = {"REMOTE_ADDR": "192.0.2.7"}


def note(target: str) -> dict:
    """A write Dory accepts: an append that creates its file with title and type."""
    return {"kind": "append", "target": target, "content": "x", "frontmatter": {"title": "Note", "type": "capture"}}


def test_token_store_hashes(corpus: Path) -> None:
    store = TokenStore(corpus)
    tok = store.create("laptop")
    assert tok.startswith("cp_") and len(tok) > 40
    raw = (corpus / ".commonplace/tokens.json").read_text()
    assert tok not in raw and hash_token(tok) in raw
    assert stat.S_IMODE(os.stat(corpus / ".commonplace/tokens.json").st_mode) == 0o600
    assert store.verify(tok) == "laptop"
    assert store.verify(tok + "x") is None and store.verify("") is None and store.verify(None) is None
    with pytest.raises(TokenError):
        store.create("laptop")
    with pytest.raises(TokenError):
        store.create("bad name/../x")
    listed = json.dumps([t.public() for t in store.list()])
    assert tok not in listed and hash_token(tok) not in listed
    assert store.revoke("laptop") and not store.revoke("laptop")
    assert store.verify(tok) is None


def test_token_store_sees_changes_from_other_processes(corpus: Path) -> None:
    a, b = TokenStore(corpus), TokenStore(corpus)
    assert not a.has_tokens()
    tok = b.create("x")
    assert a.verify(tok) == "x"
    b.revoke("x")
    assert a.verify(tok) is None


def test_loopback_reads_without_token(client) -> None:
    assert client.post("/v1/search", json={"query": "Alex"}).status_code == 200
    assert client.get("/v1/get?path=people/alex.md").status_code == 200
    assert client.get("/").status_code == 200


def test_writes_need_a_token(client, auth, corpus: Path) -> None:
    body = {"kind": "create", "target": "inbox/t.md", "content": "x", "frontmatter": {"title": "T", "type": "capture"}}
    r = client.post("/v1/write", json=body)
    assert r.status_code == 401 and r.get_json()["error"]["type"] == "authentication_error"
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert not (corpus / "inbox/t.md").exists()
    r = client.post("/v1/memory-write", json={"action": "write", "kind": "fact", "subject": "Alex", "content": "x"})
    assert r.status_code == 401
    r = client.post("/v1/write", json=body, headers=auth)
    assert r.status_code == 200


def test_writes_without_any_token_explain_how(client) -> None:
    r = client.post("/v1/write", json=note("inbox/t.md"))
    assert r.status_code == 401 and "token new" in r.get_json()["error"]["message"]
    assert "authentication is required" in r.get_json()["detail"]  # Dory's words, which its clients show


def test_dory_policy_every_v1_request_needs_a_token(make_app, auth, corpus: Path) -> None:
    """Without --loopback-reads (the default), tokens configured: every /v1 route but
    /v1/openapi.json needs one, from any client, as Dory does."""
    c = make_app(loopback_reads=False).test_client()
    for method, url, body in (("post", "/v1/search", {"query": "x"}), ("get", "/v1/get?path=people/alex.md", None),
                              ("get", "/v1/status", None), ("get", "/v1/tools", None),
                              ("post", "/v1/wake", {"agent": "a"}), ("get", "/metrics", None)):
        r = getattr(c, method)(url, json=body) if body is not None else getattr(c, method)(url)
        assert r.status_code == 401 and r.get_json()["detail"] == "missing bearer token", url
        r = getattr(c, method)(url, json=body, headers={"Authorization": "Bearer nope"}) if body is not None else \
            getattr(c, method)(url, headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.get_json()["detail"] == "invalid bearer token", url
    assert c.get("/v1/status", headers=auth).status_code == 200
    assert c.get("/healthz").status_code == 200 and c.get("/v1/openapi.json").status_code == 200
    assert c.get("/").status_code == 200  # the built site stays open to this machine


def test_dory_policy_no_tokens_is_401_and_a_corrupt_file_is_503(make_app, corpus: Path) -> None:
    c = make_app(loopback_reads=False).test_client()
    r = c.get("/v1/status")
    assert r.status_code == 401 and r.get_json()["detail"].startswith("authentication is required")
    path = corpus / ".commonplace/tokens.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not-json", encoding="utf-8")
    for headers in ({}, {"Authorization": "Bearer anything"}):
        r = c.get("/v1/status", headers=headers)
        assert r.status_code == 503 and "invalid auth token configuration" in r.get_json()["detail"]
        assert str(corpus) not in r.get_data(as_text=True)


def test_token_import_reads_a_dory_token_file(corpus: Path, tmp_path: Path, make_app) -> None:
    dory = tmp_path / "auth-tokens.json"
    dory.write_text(json.dumps({"codex": "dory_abc123", "hermes": "dory_xyz789"}), encoding="utf-8")
    store = TokenStore(corpus)
    assert store.import_dory(dory) == ["codex", "hermes"]
    assert store.import_dory(dory) == []  # names already present are kept as they are
    assert "dory_abc123" not in (corpus / ".commonplace/tokens.json").read_text()
    c = make_app(loopback_reads=False).test_client()
    r = c.get("/v1/status", headers={"Authorization": "Bearer dory_xyz789"})
    assert r.status_code == 200
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(TokenError):
        store.import_dory(bad)


def test_invalid_token_is_401_even_for_reads(client, auth) -> None:
    bad = {"Authorization": "Bearer cp_wrong"}
    assert client.post("/v1/search", json={"query": "x"}, headers=bad).status_code == 401
    assert client.get("/v1/status", headers={"Authorization": "Basic abc"}).status_code == 401
    assert client.get("/v1/status", headers={"Authorization": "Bearer"}).status_code == 401
    assert client.get("/v1/status", headers=auth).status_code == 200


def test_token_not_accepted_in_url(client, token: str) -> None:
    r = client.post(f"/v1/write?token={token}&access_token={token}", json={"target": "inbox/q.md", "content": "x"})
    assert r.status_code == 401


def test_no_auth_allows_loopback_writes_only(make_app, corpus: Path) -> None:
    c = make_app(no_auth=True).test_client()
    assert c.post("/v1/write", json=note("inbox/na.md")).status_code == 200
    r = c.post("/v1/write", json=note("inbox/na2.md"), environ_base=REMOTE)
    assert r.status_code == 401


def test_non_loopback_bind_needs_tokens_for_reads(make_app, auth) -> None:
    c = make_app(host="0.0.0.0").test_client()
    r = c.post("/v1/search", json={"query": "x"}, environ_base=REMOTE)
    assert r.status_code == 401
    assert c.get("/", environ_base=REMOTE).status_code == 401
    assert c.get("/healthz", environ_base=REMOTE).status_code == 200
    assert c.get("/v1/tools", environ_base=REMOTE).status_code == 401
    assert c.get("/v1/openapi.json", environ_base=REMOTE).status_code == 200
    assert c.post("/v1/search", json={"query": "x"}, headers=auth, environ_base=REMOTE).status_code == 200
    # Even a loopback client needs a token when the server listens on the network.
    assert c.post("/v1/search", json={"query": "x"}).status_code == 401
    # --no-auth is ignored on a non-loopback bind.
    c2 = make_app(host="0.0.0.0", no_auth=True).test_client()
    assert c2.post("/v1/write", json=note("inbox/z.md")).status_code == 401


def test_remote_client_of_loopback_bind_needs_token(client, auth) -> None:
    assert client.post("/v1/search", json={"query": "x"}, environ_base=REMOTE).status_code == 401
    assert client.post("/v1/search", json={"query": "x"}, headers=auth, environ_base=REMOTE).status_code == 200


def test_token_never_in_responses(client, auth, token: str) -> None:
    for r in (client.get("/v1/status", headers=auth), client.get("/v1/tools"), client.get("/v1/openapi.json"),
              client.post("/v1/search", json={"query": "token"}, headers=auth),
              client.post("/v1/write", json={"target": "inbox/tok.md", "content": "x"},
                          headers={"Authorization": "Bearer " + token[:-1]}),
              client.get("/v1/status", headers={"Authorization": "Bearer " + token[:-1]})):
        text = r.get_data(as_text=True)
        assert token not in text and token[:-1] not in text.replace(token[:8], "")
        assert hash_token(token) not in text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8766", "127.0.0.1.nip.io", "attacker.localhost.evil.com",
                                  "", "bad host", "localhost/../x"])
def test_host_check(client, host: str) -> None:
    r = client.get("/v1/status", headers={"Host": host})
    assert r.status_code == 400


@pytest.mark.parametrize("host", ["localhost", "localhost:8766", "127.0.0.1:8766", "[::1]:8766", "127.0.0.1"])
def test_loopback_hosts_allowed(client, host: str) -> None:
    assert client.get("/v1/status", headers={"Host": host}).status_code == 200


def test_allowed_hosts_for_network_bind(make_app, auth) -> None:
    c = make_app(host="0.0.0.0", allowed_hosts=["memory.example"]).test_client()
    assert c.get("/healthz", headers={"Host": "memory.example"}, environ_base=REMOTE).status_code == 200
    assert c.get("/healthz", headers={"Host": "other.example"}, environ_base=REMOTE).status_code == 400


def test_cross_origin_requests_refused(open_client, corpus: Path) -> None:
    r = open_client.post("/v1/write", json=note("inbox/csrf.md"), headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and r.get_json()["error"]["type"] == "permission_error"
    r = open_client.post("/v1/write", data="{\"target\": \"inbox/csrf.md\", \"content\": \"x\"}",
                         headers={"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert not (corpus / "inbox/csrf.md").exists()
    # Same origin (the site's own search box) is fine.
    r = open_client.post("/v1/search", json={"query": "x"}, headers={"Origin": "http://localhost"})
    assert r.status_code == 200
    r = open_client.post("/v1/search", json={"query": "x"}, headers={"Origin": "null"})
    assert r.status_code == 403


def test_proxied_loopback_requests_are_remote(client, auth) -> None:
    for h in ({"X-Forwarded-For": "203.0.113.9"}, {"Forwarded": "for=203.0.113.9"}, {"X-Real-IP": "203.0.113.9"}):
        assert client.post("/v1/search", json={"query": "x"}, headers=h).status_code == 401
        assert client.post("/v1/search", json={"query": "x"}, headers={**h, **auth}).status_code == 200
