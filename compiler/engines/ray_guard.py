"""A Ray build that Ray itself ends still says what happened.

Ray's core ends a driver process at once (`_Exit(1)`, no Python cleanup, its own log
line muted) when the driver's call finds the local Raylet dead. Our error handling never
runs then, and a build lost with its cluster would exit 1 in silence. So `supervise`
forks before anything touches Ray: the child runs the build, and tells this process,
through a pipe, how far it got (`mark`) and the error it was about to report (`say`).
If the child ends while still connected, this process reports it from the last phase.

Without `os.fork` (Windows) the build runs unsupervised, as before.
"""

from __future__ import annotations

import os
import signal
import sys

_fd: int | None = None  # the child's end of the pipe; None when not supervised

# What the build had done when it was ended, said as a user would act on it.
_LOST = {
    "live": "the Ray cluster failed: Ray ended this build when its local node went away "
            "(exit {code}); the site and the indexes were not touched, and the vectors "
            "already made are kept in the embedding cache for the next build",
    "writing": "the Ray cluster failed while the site was being written: Ray ended this build "
               "when its local node went away (exit {code}); some pages may be new and others "
               "old, the search indexes were not touched, and the next build completes the site",
    "written": "the Ray cluster failed after the site was written: Ray ended this build when its "
               "local node went away (exit {code}); the search indexes were not touched, and the "
               "next build redoes them",
    "done": "Ray ended this build as it disconnected from the cluster (exit {code}), after the "
            "site and the search indexes were written",
}
_LOST["indexing"] = _LOST["written"]


def supervise() -> None:
    """Fork. The child returns and runs the build; this process never returns: it waits
    for the child and leaves with the child's exit code, after saying what the child
    could not. Call it before Ray is imported (the child starts with no threads)."""
    global _fd
    if not hasattr(os, "fork"):
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # or the child would print the parent's buffer again
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _fd = w
        return
    os.close(w)
    # Ctrl-C reaches the child from the terminal; a SIGTERM sent to this process goes on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    with os.fdopen(r, "rb") as f:
        told = f.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    message = lost_message(told, code)
    if message:
        sys.stderr.write(f"Error: {message}\n")
        code = code if code > 0 else 1
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(code if code >= 0 else 128 - code)


def lost_message(told: str, code: int) -> str | None:
    """What to say for a child that ended after telling `told` (its marks, one per line)
    with exit `code` (negative: the signal that ended it). None when it ended on its own
    terms: it never connected, or it closed its connection (it reported everything)."""
    phase, error = None, None
    for line in told.splitlines():
        kind, _, text = line.partition(" ")
        if kind == "phase":
            phase = text
        elif kind == "error":
            error = text.replace("\\n", "\n")
    if phase in (None, "closed"):
        return None
    how = f"signal {-code}" if code < 0 else str(code)
    if error:  # the build's own error, which Ray ended the process before it could print
        return f"{error} (Ray ended this build while it disconnected, exit {how})"
    return _LOST.get(phase, _LOST["live"]).format(code=how)


def _send(line: str) -> None:
    if _fd is not None:
        try:
            os.write(_fd, (line + "\n").encode("utf-8", "replace"))
        except OSError:  # the supervisor is gone: nobody left to tell
            pass


def mark(phase: str) -> None:
    """The build reached `phase`: live, writing, written, indexing, done, closed."""
    _send(f"phase {phase}")


def say(error: BaseException) -> None:
    """The error the build is about to report: said for it if Ray ends it first."""
    text = str(error).strip() or type(error).__name__
    _send("error " + text.replace("\n", "\\n"))
