"""`commonplace search` and `commonplace status`.

`search` asks a running server for the corpus when there is one (it has the model
loaded): `.commonplace/server.json` names its URL and pid; if the pid is alive and
`GET /healthz` answers within 0.3 s, the query goes to `POST /v1/search`. Otherwise it
runs in-process. A bm25 or exact query never imports torch.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from commonplace.compiler.commands.cli import Problem, corpus_option, emit_json, json_output, pick_corpus

from ..client import ServerError, call, server_url

MODE_CHOICES = ["hybrid", "bm25", "text", "keyword", "lexical", "vector", "semantic", "exact"]
SEARCH_TIMEOUT = 30.0


def ask_server(url: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The server's answer, or None when it could not give one (auth, not ready, down):
    the caller then searches locally. A 400/422 is the query's fault: a usage error."""
    try:
        data = call(url, "POST", "/v1/search", body, timeout=SEARCH_TIMEOUT)
    except ServerError as exc:
        if exc.status in (400, 422):
            raise click.UsageError(str(exc.error.get("message"))) from None
        return None
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
            data = ask_server(url, body)
            if data is not None:
                return data, "server"
    from commonplace.compiler.search import IndexNotReady, InvalidRequest, UnreadableSchema, open_engine, unreadable

    try:
        return open_engine(root).search(body), "local"
    except IndexNotReady as exc:
        raise Problem(str(exc)) from None
    except InvalidRequest as exc:
        raise click.UsageError(str(exc)) from None
    except Exception as exc:
        # Only a server or a build rebuilds derived state: say so rather than a traceback.
        if not unreadable(exc):
            raise
        detail = str(exc).splitlines()[0] if str(exc) else ""
        # A build checks the schema only (it reads no segment of an index it need not change).
        schema = isinstance(exc, UnreadableSchema)
        who = "`commonplace build` or `commonplace serve`" if schema else "`commonplace serve`"
        raise Problem(f"the search index could not be read ({type(exc).__name__}{': ' + detail if detail else ''}); "
                      f"{who} rebuilds it") from None


_MARK = re.compile(r"\[\[(.*?)\]\]")


def _print_results(res: dict[str, Any]) -> None:
    color = sys.stdout.isatty()
    if not res["results"]:
        click.echo("No results.")
    for i, r in enumerate(res["results"], 1):
        head = f"{i:>2}. {r['title']}"
        click.echo(click.style(head, bold=True) if color else head)
        where = " (in the original: get --uncompact)" if r.get("in_original") else ""
        click.echo(f"    {r['path']}:{r['lines']}{where}  [{r['evidence_class']}, {r['confidence']}]  "
                   f"score {r['score']:.4g}")
        snippet = _MARK.sub(lambda m: click.style(m.group(1), bold=True, fg="yellow") if color else m.group(1),
                            r["snippet"])
        click.echo(f"    {snippet}")
        if r.get("original"):  # --originals: its gist matched, and so did a turn of its original
            click.echo(f"    in the original, lines {r['original']['lines']}: "
                       f"{_MARK.sub(lambda m: m.group(1), r['original']['snippet'])}")
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
@click.option("--originals", is_flag=True, help="Also search the original text of compacted session transcripts "
                                                 "(with --corpus-kind sessions or all).")
@click.option("--json", "as_json", is_flag=True, help="Print the HTTP API's search response as JSON.")
@click.option("--local", is_flag=True, help="Never ask a running server; search in this process.")
@corpus_option
def search(query: tuple[str, ...], mode: str, k: int, corpus_kind: str, types: tuple[str, ...],
           statuses: tuple[str, ...], tags: tuple[str, ...], globs: tuple[str, ...], since: str | None,
           until: str | None, originals: bool, as_json: bool, local: bool, corpus_opt: Path | None) -> None:
    """Search the corpus's indexes for QUERY (any text is a valid query)."""
    root = pick_corpus(None, corpus_opt).resolve()
    json_output(as_json)  # loading the model shows a spinner on a terminal, never with --json
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
    if originals:
        if corpus_kind == "durable":
            raise click.UsageError("--originals searches session transcripts: add --corpus-kind sessions or all")
        body["originals"] = True
    res, where = run_search(root, body, use_server=not local)
    if originals and where == "local":  # a server merged them itself
        from commonplace.compiler.sessions import originals as og

        res = og.extend(root, res, body["query"], k, og.session_docs(root), scope, body.get("snippet_marks", "none"))
    if as_json:
        emit_json(res)
    else:
        _print_results(res)


@click.command()
@corpus_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(corpus_opt: Path | None, as_json: bool) -> None:
    """Documents, chunks, vectors, embedding model and precision, pending embeddings, freshness."""
    from commonplace.compiler.search import format_status, index_status

    root = pick_corpus(None, corpus_opt).resolve()
    info = index_status(root, out=Path("site").resolve())
    if as_json:
        emit_json(info)
    else:
        click.echo(format_status(info))
