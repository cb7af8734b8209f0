"""What `commonplace build` says when it is done: two lines for a person (what changed,
how long, problems found, where the site is), and the fields `--json` adds for scripts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..build.pipeline import BuildResult


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def changed_anything(result: BuildResult) -> bool:
    x = result.extra
    return bool(result.documents_changed or result.documents_removed or result.pages_written
                or result.files_removed or x.get("chunks_embedded") or x.get("claims_pages_updated")
                or x.get("index_purged"))


def problems(result: BuildResult, corpus: Path) -> str:
    """'no problems', or what was found and where to look."""
    found = []
    if result.warnings:
        found.append(_n(len(result.warnings), "warning"))
    if result.broken_links:
        found.append(_n(result.broken_links, "broken link"))
    index_warnings = len(result.extra.get("index_warnings") or [])
    if index_warnings:
        found.append(_n(index_warnings, "index warning"))
    if not found:
        return "no problems"
    where = f" (`commonplace lint {_shell_path(corpus)}` lists them)" if result.warnings or result.broken_links else ""
    return ", ".join(found) + where


def site_path(out: Path) -> str:
    """The site's index page: relative when it is under the current folder (short, and
    what a person types), else absolute."""
    page = out.resolve() / "index.html"
    try:
        return os.path.relpath(page) if page.is_relative_to(Path.cwd()) else str(page)
    except (OSError, ValueError):
        return str(page)


def site_ready_line(seconds: float, out: Path, waiting: int) -> str:
    """Said once the site and the BM25 index are complete, before the embedding starts."""
    return (f"Site ready in {seconds:.1f} s: {site_path(out)} (search by words works; "
            f"embedding {_n(waiting, 'chunk')} next)")


def summary_lines(result: BuildResult, out: Path, corpus: Path, embed: bool = True) -> list[str]:
    """Two lines: what happened and what was found; where the site is. `embed=False`
    (a `--no-embed` build): chunks left without vectors were asked for, not news."""
    x = result.extra
    took = f"{result.seconds:.1f} s"
    found = problems(result, corpus)
    if not changed_anything(result):
        head = f"Nothing changed ({_n(result.documents, 'document')}, checked in {took}); {found}."
    else:
        parts = []
        if result.documents_changed:
            parts.append(f"{result.documents_changed:,} new or changed")
        if result.documents_removed:
            parts.append(f"{result.documents_removed:,} removed")
        if result.pages_written or result.files_removed:
            site = _n(result.pages_written, "site file") + " written"
            if result.files_removed:
                site += f", {result.files_removed:,} deleted"
            parts.append(site)
        if x.get("chunks_embedded"):
            parts.append(_n(x["chunks_embedded"], "chunk") + " embedded")
        if x.get("claims_pages_updated"):
            parts.append(_n(x["claims_pages_updated"], "claim page") + " updated")
        if x.get("index_purged"):
            parts.append("forgotten text purged from the indexes")
        head = f"Built {_n(result.documents, 'document')} in {took}: {', '.join(parts)}; {found}."
    if embed and x.get("embeddings_pending"):
        head += (f" {_n(x['embeddings_pending'], 'chunk')} not embedded yet (search finds them by words; "
                 "the next build embeds them).")
    return [head, f"Site: {site_path(out)}"]


def _shell_path(p: Path) -> str:
    import shlex

    text = os.path.relpath(p) if p.resolve().is_relative_to(Path.cwd()) else str(p.resolve())
    return shlex.quote(text)


def json_fields(result: BuildResult, out: Path) -> dict[str, Any]:
    """Added to `BuildResult.as_dict()` for `--json` (every older key stays)."""
    return {"changed": changed_anything(result), "site": str(out.resolve() / "index.html")}
