"""What long work shows on a terminal, and keeping other libraries quiet.

- `step(what, hint)`: a spinner with the elapsed time for work without a count (preparing
  the embedding model); `bar(label, total)`: a bar with done/total, elapsed and time left.
  Both draw on stderr with rich, only when the command line asked for it (`configure`)
  and stderr is a terminal: nothing on a pipe, with `--json`, or in a library caller.
- `quiet()`: transformers, torch, OpenVINO, NNCF, sentence-transformers, huggingface_hub
  and tqdm print bars, advisories and warnings of their own while a model loads. They are
  silenced unless `-v` (`configure(verbose=True)`). See
  docs/decisions/2026-11-23-terminal-progress.md.

rich is imported only when something is drawn, so `--help` stays instant.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

# Libraries whose own logging we silence unless -v.
THIRD_PARTY_LOGGERS = ("transformers", "torch", "openvino", "nncf", "sentence_transformers",
                       "huggingface_hub", "tokenizers", "urllib3", "filelock")
# Read by those libraries when they are first imported; set early (the CLI does it at start).
_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub's and transformers' tqdm bars
    "TRANSFORMERS_VERBOSITY": "error",  # its logger (the "[transformers] ..." lines)
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TQDM_DISABLE": "1",  # any other tqdm bar (sentence-transformers, NNCF)
    "TOKENIZERS_PARALLELISM": "false",  # the fork warning from tokenizers
}
MIN_BAR_ITEMS = 200  # a bar for fewer items would flash by ("more than a few hundred documents")

_lock = threading.RLock()
_enabled = False  # the command line asked for progress (not --json)
_verbose = False  # -v: let every library speak
_live: Any = None  # the one rich Progress on screen, shared by every bar and step
_tasks = 0
_env_set: set[str] = set()  # variables quiet_environment set (not the user's own)


def configure(*, enabled: bool | None = None, verbose: bool | None = None) -> None:
    """Called by the command line: draw progress (when stderr is a terminal), and whether
    third-party output stays on (-v). Library callers never draw anything by default."""
    global _enabled, _verbose
    if enabled is not None:
        _enabled = enabled
    if verbose is not None:
        _verbose = verbose
        if verbose:
            for key in _env_set:  # `build -v` after the group's default: undo what we set
                os.environ.pop(key, None)
            _env_set.clear()
            logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        else:
            quiet_environment()


def verbose() -> bool:
    return _verbose


def active() -> bool:
    """Progress is drawn: asked for, and stderr is a terminal."""
    if not _enabled:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def quiet_environment() -> None:
    """Set the variables libraries read at import time (never overriding a user's own)."""
    if _verbose:
        return
    for key, value in _QUIET_ENV.items():
        if key not in os.environ:
            os.environ[key] = value
            _env_set.add(key)


@contextmanager
def quiet() -> Iterator[None]:
    """Around model loading and conversion: no third-party logging, warnings or bars
    unless -v. Libraries imported inside are quietened after import too, as their own
    settings can only be changed once they are loaded."""
    if _verbose:
        yield
        return
    quiet_environment()
    levels = {}
    for name in THIRD_PARTY_LOGGERS:
        lg = logging.getLogger(name)
        levels[name] = lg.level
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quiet_loaded()
            yield
            quiet_loaded()
    finally:
        for name, level in levels.items():
            if level != logging.NOTSET:  # a level someone chose comes back; the rest stay
                logging.getLogger(name).setLevel(level)  # quiet (they speak again on encode)


def quiet_loaded() -> None:
    """Libraries that keep their own verbosity switch, read once at import: call right
    after importing them, before they load anything (no-op with -v)."""
    if _verbose:
        return
    tf = sys.modules.get("transformers.utils.logging")
    if tf is not None:
        try:
            tf.set_verbosity_error()
            tf.disable_progress_bar()
        except Exception:  # noqa: BLE001 - an older or newer API: the env vars still apply
            pass
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None:
        try:
            hub.disable_progress_bars()
        except Exception:  # noqa: BLE001
            pass


# -- drawing ---------------------------------------------------------------------------

def _progress() -> Any:
    """The shared rich Progress, started on first use (callers hold `_lock`)."""
    global _live
    if _live is None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        _live = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
            _CountColumn(), TimeElapsedColumn(), _RemainingColumn(),
            console=Console(stderr=True), transient=True, refresh_per_second=8,
            # stdout may be a pipe or a protocol (`mcp`): never reroute it into the display
            redirect_stdout=False, redirect_stderr=True,
        )
        _live.start()
    return _live


def _done_with(task_id: Any) -> None:
    global _live, _tasks
    with _lock:
        if _live is None:
            return
        _live.remove_task(task_id)
        _tasks -= 1
        if _tasks <= 0:
            _live.stop()
            _live, _tasks = None, 0


def say(line: str) -> None:
    """One line that stays on the terminal above any bar (nothing when inactive)."""
    if not active():
        return
    with _lock:
        if _live is not None:
            _live.console.print(line, highlight=False, markup=False)
        else:
            print(line, file=sys.stderr, flush=True)


class _Null:
    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self) -> "_Null":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


class Bar:
    """A counted task on the shared display; `update(n)` adds n done items."""

    def __init__(self, label: str, total: int):
        global _tasks
        with _lock:
            self._task = _progress().add_task(label, total=total)
            _tasks += 1
        self._closed = False

    def update(self, n: int = 1) -> None:
        if n and not self._closed:
            with _lock:
                if _live is not None:
                    _live.advance(self._task, n)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _done_with(self._task)

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def bar(label: str, total: int, min_items: int = MIN_BAR_ITEMS) -> Bar | _Null:
    """A progress bar for `total` items, or one that draws nothing (not a terminal, not
    asked for, or too little work to be worth a bar)."""
    if total < max(1, min_items) or not active():
        return _Null()
    return Bar(label, total)


class Stages:
    """The build's parse and render progress: called as `(label, total) -> tick(n)` by
    the workers. A stage's bar closes when its count is reached, when the next stage starts
    (workers report in steps, so the last few may never be counted), or at `close()`."""

    def __init__(self, min_items: int = MIN_BAR_ITEMS):
        self.min_items = min_items
        self._open: Bar | None = None

    def __call__(self, label: str, total: int) -> Any:
        self.close()
        b = bar(label, total, self.min_items)
        if isinstance(b, _Null):
            return lambda n: None
        self._open = b
        done = [0]

        def tick(n: int) -> None:
            b.update(n)
            done[0] += n
            if done[0] >= total:
                b.close()

        return tick

    def close(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None


@contextmanager
def step(what: str, hint: str = "", done: str = "") -> Iterator[None]:
    """A spinner for work without a count: `what` is happening (`hint` says roughly how
    long); with `done`, a line saying it finished and how long it took stays behind."""
    if not active():
        yield
        return
    global _tasks
    label = f"{what} ({hint})" if hint else what
    with _lock:
        task = _progress().add_task(label, total=None)
        _tasks += 1
    t0 = time.monotonic()
    ok = False
    try:
        yield
        ok = True
    finally:
        _done_with(task)
        if ok and done:
            say(f"{done} in {time.monotonic() - t0:.1f} s")


def _columns() -> tuple[Any, Any]:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class CountColumn(ProgressColumn):
        """done/total for a bar; nothing for a step."""

        def render(self, task: Any) -> Any:
            if task.total is None:
                return Text("")
            return Text(f"{int(task.completed)}/{int(task.total)}")

    class RemainingColumn(ProgressColumn):
        """Time left once a bar has a rate; nothing for a step."""

        def render(self, task: Any) -> Any:
            left = task.time_remaining
            if task.total is None or left is None:
                return Text("")
            return Text(f"~{int(left) // 60}:{int(left) % 60:02d} left")

    return CountColumn, RemainingColumn


class _Lazy:
    """Column classes made on first use, so importing this module never imports rich."""

    def __init__(self, index: int):
        self.index = index

    def __call__(self) -> Any:
        return _columns()[self.index]()


_CountColumn = _Lazy(0)
_RemainingColumn = _Lazy(1)
