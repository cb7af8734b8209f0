"""Run Dory's own HTTP test suite against a live `commonplace serve`.

    python tests/interop/dory_suite.py --dory /path/to/dory-checkout [--python /path/to/python3.12]

Run with the Python that has commonplace installed (the servers run under it). `--python`
is a Python 3.12+ in which Dory, pytest and pytest-asyncio are installed (default: the
checkout's .venv, else `python3.12` on PATH); for example `python3.12 -m venv /tmp/dory-venv
&& /tmp/dory-venv/bin/pip install -e /path/to/dory-checkout pytest pytest-asyncio`.

It runs Dory's tests under tests/integration/http/ in the Dory checkout, unchanged, with
the plugin dory_live_plugin.py: each test's `build_app(...)` starts a real `commonplace
serve` over the corpus the test wrote, and its `TestClient` talks to it over a socket (see
that file). Nothing is written into the checkout (no bytecode, no pytest cache); servers'
sites and logs go to a temporary folder, removed at the end unless --keep.

It prints one row per test: passed, failed, or not applicable (not run), and for a failure
whether it is one of the deliberate differences listed below (each names its row of the
"Compatibility with Dory" table in docs/references/http-api.md) or a regression. The exit
code is 1 when a test failed that is not a listed difference (or the run itself broke),
2 for bad arguments, else 0.

This file and the plugin are not collected by the project's test run (their names do not
start with test_): CI has no Dory checkout. tests/interop/test_interop_harness.py checks the
pure parts (the lists against the documentation, the argument errors).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
HTTP_TESTS = "tests/integration/http"


@dataclass(frozen=True)
class Difference:
    route: str  # the row of the "Compatibility with Dory" table, as its first cell reads
    says: str  # words of that row's "differs" cell that state the difference
    why: str  # what the test checks that commonplace does differently


# Failures that are deliberate: test id (file::name, under tests/integration/http/) -> why.
DIFFERENCES: dict[str, Difference] = {
    "test_hermes_shim_contract.py::test_hermes_provider_covers_http_verbs": Difference(
        "/v1/memory-write", "its Hermes test counts 8 indexed files where commonplace has 7",
        "forgetting one fact of alex's page keeps the page and writes no tombstone, so "
        "files_indexed is 7, not 8"),
    "test_session_ingest_http.py::test_session_ingest_upserts_cleaned_log": Difference(
        "/v1/session-ingest", "the `logs/sessions/` documents are the session plane",
        "asserts Dory's session_plane.db exists in Dory's index folder; commonplace keeps "
        "sessions as the logs/sessions/ documents"),
    "test_wiki_web.py::test_wiki_route_supports_browser_cookie_auth": Difference(
        "/wiki/...", "the `dory_token` cookie holds a signed token name, never the token",
        "asserts the dory_token cookie equals the bearer token itself"),
    "test_wiki_web.py::test_wiki_route_renders_generated_markdown": Difference(
        "/wiki/...", "not Dory's \"Dory Wiki\" headings and absolute `/wiki/...` links",
        "asserts Dory's own page heading (\"Dory Wiki\") and an absolute href=\"/wiki/projects/dory\"; "
        "commonplace answers /wiki with the built site's page (the redirects, page text and "
        "search this test checks pass)"),
}

# Tests not run: they replace a part of Dory's server in-process with a stub (monkeypatching
# dory_http.app), so what they check is Dory's wiring, which a live server cannot be given.
NOT_APPLICABLE: dict[str, str] = {
    "test_active_memory_http.py::test_active_memory_http_endpoint_returns_memory_block":
        "stubs Dory's active-memory engine and asserts the stub's answer",
    "test_active_memory_http.py::test_active_memory_http_includes_debug_fields_when_requested":
        "stubs Dory's active-memory engine and asserts the stub's took_ms",
    "test_active_memory_http.py::test_active_memory_http_returns_503_for_embedding_provider_errors":
        "stubs Dory's active-memory engine to raise Dory's EmbeddingProviderError",
    "test_research_http.py::test_http_research_writes_artifact":
        "stubs Dory's research engine and embedder and asserts the stub's sources",
    "test_research_http.py::test_http_research_returns_503_for_embedding_provider_errors":
        "stubs Dory's research engine to raise Dory's EmbeddingProviderError",
    "test_memory_write_http.py::test_http_memory_write_returns_400_for_validation_errors":
        "stubs Dory's semantic write engine to raise Dory's DoryValidationError",
}


class Usage(Exception):
    """A bad argument: the message says what is wrong and what to do."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="dory_suite.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--dory", required=True, type=Path, help="a checkout of github.com/deeflect/dory")
    p.add_argument("--python", type=Path, help="a Python 3.12+ with Dory, pytest and pytest-asyncio installed")
    p.add_argument("--keep", action="store_true", help="keep the servers' sites and logs")
    p.add_argument("-k", dest="select", help="run only the tests matching this pytest -k expression")
    return p.parse_args(argv)


def check_dory(dory: Path) -> Path:
    dory = dory.expanduser().resolve()
    if not (dory / HTTP_TESTS).is_dir():
        raise Usage(f"--dory {dory}: no {HTTP_TESTS}/ folder there; give the root of a Dory checkout "
                    "(git clone https://github.com/deeflect/dory)")
    return dory


def pick_python(dory: Path, given: Path | None) -> str:
    candidates = [given] if given else [dory / ".venv" / "bin" / "python", shutil.which("python3.12")]
    python = next((str(c) for c in candidates if c and Path(c).exists()), None)
    if python is None:
        where = f"--python {given}: no such file" if given else "no --python, no .venv in the checkout, no python3.12 on PATH"
        raise Usage(f"{where}; give a Python 3.12+ with Dory installed (--python)")
    probe = subprocess.run([python, "-c", "import sys; assert sys.version_info >= (3, 12), sys.version\n"
                            "import dory_http.app, fastapi.testclient, httpx, pytest, pytest_asyncio"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        raise Usage(f"--python {python} cannot run Dory's tests ({last}); it needs Python 3.12+ with "
                    f"`pip install -e {dory} pytest pytest-asyncio`")
    return python


def check_commonplace() -> None:
    try:
        import commonplace.server.cli  # noqa: F401
    except ImportError as exc:
        raise Usage(f"run this script with the Python that has commonplace installed ({exc})") from None


def short_id(nodeid: str) -> str:
    return nodeid.rsplit("/", 1)[-1]


def run_suite(dory: Path, python: str, work: Path, select: str | None) -> dict[str, dict]:
    results = work / "results.jsonl"
    env = dict(os.environ, COMMONPLACE_PYTHON=sys.executable, DORY_SUITE_WORKDIR=str(work),
               DORY_SUITE_RESULTS=str(results), DORY_SUITE_MIGRATE_ROOT=str(dory / "tests" / "fixtures"),
               PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    cmd = [python, "-m", "pytest", "-p", "dory_live_plugin", "-p", "no:cacheprovider", "-q", "-rN",
           "--tb=short", HTTP_TESTS]
    cmd += [f"--deselect={HTTP_TESTS}/{t}" for t in NOT_APPLICABLE]
    if select:
        cmd += ["-k", select]
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=dory, env=env, capture_output=True, text=True)
    (work / "pytest.out").write_text(proc.stdout + proc.stderr, "utf-8")
    outcomes: dict[str, dict] = {}
    if results.exists():
        for line in results.read_text("utf-8").splitlines():
            rec = json.loads(line)
            key = short_id(rec["nodeid"])
            seen = outcomes.setdefault(key, {"outcome": "passed", "message": ""})
            if rec["outcome"] != "passed" and seen["outcome"] == "passed":
                seen.update(outcome=rec["outcome"], message=rec["message"])
    if proc.returncode not in (0, 1) or not outcomes:
        raise RuntimeError(f"pytest exited {proc.returncode} without running the tests:\n"
                           f"{(proc.stdout + proc.stderr)[-4000:]}")
    return outcomes


def verdicts(outcomes: dict[str, dict]) -> list[tuple[str, str, str]]:
    """(test, verdict, note) rows; verdict: passed, differs, REGRESSION, n/a, ..."""
    rows = []
    for test in sorted(set(outcomes) | set(NOT_APPLICABLE)):
        if test not in outcomes:
            rows.append((test, "n/a", NOT_APPLICABLE.get(test, "not run")))
            continue
        o = outcomes[test]
        diff = DIFFERENCES.get(test)
        if o["outcome"] == "passed":
            note = "listed as a difference but passes: take it off DIFFERENCES" if diff else ""
            rows.append((test, "passed", note))
        elif o["outcome"] == "skipped":
            rows.append((test, "skipped", o["message"]))
        elif diff:
            rows.append((test, "differs", f"{diff.why} (http-api.md, {diff.route}: \"{diff.says}\")"))
        else:
            rows.append((test, "REGRESSION", o["message"].splitlines()[0] if o["message"] else "failed"))
    return rows


def report(rows: list[tuple[str, str, str]]) -> int:
    width = max(len(t) for t, _, _ in rows)
    for test, verdict, note in rows:
        print(f"{test:<{width}}  {verdict:<10}  {note}")
    ran = [r for r in rows if r[1] != "n/a"]
    passed = sum(r[1] == "passed" for r in ran)
    differs = sum(r[1] == "differs" for r in ran)
    bad = sum(r[1] == "REGRESSION" for r in ran)
    print(f"\n{passed} of {len(ran)} passed; {differs} deliberate differences; {bad} regressions; "
          f"{len(rows) - len(ran)} not applicable (not run)")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_commonplace()
        dory = check_dory(args.dory)
        python = pick_python(dory, args.python)
    except Usage as exc:
        print(f"dory_suite.py: error: {exc}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="dory-suite-"))
    try:
        outcomes = run_suite(dory, python, work, args.select)
    except RuntimeError as exc:
        print(f"dory_suite.py: {exc}\n(logs in {work})", file=sys.stderr)
        return 1
    code = report(verdicts(outcomes))
    if args.keep or code:
        print(f"pytest output and server logs: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
