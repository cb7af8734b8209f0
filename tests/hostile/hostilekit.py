"""Helpers shared by the hostile-input tests (tests/hostile/): the environment a hostile
client faces, leak checks, and an HTML safety checker.

Kept in a module with a unique name (not conftest.py) so tests can import it without
colliding with the other test folders' conftest modules.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable

# Markers planted outside the corpus and in secret places inside it: none may ever appear
# in a response, a CLI's output or a built page.
OUTSIDE_SECRET = "OUTSIDE-SECRET-c0ffee"
HARDLINK_SECRET = "HARDLINK-SHARED-bead"  # lives in a file hard-linked into the corpus (readable by design)
GIT_SECRET = "GIT-SECRET-deadbeef"
PASSWD_MARK = "root:x:0:0"

SMALL_CORPUS: dict[str, str] = {
    "core/identity.md": "---\ntitle: Identity\ntype: core\npinned: true\ncanonical: true\n---\n# Identity\n\nThis memory belongs to the hostile-test team.\n",
    "people/alex.md": "---\ntitle: Alex Kim\naliases: [Alex]\ntags: [people]\n---\n# Alex Kim\n\nAlex runs the billing migration. See [[atlas]].\n",
    "projects/atlas/state.md": "---\ntitle: Atlas\n---\n# Atlas\n\nAtlas moves billing off the legacy queue. Owner: [[Alex]].\n",
    "notes/links.md": "---\ntitle: Link notes\n---\n# Link notes\n\nLinks to [[Alex]] and [[atlas]].\n",
    "notes/plain.md": "# Plain\n\nA plain note about quagga and zebrafish.\n",
    "logs/sessions/2025/06/2025-06-29-coder.md": "---\ntitle: Session\n---\n# Session\n\nStarted the migration.\n",
}


@dataclass
class Env:
    base: Path  # tmp folder holding everything below; never named in any answer
    corpus: Path
    site: Path
    outside: Path  # folder outside the corpus with secrets
    token: str
    revoked: str = ""  # a token that was created and then revoked
    extra_secrets: list[str] = field(default_factory=list)

    @property
    def token_hash(self) -> str:
        return hashlib.sha256(self.token.encode()).hexdigest()

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def make_env(base: Path, files: dict[str, str] | None = None) -> Env:
    """A corpus next to an `outside/` folder of secrets, with symlinks, a hard link, a
    `.git/config`, and a token. Nothing is built here."""
    from commonplace.server.tokens import TokenStore

    corpus = base / "corpus"
    outside = base / "outside"
    site = base / "site"
    for rel, text in (files if files is not None else SMALL_CORPUS).items():
        p = corpus / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_SECRET}\n")
    (outside / "dir" / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_SECRET}\n")
    (outside / "hard.md").write_text(f"# Hard\n\n{HARDLINK_SECRET}\n")
    (corpus / ".git").mkdir()
    (corpus / ".git" / "config").write_text(f"[core]\n\tsecret = {GIT_SECRET}\n")
    (corpus / ".git" / "config.md").write_text(f"# {GIT_SECRET}\n")
    (corpus / ".hidden").mkdir()
    (corpus / ".hidden" / "x.md").write_text(f"# {GIT_SECRET}\n")
    (corpus / "notes" / ".secret.md").write_text(f"# {GIT_SECRET}\n")
    links = corpus / "links"
    links.mkdir()
    (links / "escape.md").symlink_to(outside / "secret.md")
    (links / "escdir").symlink_to(outside / "dir", target_is_directory=True)
    (links / "passwd.md").symlink_to("/etc/passwd")
    (links / "etc").symlink_to("/etc", target_is_directory=True)
    (links / "loop-a.md").symlink_to(links / "loop-b.md")
    (links / "loop-b.md").symlink_to(links / "loop-a.md")
    (links / "inner.md").symlink_to(corpus / "notes" / "links.md")
    (links / "to-git.md").symlink_to(corpus / ".git" / "config.md")
    (links / "to-hidden").symlink_to(corpus / ".hidden", target_is_directory=True)
    (links / "dangling.md").symlink_to(base / "nowhere" / "x.md")
    (links / "relative-escape.md").symlink_to("../../outside/secret.md")
    (links / "hard.md").hardlink_to(outside / "hard.md")
    token = TokenStore(corpus).create("hostile")
    # A second token that the tests revoke at once: a revoked token must never work.
    store = TokenStore(corpus)
    revoked = store.create("revoked")
    store.revoke("revoked")
    (corpus / ".commonplace" / "secret-note.md").write_text(f"# {GIT_SECRET}\n")
    return Env(base=base, corpus=corpus, site=site, outside=outside, token=token, revoked=revoked)


# --------------------------------------------------------------------------- leak checks


def leaks(text: str, env: Env, *, allow_paths: Iterable[Path] = ()) -> list[str]:
    """Everything in `text` that a hostile client must never see."""
    found = []
    if env.token in text:
        found.append("the bearer token")
    if env.revoked and env.revoked in text:
        found.append("the revoked token")
    if env.token_hash in text:
        found.append("the token's stored hash")
    for secret in (OUTSIDE_SECRET, GIT_SECRET, PASSWD_MARK, *env.extra_secrets):
        if secret in text:
            found.append(f"secret marker {secret!r}")
    if "Traceback (most recent call last)" in text:
        found.append("a Python traceback")
    scrubbed = text
    for p in sorted({str(p) for p in allow_paths} | {str(Path(p).resolve()) for p in allow_paths}, key=len, reverse=True):
        scrubbed = scrubbed.replace(p, "<allowed>")
    for p in {str(env.base), str(env.base.resolve()), str(env.outside), str(env.outside.resolve())}:
        if p in scrubbed:
            found.append(f"an absolute path outside the corpus ({p})")
    return found


def assert_no_leak(text: str, env: Env, what: str = "", **kw: Any) -> None:
    bad = leaks(text, env, **kw)
    assert not bad, f"{what} leaks {', '.join(bad)}: {text[:600]!r}"


def http_text(resp: Any) -> str:
    """Body and headers of a Flask test response, as one string for leak checks."""
    heads = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
    return heads + "\n\n" + resp.get_data(as_text=True)


def check_response(resp: Any, env: Env, statuses: Iterable[int] | int, what: str = "") -> dict[str, Any]:
    """Status in `statuses`, JSON object answer, the error envelope on errors, no leak."""
    allowed = {statuses} if isinstance(statuses, int) else set(statuses)
    body_text = resp.get_data(as_text=True)
    assert resp.status_code != 500, f"{what}: 500 {body_text[:400]}"
    assert resp.status_code in allowed, f"{what}: expected {sorted(allowed)}, got {resp.status_code}: {body_text[:400]}"
    assert_no_leak(http_text(resp), env, what)
    data: dict[str, Any] = {}
    if resp.mimetype == "application/json":
        data = json.loads(body_text)
        assert isinstance(data, dict), f"{what}: answer is not a JSON object"
        if resp.status_code >= 400:
            err = data.get("error")
            assert isinstance(err, dict) and {"code", "message", "type"} <= set(err), f"{what}: no error envelope: {data}"
            assert all(isinstance(err[k], str) and err[k] for k in ("code", "message", "type")), data
    return data


# --------------------------------------------------------------------------- HTML safety

# The site's own two scripts (the rest load from them on demand); the 404 page also asks
# for them from the site's root path, as it is served at any depth. Pages with math or
# diagrams also load the vendored KaTeX or mermaid and the site's script that runs it.
ALLOWED_SCRIPT = re.compile(r"^(?:(?:\.\./)*(?:\./)?|/(?:[\w-]+/)*)_/static/"
                            r"(?:theme|site|math|diagrams|vendor/katex/katex\.min|vendor/mermaid/mermaid\.min)\.js$")
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "poster", "data", "background", "cite",
             "srcset", "ping", "manifest", "codebase", "longdesc", "usemap", "icon", "lowsrc", "dynsrc"}
FORBIDDEN_TAGS = {"iframe", "object", "embed", "base", "frame", "frameset", "applet", "portal", "style", "svg",
                  "math", "template", "noscript", "xmp", "plaintext", "listing"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:", "livescript:", "mocha:")
SAFE_DATA_IMAGE = re.compile(r"^data:image/(?:png|gif|jpeg|webp);", re.I)  # markdown-it's own allow-list
_STRIP_URL = re.compile(r"[\x00-\x20\x7f-\x9f]+")


def dangerous_url(value: str) -> bool:
    # Browsers drop ASCII whitespace and controls inside a scheme ("java\tscript:").
    v = _STRIP_URL.sub("", html.unescape(value)).lower()
    return v.startswith(BAD_SCHEMES)


class SafetyChecker(HTMLParser):
    """Collects every construct in a page that could execute code from the documents."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)

    def _check(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "script":
            src = a.get("src", "")
            if not ALLOWED_SCRIPT.match(src) or set(a) - {"src"}:
                self.problems.append(f"<script {a}>")
            self.in_script = True
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}>")
        if tag == "meta" and "http-equiv" in a:
            self.problems.append(f"<meta http-equiv={a['http-equiv']!r}>")
        if tag == "link" and a.get("rel", "").lower() not in ("stylesheet", "alternate", "icon"):
            self.problems.append(f"<link rel={a.get('rel')!r}>")
        for k, v in a.items():
            if k.startswith("on"):
                self.problems.append(f"<{tag} {k}=...>")
            if k in URL_ATTRS and dangerous_url(v) and not (tag == "img" and k == "src" and SAFE_DATA_IMAGE.match(v)):
                self.problems.append(f"<{tag} {k}={v[:60]!r}>")
            if k == "style" and re.search(r"expression\s*\(|javascript:|url\s*\(", html.unescape(v), re.I):
                self.problems.append(f"<{tag} style={v[:60]!r}>")
            if k in ("src", "action", "formaction") and re.match(r"^(?:https?:)?//", _STRIP_URL.sub("", v), re.I):
                self.problems.append(f"<{tag} {k}={v[:60]!r}> (loads from another host)")
        if tag == "link" and re.match(r"^(?:https?:)?//", _STRIP_URL.sub("", a.get("href", "")), re.I):
            self.problems.append(f"<link href={a['href'][:60]!r}> (loads from another host)")
        if tag == "a" and re.match(r"^(?:[a-z][a-z0-9+.-]*:|//)", _STRIP_URL.sub("", a.get("href", "")), re.I):
            if "noreferrer" not in a.get("rel", ""):
                self.problems.append(f"<a href={a['href'][:60]!r}> without rel=noreferrer")

    def handle_endtag(self, tag: str) -> None:
        if tag.lower() == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.problems.append(f"inline script: {data[:80]!r}")


def html_problems(text: str) -> list[str]:
    checker = SafetyChecker()
    checker.feed(text)
    checker.close()
    return checker.problems


# The wrappers the files in `_/search-data/` may use around their JSON payload
# (compiler/site/search.py: the page list, term shards, text shards).
SEARCH_DATA_WRAPPERS: list[tuple[str, str]] = [
    ("CommonplaceData.meta(", ");\n"),
    ("CommonplaceData.terms(", ");\n"),
    ("CommonplaceData.text(", ");\n"),
]


def search_data_payload(raw: bytes) -> tuple[str | None, list[str]]:
    """(JSON payload, problems) of one search-data script: a fixed wrapper around one JSON
    value, so nothing from the documents can step out of a string literal."""
    text = raw.decode("utf-8")
    for pre, post in SEARCH_DATA_WRAPPERS:
        if text.startswith(pre) and text.endswith(post):
            payload = text[len(pre): len(text) - len(post)]
            break
    else:
        return None, [f"unknown search-data wrapper: {text[:120]!r}"]
    problems = []
    if "\n" in payload or "\r" in payload:
        problems.append("raw line break inside the data")
    if "\u2028" in payload or "\u2029" in payload:
        problems.append("raw U+2028/U+2029 (a line terminator in pre-2019 JavaScript)")
    if "</" in payload:
        problems.append("'</' in the data (would end a <script> element if the data were inlined)")
    try:
        json.loads(payload)
    except ValueError as exc:
        problems.append(f"data is not one JSON value: {exc}")
    return payload, problems
