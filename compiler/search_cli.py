"""`commonplace search` and `commonplace status`.

`search` asks a running server for the corpus when there is one (it has the model
loaded): `.commonplace/server.json` names its URL and pid; if the pid is alive and
`GET /healthz` answers within 0.3 s, the query goes to `POST /v1/search`. Otherwise it
runs in-process. A bm25 or exact query never imports torch.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import click

from .cli import Problem, corpus_option, emit_json, pick_corpus

MODE_CHOICES = ["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"]
HEALTH_TIMEOUT = 0.3
SEARCH_TIMEOUT = 30.0


def _pid_alive(pid: Any) -> bool:
    try:
        pid = int(pid)
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except (TypeError, ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def server_url(root: Path) -> str | None:
    """The URL of a live server for this corpus, or None."""
    from .model import STATE_DIR

    try:
        info = json.loads((root / STATE_DIR / "server.json").read_text("utf-8"))
        url = str(info["url"]).rstrip("/")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not url.startswith(("http://", "https://")) or not _pid_alive(info.get("pid")):
        return None
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=HEALTH_TIMEOUT) as r:
            if r.status != 200:
                return None
    except Exception:  # noqa: BLE001 - any failure means "no usable server"
        return None
    return url


def ask_server(url: str, body: dict[str, Any], root: Path) -> dict[str, Any] | None:
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json"}
    token = os.environ.get("COMMONPLACE_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(f"{url}/v1/search", data=json.dumps(body).encode("utf-8"), headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=SEARCH_TIMEOUT) as r:
            data = json.loads(r.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 400:
            try:
                msg = json.loads(exc.read().decode("utf-8"))["error"]["message"]
            except Exception:  # noqa: BLE001
                msg = str(exc)
            raise click.UsageError(msg) from None
        return None  # auth, not ready, server error: answer locally instead
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(data, dict) or "results" not in data:
        return None
    return data


def run_search(root: Path, body: dict[str, Any], use_server: bool = True) -> tuple[dict[str, Any], str]:
    """(response, where it was answered: 'server' or 'local')."""
    if use_server:
        url = server_url(root)
        if url is not None:
            data = ask_server(url, body, root)
            if data is not None:
                return data, "server"
    from .search.engine import IndexNotReady, open_engine
    from .search.query import InvalidRequest

    try:
        return open_engine(root).search(body), "local"
    except IndexNotReady as exc:
        raise Problem(str(exc)) from None
    except InvalidRequest as exc:
        raise click.UsageError(str(exc)) from None


_MARK = re.compile(r"\[\[(.*?)\]\]")


def _print_results(res: dict[str, Any]) -> None:
    color = sys.stdout.isatty()
    if not res["results"]:
        click.echo("No results.")
    for i, r in enumerate(res["results"], 1):
        head = f"{i:>2}. {r['title']}"
        click.echo(click.style(head, bold=True) if color else head)
        click.echo(f"    {r['path']}:{r['lines']}  [{r['evidence_class']}, {r['confidence']}]  score {r['score']:.4g}")
        snippet = _MARK.sub(lambda m: click.style(m.group(1), bold=True, fg="yellow") if color else m.group(1),
                            r["snippet"])
        click.echo(f"    {snippet}")
        if r.get("stale_warning"):
            click.echo(f"    ! {r['stale_warning']}")
    for w in res.get("warnings", []):
        click.echo(f"warning: {w}", err=True)
    click.echo(f"({res['count']} result{'s' if res['count'] != 1 else ''} in {res['took_ms']:.0f} ms)", err=True)


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--mode", "-m", type=click.Choice(MODE_CHOICES, case_sensitive=False), default="hybrid",
              show_default=True, help="Ranking: hybrid, bm25 (text/keyword/lexical), vector (semantic), exact.")
@click.option("--k", "-k", "k", type=click.IntRange(1, 50), default=10, show_default=True, help="Results to return.")
@click.option("--corpus-kind", type=click.Choice(["durable", "sessions", "all"]), default="durable",
              show_default=True, help="Durable notes, session transcripts (logs/sessions/), or both.")
@click.option("--type", "types", multiple=True, help="Only documents of this type (repeatable).")
@click.option("--status", "statuses", multiple=True, help="Only documents with this status (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only documents with this tag (repeatable).")
@click.option("--path-glob", "globs", multiple=True, help="Only paths matching this glob, e.g. 'projects/**' (repeatable).")
@click.option("--since", default=None, help="Only documents dated on or after YYYY-MM-DD.")
@click.option("--until", default=None, help="Only documents dated on or before YYYY-MM-DD.")
@click.option("--json", "as_json", is_flag=True, help="Print the HTTP API's search response as JSON.")
@click.option("--local", is_flag=True, help="Never ask a running server; search in this process.")
@corpus_option
def search(query: tuple[str, ...], mode: str, k: int, corpus_kind: str, types: tuple[str, ...],
           statuses: tuple[str, ...], tags: tuple[str, ...], globs: tuple[str, ...], since: str | None,
           until: str | None, as_json: bool, local: bool, corpus_opt: Path | None) -> None:
    """Search the corpus's indexes for QUERY (any text is a valid query)."""
    root = pick_corpus(None, corpus_opt).resolve()
    scope: dict[str, Any] = {}
    if types:
        scope["type"] = list(types)
    if statuses:
        scope["status"] = list(statuses)
    if tags:
        scope["tags"] = list(tags)
    if globs:
        scope["path_glob"] = list(globs)
    if since:
        scope["since"] = since
    if until:
        scope["until"] = until
    body: dict[str, Any] = {"query": " ".join(query), "k": k, "mode": mode.lower(), "corpus": corpus_kind,
                            "scope": scope}
    if not as_json:
        body["snippet_marks"] = "brackets"
    res, _where = run_search(root, body, use_server=not local)
    if as_json:
        emit_json(res)
    else:
        _print_results(res)


@click.command()
@corpus_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(corpus_opt: Path | None, as_json: bool) -> None:
    """Documents, chunks, vectors, embedding model and precision, pending embeddings, freshness."""
    from .search.status import format_status, index_status

    root = pick_corpus(None, corpus_opt).resolve()
    info = index_status(root, out=Path("site").resolve())
    if as_json:
        emit_json(info)
    else:
        click.echo(format_status(info))
