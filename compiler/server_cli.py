"""`commonplace serve`, `token`, `get` and `write`.

    commonplace serve [CORPUS] [--host 127.0.0.1] [--port 8766] [--out site] [--watch]
                      [--no-auth] [--no-embed] [--max-body 1MiB] [--threads 8] [--allowed-host NAME]
    commonplace token new NAME | list | revoke NAME
    commonplace get PATH [--from N] [--lines N] [--json]
    commonplace write TARGET [--kind append|create|replace|forget] [--content TEXT | --file F] ...

`serve` runs waitress (a production WSGI server). It binds the port first (so a port in
use fails at once), answers `/healthz` with 503 while it builds the site and loads the
index and the embedding model, then says ready, prints the URL, and records it in
`.commonplace/server.json` (`{"url", "pid"}`) so `commonplace search` can ask it; the file
is removed on exit.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from .cli import CONTEXT_SETTINGS, Problem, corpus_argument, corpus_option, emit_json, out_option, pick_corpus

SERVER_FILE = "server.json"
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b?)?\s*$", re.I)


def parse_size(text: str) -> int:
    m = _SIZE.match(text)
    if not m:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 1048576, 512KiB, 1MiB)")
    n = int(m.group(1))
    unit = m.group(2).lower()
    return n * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit]


def server_file(root: Path) -> Path:
    from .model import STATE_DIR

    return Path(root) / STATE_DIR / SERVER_FILE


def _write_server_file(root: Path, url: str) -> None:
    path = server_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _remove_server_file(root: Path) -> None:
    path = server_file(root)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("pid") == os.getpid():
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _warm_up(live: Any, embed: bool) -> None:
    """Load the search index (and, with embeddings, the model) before the first request."""
    preload = getattr(live, "preload", None)
    if callable(preload):
        preload()
        return
    from commonplace.server.ops import call_search

    try:
        call_search(live, {"query": "warm up", "k": 1, "mode": "hybrid" if embed else "bm25"})
    except Exception as exc:  # noqa: BLE001 - an empty corpus has no index yet; serve anyway
        click.echo(f"note: search warm-up failed ({type(exc).__name__}); the first query will load it", err=True)


@click.command(context_settings=CONTEXT_SETTINGS)
@corpus_argument
@out_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8766, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free port).")
@click.option("--watch", is_flag=True, help="Also rebuild when files change on disk (editor saves).")
@click.option("--no-auth", is_flag=True, help="Allow writes without a token (loopback binds only).")
@click.option("--no-embed", is_flag=True, help="No embedding model: BM25 search only.")
@click.option("--max-body", default="1MiB", show_default=True, help="Largest request body accepted (413 above).")
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256), help="Worker threads.")
@click.option("--allowed-host", "allowed_hosts", multiple=True,
              help="Extra Host header names to answer to (for a non-loopback bind behind a name).")
@click.option("--access-log", is_flag=True, help="Log one line per request (request id, method, path, status, ms).")
def serve(corpus_arg: Path | None, corpus_opt: Path | None, out: Path, host: str, port: int, watch: bool,
          no_auth: bool, no_embed: bool, max_body: str, threads: int, allowed_hosts: tuple[str, ...],
          access_log: bool) -> None:
    """Serve the wiki at / and the /v1 API (search, get, write, memory-write, wake, link, status).

    Loopback clients may read without a token; writes need `Authorization: Bearer <token>`
    (see `commonplace token new`) unless --no-auth. A non-loopback --host refuses to start
    without tokens.
    """
    import logging

    from .tokens import TokenStore

    from commonplace.server.app import ServerConfig, create_app, is_loopback

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("commonplace.server").setLevel(logging.INFO if access_log else logging.WARNING)
    root = pick_corpus(corpus_arg, corpus_opt).resolve()
    body_limit = parse_size(max_body)
    if body_limit < 1024:
        raise click.BadParameter("must be at least 1KiB", param_hint="--max-body")
    loopback = is_loopback(host)
    if no_auth and not loopback:
        raise Problem(f"--no-auth is only allowed on a loopback address, not {host}")
    if not loopback and not TokenStore(root).has_tokens():
        raise Problem(f"refusing to listen on {host} without tokens: create one with "
                      f"`commonplace token new NAME -C {root}` first")

    from .live import LiveCorpus

    live = LiveCorpus(root, out, embed=not no_embed)
    if watch and not callable(getattr(live, "watch", None)):
        raise Problem("--watch is not available in this version (LiveCorpus has no watcher)")
    cfg = ServerConfig(corpus=root, out=out, host=host, port=port, no_auth=no_auth, max_body=body_limit,
                       allowed_hosts=list(allowed_hosts))
    app = create_app(live, cfg)

    import waitress

    try:
        server = waitress.create_server(
            app, host=host, port=port, threads=threads, ident="commonplace",
            max_request_body_size=body_limit, clear_untrusted_proxy_headers=True,
            channel_timeout=120, connection_limit=200,
        )
    except OSError as exc:
        raise Problem(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    effective = getattr(server, "effective_port", port)
    url = f"http://{_url_host(host)}:{effective}"
    cfg.port = effective
    click.echo(f"commonplace: serving {root} at {url} (building and loading; /healthz says when ready)")
    state = app.extensions["commonplace"]
    state.gate = threading.Event()

    def start() -> None:
        try:
            result = live.open()
            _warm_up(live, not no_embed)
            if watch:
                live.watch(echo=lambda line: click.echo(f"watch: {line}"))
        except Exception as exc:  # noqa: BLE001 - reported, then the server stops
            state.open_error = f"{type(exc).__name__}: {str(exc)[:300]}"
            click.echo(f"error: cannot open the corpus: {state.open_error}", err=True)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        state.gate.set()
        # A wildcard bind is reached on loopback by local clients (`commonplace search`).
        local = url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:")
        _write_server_file(root, local)
        docs = getattr(result, "documents", None)
        click.echo(f"commonplace: ready at {url}" + (f" ({docs} documents)" if docs is not None else "")
                   + ("; watching for changes" if watch else ""))
        sys.stdout.flush()

    def on_term(signum: int, frame: Any) -> None:
        raise SystemExit(0 if not state.open_error else 1)

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=start, name="commonplace-open", daemon=True).start()
    code = 0
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit) as exc:
        code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 0
    finally:
        _remove_server_file(root)
        try:
            server.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            live.close()
        except Exception:  # noqa: BLE001
            pass
        click.echo("commonplace: stopped")
    if code:
        sys.exit(code)


# --------------------------------------------------------------------------- tokens


@click.group(context_settings=CONTEXT_SETTINGS)
def token() -> None:
    """Manage API tokens (stored hashed in .commonplace/tokens.json)."""


@token.command("new")
@click.argument("name")
@corpus_option
def token_new(name: str, corpus_opt: Path | None) -> None:
    """Create a token named NAME and print it (once: only its hash is kept)."""
    from .tokens import TokenError, TokenStore

    root = pick_corpus(None, corpus_opt)
    try:
        value = TokenStore(root).create(name)
    except TokenError as exc:
        raise Problem(str(exc)) from None
    click.echo(value)
    click.echo(f"Token {name!r} created. It is shown only now: store it (e.g. COMMONPLACE_TOKEN). "
               "Send it as 'Authorization: Bearer <token>'.", err=True)


@token.command("list")
@corpus_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def token_list(corpus_opt: Path | None, as_json: bool) -> None:
    """List token names and creation times (never the tokens)."""
    from .tokens import TokenError, TokenStore, describe

    root = pick_corpus(None, corpus_opt)
    try:
        items = describe(TokenStore(root).list())
    except TokenError as exc:
        raise Problem(str(exc)) from None
    if as_json:
        emit_json({"tokens": items, "count": len(items)})
        return
    if not items:
        click.echo("No tokens. Create one with: commonplace token new NAME")
    for t in items:
        click.echo(f"{t['name']}\t{t['prefix']}\t{t['created']}")


@token.command("revoke")
@click.argument("name")
@corpus_option
def token_revoke(name: str, corpus_opt: Path | None) -> None:
    """Revoke the token named NAME (a running server stops accepting it at once)."""
    from .tokens import TokenStore

    root = pick_corpus(None, corpus_opt)
    if not TokenStore(root).revoke(name):
        raise Problem(f"no token named {name!r}")
    click.echo(f"Token {name!r} revoked.")


# --------------------------------------------------------------------------- get / write


def _excluded(root: Path, out: Path | None) -> tuple[Path, ...]:
    if out is None:
        return ()
    try:
        out.resolve().relative_to(root.resolve())
        return (out.resolve(),)
    except ValueError:
        return ()


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@corpus_option
@click.option("--from", "start", default=1, show_default=True, type=click.IntRange(1, None), help="First line (1-based).")
@click.option("--lines", default=None, type=click.IntRange(1, None), help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, from, content, total_lines, lines_returned, frontmatter, hash}.")
def get(path: str, corpus_opt: Path | None, start: int, lines: int | None, as_json: bool) -> None:
    """Print a document of the corpus (or some of its lines), like GET /v1/get."""
    from .writes import WriteError, read_document

    root = pick_corpus(None, corpus_opt)
    try:
        r = read_document(root, path, start, lines, _excluded(root, Path("site")))
    except WriteError as exc:
        raise Problem(exc.message) from None
    if as_json:
        emit_json(r.as_dict(debug=True))
    else:
        click.echo(r.content, nl=False)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("target")
@corpus_option
@out_option
@click.option("--kind", type=click.Choice(["append", "create", "replace", "forget"]), default="append", show_default=True)
@click.option("--content", default=None, help="Markdown to write (default: read --file, or stdin).")
@click.option("--file", "file_", type=click.File("r", encoding="utf-8"), default=None, help="Read the content from a file ('-': stdin).")
@click.option("--frontmatter", default=None, help="Frontmatter fields as a JSON object (merged; tags unioned).")
@click.option("--expected-hash", default=None, help="Current sha256:<hex> of the file (replace, forget).")
@click.option("--reason", default=None, help="Why (forget).")
@click.option("--dry-run", is_flag=True, help="Say what would happen; change nothing.")
@click.option("--soft", is_flag=True, help="Quarantine refused content under inbox/quarantine/ instead of failing.")
@click.option("--no-build", is_flag=True, help="Do not update the site and indexes afterwards.")
@click.option("--no-embed", is_flag=True, help="Update the site and BM25 index only.")
@click.option("--local", is_flag=True, help="Write here even when a server for the corpus is running.")
@click.option("--json", "as_json", is_flag=True, help="Print the result like POST /v1/write.")
def write(target: str, corpus_opt: Path | None, out: Path, kind: str, content: str | None, file_: Any,
          frontmatter: str | None, expected_hash: str | None, reason: str | None, dry_run: bool, soft: bool,
          no_build: bool, no_embed: bool, local: bool, as_json: bool) -> None:
    """Write to a document safely, like POST /v1/write (atomic, checked, serialized).

    When a server for the corpus is running (`.commonplace/server.json`), the write is
    sent to it (with the token in COMMONPLACE_TOKEN), so its site and indexes stay
    current. Otherwise it is done here, followed by an incremental build (unless --no-build).
    """
    from .writes import WriteError, WriteRequest, apply_write

    root = pick_corpus(None, corpus_opt)
    if content is None:
        if file_ is not None:
            content = file_.read()
        elif kind == "forget":
            content = ""
        elif not sys.stdin.isatty():
            content = sys.stdin.read()
        else:
            raise click.UsageError("give the content with --content, --file, or on stdin")
    meta = None
    if frontmatter:
        try:
            meta = json.loads(frontmatter)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--frontmatter") from None
    if not local:
        from .search_cli import server_url

        url = server_url(root.resolve())
        if url is not None:
            body = {"kind": kind, "target": target, "content": content, "frontmatter": meta,
                    "expected_hash": expected_hash, "reason": reason, "dry_run": dry_run, "soft": soft}
            _write_via_server(url, {k: v for k, v in body.items() if v is not None}, as_json)
            return
    req = WriteRequest(kind=kind, target=target, content=content, frontmatter=meta, expected_hash=expected_hash,
                       reason=reason, dry_run=dry_run, soft=soft, actor=os.environ.get("COMMONPLACE_ACTOR") or "cli")
    try:
        res = apply_write(root, req, _excluded(root, out))
    except WriteError as exc:
        if as_json:
            emit_json({"error": {"code": exc.code, "message": exc.message, "type": exc.type}})
            sys.exit(1)
        raise Problem(exc.message) from None
    data = res.as_dict()
    data.update(indexed=False, edges_added=0)
    if not dry_run and not no_build:
        from .build import BuildOptions, build

        try:
            build(BuildOptions(corpus=root, out=out, embed=not no_embed))
            data["indexed"] = True
        except Exception as exc:  # noqa: BLE001 - the write itself landed
            data["message"] = f"written; the rebuild failed ({type(exc).__name__}: {str(exc)[:200]}); run `commonplace build`"
    if as_json:
        emit_json(data)
    else:
        verb = "would be " + res.action if dry_run else res.action
        click.echo(f"{res.path}: {verb} ({res.bytes_written} bytes, {res.hash})")
        if data.get("message"):
            click.echo(data["message"], err=True)


def _write_via_server(url: str, body: dict[str, Any], as_json: bool) -> None:
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json"}
    token = os.environ.get("COMMONPLACE_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(f"{url}/v1/write", data=json.dumps(body).encode("utf-8"), headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            data = json.loads(r.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            err = json.loads(exc.read().decode("utf-8"))["error"]
        except Exception:  # noqa: BLE001
            err = {"code": "http_error", "message": f"HTTP {exc.code}", "type": "server_error"}
        if exc.code == 401:
            err["message"] += " (a server is running for this corpus: set COMMONPLACE_TOKEN, or use --local)"
        if as_json:
            emit_json({"error": err})
            sys.exit(1)
        raise Problem(err.get("message", "refused")) from None
    except OSError as exc:
        raise Problem(f"the running server at {url} did not answer ({exc}); retry, or use --local") from None
    if as_json:
        emit_json(data)
    else:
        verb = ("would be " if data.get("dry_run") else "") + str(data.get("action"))
        click.echo(f"{data.get('path')}: {verb} ({data.get('bytes_written')} bytes, {data.get('hash')}) via {url}")
        if data.get("message"):
            click.echo(data["message"], err=True)
