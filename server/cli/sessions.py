"""`commonplace digest`, `proposals`, `compact`, `uncompact`: the sessions operations from
the command line, the same operations as `/v1/digest`, `/v1/memory-propose`,
`/v1/proposals...`, `/v1/compact`, `/v1/uncompact` (server/ops/).

When a server runs for the corpus (`.commonplace/server.json`), the command goes to it
(token in COMMONPLACE_TOKEN), so its site and search see the change at once. Otherwise
it runs here, and an incremental build follows any change (unless --no-build).

    commonplace digest (--session PATH | --date YYYY-MM-DD) [--no-propose] [--json]
    commonplace proposals create|list|show|apply|reject ...
    commonplace compact [--older-than DAYS] [--dry-run]
    commonplace uncompact PATH
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import click

from commonplace.compiler.commands.cli import CONTEXT_SETTINGS, Problem, corpus_option, emit_json, out_option, pick_corpus


class _Offline:
    """A stand-in for the live corpus when no server runs: it remembers what changed so
    one incremental build can follow."""

    def __init__(self) -> None:
        self.changed: set[str] = set()
        self.purged = False

    def refresh(self, paths: list[str]) -> Any:
        self.changed.update(paths)
        return SimpleNamespace(indexed=False)

    def commit(self, paths: Any, *, before: Any = None, purge: bool = False) -> Any:
        """`LiveContract.commit`: nothing is searchable until the build that follows."""
        from commonplace.compiler.live.commit import Committed

        self.refresh(list(paths))
        self.purged = self.purged or purge
        return Committed(list(paths), indexed=False)

    def purge(self) -> None:
        self.purged = True  # the build that follows purges derived state


def run_op(root: Path, out: Path, name: str, args: dict[str, Any], *, local: bool = False, build: bool = True,
           embed: bool = True) -> dict[str, Any]:
    """Run registry route `name` with `args` on a running server, else here (and build)."""
    from ..errors import ApiError
    from ..registry import BY_NAME

    route = BY_NAME[name]
    args = {k: v for k, v in args.items() if v is not None}
    if not local:
        from ..client import server_url
        from ..mcp.backend import call_server

        url = server_url(root.resolve())
        if url is not None:
            try:
                return call_server(url, route, args)
            except ApiError as exc:
                raise Problem(exc.message) from None
    from ..ops import OpContext
    from ..validation import validate

    root = root.resolve()
    outp = out.resolve()
    excluded = (outp,) if outp.is_relative_to(root) else ()
    offline = _Offline()
    ctx = OpContext(live=offline, root=root, out=outp, excluded=excluded,
                    actor=os.environ.get("COMMONPLACE_ACTOR") or "cli")
    try:
        data = route.call(ctx, validate(route.model, body=args))
    except ApiError as exc:
        raise Problem(exc.message) from None
    if offline.purged:  # owed until a build purges the indexes, even if this one is interrupted
        from commonplace.compiler.build import parse_cache, purging

        parse_cache.clear(root)
        purging.request(root)
    if offline.changed and build:
        from commonplace.compiler.build.pipeline import BuildOptions
        from commonplace.compiler.build.pipeline import build as run_build

        try:
            run_build(BuildOptions(corpus=root, out=out, embed=embed, progress=False))
            data["indexed"] = True
        except Exception as exc:  # noqa: BLE001 - the change itself landed
            data["message"] = f"done; the rebuild failed ({type(exc).__name__}); run `commonplace build`"
    return data


def _common(f: Callable) -> Callable:
    for deco in reversed((
        corpus_option, out_option,
        click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON (as the HTTP API gives it)."),
        click.option("--local", is_flag=True, help="Run here even when a server for the corpus is running."),
        click.option("--no-build", is_flag=True, help="Do not update the site and indexes afterwards."),
        click.option("--no-embed", is_flag=True, help="Update the site and BM25 index only."),
    )):
        f = deco(f)
    return f


def _run(o: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    root = pick_corpus(None, o["corpus_opt"])
    return run_op(root, o["out"], name, args, local=o["local"], build=not o["no_build"], embed=not o["no_embed"])


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--session", default=None, help="A session transcript: logs/sessions/...md.")
@click.option("--date", default=None, help="Or a day (YYYY-MM-DD): every session of that day.")
@click.option("--no-propose", is_flag=True, help="Do not store proposals from the digest.")
@click.option("--no-llm", is_flag=True, help="Never call the configured LLM endpoint (extractive only).")
@click.option("--print", "show", is_flag=True, help="Print the digest page instead of a summary line.")
@_common
def digest(session: str | None, date: str | None, no_propose: bool, no_llm: bool, show: bool, **o: Any) -> None:
    """Distil a session (or a day of sessions) into logs/digests/ (decisions, facts, open
    questions, follow-ups, each with its source lines); decisions become proposals."""
    data = _run(o, "digest", {"session": session, "date": date, "propose": not no_propose, "use_llm": not no_llm})
    if o["as_json"]:
        emit_json(data)
    elif show:
        click.echo(data["content"], nl=False)
    else:
        d = data["digest"]
        stored = [p["id"] for p in data.get("proposals", []) if p.get("stored")]
        click.echo(f"{data['path']}: {data['action']} ({len(d['items'])} items from {len(d['sources'])} session(s), "
                   f"{d['digest_tokens']} of {d['session_tokens']} tokens, {d['generator']}); "
                   f"{len(stored)} proposal(s)" + (": " + ", ".join(stored) if stored else ""))


@click.group(context_settings=CONTEXT_SETTINGS)
def proposals() -> None:
    """Semantic memory proposed for review: create, list, show, apply, reject."""


@proposals.command("create", context_settings=CONTEXT_SETTINGS)
@click.argument("subject")
@click.argument("content")
@click.option("--kind", type=click.Choice(["fact", "preference", "state", "decision", "note"]), default="fact",
              show_default=True)
@click.option("--action", type=click.Choice(["write", "replace", "forget"]), default="write", show_default=True)
@click.option("--scope", type=click.Choice(["person", "project", "concept", "decision", "core"]), default=None)
@click.option("--confidence", type=click.Choice(["high", "medium", "low"]), default=None)
@click.option("--reason", default=None)
@click.option("--source", default=None, help="Where it came from (path#L3-L7, URL, text).")
@_common
def create(subject: str, content: str, kind: str, action: str, scope: str | None, confidence: str | None,
           reason: str | None, source: str | None, **o: Any) -> None:
    """Propose a memory write about SUBJECT (dry run stored under inbox/proposed/)."""
    data = _run(o, "memory_propose", {"subject": subject, "content": content, "kind": kind, "action": action,
                                      "scope": scope, "confidence": confidence, "reason": reason, "source": source,
                                      "source_paths": [source] if source else [], "origin": "cli"})
    if o["as_json"]:
        emit_json(data)
    elif not data.get("stored"):
        raise Problem(f"not proposed: {data.get('message')}")
    else:
        planned = data.get("planned") or {}
        click.echo(f"{data['id']}: proposed -> {planned.get('target_path')} ({planned.get('subject_ref')})"
                   + (f" [{', '.join(data['risk_flags'])}]" if data.get("risk_flags") else ""))


@proposals.command("list", context_settings=CONTEXT_SETTINGS)
@click.option("--status", type=click.Choice(["proposed", "applied", "rejected", "all"]), default="proposed",
              show_default=True)
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@_common
def list_(status: str, limit: int, **o: Any) -> None:
    """List proposals (waiting for review by default)."""
    data = _run(o, "proposals_list", {"status": status, "limit": limit})
    if o["as_json"]:
        emit_json(data)
        return
    if not data["proposals"]:
        click.echo(f"No {status} proposals." if status != "all" else "No proposals.")
    for p in data["proposals"]:
        planned = p.get("planned") or {}
        click.echo(f"{p['id']}  {p['status']:<8}  {p['kind']:<10} {planned.get('subject_ref')}: {p['content']}")


@proposals.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("proposal_id")
@_common
def show_(proposal_id: str, **o: Any) -> None:
    """Show one proposal with its preview."""
    data = _run(o, "proposals_show", {"id": proposal_id})
    if o["as_json"]:
        emit_json(data)
        return
    planned = data.get("planned") or {}
    click.echo(f"{data['id']} ({data['status']}): {data['action']} {data['kind']} about {data['subject']}")
    click.echo(f"  planned: {planned.get('target_path')} ({planned.get('subject_ref')})")
    click.echo(f"  statement: {data['content']}")
    for f in data.get("risk_flags") or []:
        click.echo(f"  risk: {f}")
    for s in data.get("source_paths") or []:
        click.echo(f"  source: {s}")
    if data.get("preview"):
        click.echo(data["preview"])


@proposals.command("apply", context_settings=CONTEXT_SETTINGS)
@click.argument("proposal_id")
@click.option("--dry-run", is_flag=True, help="Only check that it would apply.")
@_common
def apply_(proposal_id: str, dry_run: bool, **o: Any) -> None:
    """Apply a proposal (refused if its route changed since it was proposed)."""
    data = _run(o, "proposals_apply", {"id": proposal_id, "dry_run": dry_run})
    if o["as_json"]:
        emit_json(data)
    else:
        click.echo(f"{proposal_id}: {data.get('result')} -> {data.get('target_path') or data.get('planned')}; "
                   f"{data.get('path')}")


@proposals.command("reject", context_settings=CONTEXT_SETTINGS)
@click.argument("proposal_id")
@click.option("--reason", default=None)
@_common
def reject_(proposal_id: str, reason: str | None, **o: Any) -> None:
    """Reject a proposal (moved to inbox/rejected/; memory unchanged)."""
    data = _run(o, "proposals_reject", {"id": proposal_id, "reason": reason})
    if o["as_json"]:
        emit_json(data)
    else:
        click.echo(f"{proposal_id}: rejected; {data['path']}")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--older-than", "older", type=click.FloatRange(0, None), default=30.0, show_default=True,
              help="Compact transcripts older than this many days (never the most recent third).")
@click.option("--dry-run", is_flag=True, help="List what would be compacted.")
@_common
def compact(older: float, dry_run: bool, **o: Any) -> None:
    """Compact old session transcripts: the gist stays, the original goes to logs/blobs/."""
    data = _run(o, "compact", {"older_than_days": older, "dry_run": dry_run})
    if o["as_json"]:
        emit_json(data)
        return
    paths = data["would_compact"] if dry_run else data["compacted"]
    verb = "would compact" if dry_run else "compacted"
    click.echo(f"{verb} {data['count']} transcript(s); {data['kept_recent']} recent kept as they are")
    for p in paths:
        click.echo(f"  {p}")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("path")
@_common
def uncompact(path: str, **o: Any) -> None:
    """Put a compacted session transcript back, byte for byte."""
    data = _run(o, "uncompact", {"path": path})
    if o["as_json"]:
        emit_json(data)
    else:
        click.echo(f"{data['path']}: {'restored' if data['uncompacted'] else 'was not compacted'} ({data['hash']})")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("target")
@click.option("--reason", default=None, help="Why (needed to delete or erase).")
@click.option("--expected-hash", default=None, help="Current sha256:<hex> of the file (a file purge).")
@click.option("--allow-canonical", is_flag=True, help="Needed for canonical memory, claims and entities.")
@click.option("--yes", is_flag=True, help="Do it (without: only say what would go).")
@_common
def purge(target: str, reason: str | None, expected_hash: str | None, allow_canonical: bool, yes: bool,
          **o: Any) -> None:
    """Delete a file for good, or erase a claim (`claim:<id>`) or an entity (`person:alex`)
    from the claim log, pages, artifacts and indexes (`forget` keeps history; this does not)."""
    data = _run(o, "purge", {"target": target, "reason": reason, "expected_hash": expected_hash,
                             "allow_canonical": allow_canonical, "dry_run": not yes})
    if o["as_json"]:
        emit_json(data)
        return
    verb = "would go" if data["dry_run"] else "erased" if data.get("erased") else "purged"
    click.echo(f"{target}: {verb}" + (f" ({len(data['claims'])} claim(s))" if "claims" in data else "")
               + (f"; files: {', '.join(data['paths'])}" if data.get("paths") else ""))


COMMANDS = (digest, proposals, compact, uncompact, purge)
