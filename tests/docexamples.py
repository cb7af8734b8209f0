"""Runs the command examples of the documentation and checks they do what the text says.

What counts as an example (the convention is written up in docs/core/conventions.md):

- every line of a fenced code block whose info string starts with `sh` (continuation lines
  ending in `\\` joined), run in order, one scratch folder per page, with `bash -c`;
- a block whose info string says `not-run: <why>` is not run (and must say why);
- set-up steps (`python -m venv`, activating a virtualenv, `pip install`) are taken as
  done: the test runs inside an environment where commonplace is installed;
- `commonplace serve` (given `--port 0`), `watch` and `mcp` run until they have shown they
  work (ready line and /healthz; a rebuild after a save; an MCP handshake), then stop;
  a server started by an example stays up for the page's later examples;
- `/home/me/` stands for the reader's home folder: it becomes a folder of the scratch,
  where `/home/me/notes` is a corpus (a copy of docs/);
- an example that calls `http://127.0.0.1:8766` gets the page's server (one is started on
  the scratch copy of docs/ when no example started one) and its token in COMMONPLACE_TOKEN;
- inline code in the prose that names a command (`` `commonplace build --clean` ``) must
  parse: every subcommand and option it names exists.

Each example must exit 0 with nothing alarming on stderr (a traceback, `Error:`, a
warning), unless its expectation says otherwise; expectations keyed by the command add
checks on what the page promises (files written, output, JSON fields).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
STANDIN_SITE = Path(__file__).resolve().parent / "docexamples_site"
DEFAULT_URL = "http://127.0.0.1:8766"
HOME = "/home/me/"  # stands for the reader's home folder in examples (MCP hosts want absolute paths)
SHELLS = {"sh", "bash", "shell", "console"}
SETUP = re.compile(r"^(python3? -m venv \S+|\. \S*bin/activate|source \S*bin/activate|pip3? install .*)$")
LONG_RUNNING = re.compile(r"^commonplace\s+(?:-v\s+)?(serve|watch|mcp)\b(?!.*<)")  # `< /dev/null`: runs and ends
ALARMING = re.compile(r"Traceback \(most recent call last\)|^Error:|^warning:|^\[transformers\]|Loading weights",
                      re.M)
TIMEOUT = 180.0


@dataclass
class Example:
    page: str  # path shown in reports (docs/references/cli.md)
    line: int  # 1-based line of the command in the page
    command: str  # shell text, continuation lines joined
    skip: str | None = None  # why it is not run (`not-run: ...`), None when it runs

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Outcome:
    example: Example
    command: str  # as run (URL substituted, --port 0 added)
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    url: str | None = None  # a server's URL, for serve examples

    def show(self) -> str:
        return (f"{self.example.where}: `{self.command}` exited {self.code} in {self.seconds:.1f} s\n"
                f"--- stdout (end)\n{self.stdout[-1500:]}\n--- stderr (end)\n{self.stderr[-1500:]}")


Expectation = Callable[[Outcome, "Session"], list[str]]


# -- finding examples -------------------------------------------------------------------

def _parse(text: str) -> list:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").parse(text)


def examples_in(page: str, text: str) -> list[Example]:
    """The command examples of one page, in order."""
    out: list[Example] = []
    for tok in _parse(text):
        if tok.type != "fence":
            continue
        info = tok.info.strip()
        lang = info.split(None, 1)[0] if info else ""
        if lang not in SHELLS:
            continue
        rest = info[len(lang):].strip()
        skip = None
        if rest.startswith("not-run"):
            skip = rest[len("not-run"):].lstrip(":").strip() or ""
        first = tok.map[0] + 2  # the fence line is map[0]; content starts on the next line
        pending, start = "", first
        for i, raw in enumerate(tok.content.splitlines()):
            if not pending:
                start = first + i
            line = raw.rstrip()
            if line.endswith("\\"):
                pending += line[:-1].rstrip() + " "
                continue
            command = (pending + line.strip()).strip()
            pending = ""
            if command and not command.startswith("#"):
                out.append(Example(page, start, command, skip))
    return out


def mentions_in(page: str, text: str) -> list[tuple[int, str]]:
    """(line, text) of inline code in the prose that starts with `commonplace `."""
    out = []
    for tok in _parse(text):
        if tok.type != "inline" or not tok.children:
            continue
        for child in tok.children:
            if child.type == "code_inline" and (child.content + " ").startswith("commonplace "):
                out.append((tok.map[0] + 1 if tok.map else 0, child.content))
    return out


def strip_comment(command: str) -> str:
    """The command without a trailing `# comment` (one with no quotes after the `#`)."""
    cut = re.search(r"\s#[^'\"]*$", command)
    return (command[: cut.start()] if cut else command).strip()


def normalize(command: str) -> str:
    """How expectations are keyed: no trailing comment, one space between words."""
    return " ".join(strip_comment(command).split())


def strip_setup(command: str) -> str:
    """The command without the set-up steps it starts with (`... && pip install . && X`)."""
    steps = [s.strip() for s in command.split(" && ")]
    while steps and SETUP.match(steps[0]):
        steps.pop(0)
    return " && ".join(steps)


# -- the inline-mention check (in-process, click only) ------------------------------------

_PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_]+|<.*>|\.\.\.|…)$")


def check_mention(span: str) -> str | None:
    """None when `span` names commands and options that exist; else what is wrong.

    A template (`commonplace build [CORPUS] [--out DIR]`, `claim add|replace`) only needs
    its command path and every `--option` it names to exist; a concrete command line must
    parse (a missing argument is fine: prose often names a command without its arguments).
    """
    import click

    from commonplace.server.cli import main

    try:
        words = shlex.split(span)
    except ValueError as exc:
        return f"`{span}`: {exc}"
    if len(words) > 1 and not re.match(r"^(-|[A-Za-z][\w|-]*$|\[)", words[1]):
        return None  # not a command line (`commonplace = "commonplace.server.cli:entry"`)
    cmd: click.Command = main
    path = ["commonplace"]
    rest = words[1:]
    while isinstance(cmd, click.Group) and rest and not rest[0].startswith("-"):
        name = rest[0]
        if "|" in name:  # `claim add|replace|...`: each alternative must exist
            missing = [n for n in name.split("|") if cmd.get_command(click.Context(cmd), n) is None]
            return f"`{span}`: no command {' '.join(path)} {'/'.join(missing)}" if missing else None
        if _PLACEHOLDER.match(name):
            return None  # `commonplace COMMAND --help`
        sub = cmd.get_command(click.Context(cmd), name)
        if sub is None:
            return f"`{span}`: no command `{' '.join(path)} {name}`"
        cmd, path, rest = sub, path + [name], rest[1:]
    if isinstance(cmd, click.Group) and not rest:
        return None  # names a group of commands (`commonplace claim`)
    template = any(_PLACEHOLDER.match(w) or w.startswith("[") or "|" in w for w in rest)
    if template:
        names = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        for w in rest:
            for opt in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", w):
                if opt.startswith("--") or len(opt) == 2:
                    if opt not in names and opt not in ("-h", "--help"):
                        return f"`{span}`: {' '.join(path)} has no option {opt}"
        return None
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # `--help`, `--version` print
            ctx = cmd.make_context(" ".join(path), list(rest))
        ctx.close()
    except click.exceptions.Exit:
        return None
    except click.MissingParameter:
        return None
    except click.UsageError as exc:
        return f"`{span}`: {exc.format_message()}"
    return None


# -- running ----------------------------------------------------------------------------

def base_env(scratch: Path, standin: bool) -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["COMMONPLACE_ACTOR"] = "doc-examples"
    env["HF_HUB_OFFLINE"] = "1"
    for key in ("COMMONPLACE_TOKEN", "COMMONPLACE_ALLOW_NO_AUTH", "DORY_ALLOW_NO_AUTH", "PYTHONPATH"):
        env.pop(key, None)
    if standin:  # see docexamples_site/sitecustomize.py
        env["PYTHONPATH"] = str(STANDIN_SITE)
        env["COMMONPLACE_TEST_STANDIN_EMBEDDER"] = "1"
        env["COMMONPLACE_CACHE_DIR"] = str(scratch / ".model-cache")
    return env


class _Reader:
    """Collects a process's output lines in a thread; `wait_for(pattern)` blocks."""

    def __init__(self, stream) -> None:  # noqa: ANN001
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._done = False
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:  # noqa: ANN001
        for raw in iter(stream.readline, ""):
            with self._cond:
                self.lines.append(raw.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def wait_for(self, pattern: re.Pattern, timeout: float, after: int = 0) -> re.Match | None:
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines[after:]:
                    m = pattern.search(line)
                    if m:
                        return m
                left = end - time.monotonic()
                if left <= 0 or self._done:
                    return None
                self._cond.wait(min(left, 0.5))

    def wait_closed(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        with self._cond:
            while not self._done and time.monotonic() < end:
                self._cond.wait(0.2)


@dataclass
class _Running:
    example: Example
    command: str
    proc: subprocess.Popen
    out: _Reader
    err: _Reader
    started: float


def http(url: str, path: str, token: str | None = None, body: dict | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method="POST" if body is not None else "GET",
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


@dataclass
class Session:
    """One page's scratch folder (a copy of docs/ in it), its servers, and what was run."""

    scratch: Path
    standin: bool = True
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None  # the page's server, once one runs
    servers: list[_Running] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        shutil.copytree(REPO / "docs", self.scratch / "docs",
                        ignore=shutil.ignore_patterns(".commonplace", "site", "__pycache__"))
        self.env = base_env(self.scratch, self.standin)

    # -- one example
    def run(self, ex: Example) -> Outcome:
        command = strip_comment(strip_setup(ex.command))
        if HOME in command:  # "your home folder": a folder of the scratch, with a corpus in notes/
            home = self.scratch / HOME.strip("/")
            if not (home / "notes").exists():
                shutil.copytree(self.scratch / "docs", home / "notes",
                                ignore=shutil.ignore_patterns(".commonplace", "site"))
            command = command.replace(HOME, str(home) + "/")
        if DEFAULT_URL in command:
            self.ensure_server()
            command = command.replace(DEFAULT_URL, self.url or DEFAULT_URL)
        kind = LONG_RUNNING.match(command)
        if kind:
            outcome = {"serve": self._serve_example, "watch": self._watch, "mcp": self._mcp}[kind.group(1)](ex, command)
        else:
            t0 = time.monotonic()
            try:
                p = subprocess.run(["bash", "-c", command], cwd=self.scratch, env=self.env, capture_output=True,
                                   text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
                outcome = Outcome(ex, command, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
            except subprocess.TimeoutExpired as exc:
                outcome = Outcome(ex, command, None, str(exc.stdout or ""), f"timed out after {TIMEOUT} s",
                                  time.monotonic() - t0)
        self.outcomes.append(outcome)
        return outcome

    def _start(self, ex: Example, command: str, stdin: int = subprocess.DEVNULL) -> _Running:
        proc = subprocess.Popen(["bash", "-c", "exec " + command], cwd=self.scratch, env=self.env, text=True,
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return _Running(ex, command, proc, _Reader(proc.stdout), _Reader(proc.stderr), time.monotonic())

    def _serve_example(self, ex: Example, command: str) -> Outcome:
        """Start the server, check it answers (/healthz, the site at /), stop it with
        SIGTERM: it must stop cleanly. Stopped at once, so that later examples on the page
        (a `write`, a `search`) do not go through it without a token."""
        outcome = self._serve(ex, command)
        if outcome.url is None:
            return outcome
        run = self.servers.pop()
        problems = []
        for path in ("/healthz", "/"):
            try:
                status, _ = http(outcome.url, path)
            except OSError as exc:
                status = f"no answer ({exc})"
            if status != 200:
                problems.append(f"GET {path}: {status}")
        outcome.code = self._stop(run)
        if self.url == outcome.url:
            self.url = None
        outcome.stdout, outcome.stderr = run.out.text(), run.err.text() + "".join(
            f"\n(doc-examples: {p})" for p in problems)
        if problems and outcome.code == 0:
            outcome.code = 1
        return outcome

    def _serve(self, ex: Example, command: str) -> Outcome:
        if re.search(r"--port[ =]\d+", command):
            command = re.sub(r"--port[ =]\d+", "--port 0", command)
        else:
            command += " --port 0"
        run = self._start(ex, command)
        m = run.out.wait_for(re.compile(r"ready at (http://\S+)"), TIMEOUT)
        outcome = Outcome(ex, command, run.proc.poll(), run.out.text(), run.err.text(),
                          time.monotonic() - run.started)
        if m is None:
            self._stop(run)
            outcome.code = run.proc.returncode if run.proc.returncode is not None else -1
            outcome.stdout, outcome.stderr = run.out.text(), run.err.text() + "\n(no `ready at URL` line)"
            return outcome
        outcome.code = 0  # running: the exit code is checked when the page ends
        outcome.url = m.group(1)
        self.url = self.url or outcome.url
        self.servers.append(run)
        return outcome

    def _watch(self, ex: Example, command: str) -> Outcome:
        """Start the watcher, save a new note into the corpus it watches, expect one line
        about the rebuild, stop it with SIGTERM (as Ctrl-C would)."""
        run = self._start(ex, command)
        problems = []
        if run.out.wait_for(re.compile(r"watching"), TIMEOUT) is None:
            problems.append("no `watching` line")
        else:
            seen = len(run.out.lines)
            time.sleep(0.5)  # a person saves a while after the line, not within milliseconds
            note = self.scratch / _corpus_of(command) / "watch-check.md"
            note.write_text("# Watch check\n\nSaved while `commonplace watch` runs.\n", encoding="utf-8")
            if run.out.wait_for(re.compile(r"\S"), 60, after=seen) is None:
                problems.append("no line about the rebuild after a save")
        code = self._stop(run)
        return Outcome(ex, command, code if not problems else 1, run.out.text(),
                       run.err.text() + "".join(f"\n(doc-examples: {p})" for p in problems),
                       time.monotonic() - run.started)

    def _mcp(self, ex: Example, command: str) -> Outcome:
        """Initialize, list the tools, close stdin: the server must answer and then exit."""
        run = self._start(ex, command, stdin=subprocess.PIPE)
        assert run.proc.stdin is not None
        problems: list[str] = []
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "doc-examples", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        try:
            for m in msgs:
                run.proc.stdin.write(json.dumps(m) + "\n")
                run.proc.stdin.flush()
        except OSError as exc:
            problems.append(f"cannot talk to it: {exc}")
        if run.out.wait_for(re.compile(r'"id":\s*2'), TIMEOUT) is None:
            problems.append("no answer to tools/list")
        try:
            run.proc.stdin.close()
        except OSError:
            pass
        try:
            code = run.proc.wait(30)
        except subprocess.TimeoutExpired:
            problems.append("did not exit after stdin closed")
            code = self._stop(run)
        run.out.wait_closed(5)
        return Outcome(ex, command, code if not problems else 1, run.out.text(),
                       run.err.text() + "".join(f"\n(doc-examples: {p})" for p in problems),
                       time.monotonic() - run.started)

    def ensure_server(self) -> None:
        """A server on the scratch docs/ with a token, for examples that call the API."""
        if self.url is not None:
            return
        token = subprocess.run(["bash", "-c", "commonplace token new doc-examples -C docs"], cwd=self.scratch,
                               env=self.env, capture_output=True, text=True, timeout=TIMEOUT).stdout.strip()
        self.env["COMMONPLACE_TOKEN"] = token
        ex = Example("(doc-examples)", 0, "commonplace serve docs")
        outcome = self._serve(ex, ex.command)
        if outcome.url is None:
            raise RuntimeError("could not start a server for the page:\n" + outcome.show())

    def _stop(self, run: _Running) -> int:
        if run.proc.poll() is None:
            run.proc.send_signal(signal.SIGTERM)
            try:
                run.proc.wait(30)
            except subprocess.TimeoutExpired:
                run.proc.kill()
                run.proc.wait(10)
        run.out.wait_closed(5)
        run.err.wait_closed(5)
        return run.proc.returncode

    def close(self) -> list[str]:
        """Stop the servers; each must stop cleanly (exit 0)."""
        problems = []
        for run in self.servers:
            code = self._stop(run)
            if code != 0:
                problems.append(f"{run.example.where}: `{run.command}` exited {code} on SIGTERM\n"
                                f"{run.err.text()[-1500:]}")
        self.servers.clear()
        return problems


def _corpus_of(command: str) -> str:
    """The corpus folder a `commonplace watch ...` command names (default: `.`)."""
    words = shlex.split(command)[2:]
    for i, w in enumerate(words):
        if w in ("-C", "--corpus") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--corpus="):
            return w.split("=", 1)[1]
    positional = [w for i, w in enumerate(words) if not w.startswith("-")
                  and not (i and words[i - 1] in ("--out", "-C", "--corpus"))]
    return positional[0] if positional else "."


def default_problems(o: Outcome) -> list[str]:
    problems = []
    if o.code != 0:
        problems.append(f"exit code {o.code}")
    bad = ALARMING.search(o.stderr)
    if bad:
        problems.append(f"stderr has {bad.group(0)!r}")
    if o.command.startswith("curl "):  # `curl -s` exits 0 on a 401 too: read the answer
        try:
            data = json.loads(o.stdout)
        except ValueError:
            problems.append("the answer is not JSON")
        else:
            if isinstance(data, dict) and ("error" in data or "detail" in data):
                problems.append(f"the server refused it: {str(data)[:300]}")
    return problems


def check_page(page: str, text: str, scratch: Path, expectations: dict[str, Expectation] | None = None,
               standin: bool = True) -> tuple[list[str], list[Example], list[Outcome]]:
    """Check a page's inline command mentions, then run its examples in order.
    Returns (failures, examples not run, outcomes). An expectation replaces the default
    checks for its command (it usually calls `default_problems` itself)."""
    expectations = {normalize(k): v for k, v in (expectations or {}).items()}
    failures: list[str] = []
    for line, span in mentions_in(page, text):
        wrong = check_mention(span)
        if wrong:
            failures.append(f"{page}:{line}: {wrong}")
    examples = examples_in(page, text)
    skipped = [ex for ex in examples if ex.skip is not None]
    failures += [f"{ex.where}: `not-run` without a reason" for ex in skipped if not ex.skip]
    runnable = [ex for ex in examples if ex.skip is None and strip_setup(ex.command)]
    if not runnable:
        return failures, skipped, []
    session = Session(scratch, standin=standin)
    try:
        for ex in runnable:
            o = session.run(ex)
            expect = expectations.get(normalize(ex.command))
            problems = expect(o, session) if expect else default_problems(o)
            if problems:
                failures.append(f"{ex.where}: {'; '.join(problems)}\n{o.show()}")
    finally:
        failures += session.close()
    return failures, skipped, session.outcomes
