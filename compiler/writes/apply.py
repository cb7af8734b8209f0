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

import datetime as dt
import errno
import hashlib
import re
import unicodedata
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .. import frontmatter as fm
from ..fsutil import atomic_create, atomic_replace, fsync_dir
from ..locks import WRITES_LOCK, claims_lock, corpus_lock
from ..model import content_hash
from .checks import Finding, reveal, scan_content
from .compose import (
    check_frontmatter, compose, frontmatter_strings, merge_frontmatter, split_content, today, tombstone_text,
)
from .errors import (
    Conflict, ContentRefused, HashMismatch, InvalidInput, InvalidTarget, NotFound, TooLarge, WriteError, WriteFailed,
)
from .paths import locate, normalize_target

MAX_CONTENT_BYTES = 1024 * 1024  # one file written through the API
MAX_REASON_CHARS = 2000
QUARANTINE_DIR = "inbox/quarantine"
KINDS = ("append", "create", "replace", "forget")


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


@dataclass
class WriteResult:
    path: str
    action: str  # created | appended | replaced | forgotten | quarantined
    bytes_written: int
    hash: str
    dry_run: bool = False
    quarantined: bool = False
    findings: list[Finding] = field(default_factory=list)
    previous_hash: str | None = None
    message: str = ""
    # The bytes before and after (not part of the answer; callers diff links with them).
    old_data: bytes | None = field(default=None, repr=False)
    new_data: bytes | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "path": self.path,
            "action": self.action,
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
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(f"cannot write {rel}: no space left on the device; nothing was changed")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return WriteFailed(f"cannot write {rel}: the corpus is read-only here; nothing was changed")
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


def _decode_existing(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Conflict(f"{rel} is not valid UTF-8 text; refusing to edit it") from None


def _quarantine_path(rel: str, content: str) -> str:
    stem = rel.rsplit("/", 1)[-1][:-3]
    slug = re.sub(r"[^a-z0-9]+", "-", unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()).strip("-")[:60] or "note"
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{QUARANTINE_DIR}/{stamp}-{slug}-{digest}.md"


def _quarantine_text(req: WriteRequest, findings: list[Finding]) -> str:
    meta = {
        "title": f"Quarantined write to {reveal(req.target)[:200]}",
        "type": "capture",
        "status": "raw",
        "quarantined": True,
        "tags": ["quarantine"],
        "original_target": reveal(req.target)[:512],
        "write_kind": req.kind,
        "reasons": sorted({f.message for f in findings}),
        "created": today(),
    }
    shown = reveal(req.content)
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`{3,}", shown)), default=0) + 1)
    body = (
        "# Quarantined write\n\n"
        "This content was refused by the write checks and kept here, inert, for a person to "
        "review. Invisible characters are shown as `<U+XXXX>`.\n\n"
        f"{fence}text\n{shown}{'' if shown.endswith(chr(10)) else chr(10)}{fence}\n"
    )
    return compose(meta, body)


def _refuse_or_quarantine(root: Path, req: WriteRequest, findings: list[Finding], excluded: tuple[Path, ...]) -> WriteResult:
    if not req.soft:
        first = findings[0]
        raise ContentRefused(
            f"content refused: {first.message} on line {first.line}"
            + (f" (and {len(findings) - 1} more)" if len(findings) > 1 else "")
            + "; send soft=true to quarantine it for review instead",
            findings=[f.as_dict() for f in findings],
        )
    return quarantine(root, req, findings, excluded)


def quarantine(root: Path, req: WriteRequest, findings: list[Finding], excluded: tuple[Path, ...] = (),
               why: str = "content refused by the write checks") -> WriteResult:
    """Keep refused content, inert, as a new note under inbox/quarantine/ for review."""
    root = Path(root).resolve()
    target = req.target if isinstance(req.target, str) else "note.md"
    qrel = _quarantine_path(target, req.content)
    data = _quarantine_text(req, findings).encode("utf-8")
    result = WriteResult(qrel, "quarantined", len(data), content_hash(data), dry_run=req.dry_run,
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
    if req.kind in ("append", "create") and not req.content.strip() and not req.frontmatter:
        raise InvalidInput(f"{req.kind} needs content")
    if req.kind == "replace" and not req.content.strip() and not req.frontmatter:
        raise InvalidInput("replace needs content (use kind=forget to remove a document)")
    if req.kind in ("replace", "forget"):
        if not req.expected_hash:
            raise InvalidInput(f"{req.kind} needs expected_hash (the current 'sha256:<hex>' of the file, from get with debug=true)")
        if not isinstance(req.expected_hash, str) or not re.fullmatch(r"sha256:[0-9a-fA-F]{64}", req.expected_hash):
            raise InvalidInput("expected_hash must look like 'sha256:<64 hex digits>'")
    if req.kind == "forget":
        if not isinstance(req.reason, str) or not req.reason.strip():
            raise InvalidInput("forget needs a reason")
        if len(req.reason) > MAX_REASON_CHARS:
            raise InvalidInput(f"reason is longer than {MAX_REASON_CHARS} characters")
    elif req.reason is not None and not isinstance(req.reason, str):
        raise InvalidInput("reason must be a string")


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
    with write_lock(root):
        full = locate(root, rel, excluded)
        if full.is_symlink():
            raise InvalidTarget(f"invalid path {rel!r}: is a symlink; write to the file it points at")
        if full.exists() and not full.is_file():
            raise InvalidTarget(f"invalid path {rel!r}: is a folder")
        try:
            old = full.read_bytes() if full.exists() else None
        except OSError as exc:
            raise _os_error(exc, rel) from None
        action, data = _plan(rel, req, old)
        result = WriteResult(rel, action, len(data), content_hash(data), dry_run=req.dry_run,
                             previous_hash=content_hash(old) if old is not None else None,
                             old_data=old, new_data=data)
        if req.dry_run:
            result.message = f"dry run: would be {action}; nothing was changed"
            return result
        created: list[Path] = []
        try:
            created = _makedirs(full.parent, root)
            if action == "created":
                if not atomic_create(full, data):
                    raise Conflict(f"{rel} already exists; use kind=append or kind=replace")
            else:
                atomic_replace(full, data)
        except OSError as exc:
            _rmdirs(created)
            raise _os_error(exc, rel) from None
        return result


def _plan(rel: str, req: WriteRequest, old: bytes | None) -> tuple[str, bytes]:
    """(action, new bytes) for the request against the file's current bytes."""
    if req.kind == "create":
        if old is not None:
            raise Conflict(f"{rel} already exists; use kind=append or kind=replace", current_hash=content_hash(old))
        own, body = split_content(req.content)
        meta = merge_frontmatter(own or {}, req.frontmatter) if req.frontmatter else own
        if own is None and not req.frontmatter:
            return "created", compose(None, req.content).encode("utf-8")
        return "created", compose(meta, body).encode("utf-8")

    if req.kind == "append":
        own, body = split_content(req.content)
        extra = merge_frontmatter(own or {}, req.frontmatter or {}) if (own or req.frontmatter) else None
        if old is None:
            meta = merge_frontmatter({"created": today()}, extra or {})
            return "created", compose(meta, body.lstrip("\n")).encode("utf-8")
        text = _decode_existing(old, rel)
        if extra:
            try:
                raw, old_body, _ = fm.split(text)
                old_meta = fm.load(raw) if raw is not None else {}
            except fm.FrontmatterError as exc:
                raise Conflict(f"{rel} has unusable frontmatter ({exc}); cannot merge into it") from None
            merged = merge_frontmatter(old_meta, extra)
            if merged != old_meta:
                text = compose(merged, old_body) if raw is not None else compose(merged, "\n" + old_body.lstrip("\n"))
        addition = body.strip("\n")
        if addition:
            if text and not text.endswith("\n"):
                text += "\n"
            if text and not text.endswith("\n\n"):
                text += "\n"
            text += addition + "\n"
        return "appended", text.encode("utf-8")

    if old is None:
        raise NotFound(f"{rel} does not exist")
    current = content_hash(old)
    if req.expected_hash.lower() != current:  # type: ignore[union-attr]
        raise HashMismatch(
            f"{rel} changed since you read it: expected_hash is {req.expected_hash}, the file is {current}; "
            "get it again and retry",
            current_hash=current,
        )
    if req.kind == "replace":
        own, body = split_content(req.content)
        if own is None and not req.frontmatter:
            return "replaced", compose(None, req.content).encode("utf-8")
        meta = merge_frontmatter(own or {}, req.frontmatter or {})
        return "replaced", compose(meta, body).encode("utf-8")

    # forget
    text = _decode_existing(old, rel)
    return "forgotten", tombstone_text(text, rel, req.reason.strip(), req.actor).encode("utf-8")  # type: ignore[union-attr]

