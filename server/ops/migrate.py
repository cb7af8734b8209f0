"""`/v1/migrate`: import a folder of legacy notes, deterministically (no language model).

Each text file of `legacy_root` becomes a corpus document at a place chosen by rule, as
Dory's deterministic path does: `memory/daily/` to `digests/daily/`, `memory/weekly/` to
`digests/weekly/`, `memory/sessions/` to `logs/sessions/`, `memory/archive/` to
`sources/legacy/`, anything else to `sources/imported/` (same sub-folders, names in lower
case). A report of the run goes to `references/reports/migrations/<run>.md`.

Safety: the import reads outside the corpus, which nothing else in commonplace does, so
it is off unless the operator names the folders it may read (see `allowed_root`). It never
follows symlinks, never reads hidden files or folders, special files or /proc, checks each
file's size before reading it, never replaces a file that exists (a re-run skips what is there), and puts what the write
checks refuse in quarantine. Paths in the answer and the report are relative to
`legacy_root`; the server's own paths are never named.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonplace.compiler.markdown import frontmatter as fm
from commonplace.compiler import writes as w
from commonplace.compiler.fsutil import atomic_create, makedirs
from commonplace.compiler.model import type_for_path
from commonplace.compiler.writes.checks import has_hidden_characters

from ..errors import ApiError
from ..models import MigrateRequest
from . import OpContext
from .refresh import refresh

SUFFIXES = (".md", ".markdown", ".txt")
SKIP_FOLDERS = {"node_modules", "__pycache__", "venv", "site-packages"}
MAX_FILES = 10_000
ROOTS_ENV = "COMMONPLACE_MIGRATE_ROOTS"
REPORT_DIR = "references/reports/migrations"
LIST_CAP = 200  # items of each list in the answer (the report has them all)


@dataclass
class Run:
    run_id: str
    staged: list[tuple[str, Path]] = field(default_factory=list)  # (legacy-relative path, file)
    written: list[tuple[str, str]] = field(default_factory=list)  # (source, target)
    quarantined: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source, reason)


# --------------------------------------------------------------------------- where from


# Never imported from, whatever the roots say: the kernel's and devices' views of the
# machine (a walk of /proc/self lists thousands of names and can read secrets).
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/run"))
MAX_WALKED = 50_000  # names looked at in one run, text or not


def configured_roots(ctx: OpContext) -> list[Path]:
    """The folders the operator allowed: `serve --migrate-root`, and COMMONPLACE_MIGRATE_ROOTS
    (separated by the OS path separator)."""
    named = list(getattr(ctx, "migrate_roots", ()) or ())
    named += [p for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    out = []
    for p in named:
        try:
            out.append(Path(p).expanduser().resolve())
        except (OSError, RuntimeError):
            continue
    return out


def allowed_root(ctx: OpContext, legacy_root: str) -> Path:
    """The folder to import, resolved, or an ApiError.

    Off unless the operator named folders to import from (`serve --migrate-root DIR`, or
    COMMONPLACE_MIGRATE_ROOTS): a token holder must not be able to copy the server's files
    into the corpus and read them back. Inside those folders, never a hidden folder (a part
    starting with a dot), never /proc, /sys, /dev or /run, never the corpus or its state,
    never a folder holding the corpus.
    """
    if "\x00" in legacy_root or has_hidden_characters(legacy_root):
        raise ApiError(400, "invalid_parameter", "`legacy_root` contains a control or invisible character")
    roots = configured_roots(ctx)
    if not roots:
        raise ApiError(403, "migrate_not_enabled",
                       "importing a folder is off on this server: start it with `--migrate-root DIR` (or set "
                       f"{ROOTS_ENV}) naming the folders /v1/migrate may read")
    try:
        folder = Path(legacy_root).expanduser().resolve()
    except (OSError, RuntimeError):
        raise ApiError(400, "invalid_parameter", "`legacy_root` cannot be resolved") from None
    base = next((r for r in roots if folder.is_relative_to(r)), None)
    if base is None:
        raise ApiError(403, "migrate_root_not_allowed",
                       "`legacy_root` is outside the folders this server may import from (--migrate-root)")
    if any(folder.is_relative_to(s) for s in SYSTEM_FOLDERS):
        raise ApiError(403, "migrate_root_not_allowed", "`legacy_root` is a system folder; it is never imported")
    if any(part.startswith(".") for part in folder.relative_to(base).parts):
        raise ApiError(403, "migrate_root_not_allowed", "`legacy_root` is inside a hidden folder; it is never imported")
    if not folder.is_dir():
        raise ApiError(400, "invalid_parameter", "`legacy_root` is not a folder this server can read")
    root = ctx.root.resolve()
    if folder.is_relative_to(root) or root.is_relative_to(folder):
        raise ApiError(400, "invalid_parameter", "`legacy_root` must be outside the corpus and must not contain it")
    for ex in ctx.excluded:
        if folder.is_relative_to(ex.resolve()) or ex.resolve().is_relative_to(folder):
            raise ApiError(400, "invalid_parameter", "`legacy_root` must not hold or be inside the site output")
    return folder


def stage(folder: Path) -> tuple[list[tuple[str, Path]], list[tuple[str, str]]]:
    """Text files under `folder` (not following symlinks, no hidden parts, no system
    folders), sorted. Only regular files are kept; sizes are checked here, before reading."""
    staged: list[tuple[str, Path]] = []
    skipped: list[tuple[str, str]] = []
    walked = 0
    for here, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_FOLDERS
                         and Path(here, d) not in SYSTEM_FOLDERS)
        walked += len(dirs) + len(files)
        if walked > MAX_WALKED:
            raise ApiError(400, "too_many_files", f"`legacy_root` holds more than {MAX_WALKED:,} names; "
                                                  "import it one sub-folder at a time")
        for name in sorted(files):
            full = Path(here) / name
            rel = full.relative_to(folder).as_posix()
            if name.startswith("."):
                continue
            if not name.lower().endswith(SUFFIXES):
                skipped.append((rel, "not a text or markdown file"))
                continue
            try:
                info = os.lstat(full)
            except OSError:
                skipped.append((rel, "cannot be read"))
                continue
            if not stat.S_ISREG(info.st_mode):
                skipped.append((rel, "a symlink or special file"))
                continue
            if info.st_size > w.MAX_CONTENT_BYTES:
                skipped.append((rel, f"larger than {w.MAX_CONTENT_BYTES:,} bytes"))
                continue
            staged.append((rel, full))
            if len(staged) > MAX_FILES:
                raise ApiError(400, "too_many_files", f"`legacy_root` holds more than {MAX_FILES:,} text files; "
                                                      "import it one sub-folder at a time")
    staged.sort()
    return staged, skipped


# --------------------------------------------------------------------------- where to


def _slug(part: str) -> str:
    ascii_ = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9._-]+", "-", ascii_).strip("-.") or "untitled"


def _md_name(name: str) -> str:
    stem = name
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix):
            stem = name[: -len(suffix)]
            break
    return _slug(stem) + ".md"


def target_for(rel: str) -> str:
    """Dory's deterministic placement of a legacy file (see the module docstring)."""
    parts = rel.split("/")
    name = _md_name(parts[-1])
    folders = [_slug(p) for p in parts[:-1]]
    if len(parts) >= 3 and parts[0] == "memory":
        bucket, tail = parts[1], "/".join(folders[2:] + [name])
        base = {"daily": "digests/daily", "weekly": "digests/weekly", "sessions": "logs/sessions",
                "archive": "sources/legacy"}.get(bucket)
        if base:
            return f"{base}/{tail}"
        return f"sources/imported/{_slug(bucket)}/{tail}"
    return "/".join(["sources/imported", *folders, name])


# --------------------------------------------------------------------------- what


def _title(meta: dict[str, Any], body: str, rel: str) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    for line in body.splitlines():
        m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m:
            return m.group(1)
    stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return re.sub(r"[-_]+", " ", stem).strip().title() or "Untitled"


def document_text(rel: str, target: str, raw: str, modified: float, run_id: str) -> str:
    meta: dict[str, Any] = {}
    body = raw
    if rel.lower().endswith((".md", ".markdown")):
        try:
            head, rest, _ = fm.split(raw)
            if head is not None:
                meta, body = fm.load(head), rest
        except fm.FrontmatterError:
            meta, body = {}, raw  # kept as text; the legacy header stays in the body
    day = dt.datetime.fromtimestamp(modified, dt.timezone.utc).date().isoformat()
    out = dict(meta)
    out.update({
        "title": _title(meta, body, rel),
        "type": meta.get("type") if isinstance(meta.get("type"), str) else type_for_path(target),
        "created": str(meta.get("created") or meta.get("date") or day),
        "source_kind": "imported",
        "source_path": rel,
        "migration_run": run_id,
        "canonical": False,
    })
    return w.compose(out, body.lstrip("\n"))


# --------------------------------------------------------------------------- the run


def _run_id(folder: Path) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{_slug(folder.name)[:40]}"


def _write_one(ctx: OpContext, run: Run, rel: str, full: Path) -> None:
    try:
        # O_NOFOLLOW and a bounded read: the file may have grown or been swapped since staging.
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                run.skipped.append((rel, "a symlink or special file"))
                return
            data = fh.read(w.MAX_CONTENT_BYTES + 1)
    except OSError:
        run.skipped.append((rel, "cannot be read"))
        return
    if len(data) > w.MAX_CONTENT_BYTES:
        run.skipped.append((rel, f"larger than {w.MAX_CONTENT_BYTES:,} bytes"))
        return
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        run.skipped.append((rel, "not UTF-8 text"))
        return
    target = target_for(rel)
    try:
        w.normalize_target(target)
    except w.WriteError:
        run.skipped.append((rel, "no valid corpus path for its name"))
        return
    text = document_text(rel, target, raw, full.stat().st_mtime, run.run_id)
    findings = w.scan_content(text)
    if findings:
        req = w.WriteRequest(kind="create", target=target, content=raw, actor=ctx.actor)
        res = w.quarantine(ctx.root, req, findings, ctx.excluded, why="imported content refused by the write checks")
        run.quarantined.append((rel, res.path))
        return
    with w.write_lock(ctx.root):
        dest = w.locate(ctx.root, target, ctx.excluded)
        makedirs(dest.parent)
        if not atomic_create(dest, text.encode("utf-8")):
            run.skipped.append((rel, f"{target} exists (kept as it is)"))
            return
    run.written.append((rel, target))


def _cell(text: str) -> str:
    """A legacy name as a table cell: hidden characters shown, markup escaped."""
    return re.sub(r"([\\`*_\[\]|<>#])", r"\\\1", w.reveal(text))


def _report(run: Run, seconds: float) -> str:
    def rows(items: list[tuple[str, str]], right: str) -> list[str]:
        if not items:
            return ["(none)", ""]
        lines = [f"| legacy file | {right} |", "|---|---|"]
        lines += [f"| {_cell(a)} | {'[[' + b + ']]' if right == 'document' else _cell(b)} |" for a, b in items]
        return lines + [""]

    meta = {"title": f"Migration {run.run_id}", "type": "report", "created": dt.date.today().isoformat(),
            "source_kind": "generated", "migration_run": run.run_id, "canonical": False}
    body = [f"# Migration {run.run_id}", "",
            f"Imported a folder of legacy notes without a language model in {seconds:.1f} s: {len(run.staged)} files "
            f"staged, {len(run.written)} written, {len(run.quarantined)} quarantined, {len(run.skipped)} skipped.",
            "", "## Written", "", *rows(run.written, "document"),
            "## Quarantined", "", *rows(run.quarantined, "quarantine note"),
            "## Skipped", "", *rows(run.skipped, "why")]
    text = w.compose(meta, "\n".join(body))
    if w.scan_content(text):  # a legacy file name that reads like an instruction
        body = body[:3] + ["The file lists are left out: some names tripped the content checks. The API "
                           "answer of the run lists them.", ""]
        text = w.compose(meta, "\n".join(body))
    return text


def migrate(ctx: OpContext, req: MigrateRequest) -> dict[str, Any]:
    if req.use_llm:
        raise ApiError(400, "llm_not_configured", "use_llm=true needs a language model and this server has none; "
                                                  "send use_llm=false for the deterministic import")
    folder = allowed_root(ctx, req.legacy_root)
    t0 = time.perf_counter()
    run = Run(_run_id(folder))
    run.staged, run.skipped = stage(folder)
    for rel, full in run.staged:
        try:
            _write_one(ctx, run, rel, full)
        except w.WriteError as exc:
            run.skipped.append((rel, exc.message))
        except OSError as exc:
            run.skipped.append((rel, f"could not be written ({exc.strerror or 'I/O error'})"))
    seconds = time.perf_counter() - t0
    report = f"{REPORT_DIR}/{run.run_id}.md"
    with w.write_lock(ctx.root):
        dest = w.locate(ctx.root, report, ctx.excluded)
        makedirs(dest.parent)
        n = 1
        while not atomic_create(dest, _report(run, seconds).encode("utf-8")):
            n += 1
            report = f"{REPORT_DIR}/{run.run_id}-{n}.md"
            dest = w.locate(ctx.root, report, ctx.excluded)
    changed = [t for _, t in run.written] + [q for _, q in run.quarantined] + [report]
    indexed, note = refresh(ctx.live, changed)
    out: dict[str, Any] = {
        "staged_count": len(run.staged),
        "written_count": len(run.written),
        "canonical_created_count": 0,
        "quarantined_count": len(run.quarantined),
        "report_path": report,
        "run_artifact_path": None,
        "stats": {
            "llm_classified_count": 0,
            "llm_extracted_count": 0,
            "fallback_classified_count": len(run.staged),
            "fallback_extracted_count": 0,
            "atom_count": 0,
            "contradiction_count": 0,
            "duration_ms": int((time.perf_counter() - t0) * 1000),
        },
        "run_id": run.run_id,
        "skipped_count": len(run.skipped),
        "written": [{"source": a, "path": b} for a, b in run.written[:LIST_CAP]],
        "quarantined": [{"source": a, "path": b} for a, b in run.quarantined[:LIST_CAP]],
        "skipped": [{"source": a, "reason": b} for a, b in run.skipped[:LIST_CAP]],
        "indexed": indexed,
    }
    if note:
        out["message"] = note
    return out
