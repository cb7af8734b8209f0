"""Every command example in docs/ and the README runs, in order, against a scratch copy of
docs/ and behaves as its page says (the convention: docs/core/conventions.md, "Command
examples"; the runner: docexamples.py).

The quick run replaces the embedding model with a word-hashing stand-in in the commands it
starts (docexamples_site/sitecustomize.py); `-m slow` runs the same pages with the real
model. A deliberately wrong example must fail the checker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from docexamples import (
    REPO, Outcome, Session, check_mention, check_page, default_problems, examples_in, mentions_in, strip_setup,
)

PAGES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")
               if ".commonplace" not in p.parts) + ["README.md"]
RUNNING = [p for p in PAGES if any(e.skip is None and strip_setup(e.command)
                                   for e in examples_in(p, (REPO / p).read_text("utf-8")))]
SUMMARY = re.compile(r"^Built \d[\d,]* documents? in [\d.]+ s: .+; (no problems|.+)\.$", re.M)


# -- what the pages promise, by command ----------------------------------------------------

def _all(*checks):  # noqa: ANN002, ANN202
    def run(o: Outcome, s: Session) -> list[str]:
        out = default_problems(o)
        for check in checks:
            out += check(o, s)
        return out
    return run


def stdout_has(*needles: str):  # noqa: ANN201
    return lambda o, s: [f"stdout lacks {n!r}" for n in needles if n not in o.stdout]


def stdout_lacks(*needles: str):  # noqa: ANN201
    return lambda o, s: [f"stdout has {n!r}" for n in needles if n in o.stdout]


def files(*paths: str):  # noqa: ANN201
    return lambda o, s: [f"{p} was not written" for p in paths if not (s.scratch / p).exists()]


def file_has(path: str, needle: str, present: bool = True):  # noqa: ANN201
    def check(o: Outcome, s: Session) -> list[str]:
        p = s.scratch / path
        text = p.read_text("utf-8") if p.exists() else ""
        return [] if (needle in text) == present else [f"{path} {'lacks' if present else 'still has'} {needle!r}"]
    return check


def json_out(test):  # noqa: ANN001, ANN201
    def check(o: Outcome, s: Session) -> list[str]:
        try:
            data = json.loads(o.stdout)
        except ValueError as exc:
            return [f"stdout is not JSON: {exc}"]
        return test(data)
    return check


def summary(o: Outcome, s: Session) -> list[str]:
    """The build's two lines (what changed, how long, problems; where the site is)."""
    lines = o.stdout.strip().splitlines()
    problems = []
    if not SUMMARY.search(o.stdout):
        problems.append("no `Built N documents in T s: ...` line")
    if not any(line.startswith("Site: ") and line.endswith("index.html") for line in lines):
        problems.append("no `Site: .../index.html` line")
    if re.search(r"^\w+: (True|False|\d+)$", o.stdout, re.M):
        problems.append("internal `key: value` lines in the summary")
    return problems


def site_ready_first(o: Outcome, s: Session) -> list[str]:
    """The first line says the site is ready (before the embedding and the summary)."""
    lines = o.stdout.strip().splitlines()
    first = next((line for line in lines if line.startswith(("Site ready in ", "Built "))), "")
    return [] if re.match(r"Site ready in \d+\.\d s: \S*index\.html \(search by words works", first) else [
        f"the site ready line does not come first: {first!r}"]


def token_printed(o: Outcome, s: Session) -> list[str]:
    return [] if re.fullmatch(r"cp_[\w-]{20,}", o.stdout.strip()) else ["no token on stdout"]


def quick(limit: float):  # noqa: ANN201
    return lambda o, s: [] if o.seconds < limit else [f"took {o.seconds:.1f} s (the page says it returns at once)"]


def same_as_file(path: str):  # noqa: ANN201
    def check(o: Outcome, s: Session) -> list[str]:
        return [] if o.stdout == (s.scratch / path).read_text("utf-8") else [f"stdout is not {path}"]
    return check


def search_results(only_prefix: str = "", at_most: int = 50):  # noqa: ANN201
    def check(o: Outcome, s: Session) -> list[str]:
        paths = re.findall(r"^\s+(\S+\.md):\d+-\d+", o.stdout, re.M)
        out = [] if paths else ["no results printed"]
        out += [f"{p} is not under {only_prefix}" for p in paths if not p.startswith(only_prefix)]
        return out + ([f"{len(paths)} results, more than {at_most}"] if len(paths) > at_most else [])
    return check


EXPECT = {
    # README
    'python3 -m venv .venv && . .venv/bin/activate && pip install . && commonplace build docs --out site':
        _all(summary, site_ready_first, files("site/index.html", "docs/.commonplace/index")),
    "commonplace build my-notes --out site           # site + search indexes (incremental; --clean for all)":
        _all(summary, files("site/index.html", "my-notes/.commonplace/index")),
    "commonplace lint my-notes                       # broken or ambiguous links, bad frontmatter, ...":
        _all(stdout_has("0 findings.")),
    'commonplace search "why rank fusion" -C my-notes          # hybrid by default; --mode bm25|vector|exact':
        _all(search_results()),
    'commonplace claim add project:atlas "Atlas is blocked on the vendor API" --kind state -C my-notes':
        _all(stdout_has("added state claim", "next: `commonplace build"),
             file_has("my-notes/projects/atlas/state.md", "Atlas is blocked on the vendor API")),
    "commonplace token new my-agent -C my-notes      # then: commonplace serve my-notes": _all(token_printed),
    # getting started
    "commonplace --help": _all(quick(5.0), stdout_has("Usage: commonplace", "build", "serve")),
    "commonplace init my-notes": _all(stdout_has("Created a corpus in my-notes"),
                                      files("my-notes/core", "my-notes/projects/atlas/state.md")),
    "commonplace build my-notes --out site": _all(summary, files("site/index.html", "my-notes/.commonplace/index")),
    "commonplace lint my-notes": _all(stdout_has("0 findings.")),
    'commonplace search -C my-notes "how do claims get retired?"': _all(search_results()),
    "commonplace token new my-agent -C my-notes": _all(token_printed),
    # CLI reference
    "commonplace build docs --out site --strict": _all(summary, stdout_has("no problems")),
    "commonplace lint docs --strict --json": _all(json_out(lambda d: [] if d.get("count") == 0 else
                                                           [f"findings: {d.get('findings')}"])),
    'commonplace search "rank fusion" --type decision --k 5 -C docs':
        _all(search_results(only_prefix="decisions/", at_most=5)),
    "commonplace get concepts/claim-store.md -C docs": _all(same_as_file("docs/concepts/claim-store.md")),
    'commonplace write inbox/ideas.md --kind append --content "Try a dark theme." -C my-notes':
        _all(stdout_has("inbox/ideas.md: "), file_has("my-notes/inbox/ideas.md", "Try a dark theme.")),
    'commonplace claim add project:atlas "Atlas is blocked on the vendor API" --kind state '
    '--confidence high --evidence https://status.vendor.example/api -C my-notes':
        _all(stdout_has("added state claim", "next: `commonplace build my-notes`")),
    'commonplace claim replace atlas "Atlas is unblocked" --kind state -C my-notes':
        _all(stdout_has("replaced claim"), file_has("my-notes/projects/atlas/state.md", "Atlas is unblocked")),
    'commonplace claim add person:alex "Alex\'s old phone number is 555-0100" --create -C my-notes':
        _all(stdout_has("created people/alex.md")),
    'commonplace claim forget alex "old phone number" --reason "asked to forget" -C my-notes':
        _all(stdout_has("forgot 1 claim of person:alex; tombstone "), stdout_lacks("555-0100", "tombstone: "),
             file_has("my-notes/people/alex.md", "555-0100", present=False)),
    "commonplace claim list atlas --history -C my-notes":
        _all(stdout_has("Atlas is unblocked", "<current>", "replaced")),
    "commonplace claim list atlas --as-of 2026-11-01 --json -C my-notes":
        _all(json_out(lambda d: [] if d.get("as_of") == "2026-11-01" and "claims" in d else [f"JSON: {d}"])),
    "commonplace token new claude -C docs": _all(token_printed),
    "commonplace status -C docs --json":
        _all(json_out(lambda d: [] if json.dumps(d) and (d.get("documents") or d.get("files")) else [f"JSON: {d}"])),
    # sessions, digests, proposals, compaction, erasure (docs/concepts/sessions.md)
    "commonplace digest --session logs/sessions/coder/2025-01-05-s1.md --no-embed -C my-notes":
        _all(stdout_has("logs/digests/sessions/coder/2025-01-05-s1.md: created (3 items", "p-01e36b0012a7",
                        "p-27a86eef8609"),
             file_has("my-notes/logs/digests/sessions/coder/2025-01-05-s1.md",
                      "- user: Who signs off the vendor review for the cache? (L11)")),
    "commonplace proposals apply p-01e36b0012a7 --no-embed -C my-notes":
        _all(stdout_has("written -> projects/atlas/state.md"),
             file_has("my-notes/projects/atlas/state.md", "Atlas ships the SQLite cache on Friday"),
             files("my-notes/inbox/applied/p-01e36b0012a7.md")),
    "commonplace proposals reject p-27a86eef8609 --reason \"decided later\" --no-embed -C my-notes":
        _all(files("my-notes/inbox/rejected/p-27a86eef8609.md")),
    "commonplace compact --older-than 30 --no-embed -C my-notes":
        _all(stdout_has("compacted 1 transcript(s); 1 recent kept"),
             file_has("my-notes/logs/sessions/coder/2025-01-05-s1.md", "commonplace:compacted")),
    "commonplace get logs/sessions/coder/2025-01-05-s1.md --uncompact -C my-notes":
        _all(stdout_has("user: We decided to keep the Atlas cache in SQLite."), stdout_lacks("commonplace:compacted")),
    "commonplace search \"vendor review\" --mode bm25 --corpus-kind sessions --originals --local -C my-notes":
        _all(stdout_has("logs/sessions/coder/2025-01-05-s1.md", "in the original, lines",
                        "logs/sessions/coder/2025-01-06-s2.md")),
    # -w: a bare 4417 inside a hex hash (a chunk's text_hash) is chance, not a leak.
    "grep -rlw -e \"door code\" -e 4417 my-notes site || echo \"no trace of the door code\"":
        _all(stdout_has("no trace of the door code")),
    # HTTP API
    "curl -s -X POST http://127.0.0.1:8766/v1/search "
    "-H \"Authorization: Bearer $COMMONPLACE_TOKEN\" -H 'Content-Type: application/json' "
    "-d '{\"query\": \"rank fusion\", \"k\": 3}'":
        _all(json_out(lambda d: [] if d.get("count", 0) >= 1 and len(d.get("results", [])) <= 3 else [f"JSON: {d}"])),
    "curl -s -X POST http://127.0.0.1:8766/v1/write "
    "-H \"Authorization: Bearer $COMMONPLACE_TOKEN\" -H 'Content-Type: application/json' "
    "-d '{\"kind\": \"append\", \"target\": \"inbox/ideas.md\", \"content\": \"Try weighted fusion.\", "
    "\"frontmatter\": {\"title\": \"Ideas\", \"type\": \"capture\"}}'":
        _all(file_has("docs/inbox/ideas.md", "Try weighted fusion.")),
    "curl -s -X POST http://127.0.0.1:8766/v1/search "
    "-H \"Authorization: Bearer $COMMONPLACE_TOKEN\" -H 'Content-Type: application/json' "
    "-d '{\"query\": \"claim store\", \"min_relevance_score\": 0.5, \"debug\": true}'":
        _all(json_out(lambda d: [] if d.get("count", 0) >= 1 and all(
            r["score_normalized"] >= 0.5 for r in d["results"]) else [f"JSON: {d}"])),
    "curl -s -X POST http://127.0.0.1:8766/v1/memory-write "
    "-H \"Authorization: Bearer $COMMONPLACE_TOKEN\" -H 'Content-Type: application/json' "
    "-d '{\"action\": \"write\", \"kind\": \"fact\", \"subject\": \"dana\", \"scope\": \"person\", "
    "\"content\": \"Dana is allergic to peanuts.\", \"allow_canonical\": true}'":
        _all(json_out(lambda d: [] if d.get("result") == "rejected" and "force_inbox=true" in d.get("message", "")
                      and "people/dana.md" in d.get("message", "") else [f"JSON: {d}"])),
}


def _run_page(page: str, tmp_path: Path, standin: bool) -> None:
    failures, skipped, outcomes = check_page(page, (REPO / page).read_text("utf-8"), tmp_path, EXPECT,
                                             standin=standin)
    assert not failures, "\n\n".join(failures)
    assert outcomes or skipped, f"{page}: nothing was run"


@pytest.mark.parametrize("page", RUNNING)
def test_page_examples_run_as_documented(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path, standin=True)


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNING)
def test_page_examples_with_the_real_model(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path, standin=False)


def test_command_mentions_in_the_prose_exist() -> None:
    wrong = []
    for page in PAGES:
        for line, span in mentions_in(page, (REPO / page).read_text("utf-8")):
            problem = check_mention(span)
            if problem:
                wrong.append(f"{page}:{line}: {problem}")
    assert not wrong, "\n".join(wrong)


def test_every_page_with_commands_is_checked() -> None:
    """The pages that show commands are the ones the test runs, and the examples that do
    not run say why, visibly, in their fence."""
    assert {"README.md", "docs/references/cli.md", "docs/references/getting-started.md"} <= set(RUNNING)
    for page in PAGES:
        for ex in examples_in(page, (REPO / page).read_text("utf-8")):
            if ex.skip is not None:
                assert ex.skip, f"{ex.where}: not-run needs a reason"


def test_examples_are_found_with_their_lines() -> None:
    text = ("# Page\n\n```sh\ncommonplace init a \\\n    --corpus b\n# a comment\n\ncommonplace lint a\n```\n\n"
            "```json\n{\"not\": \"a command\"}\n```\n\n```sh not-run: needs a network\ncurl https://example.org\n```\n")
    found = examples_in("p.md", text)
    assert [(e.line, e.command, e.skip) for e in found] == [
        (4, "commonplace init a --corpus b", None), (8, "commonplace lint a", None),
        (16, "curl https://example.org", "needs a network")]
    assert strip_setup("python3 -m venv .venv && . .venv/bin/activate && pip install . && commonplace build x") \
        == "commonplace build x"
    assert strip_setup("pip install .") == ""


# -- the checker catches what is wrong -----------------------------------------------------------

WRONG_PAGE = """# A page with wrong examples

Use `commonplace build --fast` for speed, or `commonplace publish`.

```sh
commonplace init my-notes
commonplace write --kind append --target inbox/ideas.md --content "Try a dark theme." -C my-notes
commonplace claim list atlas --as-of 2026-11-01 --history --json -C my-notes
commonplace lint my-notes
```

```sh not-run
commonplace serve my-notes
```
"""


def test_a_wrong_example_fails_the_checker(tmp_path: Path) -> None:
    failures, skipped, outcomes = check_page("wrong.md", WRONG_PAGE, tmp_path)
    text = "\n".join(failures)
    assert "wrong.md:3: `commonplace build --fast`" in text and "No such option" in text
    assert "no command `commonplace publish`" in text
    assert "wrong.md:7: exit code 2" in text and "No such option '--target'" in text
    assert "wrong.md:8: exit code 2" in text
    assert "wrong.md:13: `not-run` without a reason" in text
    assert not any(f.startswith("wrong.md:6") or f.startswith("wrong.md:9") for f in failures), text
    assert [o.example.line for o in outcomes] == [6, 7, 8, 9]
    assert len(failures) == 5, text


def test_an_output_promise_that_does_not_hold_fails(tmp_path: Path) -> None:
    page = "```sh\ncommonplace init my-notes\ncommonplace lint my-notes\n```\n"
    expect = {"commonplace lint my-notes": _all(stdout_has("3 findings."))}
    failures, _, _ = check_page("promise.md", page, tmp_path, expect)
    assert len(failures) == 1 and "stdout lacks '3 findings.'" in failures[0]


def test_an_api_call_the_server_refuses_fails(tmp_path: Path) -> None:
    """`curl -s` exits 0 whatever the status: the answer is read. Without the token: 401."""
    page = ("```sh\ncurl -s -X POST http://127.0.0.1:8766/v1/search -H 'Content-Type: application/json' \\\n"
            "  -d '{\"query\": \"rank fusion\"}'\n```\n")
    failures, _, outcomes = check_page("api.md", page, tmp_path)
    assert len(outcomes) == 1 and outcomes[0].code == 0
    assert len(failures) == 1 and "the server refused it" in failures[0], failures
    assert "token" in failures[0].split("the server refused it")[1], failures


def test_a_server_that_does_not_start_fails(tmp_path: Path) -> None:
    page = "```sh\ncommonplace serve no-such-corpus\n```\n"
    failures, _, _ = check_page("serve.md", page, tmp_path)
    assert len(failures) == 1 and "serve.md:2" in failures[0] and "ready at URL" in failures[0]
