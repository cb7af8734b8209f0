"""Stage 1, scan: find the corpus's documents.

Every `*.md` under the root is a document except hidden paths (any part starting with
`.`, which covers `.commonplace/`; a hidden file name is reported, and a name of dots
only such as `..md` is a document), the build output directory when it lies inside the
corpus, symlinks that leave the corpus, and paths whose page the site reserves
(`model.reserved_path`: `_/`, `index.html`, ...), which are skipped with a warning.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..model import Warning_, reserved_path


@dataclass(frozen=True)
class SourceFile:
    path: str  # corpus-relative POSIX path
    abspath: Path


def dots_only(stem: str) -> bool:
    """`..md` (the shell's `.` command) is a note named ".", not a hidden file."""
    return bool(stem) and not stem.strip(".")


def is_hidden(relpath: str) -> bool:
    parts = relpath.split("/")
    return any(part.startswith(".") for part in parts[:-1]) or (
        parts[-1].startswith(".") and not (parts[-1].endswith(".md") and dots_only(parts[-1][:-3])))


def scan(root: Path, out_dir: Path | None = None) -> tuple[list[SourceFile], list[Warning_]]:
    """Return the corpus's markdown files, sorted by path, and any warnings."""
    root = root.resolve()
    out = out_dir.resolve() if out_dir is not None else None
    files: list[SourceFile] = []
    warnings: list[Warning_] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        # Prune in place so os.walk never descends into hidden or output folders.
        keep = []
        for d in dirnames:
            sub = here / d
            if d.startswith("."):
                continue
            if out is not None and sub.resolve() == out:
                continue
            if sub.is_symlink():
                continue  # never follow folder links (loops, escapes)
            keep.append(d)
        dirnames[:] = sorted(keep)
        for name in filenames:
            if not name.endswith(".md"):
                continue
            full = here / name
            rel = full.relative_to(root).as_posix()
            if name.startswith(".") and not dots_only(name[:-3]):
                # Hidden, as Obsidian hides it; said so rather than dropped silently.
                warnings.append(Warning_(rel, "hidden file name (starts with '.'); skipped", code="hidden-file"))
                continue
            if full.is_symlink():
                try:
                    real = full.resolve()
                except (OSError, RuntimeError):  # a symlink loop
                    warnings.append(Warning_(rel, "symlink cannot be resolved (loop); skipped", code="symlink"))
                    continue
                if not real.is_relative_to(root) or is_hidden(real.relative_to(root).as_posix()):
                    warnings.append(Warning_(rel, "symlink leaves the corpus; skipped", code="symlink"))
                    continue
            if not full.is_file():
                continue
            why = reserved_path(rel)
            if why is not None:  # its page would overwrite (or trip over) one the site writes
                warnings.append(Warning_(rel, f"skipped: {why}", code="reserved"))
                continue
            files.append(SourceFile(rel, full))
    files.sort(key=lambda f: f.path)
    return files, warnings


def session_files(root: Path) -> dict[str, tuple[int, int]]:
    """Session files on disk under logs/sessions/: corpus path -> (mtime_ns, size).
    Hidden names and symlinks are skipped, as the build skips them; unreadable folders
    are passed over (a status or wake read must not fail on one)."""
    found: dict[str, tuple[int, int]] = {}
    base = Path(root) / "logs" / "sessions"

    def walk(folder: str, rel: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for e in entries:
            if e.name.startswith("."):
                continue
            try:
                if e.is_symlink():
                    continue
                if e.is_dir():
                    walk(e.path, f"{rel}{e.name}/")
                elif e.name.endswith(".md") and e.is_file():
                    st = e.stat()
                    found[f"{rel}{e.name}"] = (st.st_mtime_ns, st.st_size)
            except OSError:
                continue

    if base.is_dir() and not base.is_symlink():
        walk(str(base), "logs/sessions/")
    return found
