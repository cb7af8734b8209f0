"""The browser wiki at `/wiki`: the built site, mirrored under `/wiki/`, behind a browser
login (dory-contract.md §1.2 and §1.6).

Pages: `/wiki/<rel>` serves `<out>/<rel>` (so `/wiki/people/alex/` is the page of
`people/alex.md` and every relative link and asset of the site works under /wiki/).
Dory's page URLs redirect there: `/wiki/<page>` (no trailing slash, `.md` optional) goes
to the page of `wiki/<page>.md` when the corpus has one (Dory's compiled wiki), else of
`<page>.md`; `/wiki` goes to `wiki/index.md`'s page, else to the site's home.
`/wiki/search?q=` answers from the search engine, server-side.

Who may look (Dory's order): a bearer token (checked by the guard); `--no-auth` or
`--loopback-reads` for a client on this machine of a loopback server; the signed session
cookie `/wiki/login` sets when a web password is configured (COMMONPLACE_WEB_PASSWORD, or
Dory's DORY_WEB_PASSWORD); a `?token=` query parameter, which is checked, stored in an
HttpOnly cookie (holding the token's name and a signature, not the token) and then
removed from the address bar by a redirect; that cookie. Anyone else gets 303 to
`/wiki/login?next=<path>`. Cookie names are Dory's (`dory_token`, `dory_web_session`),
scoped to /wiki, SameSite=Lax, 30 days. Wrong passwords are throttled and logging out ends
the cookies on the server (routes/wiki_guard.py).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, g, redirect, request, send_file
from markupsafe import escape

from ..context import state
from ..errors import ApiError
from ..tokens import TokenError
from .guard import client_address, is_local_client, request_is_secure
from .wiki_guard import LoginThrottle, Logouts
from .pages import _headers, _safe_file

wiki = Blueprint("wiki", __name__)

TOKEN_COOKIE = "dory_token"
SESSION_COOKIE = "dory_web_session"
PASSWORD_ENV = ("COMMONPLACE_WEB_PASSWORD", "DORY_WEB_PASSWORD")
COOKIE_AGE = 30 * 24 * 3600
_SESSION_SKEW = 300  # seconds a session may claim to be from the future (clock drift)
_NEXT = re.compile(r"^/wiki(?:[/?#][^\s\\\x00-\x1f\x7f]*)?$")
MAX_QUERY = 500


# --------------------------------------------------------------------------- auth


def web_password() -> str:
    for name in PASSWORD_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


def _sign(issued: str, password: str) -> str:
    key = hashlib.sha256(("commonplace-web-session:" + password).encode("utf-8")).digest()
    return hmac.new(key, issued.encode("ascii"), hashlib.sha256).hexdigest()


def issue_session(password: str, now: float | None = None) -> str:
    # A random part makes each login's cookie its own, so logging one out ends only it.
    issued = f"{int(now if now is not None else time.time())}-{secrets.token_hex(8)}"
    raw = f"{issued}:{_sign(issued, password)}".encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def session_valid(value: str, password: str, now: float | None = None) -> bool:
    if not value or not password or len(value) > 200:
        return False
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("ascii")
        issued, sig = raw.split(":", 1)
        stamp = int(issued.split("-", 1)[0])
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    now = now if now is not None else time.time()
    if not now - COOKIE_AGE <= stamp <= now + _SESSION_SKEW:
        return False
    return hmac.compare_digest(sig.encode("ascii", "replace"), _sign(issued, password).encode("ascii"))


def token_cookie(name: str, token_hash: str, now: float | None = None) -> str:
    """The `dory_token` cookie for a token that came as `?token=`: its name, the time and
    an HMAC keyed with the token's stored hash, never the token itself (a response never
    carries a token). Revoking or replacing the token ends it; so do 30 days."""
    issued = str(int(now if now is not None else time.time()))
    sig = hmac.new(token_hash.encode("ascii"), f"web-token:{name}:{issued}".encode("utf-8"), hashlib.sha256).hexdigest()
    return base64.urlsafe_b64encode(f"{name}:{issued}:{sig}".encode("utf-8")).decode("ascii").rstrip("=")


def token_cookie_name(value: str, tokens: list[Any], now: float | None = None) -> str | None:
    """The token name a `dory_token` cookie stands for, if it is still good."""
    if not value or len(value) > 400:
        return None
    try:
        name, issued, sig = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("utf-8").split(":")
        stamp = int(issued)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    now = now if now is not None else time.time()
    if not now - COOKIE_AGE <= stamp <= now + _SESSION_SKEW:
        return None
    info = next((t for t in tokens if t.name == name), None)
    if info is None:
        return None
    expected = token_cookie(name, info.hash, stamp)
    return name if hmac.compare_digest(value.encode("ascii", "replace"), expected.encode("ascii")) else None


def safe_next(value: Any) -> str:
    """Where a login may send the browser: a /wiki path of this server, else /wiki."""
    ok = isinstance(value, str) and _NEXT.match(value) and "/." not in value.split("?", 1)[0]
    return value if ok else "/wiki"


def _here_without_token() -> str:
    query = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
    return request.path + ("?" + urlencode(query) if query else "")


def _cookie(resp: Response, name: str, value: str) -> None:
    resp.set_cookie(name, value, max_age=COOKIE_AGE, path="/wiki", httponly=True, samesite="Lax",
                    secure=request_is_secure())


def authorize() -> Response | None:
    """None when this browser may look; else the answer to send (a redirect)."""
    st = state()
    cfg = st.config
    if getattr(g, "actor", None):
        return None  # a bearer token the guard verified
    if cfg.loopback and (cfg.no_auth or cfg.loopback_reads) and is_local_client():
        return None
    password = web_password()
    session = request.cookies.get(SESSION_COOKIE, "")
    if password and session_valid(session, password) and not _logouts().ended(session):
        return None
    try:
        st.tokens.configured()
    except TokenError:
        raise ApiError(503, "invalid_token_file", "invalid auth token configuration: .commonplace/tokens.json "
                                                  "cannot be read; fix or remove it (`commonplace token list`)") from None
    presented = request.args.get("token", "").strip()
    name = st.tokens.verify(presented) if presented else None
    if name is not None:
        # Remember this browser in an HttpOnly cookie; take the token out of the address bar.
        info = next(t for t in st.tokens.list() if t.name == name)
        resp = redirect(_here_without_token(), code=303)
        _cookie(resp, TOKEN_COOKIE, token_cookie(name, info.hash))
        return _private(resp)
    cookie = request.cookies.get(TOKEN_COOKIE, "").strip()
    if cookie and token_cookie_name(cookie, st.tokens.list()) and not _logouts().ended(cookie):
        return None
    return _private(redirect("/wiki/login?" + urlencode({"next": safe_next(_here_without_token())}), code=303))


_THROTTLE = "commonplace.login_throttle"
_LOGOUTS = "commonplace.logouts"


def _throttle() -> LoginThrottle:
    from flask import current_app

    return current_app.extensions.setdefault(_THROTTLE, LoginThrottle())


def _logouts() -> Logouts:
    from flask import current_app

    found = current_app.extensions.get(_LOGOUTS)
    if found is None:
        from commonplace.compiler.model import STATE_DIR

        found = current_app.extensions.setdefault(_LOGOUTS, Logouts(state().root / STATE_DIR))
    return found


def _private(resp: Response) -> Response:
    resp.headers["Cache-Control"] = "private, no-store"
    return _headers(resp)


# --------------------------------------------------------------------------- pages


_BAD_PART = re.compile(r"[\x00-\x1f\x7f\\%]")


def _check_rel(rel: str) -> None:
    parts = rel.split("/")
    if rel.startswith("/") or _BAD_PART.search(rel) or any(p in (".", "..") or p.startswith(".") for p in parts):
        raise ApiError(400, "invalid_wiki_path", "invalid wiki path")


def _send(target: Path, status: int = 200) -> Response:
    import mimetypes

    mimetype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if target.suffix == ".js":
        mimetype = "text/javascript"
    resp = send_file(os.fspath(target), mimetype=mimetype, conditional=True, etag=True, max_age=0)
    return _private(resp)


def _page_file(out: Path, base: str) -> Path | None:
    """The built page of document `<base>.md` (`<out>/<base>/index.html`), if there is one."""
    target = _safe_file(out, base + "/index.html")
    return target if target is not None and target.is_file() else None


def not_found() -> Response:
    page = state().out / "404.html"
    if page.is_file():
        # The 404 page's links are relative to the site root: point them at /wiki/.
        data = page.read_bytes()
        for attr in (b"href", b"src", b"action"):
            data = data.replace(attr + b'="./', attr + b'="/wiki/').replace(attr + b'="/_/', attr + b'="/wiki/_/')
        resp = Response(data, status=404, mimetype="text/html")
    else:
        resp = Response("<!doctype html><title>Not found</title><h1>Not found</h1>\n", status=404,
                        mimetype="text/html")
    return _private(resp)


@wiki.route("/wiki", methods=["GET"])
def home() -> Any:
    deny = authorize()
    if deny is not None:
        return deny
    out = state().out
    if request.path.endswith("/"):
        index = _safe_file(out, "index.html")
        return _send(index) if index is not None and index.is_file() else not_found()
    # Dory's home is its compiled wiki's index page; without one, the site's home.
    return redirect("/wiki/wiki/index/" if _page_file(out, "wiki/index") else "/wiki/", code=302)


@wiki.route("/wiki/<path:page>", methods=["GET"])
def page(page: str) -> Any:
    deny = authorize()
    if deny is not None:
        return deny
    _check_rel(page)
    out = state().out
    target = _safe_file(out, page)
    if target is None:
        raise ApiError(400, "invalid_wiki_path", "invalid wiki path")
    if target.is_file():
        return _send(target)
    if page.endswith("/"):
        index = target / "index.html"
        return _send(index) if index.is_file() else not_found()
    base = page[:-3] if page.endswith(".md") else page
    for candidate in (f"wiki/{base}", base):
        if _page_file(out, candidate) is not None:
            return redirect(f"/wiki/{candidate}/", code=302)
    if target.is_dir() and (target / "index.html").is_file():
        return redirect(f"/wiki/{page}/", code=302)
    return not_found()


# --------------------------------------------------------------------------- search


def _page_href(path: str) -> str:
    base = path[:-3] if path.endswith(".md") else path
    return f"/wiki/{base}/"


def _marked(snippet: str) -> str:
    """The snippet as HTML: escaped, with the engine's **matched words** as <mark>."""
    return re.sub(r"\*\*(.+?)\*\*", r"<mark>\1</mark>", str(escape(snippet)))


def _shell(title: str, body: str, status: int = 200, styled: bool = True) -> Response:
    """A small page of its own (search results, login). Behind the login it uses the site's
    stylesheet; the login page cannot (the stylesheet is behind the login too)."""
    css = '<link rel="stylesheet" href="/wiki/_/static/style.css">' if styled else ""
    html = ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title>{css}</head><body>"
            f"<main id=\"main\" style=\"{_LAYOUT}\">{body}</main></body></html>\n")
    return _private(Response(html, status=status, mimetype="text/html"))


_LAYOUT = "max-width:44rem;margin:3rem auto;padding:0 1rem;font-family:system-ui,sans-serif;line-height:1.5"


@wiki.route("/wiki/search", methods=["GET"])
def search() -> Any:
    deny = authorize()
    if deny is not None:
        return deny
    q = request.args.get("q", "")[:MAX_QUERY].strip()
    form = (f'<form action="/wiki/search" method="get" role="search"><input type="search" name="q" '
            f'value="{escape(q)}" aria-label="Search" autofocus> <button>Search</button></form>'
            '<p><a href="/wiki">Wiki home</a></p>')
    if not q:
        return _shell("Search", "<h1>Search</h1>" + form)
    items, error = [], None
    try:
        st = state()
        if not st.ready:
            raise RuntimeError("the server is still starting")
        answer = st.live.search({"query": q, "k": 50, "corpus": "durable"})
        items = answer.get("results", []) if isinstance(answer, dict) else []
    except Exception as exc:  # noqa: BLE001 - the page says so instead of failing
        error = "Search is not available right now" + (f" ({exc})" if isinstance(exc, RuntimeError) else "") + "."
    hits = []
    for r in items:
        path = str(r.get("path", ""))
        title = r.get("title") or path
        hits.append(f'<li><a href="{escape(_page_href(path))}">{escape(title)}</a> '
                    f'<small><code>{escape(path)}</code></small><br>{_marked(r.get("snippet") or "")}</li>')
    summary = f'<p role="alert">{escape(error)}</p>' if error else f"<p>{len(hits)} results.</p>"
    return _shell(f"Search: {q}", f"<h1>Search: {escape(q)}</h1>" + form + summary + "<ol>" + "".join(hits) + "</ol>")


# --------------------------------------------------------------------------- login


def _login_page(next_path: str, error: str | None = None, status: int = 200) -> Response:
    note = ""
    if not web_password():
        note = ("<p>No web password is set on this server (COMMONPLACE_WEB_PASSWORD). Open a wiki page with "
                "<code>?token=&lt;your API token&gt;</code> instead.</p>")
    err = f'<p role="alert"><strong>{escape(error)}</strong></p>' if error else ""
    body = ("<h1>Sign in</h1>" + err + note +
            '<form method="post" action="/wiki/login">'
            f'<input type="hidden" name="next" value="{escape(next_path)}">'
            '<label>Password <input type="password" name="password" autocomplete="current-password" '
            'autofocus required></label> <button>Sign in</button></form>')
    return _shell("Sign in", body, status, styled=False)


@wiki.route("/wiki/login", methods=["GET", "POST"])
def login() -> Any:
    if request.method == "GET":
        return _login_page(safe_next(request.args.get("next", "/wiki")))
    next_path = safe_next(request.form.get("next", "/wiki"))
    password = web_password()
    if not password:
        raise ApiError(503, "web_password_not_configured",
                       "COMMONPLACE_WEB_PASSWORD (or DORY_WEB_PASSWORD) is not configured on this server")
    who = client_address() or "behind-the-proxy"
    wait = _throttle().wait(who)
    if wait:
        resp = _login_page(next_path, f"Too many wrong passwords; try again in {wait} s.", 429)
        resp.headers["Retry-After"] = str(wait)
        return resp
    given = request.form.get("password", "")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), password.encode("utf-8")):
        _throttle().failed(who)
        return _login_page(next_path, "Invalid password.", 401)
    _throttle().succeeded(who)
    resp = redirect(next_path, code=303)
    _cookie(resp, SESSION_COOKIE, issue_session(password))
    return _private(resp)


@wiki.route("/wiki/logout", methods=["GET"])
def logout() -> Any:
    # End the cookies on the server too: a copy of one must not outlive the logout.
    _logouts().end([request.cookies.get(SESSION_COOKIE, ""), request.cookies.get(TOKEN_COOKIE, "").strip()],
                   until=time.time() + COOKIE_AGE + _SESSION_SKEW)
    resp = redirect("/wiki/login", code=303)
    for name in (TOKEN_COOKIE, SESSION_COOKIE):
        resp.delete_cookie(name, path="/wiki", httponly=True, samesite="Lax", secure=request_is_secure())
    return _private(resp)
