"""`commonplace get` and `commonplace write`: read and write documents like GET /v1/get and
POST /v1/write; a write goes through a running server for the corpus when there is one.

    commonplace get PATH [--from N] [--lines N] [--json]
    commonplace write TARGET [--kind append|create|replace|forget] [--content TEXT | --file F] ...
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from commonplace.compiler.commands.cli import CONTEXT_SETTINGS, Problem, corpus_option, emit_json, out_option, pick_corpus


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@corpus_option
@click.option("--from", "start", default=1, show_default=True, type=click.IntRange(1, None), help="First line (1-based).")
@click.option("--lines", default=None, type=click.IntRange(1, None), help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, from, content, total_lines, lines_returned, frontmatter, hash}.")
@click.option("--uncompact", is_flag=True, help="A compacted session transcript as it was, byte for byte.")
def get(path: str, corpus_opt: Path | None, start: int, lines: int | None, as_json: bool, uncompact: bool) -> None:
    """Print a document of the corpus (or some of its lines), like GET /v1/get."""
    from commonplace.compiler.writes import WriteError, excluded_folders, read_document

    root = pick_corpus(None, corpus_opt)
    if uncompact:
        from .sessions import run_op

        data = run_op(root, Path("site"), "get", {"path": path, "from": start, "lines": lines, "debug": as_json,
                                                  "uncompact": True}, local=True, build=False)
        if as_json:
            emit_json(data)
        else:
            sys.stdout.buffer.write(data["content"].encode("utf-8", "surrogateescape"))
            sys.stdout.flush()
        return
    try:
        r = read_document(root, path, start, lines, excluded_folders(root, Path("site")))
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
    from commonplace.compiler.writes import WriteError, WriteRequest, apply_write, excluded_folders

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
    if kind == "create":
        meta = _create_defaults(target, content, meta)
    if not local:
        from ..client import server_url

        url = server_url(root.resolve())
        if url is not None:
            body = {"kind": kind, "target": target, "content": content, "frontmatter": meta,
                    "expected_hash": expected_hash, "reason": reason, "dry_run": dry_run, "soft": soft}
            _write_via_server(url, {k: v for k, v in body.items() if v is not None}, as_json)
            return
    req = WriteRequest(kind=kind, target=target, content=content, frontmatter=meta, expected_hash=expected_hash,
                       reason=reason, dry_run=dry_run, soft=soft, actor=os.environ.get("COMMONPLACE_ACTOR") or "cli")
    from commonplace.compiler.commands.cli import json_output
    from commonplace.compiler.writes.errors import TargetMissing

    from ..errors import write_message, write_status

    json_output(as_json)
    try:
        res = apply_write(root, req, excluded_folders(root, out))
    except WriteError as exc:
        if as_json:
            emit_json({"error": {"code": exc.code, "message": write_message(exc), "type": write_status(exc)[1]}})
            sys.exit(1)
        hint = "; `--kind create` makes a new file" if isinstance(exc, TargetMissing) and kind == "replace" else ""
        # Over HTTP the same switch is the field `soft=true`; here it is a flag.
        raise Problem(write_message(exc, " (use --soft to quarantine it for review instead)") + hint) from None
    data = res.as_dict()
    data.update(indexed=False, edges_added=0)
    if not dry_run and not no_build:
        from commonplace.compiler.build.pipeline import BuildOptions, build

        try:
            build(BuildOptions(corpus=root, out=out, embed=not no_embed, progress=not as_json))
            data["indexed"] = True
        except Exception as exc:  # noqa: BLE001 - the write itself landed
            data["message"] = f"written; the rebuild failed ({type(exc).__name__}: {str(exc)[:200]}); run `commonplace build`"
    if as_json:
        emit_json(data)
    else:
        verb = "would be " + res.action if dry_run else res.action
        after = ("; nothing was changed" if dry_run else "; site and search updated" if data["indexed"]
                 else "; `commonplace build` updates the site and search" if no_build else "")
        click.echo(f"{res.path}: {verb} ({res.bytes_written} bytes, {res.hash}){after}")
        if data.get("message") and not dry_run:  # a dry run's message repeats the line above
            click.echo(data["message"], err=True)


def _write_via_server(url: str, body: dict[str, Any], as_json: bool) -> None:
    from ..client import ServerError, call

    try:
        data = call(url, "POST", "/v1/write", body)
    except ServerError as exc:
        err = dict(exc.error)
        if exc.status == 401:
            err["message"] = str(err.get("message")) + " (a server is running for this corpus: set COMMONPLACE_TOKEN, or use --local)"
        if as_json:
            emit_json({"error": err})
            sys.exit(1)
        raise Problem(str(err.get("message", "refused"))) from None
    except OSError as exc:
        raise Problem(f"the running server at {url} did not answer ({exc}); retry, or use --local") from None
    if as_json:
        emit_json(data)
    else:
        verb = ("would be " if data.get("dry_run") else "") + str(data.get("action"))
        click.echo(f"{data.get('path')}: {verb} ({data.get('bytes_written')} bytes, {data.get('hash')}) via {url}")
        if data.get("message"):
            click.echo(data["message"], err=True)


def _create_defaults(target: str, content: str, meta: dict | None) -> dict | None:
    """A new file written from the command line gets the title and type the API's schema
    needs when neither the content nor --frontmatter names them: the first heading (else
    the file name) and the type its folder implies (else note)."""
    import re

    from commonplace.compiler.writes import schema
    from commonplace.compiler.writes.compose import split_content

    if meta is not None and not isinstance(meta, dict):
        return meta  # the write refuses it with its own message
    try:
        own, body = split_content(content)
    except Exception:  # noqa: BLE001 - the write itself reports unusable frontmatter
        return meta
    have = {**(own or {}), **(meta or {})}
    extra: dict = {}
    if not str(have.get("title") or "").strip():
        m = re.search(r"^#[ \t]+(.+?)[ \t#]*$", body, re.MULTILINE)
        extra["title"] = m.group(1).strip() if m else target.rsplit("/", 1)[-1].removesuffix(".md")
    if not str(have.get("type") or "").strip():
        extra["type"] = schema.type_of_path(target) or "note"
    return {**(meta or {}), **extra} if extra else meta
