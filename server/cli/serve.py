"""`commonplace serve`: the wiki at / and the /v1 API, under waitress (see `runner.py`).

    commonplace serve [CORPUS] [--host 127.0.0.1] [--port 8766] [--out site] [--watch]
                      [--no-auth] [--no-embed] [--max-body 1MiB] [--threads 8] [--allowed-host NAME]
                      [--trusted-proxy ADDRESS] [--migrate-root DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from commonplace.compiler.commands.cli import CONTEXT_SETTINGS, Problem, corpus_argument, out_option, pick_corpus

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b?)?\s*$", re.I)


def parse_size(text: str) -> int:
    m = _SIZE.match(text)
    if not m:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 1048576, 512KiB, 1MiB)")
    n = int(m.group(1))
    unit = m.group(2).lower()
    return n * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit]


@click.command(context_settings=CONTEXT_SETTINGS)
@corpus_argument
@out_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8766, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free port).")
@click.option("--watch", is_flag=True, help="Also rebuild when files change on disk (editor saves).")
@click.option("--no-auth", is_flag=True, envvar=["COMMONPLACE_ALLOW_NO_AUTH", "DORY_ALLOW_NO_AUTH"],
              help="No token needed for anything (loopback binds only; also COMMONPLACE_ALLOW_NO_AUTH or "
                   "DORY_ALLOW_NO_AUTH=true).")
@click.option("--loopback-reads", is_flag=True, help="Reads from this machine need no token (loopback binds only); "
                                                     "writes still do.")
@click.option("--no-embed", is_flag=True, help="No embedding model: BM25 search only.")
@click.option("--max-body", default="1MiB", show_default=True, help="Largest request body accepted (413 above).")
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256), help="Worker threads.")
@click.option("--allowed-host", "allowed_hosts", multiple=True,
              help="Extra Host header names to answer to (for a non-loopback bind behind a name).")
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS",
              help="A reverse proxy in front of this server (an address or network, e.g. 127.0.0.1): the client "
                   "address it puts in X-Forwarded-For/Forwarded decides who is local, and its X-Forwarded-Proto "
                   "whether cookies are Secure. Without it, a request carrying forwarding headers is never local.")
@click.option("--migrate-root", "migrate_roots", multiple=True, metavar="DIR",
              help="A folder /v1/migrate may import from (repeatable; also COMMONPLACE_MIGRATE_ROOTS). Without "
                   "one, /v1/migrate is off.")
@click.option("--access-log", is_flag=True, help="Log one line per request (request id, method, path, status, ms).")
@click.option("--compact-after", type=click.FloatRange(0, None), default=None, metavar="DAYS",
              help="Compact session transcripts older than DAYS, now and every hour (never the most recent third).")
def serve(corpus_arg: Path | None, corpus_opt: Path | None, out: Path, host: str, port: int, watch: bool,
          no_auth: bool, loopback_reads: bool, no_embed: bool, max_body: str, threads: int, allowed_hosts: tuple[str, ...],
          trusted_proxies: tuple[str, ...], migrate_roots: tuple[str, ...], access_log: bool,
          compact_after: float | None) -> None:
    """Serve the wiki at / and Dory's /v1 API (search, get, write, memory-write, wake, ...).

    As in Dory, every /v1 request needs `Authorization: Bearer <token>` (see `commonplace
    token new`, or `token import` for a Dory token file) unless --no-auth; --loopback-reads
    lets reads from this machine in without one. The site at / is open to this machine. A
    non-loopback --host refuses to start without tokens.
    """
    import logging

    from ..app import create_app
    from ..context import ServerConfig, is_loopback
    from ..tokens import TokenStore

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("commonplace.server").setLevel(logging.INFO if access_log else logging.WARNING)
    root = pick_corpus(corpus_arg, corpus_opt).resolve()
    body_limit = parse_size(max_body)
    if body_limit < 1024:
        raise click.BadParameter("must be at least 1KiB", param_hint="--max-body")
    loopback = is_loopback(host)
    import ipaddress

    for proxy in trusted_proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise click.BadParameter(f"{proxy!r} is not an IP address or network", param_hint="--trusted-proxy") from None
    if no_auth and not loopback:
        raise Problem(f"--no-auth is only allowed on a loopback address, not {host}")
    if not loopback and not TokenStore(root).has_tokens():
        raise Problem(f"refusing to listen on {host} without tokens: create one with "
                      f"`commonplace token new NAME -C {root}` first")

    from commonplace.compiler.live.corpus import LiveCorpus

    live = LiveCorpus(root, out, embed=not no_embed, vectors="later")  # answers before the vectors exist
    if loopback_reads and not loopback:
        raise Problem(f"--loopback-reads is only allowed on a loopback address, not {host}")
    cfg = ServerConfig(corpus=root, out=out, host=host, port=port, no_auth=no_auth, loopback_reads=loopback_reads,
                       max_body=body_limit,
                       allowed_hosts=list(allowed_hosts), trusted_proxies=list(trusted_proxies),
                       migrate_roots=[str(Path(m).expanduser()) for m in migrate_roots], threads=threads)
    app = create_app(live, cfg)

    from .. import runner

    if compact_after is not None:
        import os

        from ..ops.compaction import Schedule

        interval = float(os.environ.get("COMMONPLACE_COMPACT_INTERVAL", "3600"))
        Schedule(live, root, out, compact_after, interval).start()

    try:
        code = runner.run(app, live, cfg, threads=threads, watch=watch, embed=not no_embed, say=click.echo,
                          warn=lambda line: click.echo(line, err=True))
    except runner.BindError as exc:
        raise Problem(str(exc)) from None
    if code:
        sys.exit(code)
