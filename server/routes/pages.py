"""Serving the built site at `/`.

Pretty URLs: `/people/alex/` serves `people/alex/index.html`; `/people/alex` redirects to
the slash form (so the page's relative links work); `/people/alex.md` redirects to the page
of that document. Nothing outside the output folder is ever served: hidden parts (`.x`),
`..`, backslashes, NUL and encoded separators are 404, and the resolved file (after
symlinks) must still be inside the output folder.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, redirect, request, send_file

from ..context import state

pages = Blueprint("pages", __name__)

_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def _safe_file(out: Path, rel: str) -> Path | None:
    if "\x00" in rel or "\\" in rel or "%" in rel:
        return None
    parts = [p for p in rel.split("/") if p != ""]
    if any(p.startswith(".") or p in ("..", ".") for p in parts):
        return None
    full = out.joinpath(*parts) if parts else out
    try:
        real = full.resolve()
        real.relative_to(out)
        os.stat(real)  # a name too long for the filesystem (ENAMETOOLONG) is simply absent
    except FileNotFoundError:
        pass
    except (ValueError, OSError, RuntimeError):
        return None
    return real


def _headers(resp: Response) -> Response:
    resp.headers.setdefault("Content-Security-Policy", _CSP)
    resp.headers.setdefault("X-Frame-Options", "DENY")
    return resp


def not_found_page() -> Response:
    st = state()
    page = st.out / "404.html"
    if page.is_file():
        # The page finds the site root itself (its links work at any depth), so no <base>:
        # the CSP's base-uri 'none' would refuse one anyway.
        resp = Response(page.read_bytes(), status=404, mimetype="text/html")
    else:
        resp = Response("<!doctype html><title>Not found</title><h1>Not found</h1>\n", status=404,
                        mimetype="text/html")
    return _headers(resp)


@pages.route("/", defaults={"rel": ""}, methods=["GET", "HEAD"])
@pages.route("/<path:rel>", methods=["GET", "HEAD"])
def serve(rel: str) -> Any:
    st = state()
    if rel.startswith("v1/") or rel == "v1":
        from flask import current_app
        from werkzeug.exceptions import MethodNotAllowed

        from ..errors import ApiError

        methods = sorted({m for r in current_app.url_map.iter_rules() if r.rule == "/" + rel.rstrip("/")
                          for m in (r.methods or ()) if m not in ("HEAD", "OPTIONS")})
        if methods:
            raise MethodNotAllowed(valid_methods=methods)
        raise ApiError(404, "not_found", "no such route; see GET /v1/openapi.json")
    out = st.out
    target = _safe_file(out, rel)
    if target is None:
        return not_found_page()
    if rel.endswith(".md") and not target.exists():
        base = rel[:-3]
        if _safe_file(out, base + "/index.html") is not None and (out / base / "index.html").is_file():
            return redirect("/" + base + "/", code=308)
    if target.is_dir():
        if rel and not rel.endswith("/"):
            return redirect("/" + rel + "/" + (("?" + request.query_string.decode("latin-1")) if request.query_string else ""), code=308)
        index = target / "index.html"
        if not index.is_file():
            return not_found_page()
        target = index
    if not target.is_file():
        return not_found_page()
    mimetype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if target.suffix in (".js",):
        mimetype = "text/javascript"
    resp = send_file(os.fspath(target), mimetype=mimetype, conditional=True, etag=True, max_age=0)
    if rel.startswith("_/files/"):  # a corpus attachment (compiler/corpus/attachments.py)
        if mimetype == "application/pdf":  # shown in its page's viewer: framed by the site only
            resp.headers["Content-Security-Policy"] = _CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'")
            resp.headers["X-Frame-Options"] = "SAMEORIGIN"
        else:  # opened on its own (an SVG, say), it runs nothing
            resp.headers["Content-Security-Policy"] = _CSP + "; sandbox"
    return _headers(resp)
