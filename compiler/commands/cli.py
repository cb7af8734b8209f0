"""The `commonplace` command line: thin click wrappers over compiler calls.

Exit codes: 0 ok, 1 problems found or refused, 2 usage error. Heavy imports
(torch, whoosh, flask) happen inside commands, so `--help` stays instant.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from .. import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
MAX_WARNINGS = 20  # warnings a build prints; `lint` lists them all


# Set by `entry` (the console script) only: tests that call `main` in-process keep a
# normal return.
_QUICK_EXIT = False


def quick_exit_on_finish() -> None:
    """Called by the console script only (see `finish`)."""
    global _QUICK_EXIT
    _QUICK_EXIT = True


def finish(code: int) -> None:
    """End a command that holds a large heap (a build's documents, parse caches).

    Freeing it object by object and tearing the interpreter down cost 0.1 s after a
    2,000-page build and up to 0.5 s after 10,000 (measured): as the console script,
    flush and leave at once (`os._exit`); callers keep their results referenced until
    here, so nothing is freed first. Only when no other thread runs: one might be half
    way through a write.
    """
    import threading

    if _QUICK_EXIT and threading.active_count() == 1:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # closed pipe: nothing more can be said
                pass
        os._exit(code)
    if code:
        sys.exit(code)


class Problem(click.ClickException):
    """Refused or failed for a reason the user can act on: exit 1."""

    exit_code = 1


def corpus_option(f: Callable) -> Callable:
    return click.option(
        "-C", "--corpus", "corpus_opt", type=click.Path(file_okay=False, path_type=Path),
        default=None, help="Corpus folder (default: the current directory).",
    )(f)


def corpus_argument(f: Callable) -> Callable:
    """Optional first argument, equivalent to -C/--corpus."""
    f = click.argument("corpus_arg", metavar="[CORPUS]", required=False,
                       type=click.Path(file_okay=False, path_type=Path))(f)
    return corpus_option(f)


def pick_corpus(arg: Path | None, opt: Path | None, must_exist: bool = True) -> Path:
    if arg is not None and opt is not None and arg.resolve() != opt.resolve():
        raise click.UsageError(f"corpus given twice: {arg} and --corpus {opt}")
    root = arg or opt or Path(".")
    if must_exist and not root.is_dir():
        raise click.UsageError(f"corpus folder {str(root)!r} does not exist")
    return root


def out_option(f: Callable) -> Callable:
    return click.option(
        "--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("site"),
        show_default=True, help="Output folder for the built site.",
    )(f)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))


def _set_verbose(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from .. import progress

    if not ctx.resilient_parsing:
        # The group's flag (parsed first) sets the mode; a command's may only turn it on.
        on = value if ctx.parent is None else (value or progress.verbose())
        progress.configure(enabled=True, verbose=on)
    return value


def verbose_option(f: Callable) -> Callable:
    """-v/--verbose: let the libraries under commonplace (transformers, torch, OpenVINO,
    NNCF, ...) print their own logs and bars, and log commonplace's steps. On the group
    (`commonplace -v build`) and on the commands that load the model (`build -v`)."""
    return click.option("-v", "--verbose", is_flag=True, expose_value=False, is_eager=True,
                        callback=_set_verbose, help="Show the logs and progress bars of the libraries underneath.")(f)


def json_output(as_json: bool) -> None:
    """A command printing JSON draws no progress (stderr stays for errors)."""
    from .. import progress

    if as_json:
        progress.configure(enabled=False)


def _set_state_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        from ..model import STATE_ENV

        os.environ[STATE_ENV] = str(value.expanduser().resolve())  # servers and workers it starts inherit it


state_dir_option = click.option(
    "--state-dir", type=click.Path(file_okay=False, path_type=Path), callback=_set_state_dir, expose_value=False,
    is_eager=True, help="Keep derived state (indexes, manifest, tokens) in DIR instead of CORPUS/.commonplace.")


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="commonplace")
@verbose_option
@state_dir_option
def main() -> None:
    """commonplace: compile a folder of markdown memory into a wiki and search indexes."""


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@corpus_option
def init(directory: Path | None, corpus_opt: Path | None) -> None:
    """Create a new corpus with the conventional folders and a few example notes.

    Refuses, changing nothing, if any file it would write already exists.
    """
    from .scaffold import ScaffoldError, init_corpus

    root = pick_corpus(directory, corpus_opt, must_exist=False)
    try:
        created = init_corpus(root)
    except ScaffoldError as exc:
        raise Problem(str(exc)) from None
    click.echo(f"Created a corpus in {root} ({len(created)} files).")
    click.echo(f"Next: commonplace build {root} --out site")


@main.command()
@corpus_argument
@out_option
@click.option("--strict", is_flag=True, help="Exit 1 when there are warnings or broken links.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--no-embed", is_flag=True, help="Skip embeddings: build the BM25 index only.")
@click.option("--no-index", is_flag=True, help="Skip the search indexes: build the site only.")
@click.option("--clean", is_flag=True, help="Ignore what the last build left: rebuild everything.")
@click.option("--site-url", default="", help="Absolute URL the site is published at (for sitemap and feed).")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where parsing, rendering and embedding run: this machine, or a Ray cluster ('commonplace[ray]').")
@click.option("--address", default=None, metavar="HOST:PORT",
              help="The Ray cluster for --engine ray (default: RAY_ADDRESS, else a Ray started for this build).")
@verbose_option
def build(corpus_arg: Path | None, corpus_opt: Path | None, out: Path, strict: bool, as_json: bool,
          no_embed: bool, no_index: bool, clean: bool, site_url: str, engine: str, address: str | None) -> None:
    """Build the static wiki (and search indexes) from CORPUS.

    Incremental by default: only documents whose bytes changed since the last build,
    and the pages that show them, are redone. The result equals a clean build.
    """
    from ..build.pipeline import BuildOptions, build_state
    from ..engines import EngineError
    from ..site.output import OutputError

    root = pick_corpus(corpus_arg, corpus_opt)
    if address and engine != "ray":
        raise click.UsageError("--address needs --engine ray")
    json_output(as_json)
    if engine == "ray":
        from ..engines.ray_guard import supervise

        supervise()  # Ray can end a driver silently; the supervisor then says what happened
    from .build_summary import json_fields, site_ready_line, summary_lines

    ready: list[int] = []  # chunks waiting for a vector once the site is ready

    def on_site_ready(seconds: float, waiting: int) -> None:
        """Said only when embedding follows (otherwise the summary comes at once)."""
        ready.append(waiting)
        if not waiting or no_embed or no_index:
            return
        interrupt_on_term()  # a SIGTERM while embedding ends it like Ctrl-C: workers stopped
        if not as_json:
            click.echo(site_ready_line(seconds, out, waiting))
            sys.stdout.flush()

    opts = BuildOptions(corpus=root, out=out, strict=strict, embed=not no_embed, site_url=site_url,
                        progress=not as_json, clean=clean, index=not no_index, engine=engine, address=address,
                        on_site_ready=on_site_ready)
    try:
        result, state = build_state(opts)
    except (OutputError, EngineError) as exc:
        raise Problem(str(exc)) from None
    except KeyboardInterrupt:
        if not ready or not ready[0] or no_embed or no_index:
            raise
        click.echo(f"Embedding interrupted: the site and word search are complete; the next build embeds "
                   f"the chunks still waiting (of {ready[0]:,}), keeping every vector already made.", err=True)
        sys.exit(130)

    if as_json:
        emit_json({**result.as_dict(), **json_fields(result, out)})
    else:
        for w in result.warnings[:MAX_WARNINGS]:
            click.echo(f"warning: {w}", err=True)
        if len(result.warnings) > MAX_WARNINGS:
            click.echo(f"warning: ... and {len(result.warnings) - MAX_WARNINGS} more (see commonplace lint)", err=True)
        for line in summary_lines(result, out, root, embed=not no_embed and not no_index):
            click.echo(line)
    finish(1 if strict and not result.ok else 0)  # `state` is still referenced: see finish


def interrupt_on_term() -> None:
    """SIGTERM raises KeyboardInterrupt from here on (the main thread only), so the
    embedding's worker processes are stopped and its unfinished generation dropped."""
    import signal
    import threading

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)


@main.command()
@corpus_argument
@click.option("--strict", is_flag=True, help="Exit 1 when anything is found.")
@click.option("--json", "as_json", is_flag=True, help="Print findings as JSON.")
def lint(corpus_arg: Path | None, corpus_opt: Path | None, strict: bool, as_json: bool) -> None:
    """Report broken or ambiguous links, missing attachments, self-links, bad frontmatter, duplicate titles.

    Each finding is an error or a warning. Exits 1 when there is an error (any finding
    with --strict).
    """
    from ..build.pipeline import load_corpus
    from ..build.lint import lint as run_lint

    root = pick_corpus(corpus_arg, corpus_opt)
    findings = run_lint(load_corpus(root.resolve(), Path("site").resolve()))
    serious = [f for f in findings if f.severity == "error"]
    if as_json:
        emit_json({"findings": [f.as_dict() for f in findings], "count": len(findings),
                   "errors": len(serious), "warnings": len(findings) - len(serious)})
    else:
        for f in findings:
            click.echo(str(f))
        n = len(findings)
        click.echo(f"{n} finding{'s' if n != 1 else ''}.")
        if n:
            click.echo(f"{len(serious)} error{'s' if len(serious) != 1 else ''}, "
                       f"{n - len(serious)} warning{'s' if n - len(serious) != 1 else ''}.")
    if serious or (strict and findings):
        sys.exit(1)


@main.command()
@corpus_argument
@out_option
@click.option("--no-embed", is_flag=True, help="Keep the BM25 index only (no embeddings).")
@verbose_option
def watch(corpus_arg: Path | None, corpus_opt: Path | None, out: Path, no_embed: bool) -> None:
    """Build CORPUS, then rebuild what changed every time a file is saved (Ctrl-C stops)."""
    import signal
    import threading

    from ..live.corpus import LiveCorpus
    from ..site.output import OutputError

    root = pick_corpus(corpus_arg, corpus_opt)
    live = LiveCorpus(root, out, embed=not no_embed)
    try:
        result = live.open()
    except OutputError as exc:
        raise Problem(str(exc)) from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    live.watch(echo=lambda line: click.echo(line))  # before saying so: a save right after the line counts
    click.echo(f"Built {result.documents} documents in {result.seconds:.1f} s; watching {root.resolve()} "
               f"(site: {(out / 'index.html').resolve()}). Ctrl-C stops.")
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        live.close()
        click.echo("Stopped watching.")
