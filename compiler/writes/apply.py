"""The write transaction: validate a request, plan the new bytes, and put them on disk.

Every write goes to a temp file in the target's folder, is flushed and fsynced, renamed
over the target (`os.replace`, or a hard link for `create` so an existing file is never
clobbered) and the folder is fsynced (`fsutil`). Readers see the old bytes or the new,
never a mix. Writers are serialized by `write_lock(root)`: the corpus write lock and,
because both may write the same canonical page, the claim store's lock (`locks`).
Refused content raises `ContentRefused`, or, with `soft`, is quarantined as an inert note
under `inbox/quarantine/`.
"""

from __future__ import annotations

import errno
import os
import re
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..fsutil import atomic_create, atomic_replace, fsync_dir, unlink_quiet
from ..locks import WRITES_LOCK, claims_lock, corpus_lock
from ..model import content_hash
from . import schema as sc
from .budget import check_parse_time, check_structure
from .checks import Finding, scan_content
from .compose import check_frontmatter, frontmatter_strings
from .errors import (
    Conflict, ContentRefused, Exists, InvalidInput, InvalidTarget, TooLarge, WriteError, WriteFailed, disk_refusal,
)
from .paths import check_collision, locate, normalize_target
from .plan import Change, plan, request_meta, tombstone_path
from .quarantine import QUARANTINE_DIR, quarantine_path, quarantine_text

MAX_CONTENT_BYTES = 1024 * 1024  # one file written through the API
MAX_REASON_CHARS = 2000
KINDS = ("append", "create", "replace", "forget")
DRY_ACTIONS = {"created": "would_create", "appended": "would_append", "replaced": "would_replace",
               "forgotten": "would_forget", "quarantined": "would_quarantine"}


@dataclass
class WriteRequest:
    kind: str
    target: str
    content: str = ""
    frontmatter: dict[str, Any] | None = None
    expected_hash: str | None = None
    reason: str | None = None
    dry_run: bool = False
    soft: bool = False
    actor: str | None = None
    schema: bool = False  # Dory's corpus schema (schema.py): the API's writes set it


@dataclass
class WriteResult:
    path: str
    action: str  # created | appended | replaced | forgotten | quarantined
    bytes_written: int  # UTF-8 length of the request's content (Dory's meaning)
    hash: str
    dry_run: bool = False
    quarantined: bool = False
    findings: list[Finding] = field(default_factory=list)
    previous_hash: str | None = None
    message: str = ""
    # The bytes before and after (not part of the answer; callers diff links with them).
    old_data: bytes | None = field(default=None, repr=False)
    new_data: bytes | None = field(default=None, repr=False)
    # Every file written, the target first (a forget also writes its tombstone).
    changes: list[Change] = field(default_factory=list, repr=False)

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes] or [self.path]

    @property
    def shown_action(self) -> str:
        """Dory's action: `would_create` ... in a dry run."""
        return DRY_ACTIONS.get(self.action, f"would_{self.action}") if self.dry_run else self.action

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "path": self.path,
            "action": self.shown_action,
            "bytes_written": self.bytes_written,
            "hash": self.hash,
            "dry_run": self.dry_run,
            "quarantined": self.quarantined,
        }
        if self.findings:
            d["findings"] = [f.as_dict() for f in self.findings]
        if self.message:
            d["message"] = self.message
        return d


def _makedirs(path: Path, root: Path) -> list[Path]:
    """mkdir -p inside the corpus; returns the folders it created (outermost first)."""
    missing = []
    p = path
    while not p.exists():
        if p == root or p == p.parent:
            break
        missing.append(p)
        p = p.parent
    created: list[Path] = []
    for d in reversed(missing):
        try:
            d.mkdir()
            created.append(d)
        except FileExistsError:
            pass
        except OSError:
            _rmdirs(created)
            raise
        fsync_dir(d.parent)
    if not path.is_dir():
        raise InvalidTarget(f"cannot create folder {path.name!r}: a file with that name exists")
    return created


def _rmdirs(created: list[Path]) -> None:
    """Undo `_makedirs` after a failed write (only folders still empty)."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            break


def _os_error(exc: OSError, rel: str) -> WriteError:
    why = disk_refusal(exc)
    if why is not None:
        return WriteFailed(f"cannot write {rel}: {why}; nothing was changed")
    if exc.errno in (errno.ENAMETOOLONG,):
        return InvalidTarget(f"invalid path {rel!r}: name too long")
    if exc.errno in (errno.ENOTDIR, errno.EISDIR):
        return InvalidTarget(f"invalid path {rel!r}: a folder and a file share a name")
    return WriteFailed(f"cannot write {rel}: {exc.strerror or 'I/O error'}; nothing was changed")


@contextmanager
def write_lock(root: Path) -> Iterator[None]:
    """One corpus writer at a time, across threads and processes."""
    root = Path(root).resolve()
    with ExitStack() as stack:
        for lock in (corpus_lock(root, WRITES_LOCK, 0o600), claims_lock(root)):
            try:
                stack.enter_context(lock)
            except OSError as exc:  # no lock file and a read-only or full disk
                raise _os_error(exc, "the corpus") from None
        yield


def _refuse_or_quarantine(root: Path, req: WriteRequest, findings: list[Finding], excluded: tuple[Path, ...]) -> WriteResult:
    if not req.soft:
        first = findings[0]
        lead = ("content failed injection scan" if first.code == "prompt-injection"
                else "content contains invisible unicode" if first.code in ("invisible-character", "bidi-control")
                else "content contains a control character")
        raise ContentRefused(
            f"{lead}: {first.message} on line {first.line}"
            + (f" (and {len(findings) - 1} more)" if len(findings) > 1 else "")
            + "; the content was refused",
            findings=[f.as_dict() for f in findings],
        )
    return quarantine(root, req, findings, excluded)


def quarantine(root: Path, req: WriteRequest, findings: list[Finding], excluded: tuple[Path, ...] = (),
               why: str = "content refused by the write checks", extra: dict[str, Any] | None = None) -> WriteResult:
    """Keep refused content, inert, as a new note under inbox/quarantine/ for review."""
    root = Path(root).resolve()
    target = req.target if isinstance(req.target, str) else "note.md"
    qrel = quarantine_path(target, req.content)
    data = quarantine_text(target, req.kind, req.content, findings, why, req.frontmatter, extra).encode("utf-8")
    result = WriteResult(qrel, "quarantined", _content_bytes(req.content), content_hash(data), dry_run=req.dry_run,
                         quarantined=True, findings=findings, message=f"{why}; quarantined for review")
    if req.dry_run:
        return result
    with write_lock(root):
        for n in range(1, 1000):
            rel = qrel if n == 1 else f"{qrel[:-3]}-{n}.md"
            full = locate(root, rel, excluded)
            try:
                _makedirs(full.parent, root)
                if atomic_create(full, data):
                    result.path = rel
                    return result
            except OSError as exc:
                raise _os_error(exc, rel) from None
    raise Conflict("no free quarantine file name")


def _content_bytes(content: str) -> int:
    """Dory's bytes_written: the UTF-8 length of the request's content."""
    return len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else 0


def _check_request(req: WriteRequest) -> None:
    if req.kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}; got {str(req.kind)[:40]!r}")
    if not isinstance(req.content, str):
        raise InvalidInput(f"content must be a string, not {type(req.content).__name__}")
    try:
        size = len(req.content.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("content is not valid Unicode (lone surrogate)") from None
    if size > MAX_CONTENT_BYTES:
        raise TooLarge(f"content is {size:,} bytes; the limit is {MAX_CONTENT_BYTES:,}")
    if not req.schema and req.kind in ("append", "create") and not req.content.strip() and not req.frontmatter:
        raise InvalidInput(f"{req.kind} needs content")
    if req.expected_hash is not None and (
            not isinstance(req.expected_hash, str) or not re.fullmatch(r"sha256:[0-9a-fA-F]{64}", req.expected_hash)):
        raise InvalidInput("expected_hash must look like 'sha256:<64 hex digits>'")
    if req.kind == "forget":
        if not isinstance(req.reason, str) or not req.reason.strip():
            raise InvalidInput("forget requires a reason")
        if len(req.reason) > MAX_REASON_CHARS:
            raise InvalidInput(f"reason is longer than {MAX_REASON_CHARS} characters")
    elif req.reason is not None and not isinstance(req.reason, str):
        raise InvalidInput("reason must be a string")


def _route(root: Path, rel: str, req: WriteRequest, excluded: tuple[Path, ...]) -> str:
    """Dory's auto-routing of a new file (schema writes): `auto/x.md`, a bare `x.md`, or an
    explicit path that must lie under its type's folder. An existing target is kept."""
    if not req.schema or req.kind not in ("create", "append") or os.path.lexists(locate(root, rel, excluded)):
        return rel
    meta, _ = request_meta(req.content, req.frontmatter, True)
    if not meta:
        raise InvalidInput("frontmatter is required when creating a new file (title and type)")
    sc.require_new(meta)
    return normalize_target(sc.route(rel, meta))


def apply_write(root: Path, req: WriteRequest, excluded: tuple[Path, ...] = ()) -> WriteResult:
    """Validate and perform one write under the corpus write lock."""
    root = Path(root).resolve()
    _check_request(req)
    sent = req.frontmatter
    req.frontmatter = check_frontmatter(req.frontmatter)
    rel = normalize_target(req.target)
    # Scan what was sent as well as its YAML round trip: YAML folds some characters
    # (NEL U+0085 becomes a line break), which must not launder a refused one.
    scanned = "\n".join([req.content, req.reason or "", *frontmatter_strings(sent), *frontmatter_strings(req.frontmatter)])
    findings = scan_content(scanned)
    if findings:
        return _refuse_or_quarantine(root, req, findings, excluded)
    check_structure(req.content, "the content")
    check_parse_time(req.content)  # before the lock: a slow parse costs this request only
    with write_lock(root):
        rel = _route(root, rel, req, excluded)
        full = _check_file(root, rel, excluded)
        old = _read(full, rel)
        if old is None:
            check_collision(root, rel)
        tomb_old = None
        if req.kind == "forget" and old is not None:
            trel = tombstone_path(rel)
            tomb_old = _read(_check_file(root, trel, excluded), trel)
        action, changes = plan(rel, req, old, tomb_old)
        main = changes[0]
        if req.kind == "append":  # appends add up: the caps hold for the whole document
            check_structure(main.new.decode("utf-8", "replace"), rel)
        result = WriteResult(rel, action, _content_bytes(req.content), content_hash(main.new), dry_run=req.dry_run,
                             previous_hash=content_hash(old) if old is not None else None,
                             old_data=old, new_data=main.new, changes=changes)
        if req.dry_run:
            result.message = f"dry run: {result.shown_action}; nothing was changed"
            return result
        # The tombstone goes first, so a document never points at a tombstone that is not there.
        done: list[tuple[Path, Change, list[Path]]] = []
        for change in reversed(changes):
            created: list[Path] = []
            try:
                target = locate(root, change.path, excluded)
                created = _makedirs(target.parent, root)
                if change.old is None:
                    if not atomic_create(target, change.new):
                        raise Exists(f"target already exists: {change.path}; use kind=append or kind=replace")
                else:
                    atomic_replace(target, change.new)
            except (OSError, WriteError) as exc:
                _rmdirs(created)
                _undo(done)
                if isinstance(exc, WriteError):
                    raise
                raise _os_error(exc, change.path) from None
            done.append((target, change, created))
        return result


def _check_file(root: Path, rel: str, excluded: tuple[Path, ...]) -> Path:
    full = locate(root, rel, excluded)
    if full.is_symlink():
        raise InvalidTarget(f"invalid path {rel!r}: is a symlink; write to the file it points at")
    if full.exists() and not full.is_file():
        raise InvalidTarget(f"invalid path {rel!r}: is a folder")
    return full


def _read(full: Path, rel: str) -> bytes | None:
    try:
        return full.read_bytes() if full.exists() else None
    except OSError as exc:
        raise _os_error(exc, rel) from None


def _undo(done: list[tuple[Path, Change, list[Path]]]) -> None:
    """Put back the files of a multi-file write that already landed (best effort)."""
    for target, change, created in reversed(done):
        try:
            if change.old is None:
                unlink_quiet(target)
                _rmdirs(created)
            else:
                atomic_replace(target, change.old)
        except OSError:
            pass
