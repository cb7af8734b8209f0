"""`engines.ray_guard`: a Ray build that Ray's core ends (`_Exit(1)`, nothing printed)
still tells the user what happened and what was left as it was. No Ray needed: the
child here ends the way Ray ends a driver, with `os._exit`, after the marks a build
would have made."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from commonplace.compiler.engines.ray_guard import lost_message

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the guard forks (POSIX only)")


def run_child(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent("""
        import os, sys
        from commonplace.compiler.engines import ray_guard
        print("before the fork", flush=True)
        ray_guard.supervise()
    """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_a_build_ended_by_ray_before_writing_says_nothing_was_touched():
    r = run_child("""
        ray_guard.mark("live")
        print("building", flush=True)
        os._exit(1)
    """)
    assert r.returncode == 1
    assert r.stdout.count("before the fork") == 1 and "building" in r.stdout
    assert "Ray cluster failed" in r.stderr and "not touched" in r.stderr and "exit 1" in r.stderr


def test_the_builds_own_error_is_printed_when_ray_ends_it_while_disconnecting():
    r = run_child("""
        ray_guard.mark("live")
        ray_guard.say(RuntimeError("the Ray cluster failed while embedding (gone);\\nthe site was not touched"))
        os._exit(1)
    """)
    assert r.returncode == 1
    assert "Error: the Ray cluster failed while embedding (gone);\nthe site was not touched" in r.stderr
    assert "while it disconnected" in r.stderr


def test_a_build_ended_while_writing_the_site_does_not_claim_it_untouched():
    r = run_child("""
        ray_guard.mark("live"); ray_guard.mark("writing")
        os.kill(os.getpid(), 9)
    """)
    assert r.returncode == 1  # a failed build, as the CLI documents; the signal is in the message
    assert "while the site was being written" in r.stderr and "signal 9" in r.stderr
    assert "site and the indexes were not touched" not in r.stderr


@pytest.mark.parametrize("body, code", [
    ('ray_guard.mark("live"); ray_guard.mark("closed"); sys.exit(3)', 3),  # it reported itself
    ('sys.exit(0)', 0),  # never connected
    ('ray_guard.mark("live"); ray_guard.mark("done"); ray_guard.mark("closed")', 0),
])
def test_a_build_that_ends_on_its_own_terms_is_passed_through_untouched(body, code):
    r = run_child(body)
    assert r.returncode == code and r.stderr == ""
    assert r.stdout == "before the fork\n"


def test_the_phase_decides_the_message():
    assert lost_message("phase live\nphase closed\n", 1) is None
    assert "search indexes were not touched" in lost_message("phase live\nphase written\nphase indexing\n", 1)
    assert "after the site and the search indexes were written" in lost_message("phase done\n", 1)
