"""`commonplace claim ...`: record, change, forget and list claims about entities.

Thin wrappers over `commonplace.compiler.claims.ClaimStore`. Every mutating command
recompiles the entity's canonical page and prints what changed; `--dry-run` shows what
would change and writes nothing. Exit codes: 0 ok, 1 refused (unknown or ambiguous
subject, no matching claim, bad input), 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from .cli import CONTEXT_SETTINGS, Problem, corpus_option, emit_json, pick_corpus


def _store(corpus_opt: Path | None, actor: str | None = None):  # noqa: ANN202 - lazy import
    from ..claims import ClaimStore

    root = pick_corpus(None, corpus_opt)
    return ClaimStore(root, actor=actor)


def _safe(text: Any, limit: int = 300) -> str:
    """User text for the terminal: one line, no control characters (no escape sequences)."""
    from ..claims.text_rules import one_line, shorten

    return shorten(one_line(str(text)), limit)


def _refused(exc: Exception) -> Problem:
    msg = getattr(exc, "message", str(exc))
    path = getattr(exc, "create_path", None)
    if path:  # the library says what is missing; the command line says how to make it
        msg += "; add --create to make it"
    return Problem(_safe(msg, 2000))


def _run(fn: Callable[[], Any]) -> Any:
    from ..claims import ClaimError

    try:
        return fn()
    except ClaimError as exc:
        raise _refused(exc) from None
    except OSError as exc:
        raise Problem(f"cannot write: {exc}") from None


def _statement(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    return value


def _report(result: Any, as_json: bool, show_diff: bool, corpus_opt: Path | None = None) -> None:
    if as_json:
        emit_json(result.as_dict(preview=result.dry_run or show_diff))
        return
    prefix = "[dry run] " if result.dry_run else ""
    message = _safe(result.message, 500)
    click.echo(f"{prefix}{message}")
    if result.evidence_path and result.evidence_path not in message:
        click.echo(f"  {'tombstone' if result.action == 'forget' else 'evidence'}: {result.evidence_path}")
    if result.page is not None:
        click.echo(f"  {'would: ' if result.dry_run else ''}{result.page.summary()}")
    for path in result.redacted:
        click.echo(f"  redacted: {path}")
    for w in result.warnings:
        click.echo(f"warning: {_safe(w, 1000)}", err=True)
    if (show_diff or result.dry_run) and result.page is not None and result.page.changed and result.action != "forget":
        click.echo(result.page.diff(), nl=False)
    if not result.dry_run and result.action != "noop":
        click.echo(f"  next: {_site_note(result.action, corpus_opt)}")


def _site_note(action: str, corpus_opt: Path | None) -> str:
    """How the change reaches the site and the search indexes: the markdown page is
    already updated; the built site and indexes are not, until a build runs (a running
    watcher runs one by itself)."""
    import shlex

    build = "commonplace build" + (f" {shlex.quote(str(corpus_opt))}" if corpus_opt is not None else "")
    what = "purges it from" if action == "forget" else "shows it in"
    return f"`{build}` {what} the site and search (a running `watch` or `serve --watch` does it by itself)"


def _common(f: Callable) -> Callable:
    f = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")(f)
    f = click.option("--diff", "show_diff", is_flag=True, help="Show the page diff.")(f)
    f = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")(f)
    f = click.option("--actor", default=None, help="Who records this (default: $COMMONPLACE_ACTOR, else your user name).")(f)
    return corpus_option(f)


@click.group("claim", context_settings=CONTEXT_SETTINGS)
def claim() -> None:
    """Record, change, forget and list claims (atomic facts about entities).

    SUBJECT is an entity: its id (person:alex, project:atlas), its page path, or its
    slug, title or alias (case-insensitive). Unknown project:, concept: and decision:
    subjects are created; people and core need --create.
    """


@claim.command("add")
@click.argument("subject")
@click.argument("statement")
@click.option("-k", "--kind", default="fact", show_default=True,
              type=click.Choice(["fact", "preference", "state", "decision", "note"], case_sensitive=False))
@click.option("--confidence", default=None, help="0 to 1, or low/medium/high.")
@click.option("--valid-from", default=None, help="Date or datetime the claim starts to hold.")
@click.option("--valid-to", default=None, help="Date (inclusive) or datetime the claim stops holding.")
@click.option("-e", "--evidence", default=None, help="Corpus path backing the claim (optionally PATH:START-END), a URL, or a free-text source.")
@click.option("--key", default=None, help="Attribute name (e.g. location): two current claims with one key that differ are a contradiction.")
@click.option("--reason", default=None, help="Why this is recorded.")
@click.option("--create", is_flag=True, help="Create the entity's page if it does not exist (needed for person: and core:).")
@_common
def add_cmd(subject: str, statement: str, kind: str, confidence: str | None, valid_from: str | None,
            valid_to: str | None, evidence: str | None, key: str | None, reason: str | None, create: bool,
            corpus_opt: Path | None, actor: str | None, dry_run: bool, show_diff: bool, as_json: bool) -> None:
    """Record STATEMENT about SUBJECT (STATEMENT `-` reads it from stdin)."""
    store = _store(corpus_opt, actor)
    result = _run(lambda: store.add(subject, _statement(statement), kind, confidence=confidence, valid_from=valid_from,
                                    valid_to=valid_to, evidence=evidence, key=key, reason=reason, create=create,
                                    dry_run=dry_run))
    _report(result, as_json, show_diff, corpus_opt)


@claim.command("replace")
@click.argument("subject")
@click.argument("statement")
@click.option("--old", "old", default=None, metavar="ID|TEXT",
              help="The claim to replace: its id, its statement, or a unique part of it.")
@click.option("-k", "--kind", default=None, type=click.Choice(["fact", "preference", "state", "decision", "note"], case_sensitive=False),
              help="Without --old: replace the single current claim of this kind. With --old: change the kind.")
@click.option("--confidence", default=None)
@click.option("--valid-from", default=None, help="When the new statement starts to hold (default: now).")
@click.option("--valid-to", default=None)
@click.option("-e", "--evidence", default=None)
@click.option("--key", default=None)
@click.option("--reason", default=None)
@_common
def replace_cmd(subject: str, statement: str, old: str | None, kind: str | None, confidence: str | None,
                valid_from: str | None, valid_to: str | None, evidence: str | None, key: str | None,
                reason: str | None, corpus_opt: Path | None, actor: str | None, dry_run: bool, show_diff: bool,
                as_json: bool) -> None:
    """Replace a claim of SUBJECT with STATEMENT (the old text moves to the history).

    \b
    commonplace claim replace atlas "Atlas is unblocked" --kind state
    commonplace claim replace alex "Alex lives in Munich" --old "lives in Berlin"
    """
    if old is None and kind is None:
        raise click.UsageError("say which claim to replace: --old ID|TEXT, or --kind K for the single current claim of that kind")
    store = _store(corpus_opt, actor)
    result = _run(lambda: store.replace(subject, _statement(statement), claim=old, kind=kind, key=key,
                                        confidence=confidence, valid_from=valid_from, valid_to=valid_to,
                                        evidence=evidence, reason=reason, dry_run=dry_run))
    _report(result, as_json, show_diff, corpus_opt)


@claim.command("retire")
@click.argument("subject")
@click.argument("claim_ref", metavar="CLAIM")
@click.option("--reason", required=True, help="Why it no longer holds.")
@click.option("--valid-to", default=None, help="When it stopped holding (default: now).")
@_common
def retire_cmd(subject: str, claim_ref: str, reason: str, valid_to: str | None, corpus_opt: Path | None,
               actor: str | None, dry_run: bool, show_diff: bool, as_json: bool) -> None:
    """Mark CLAIM (id, statement or unique part) of SUBJECT as no longer true; it stays in the history."""
    store = _store(corpus_opt, actor)
    result = _run(lambda: store.retire(subject, claim_ref, reason=reason, valid_to=valid_to, dry_run=dry_run))
    _report(result, as_json, show_diff, corpus_opt)


@claim.command("invalidate")
@click.argument("subject")
@click.argument("claim_ref", metavar="CLAIM")
@click.option("--reason", required=True, help="Why it was never true.")
@_common
def invalidate_cmd(subject: str, claim_ref: str, reason: str, corpus_opt: Path | None, actor: str | None,
                   dry_run: bool, show_diff: bool, as_json: bool) -> None:
    """Mark CLAIM of SUBJECT as never true: it drops out of current and past views."""
    store = _store(corpus_opt, actor)
    result = _run(lambda: store.invalidate(subject, claim_ref, reason=reason, dry_run=dry_run))
    _report(result, as_json, show_diff, corpus_opt)


@claim.command("forget")
@click.argument("subject")
@click.argument("statement", required=False)
@click.option("--reason", required=True, help="Why it is forgotten (recorded on the tombstone).")
@click.option("--all", "all_", is_flag=True, help="Forget every claim of SUBJECT (or every claim matching STATEMENT).")
@_common
def forget_cmd(subject: str, statement: str | None, reason: str, all_: bool, corpus_opt: Path | None,
               actor: str | None, dry_run: bool, show_diff: bool, as_json: bool) -> None:
    """Forget claims of SUBJECT: remove their text from the page, evidence, site and indexes.

    STATEMENT is a claim id, the statement, or a unique part of it. The log keeps the
    events; a tombstone page records the reason. A build purges it from the site and indexes.
    """
    if statement is None and not all_:
        raise click.UsageError("give the STATEMENT (or claim id) to forget, or --all for every claim of SUBJECT")
    store = _store(corpus_opt, actor)
    result = _run(lambda: store.forget(subject, statement, reason=reason, all=all_, dry_run=dry_run))
    _report(result, as_json, False, corpus_opt)


@claim.command("compile")
@click.argument("subject", required=False)
@corpus_option
def compile_cmd(subject: str | None, corpus_opt: Path | None) -> None:
    """Recompile canonical pages from the claim log (all, or SUBJECT's)."""
    store = _store(corpus_opt)
    changes = _run(lambda: store.compile(subject))
    changed = [c for c in changes if c.changed]
    for c in changed:
        click.echo(c.summary())
    click.echo(f"{len(changed)} page{'s' if len(changed) != 1 else ''} changed.")


def _line(c: dict[str, Any]) -> str:
    bits = []
    if c.get("key"):
        bits.append(f"key {_safe(c['key'], 60)}")
    if c.get("confidence") is not None:
        bits.append(f"confidence {_safe(c['confidence'], 20)}")
    if c.get("valid_from"):
        bits.append(f"since {c['valid_from']}")
    if c.get("valid_to"):
        bits.append(f"until {c['valid_to']}")
    bits.append(f"recorded {c['recorded_at'][:10]} by {_safe(c.get('actor') or '?', 60)}")
    text = "(forgotten)" if c.get("statement") is None else _safe(c["statement"])
    return f"  {c['claim_id']}  {c['kind']:<10}  {text}  [{'; '.join(bits)}]"


@claim.command("list")
@click.argument("subject", required=False)
@click.option("--as-of", default=None, help="Show what held on this date (end of day) or at this datetime.")
@click.option("--known-at", default=None, help="Only use events recorded by then (what was believed at that time).")
@click.option("--history", is_flag=True, help="Every claim in every state, with its versions and events.")
@click.option("--include-forgotten", is_flag=True, help="With --history: show forgotten text from the log (audits).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@corpus_option
def list_cmd(subject: str | None, as_of: str | None, known_at: str | None, history: bool, include_forgotten: bool,
             as_json: bool, corpus_opt: Path | None) -> None:
    """List current claims of SUBJECT (or of every entity)."""
    store = _store(corpus_opt)
    eid = _run(lambda: store.entity_id(subject)) if subject else None
    entity = store.registry().get(eid) if eid else None
    if eid and entity is None and not store.load().for_entity(eid):
        raise Problem(f"no entity {eid} yet")
    if history:
        if as_of or known_at:
            raise click.UsageError("--history lists every version of every claim; --as-of and --known-at "
                                   "show one moment: use one or the other")
        claims = _run(lambda: store.history(eid, include_forgotten=include_forgotten))
    else:
        when = as_of or store.now()
        claims = _run(lambda: store.as_of(eid, when, known_at=known_at))
    warnings = [str(w) for w in store.load().warnings]
    if as_json:
        emit_json({
            "entity": entity.as_dict() if entity else ({"id": eid, "exists": False} if eid else None),
            "as_of": as_of, "known_at": known_at, "history": history,
            "count": len(claims), "claims": claims, "warnings": warnings,
        })
        return
    for w in warnings[:20]:
        click.echo(f"warning: {_safe(w, 500)}", err=True)
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for c in claims:
        by_entity.setdefault(c["entity"], []).append(c)
    if not claims:
        click.echo(f"No claims{' for ' + eid if eid else ''}{' as of ' + as_of if as_of else ''}.")
        return
    reg = store.registry()
    for eid_, items in by_entity.items():
        e = reg.get(eid_)
        click.echo(f"{eid_}" + (f" — {_safe(e.title, 80)} ({e.path})" if e else ""))
        for c in items:
            click.echo(_line(c) + (f"  <{c['state']}>" if history else ""))
            if history:
                for ev in c.get("events", []):
                    what = ev.get("statement") if ev.get("event") in ("added", "replaced") else ev.get("reason")
                    shown = "" if what is None else f": {_safe(what, 200)}"
                    flag = " (forget)" if ev.get("forgotten") else ""
                    click.echo(f"      {ev['at'][:19]}  {ev['event']}{flag}{shown}  by {_safe(ev.get('actor') or '?', 60)}")
    click.echo(f"{len(claims)} claim{'s' if len(claims) != 1 else ''}.")
