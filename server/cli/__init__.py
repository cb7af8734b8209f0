"""The `commonplace` console script: the compiler's commands (init, build, lint, watch,
claim) and the server's (serve, token, get, write, search, status, mcp) in one group.

The compiler's CLI (`commonplace.compiler.commands.cli.main`) never imports the server; this module
sits on top of both and composes them, as Datasette's or MkDocs' CLI sits on its app.
"""

from __future__ import annotations

import click

from commonplace.compiler import __version__
from commonplace.compiler.commands import cli as compiler_cli
from commonplace.compiler.commands.claim import claim

from .files import get, write
from .mcp import mcp
from .query import search, status
from .serve import serve
from .sessions import COMMANDS as SESSION_COMMANDS
from .token import token


@click.group(context_settings=compiler_cli.CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="commonplace")
@compiler_cli.verbose_option
@compiler_cli.state_dir_option
def main() -> None:
    """commonplace: compile a folder of markdown memory into a wiki and search indexes."""


for _name, _cmd in compiler_cli.main.commands.items():
    main.add_command(_cmd, _name)
# `claim` lives in its own module, which imports the compiler CLI's helpers: composed here, so
# the two never import each other.
for _cmd in (claim, serve, token, get, write, search, status, mcp, *SESSION_COMMANDS):
    main.add_command(_cmd)


def entry() -> None:
    """The console script (`commonplace = commonplace.server.cli:entry`)."""
    compiler_cli.quick_exit_on_finish()
    main()


if __name__ == "__main__":  # pragma: no cover
    entry()
