"""`commonplace token new NAME | list | revoke NAME | import PATH`: API tokens (stored hashed)."""

from __future__ import annotations

from pathlib import Path

import click

from commonplace.compiler.commands.cli import CONTEXT_SETTINGS, Problem, corpus_option, emit_json, pick_corpus


@click.group(context_settings=CONTEXT_SETTINGS)
def token() -> None:
    """Manage API tokens (stored hashed in .commonplace/tokens.json)."""


@token.command("new")
@click.argument("name")
@corpus_option
def token_new(name: str, corpus_opt: Path | None) -> None:
    """Create a token named NAME and print it (once: only its hash is kept)."""
    from ..tokens import TokenError, TokenStore

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
    from ..tokens import TokenError, TokenStore, describe

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
    from ..tokens import TokenStore

    root = pick_corpus(None, corpus_opt)
    if not TokenStore(root).revoke(name):
        raise Problem(f"no token named {name!r}")
    click.echo(f"Token {name!r} revoked.")


@token.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@corpus_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def token_import(path: Path, corpus_opt: Path | None, as_json: bool) -> None:
    """Import the tokens of a Dory token file (a JSON object, name -> token), so clients
    configured for Dory keep working. Only their hashes are stored; names that exist here
    are skipped (revoke them first to replace them). Dory's default file is
    <corpus>/.dory/auth-tokens.json."""
    import json

    from ..tokens import TokenError, TokenStore

    root = pick_corpus(None, corpus_opt)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Problem(f"cannot read {path.name}: {exc.__class__.__name__}") from None
    added: list[str] = []
    skipped: list[str] = []
    if text.strip():  # Dory treats an empty file as no tokens
        store = TokenStore(root)
        try:
            data = json.loads(text)
            have = {t.name for t in store.list()}
            added = store.import_dory(path)
        except ValueError:
            raise Problem(f"{path.name} is not JSON: a Dory token file is a JSON object of name -> token") from None
        except TokenError as exc:
            raise Problem(str(exc)) from None
        skipped = sorted(n for n in data if n in have) if isinstance(data, dict) else []
    if as_json:
        emit_json({"imported": added, "skipped": skipped})
        return
    if added:
        click.echo(f"Imported {len(added)} token(s): {', '.join(added)}.")
    else:
        click.echo(f"No tokens imported from {path.name}.")
    if skipped:
        click.echo(f"Skipped (a token with that name exists): {', '.join(skipped)}.", err=True)
