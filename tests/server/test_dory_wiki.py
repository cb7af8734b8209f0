"""The browser wiki and its login, and `commonplace token import`, against a live
`commonplace serve` (waitress, real sockets): /wiki, /wiki/<page>, /wiki/search,
/wiki/login, /wiki/logout, `?token=` (dory-contract.md §1.2, §1.6).

The wiki is the built site mirrored under /wiki/; Dory's page URLs (`/wiki/projects/dory`
for `wiki/projects/dory.md`) redirect to it. The servers run with tokens and without
--loopback-reads, so every browser must authenticate.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from dorylive import CLI, Server
from srvkit import CORPUS, write_files

WIKI = {
    "wiki/index.md": "---\ntitle: Wiki Home\ntype: wiki\n---\n\n# Wiki Home\n\n- [[wiki/projects/dory|Dory Project]]\n",
    "wiki/projects/dory.md": "---\ntitle: Dory Project\ntype: wiki\nstatus: active\nupdated: 2026-04-19\n---\n\n"
                             "# Dory Project\n\nDory keeps durable project state.\n",
}
DORY_TOKENS = {"codex": "dory_Xx1codexcodexcodexcodexcodexcod", "hermes": "dory_Yy2hermeshermeshermeshermesher"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server with an imported Dory token file and no web password."""
    base = tmp_path_factory.mktemp("dory-wiki")
    root = write_files(base / "corpus", {**CORPUS, **WIKI})
    dory_file = base / "auth-tokens.json"
    dory_file.write_text(json.dumps(DORY_TOKENS, indent=2, sort_keys=True) + "\n", "utf-8")
    r = cli("token", "import", str(dory_file), "-C", str(root))
    assert r.returncode == 0, r.stderr
    assert "Imported 2 token(s): codex, hermes." in r.stdout
    server = Server(root, base / "site").start()
    yield server, root, base
    server.stop()


@pytest.fixture(scope="module")
def with_password(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server whose browser password comes from Dory's setting, DORY_WEB_PASSWORD."""
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("dory-wiki-pw")
    root = write_files(base / "corpus", {**CORPUS, **WIKI})
    TokenStore(root).create("api")
    server = Server(root, base / "site", env={"DORY_WEB_PASSWORD": "test-wiki-password"}).start()
    yield server
    server.stop()


def follow(server: Server, path: str, cookies: dict[str, str] | None = None, hops: int = 5) -> Any:
    """GET, following same-site redirects like a browser (cookies as given)."""
    r = server.request("GET", path, cookies=cookies)
    while r.status in (301, 302, 303, 307, 308) and hops:
        loc = r.header("Location")
        assert loc and loc.startswith("/"), loc  # never off-site
        r, hops = server.request("GET", loc, cookies=cookies), hops - 1
    return r


# --------------------------------------------------------------------------- token import


def test_token_import_keeps_dory_clients_working(site) -> None:
    server, root, base = site
    # The Dory tokens are bearer tokens now, as they were with Dory; never stored in clear.
    for token in DORY_TOKENS.values():
        assert server.request("GET", "/v1/status", token=token).status == 200
    stored = (root / ".commonplace" / "tokens.json").read_text("utf-8")
    assert not any(t in stored for t in DORY_TOKENS.values())
    assert server.request("GET", "/v1/status", token="dory_wrong").status == 401
    # Again: nothing new; the names that exist are reported, not replaced.
    r = cli("token", "import", str(base / "auth-tokens.json"), "-C", str(root), "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"imported": [], "skipped": ["codex", "hermes"]}
    empty = base / "empty.json"
    empty.write_text("\n", "utf-8")  # Dory reads an empty file as no tokens
    r = cli("token", "import", str(empty), "-C", str(root))
    assert r.returncode == 0 and "No tokens imported" in r.stdout
    for name, text in [("bad.json", "{not-json"), ("list.json", '["a"]'), ("nums.json", '{"a": 1}'),
                       ("names.json", '{"bad name": "dory_x"}')]:
        (base / name).write_text(text, "utf-8")
        before = (root / ".commonplace" / "tokens.json").read_bytes()
        r = cli("token", "import", str(base / name), "-C", str(root))
        assert r.returncode == 1 and r.stderr.strip(), (name, r.stdout, r.stderr)
        assert (root / ".commonplace" / "tokens.json").read_bytes() == before
    assert cli("token", "import", str(base / "missing.json"), "-C", str(root)).returncode == 2


# --------------------------------------------------------------------------- who may look


def test_a_browser_without_credentials_goes_to_the_login(site) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki")
    assert r.status == 303 and r.header("Location") == "/wiki/login?next=%2Fwiki"
    r = server.request("GET", "/wiki/projects/dory")
    assert r.status == 303 and r.header("Location") == "/wiki/login?next=%2Fwiki%2Fprojects%2Fdory"
    r = server.request("GET", "/wiki/search?q=durable&token=dory_wrong")
    assert r.status == 303 and r.header("Location") == "/wiki/login?next=%2Fwiki%2Fsearch%3Fq%3Ddurable"
    for path in ("/wiki/", "/wiki/_/static/style.css", "/wiki/people/alex/", "/wiki/search?q=x"):
        assert server.request("GET", path).status == 303, path
    assert server.request("GET", "/wiki", cookies={"dory_token": "dory_wrong"}).status == 303
    assert server.request("GET", "/wiki", token="dory_wrong").status == 401  # a bad bearer is refused


def test_token_parameter_becomes_a_cookie_and_leaves_the_address_bar(site) -> None:
    server, _, _ = site
    token = DORY_TOKENS["codex"]
    r = server.request("GET", f"/wiki/projects/dory?token={token}&h=state")
    assert r.status == 303 and r.header("Location") == "/wiki/projects/dory?h=state"
    assert set(r.cookies()) == {"dory_token"}
    header = next(v for k, v in r.headers if k.lower() == "set-cookie")
    for attr in ("HttpOnly", "Path=/wiki", "SameSite=Lax", "Max-Age=2592000"):
        assert attr in header
    assert token not in r.text and token not in header  # the cookie names the token, it does not hold it
    page = follow(server, "/wiki/projects/dory", cookies=r.cookies())
    assert page.status == 200 and "Dory Project" in page.text and "durable project state" in page.text
    assert token not in page.text
    # The token itself, or an altered cookie, is no cookie.
    assert server.request("GET", "/wiki/", cookies={"dory_token": token}).status == 303
    value = r.cookies()["dory_token"]
    assert server.request("GET", "/wiki/", cookies={"dory_token": value[:-3] + "AAA"}).status == 303


def test_bearer_header_reads_the_wiki(site) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki/people/alex/", token=DORY_TOKENS["hermes"])
    assert r.status == 200 and "Alex Kim" in r.text


# --------------------------------------------------------------------------- pages


def browser_cookie(server: Server, token: str) -> dict[str, str]:
    r = server.request("GET", f"/wiki/?token={token}")
    assert r.status == 303, r.text
    return r.cookies()


@pytest.fixture
def cookie(site) -> dict[str, str]:
    return browser_cookie(site[0], DORY_TOKENS["codex"])


def test_dory_urls_lead_to_the_built_pages(site, cookie) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki", cookies=cookie)
    assert r.status == 302 and r.header("Location") == "/wiki/wiki/index/"  # Dory's home: wiki/index.md
    home = follow(server, "/wiki", cookies=cookie)
    assert home.status == 200 and "Wiki Home" in home.text and "text/html" in home.header("Content-Type")
    for path, where in [("/wiki/projects/dory", "/wiki/wiki/projects/dory/"),
                        ("/wiki/projects/dory.md", "/wiki/wiki/projects/dory/"),
                        ("/wiki/wiki/projects/dory", "/wiki/wiki/projects/dory/"),
                        ("/wiki/people/alex", "/wiki/people/alex/"),
                        ("/wiki/projects/atlas/state", "/wiki/projects/atlas/state/")]:
        r = server.request("GET", path, cookies=cookie)
        assert r.status == 302 and r.header("Location") == where, (path, r.status, r.header("Location"))
    page = server.request("GET", "/wiki/wiki/projects/dory/", cookies=cookie)
    assert page.status == 200 and "Dory Project" in page.text
    assert page.header("Cache-Control") == "private, no-store"
    assert "script-src 'self'" in page.header("Content-Security-Policy")
    # Every relative link and asset of the page stays under /wiki/ and is served there.
    refs = re.findall(r'(?:href|src)="([^"#:]+)"', page.text)
    assert refs
    for ref in refs:
        url = urllib.parse.urljoin("/wiki/wiki/projects/dory/", ref)
        assert url.startswith("/wiki/"), ref
    css = server.request("GET", urllib.parse.urljoin("/wiki/wiki/projects/dory/",
                                                     re.search(r'href="([^"]+style\.css)"', page.text).group(1)),
                         cookies=cookie)
    assert css.status == 200 and "text/css" in css.header("Content-Type")
    site_home = server.request("GET", "/wiki/", cookies=cookie)
    assert site_home.status == 200 and "<html" in site_home.text


def test_wiki_search_answers_from_the_index(site, cookie) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki/search?q=durable", cookies=cookie)
    assert r.status == 200 and "text/html" in r.header("Content-Type")
    assert "wiki/projects/dory.md" in r.text and 'href="/wiki/wiki/projects/dory/"' in r.text
    assert "<mark>durable</mark>" in r.text
    hostile = server.request("GET", "/wiki/search?q=" + urllib.parse.quote('<script>alert(1)</script>'),
                             cookies=cookie)
    assert hostile.status == 200 and "<script>alert" not in hostile.text
    assert server.request("GET", "/wiki/search?q=" + "a" * 5000, cookies=cookie).status == 200
    empty = server.request("GET", "/wiki/search", cookies=cookie)
    assert empty.status == 200 and 'name="q"' in empty.text


@pytest.mark.parametrize("path", ["/wiki/%2E%2E/core/user", "/wiki/..%2F..%2Fetc/passwd",
                                  "/wiki/.commonplace/tokens.json", "/wiki/people/.hidden",
                                  "/wiki/people/alex%5C..", "/wiki/a%00b"])
def test_wiki_paths_never_escape(site, cookie, path: str) -> None:
    server, _, _ = site
    r = server.request("GET", path, cookies=cookie)
    assert r.status == 400, (path, r.status)
    assert "tokens" not in r.text and "sha256:" not in r.text


def test_missing_page_is_a_404_page(site, cookie) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki/nothing/here", cookies=cookie)
    assert r.status == 404 and "text/html" in r.header("Content-Type")
    assert 'href="./' not in r.text  # its links point under /wiki/


# --------------------------------------------------------------------------- login


def test_login_without_a_password_configured(site) -> None:
    server, _, _ = site
    form = server.request("GET", "/wiki/login")
    assert form.status == 200 and 'type="password"' in form.text and "?token=" in form.text
    r = server.request("POST", "/wiki/login", form={"password": "x", "next": "/wiki"})
    assert r.status == 503 and "not configured" in r.json()["detail"]


def test_password_login_sets_a_signed_session_cookie(with_password) -> None:
    server = with_password
    redirect = server.request("GET", "/wiki/projects/dory")
    assert redirect.status == 303 and redirect.header("Location") == "/wiki/login?next=%2Fwiki%2Fprojects%2Fdory"
    form = server.request("GET", "/wiki/login?next=%2Fwiki%2Fprojects%2Fdory")
    assert form.status == 200 and 'type="password"' in form.text and 'value="/wiki/projects/dory"' in form.text
    bad = server.request("POST", "/wiki/login", form={"password": "wrong", "next": "/wiki/projects/dory"})
    assert bad.status == 401 and "Invalid password." in bad.text and not bad.cookies()
    good = server.request("POST", "/wiki/login", form={"password": "test-wiki-password", "next": "/wiki/projects/dory"})
    assert good.status == 303 and good.header("Location") == "/wiki/projects/dory"
    session = good.cookies()["dory_web_session"]
    assert session and "test-wiki-password" not in session
    page = follow(server, "/wiki/projects/dory", cookies={"dory_web_session": session})
    assert page.status == 200 and "Dory Project" in page.text
    # A forged or altered session is no session.
    for forged in (session[:-2] + ("AA" if not session.endswith("AA") else "BB"), "MTAwOmFiYw", "x" * 300):
        assert server.request("GET", "/wiki/", cookies={"dory_web_session": forged}).status == 303
    # The session opens the wiki only, not the API.
    assert server.request("GET", "/v1/status", cookies={"dory_web_session": session}).status == 401


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/v1/status", "/wikix/../v1",
                                    "/wiki/../v1/status", "/wiki\r\nSet-Cookie: a=b", ""])
def test_login_only_redirects_into_the_wiki(with_password, target: str) -> None:
    r = with_password.request("POST", "/wiki/login", form={"password": "test-wiki-password", "next": target})
    assert r.status == 303 and r.header("Location") == "/wiki", (target, r.header("Location"))


def test_logout_clears_both_cookies(site) -> None:
    server, _, _ = site
    r = server.request("GET", "/wiki/logout", cookies=browser_cookie(server, DORY_TOKENS["codex"]))
    assert r.status == 303 and r.header("Location") == "/wiki/login"
    assert r.cookies() == {"dory_token": "", "dory_web_session": ""}
    assert all("Path=/wiki" in v for k, v in r.headers if k.lower() == "set-cookie")


def test_a_revoked_token_closes_the_wiki_at_once(site) -> None:
    server, root, _ = site
    cookies = browser_cookie(server, DORY_TOKENS["hermes"])
    assert server.request("GET", "/wiki/", cookies=cookies).status == 200
    assert cli("token", "revoke", "hermes", "-C", str(root)).returncode == 0
    time.sleep(0.05)
    assert server.request("GET", "/wiki/", cookies=cookies).status == 303


# --------------------------------------------------------------------------- policy, in-process


def test_local_clients_of_an_open_loopback_server_need_no_login(make_app) -> None:
    for flags, status in [({"loopback_reads": True}, 200), ({"no_auth": True}, 200), ({"loopback_reads": False}, 303)]:
        app = make_app(**flags)
        client = app.test_client()
        r = client.get("/wiki/", environ_base={"REMOTE_ADDR": "127.0.0.1"})
        assert r.status_code == status, (flags, r.status_code)
        remote = client.get("/wiki/", environ_base={"REMOTE_ADDR": "127.0.0.1"},
                            headers={"X-Forwarded-For": "203.0.113.9"})
        assert remote.status_code == 303, flags  # relayed by a proxy: not local


def test_session_cookies_expire_and_the_commonplace_setting_wins(monkeypatch) -> None:
    from commonplace.server.routes import wiki

    now = time.time()
    cookie = wiki.issue_session("pw", now=now - 31 * 24 * 3600)
    assert not wiki.session_valid(cookie, "pw", now=now)
    assert wiki.session_valid(wiki.issue_session("pw", now=now - 3600), "pw", now=now)
    assert not wiki.session_valid(wiki.issue_session("pw", now=now + 3600), "pw", now=now)  # from the future
    assert not wiki.session_valid(wiki.issue_session("pw"), "other")
    monkeypatch.setenv("DORY_WEB_PASSWORD", "dory")
    monkeypatch.setenv("COMMONPLACE_WEB_PASSWORD", "mine")
    assert wiki.web_password() == "mine"


def test_token_cookies_expire_and_end_with_the_token() -> None:
    from types import SimpleNamespace

    from commonplace.server.routes import wiki

    now = time.time()
    old, new = SimpleNamespace(name="a", hash="sha256:" + "0" * 64), SimpleNamespace(name="a", hash="sha256:" + "1" * 64)
    cookie = wiki.token_cookie("a", old.hash, now=now)
    assert wiki.token_cookie_name(cookie, [old], now=now) == "a"
    assert wiki.token_cookie_name(cookie, [new], now=now) is None  # revoked and re-created under the same name
    assert wiki.token_cookie_name(cookie, [], now=now) is None
    assert wiki.token_cookie_name(wiki.token_cookie("a", old.hash, now=now - 31 * 24 * 3600), [old], now=now) is None
