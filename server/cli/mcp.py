"""`commonplace mcp`: the corpus's tools, documents and wake prompt over MCP on stdio.

    commonplace mcp -C CORPUS [--out site] [--no-embed] [--watch] [--verbose]

stdout is the protocol channel, so this command prints nothing there: its one start-up
line, logs and errors go to stderr. A corpus folder that does not exist is one line on
stderr and exit code 2, before any protocol starts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from commonplace.compiler.commands.cli import CONTEXT_SETTINGS, corpus_argument, finish, out_option


@click.command(context_settings=CONTEXT_SETTINGS)
@corpus_argument
@out_option
@click.option("--no-embed", is_flag=True, help="No embedding model: BM25 search only.")
@click.option("--watch", is_flag=True, help="Also refresh when files change on disk (editor saves).")
@click.option("--verbose", "-v", is_flag=True, help="Log progress (corpus open, refreshes) to stderr.")
def mcp(corpus_arg: Path | None, corpus_opt: Path | None, out: Path, no_embed: bool, watch: bool,
        verbose: bool) -> None:
    """Serve the corpus over MCP on stdin/stdout (for Claude Code, Claude Desktop, Cursor...).

    The tools are those of GET /v1/tools (dory_search, dory_get, dory_write, ...), the
    documents are resources (commonplace:///<path>) and the wake block is the `wake`
    prompt. When `commonplace serve` runs for the same corpus, calls go through it (with
    the token in COMMONPLACE_TOKEN); otherwise this process opens the corpus itself, in
    the background, building into --out if needed.
    """
    if corpus_arg is not None and corpus_opt is not None and corpus_arg.resolve() != corpus_opt.resolve():
        click.echo(f"commonplace mcp: corpus given twice: {corpus_arg} and --corpus {corpus_opt}", err=True)
        sys.exit(2)
    root = corpus_arg or corpus_opt or Path(".")
    if not root.is_dir():
        click.echo(f"commonplace mcp: corpus folder {str(root)!r} does not exist", err=True)
        sys.exit(2)

    from ..mcp.stdio import serve_stdio

    code = serve_stdio(root.resolve(), out, embed=not no_embed, watch=watch, verbose=verbose,
                       actor=os.environ.get("COMMONPLACE_ACTOR") or "mcp")
    finish(code)
