"""Driving Debian's Chromium through Playwright, for the browser tests, the screenshot
script and the site search benchmark.

Chromium comes from Debian (`apt-get install -y chromium`, which .ci/run does where it is
missing); Playwright drives it through `executable_path`, so no browser download is
needed. `why_no_browser()` says why a test must skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from commonplace.compiler.build.pipeline import BuildOptions, build

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def why_no_browser() -> str | None:
    """None when Chromium and Playwright are both here, else the reason to skip."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it when root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


@contextmanager
def checked_page(browser: Any, viewport: dict[str, int] = DESKTOP) -> Iterator[Any]:
    """A page in a context of its own; a script error on any page it visited fails the test."""
    context = browser.new_context(viewport=viewport)
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield p
    finally:
        context.close()
    assert errors == [], errors


@contextmanager
def serving(root: Path, out: Path, *flags: str) -> Iterator[dict[str, Any]]:
    """`commonplace serve ROOT --no-embed FLAGS` as a subprocess on a free port of 127.0.0.1,
    ready (/healthz), until the block ends: {"url", "token" (a write token), "root"}."""
    from readiness import wait_healthy

    from commonplace.server.tokens import TokenStore

    token = TokenStore(root).create("browser")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from commonplace.server.cli import main; main()", "serve", str(root),
         "--out", str(out), "--port", "0", "--no-embed", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1"))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://[\d.]+:\d+", line)
        assert m, f"serve did not start: {line}{proc.stdout.read()[-2000:]}"
        said: list[str] = [line]  # the rest of its output, read as it comes (a full pipe would block it)
        threading.Thread(target=lambda: said.extend(proc.stdout), daemon=True).start()
        wait_healthy(m.group(0), proc, 180, said=lambda: "".join(said))
        yield {"url": m.group(0), "token": token, "root": root}
    finally:
        proc.terminate()
        proc.wait(30)


def build_site(corpus: Path, out: Path, **kw: Any) -> Path:
    build(BuildOptions(corpus=corpus, out=out, embed=False, index=False, **kw))
    return out


LONG_SECTIONS = 40
RARE_WORD = "quillfeather"


def long_page() -> str:
    """A long page whose last section alone holds RARE_WORD."""
    parts = ["---\ntitle: Long page\ntags: [long]\n---\n", "An opening paragraph about gardens.\n"]
    for i in range(1, LONG_SECTIONS + 1):
        parts.append(f"\n## Section {i}\n\n" + " ".join(
            f"Paragraph {i} line {j} talks about soil, water and light." for j in range(12)) + "\n")
    parts.append(f"\n## The very end\n\nOnly here do we mention the {RARE_WORD} at all.\n")
    return "".join(parts)


EXTRA = {
    "notes/long.md": long_page(),
    "notes/wide.md": (
        "---\ntitle: Wide things\n---\n\n"
        "| " + " | ".join(f"column number {i}" for i in range(14)) + " |\n"
        "|" + "---|" * 14 + "\n| " + " | ".join(f"value {i}" for i in range(14)) + " |\n\n"
        "```\n" + "x" * 400 + "\n```\n\n"
        "A literal `[[syntax and brackets]]` in code, then the word syntax in plain text.\n\n"
        + "averyveryverylongwordwithoutanybreakopportunity" * 6 + "\n\nSee [[Long page]].\n"
    ),
}


def make_corpus(root: Path) -> Path:
    """The project's docs plus a long page and a wide page: a realistic small wiki."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(DOCS, root, ignore=shutil.ignore_patterns(".commonplace"))
    for rel, text in EXTRA.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
