"""Writes to the corpus: the one implementation behind `POST /v1/write` and `commonplace write`.

Safety rules (design, "Safety of writes"):

- Targets are checked by `check_target`: a relative POSIX path inside the corpus, ending in
  `.md`, with no empty, `.`/`..` or hidden part (so never `.commonplace/`), no NUL, control or
  invisible characters, no backslash, drive letter or percent-encoded character, no part that
  Unicode compatibility folding turns into `..` or a hidden name, no part longer than 255
  bytes, and no symlink (file or folder) that leads outside the corpus or into a hidden path.
- Content is scanned by `scan_content` for prompt-injection markers and invisible or
  bidirectional-control characters. Refused content raises `ContentRefused` (HTTP 422), or,
  with `soft`, is quarantined as an inert note under `inbox/quarantine/`.
- Every write goes to a temp file in the target's folder, is flushed and fsynced, renamed over
  the target (`os.replace`, or a hard link for `create` so an existing file is never
  clobbered) and the folder is fsynced. Readers see the old bytes or the new, never a mix.
- Writers are serialized by `write_lock(root)`: a thread lock plus an `flock` on
  `.commonplace/writes.lock`, so threads of one server and separate processes (the CLI, a
  second server) never interleave a read-modify-write. The claim store's corpus lock is taken
  too when it exists, because both may write the same canonical page.

Nothing here rebuilds or indexes; callers (the server, the CLI) refresh afterwards.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import os
import re
import threading
import unicodedata
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from . import frontmatter as fm
from .fsutil import atomic_create, atomic_replace, fsync_dir
from .model import STATE_DIR

MAX_PATH_CHARS = 512
MAX_PART_BYTES = 255
MAX_CONTENT_BYTES = 1024 * 1024  # one file written through the API
MAX_REASON_CHARS = 2000
QUARANTINE_DIR = "inbox/quarantine"
KINDS = ("append", "create", "replace", "forget")


# --------------------------------------------------------------------------- errors


class WriteError(Exception):
    """A refused write or read. `status` is the HTTP status the server answers with."""

    status = 400
    code = "invalid_request"
    type = "invalid_request_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidTarget(WriteError):
    status, code, type = 400, "invalid_path", "invalid_request_error"


class InvalidInput(WriteError):
    status, code, type = 400, "invalid_request", "invalid_request_error"


class NotFound(WriteError):
    status, code, type = 404, "not_found", "not_found_error"


class Conflict(WriteError):
    status, code, type = 409, "conflict", "conflict_error"


class HashMismatch(Conflict):
    code = "hash_mismatch"


class TooLarge(WriteError):
    status, code, type = 413, "too_large", "invalid_request_error"


class ContentRefused(WriteError):
    status, code, type = 422, "content_refused", "content_refused_error"


class WriteFailed(WriteError):
    """The filesystem refused (disk full, read-only): nothing changed."""

    status, code, type = 503, "write_failed", "server_error"


# --------------------------------------------------------------------------- characters

# Invisible or direction-changing characters: zero-width spaces/joiners, bidi embeddings,
# overrides and isolates, word joiner and invisible operators, BOM, Mongolian vowel
# separator, soft hyphen, interlinear annotations, and Unicode tag characters.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufeff\ufff9-\ufffb\uffa0\U000e0000-\U000e007f\U0001d173-\U0001d17a]"
)
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# C0/C1 controls other than tab, newline and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ZWJ = "\u200d"
_JOINERS = ("\u200c", "\u200d")  # legitimate inside emoji sequences and some scripts
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")

# Markers of text written to steer a model that later reads the corpus. Deliberately
# specific: ordinary prose ("we ignored the previous estimate") must pass.
INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        ("ignore-instructions",
         r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
         r"(?:previous|prior|above|earlier|preceding|system|original|existing)\s+"
         r"(?:instructions?|prompts?|directions|rules|guidelines|context|messages?)\b"),
        ("new-instructions", r"\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions?)\s*:"),
        ("reveal-prompt", r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions)\b"),
        ("role-override", r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|an?\s+unrestricted)\b"),
        ("chat-template", r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>"),
        ("chat-template", r"\[/?INST\]|<</?SYS>>"),
        ("system-tag", r"<\s*/?\s*(?:system|system[-_]prompt|sys)\s*>"),
        ("tool-call", r"<\s*/?\s*(?:function_calls|tool_call|antml:[a-z_]+)\b"),
    )
)


@dataclass
class Finding:
    code: str  # invisible-character | bidi-control | control-character | prompt-injection
    message: str
    line: int

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


def _is_emoji_neighbour(ch: str) -> bool:
    if not ch:
        return False
    if ch == "\ufe0f" or ord(ch) >= 0x1F000 or unicodedata.category(ch) == "So":
        return True
    return 0x1F3FB <= ord(ch) <= 0x1F3FF


def _is_script_letter(ch: str) -> bool:
    return bool(ch) and ord(ch) >= 0x0590 and unicodedata.category(ch)[0] in "LM"


def scan_content(text: str, limit: int = 20) -> list[Finding]:
    """Reasons to refuse `text`, at most `limit` of them (empty list: acceptable)."""
    found: list[Finding] = []

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for m in _CONTROL.finditer(text):
        found.append(Finding("control-character", f"control character U+{ord(m.group()):04X}", line_of(m.start())))
        if len(found) >= limit:
            return found
    for m in _INVISIBLE.finditer(text):
        ch = m.group()
        cp = ord(ch)
        code = "bidi-control" if _BIDI.match(ch) else "invisible-character"
        found.append(Finding(code, f"{'bidirectional control' if code == 'bidi-control' else 'invisible'} character U+{cp:04X}", line_of(m.start())))
        if len(found) >= limit:
            return found
    # Zero-width (non-)joiners are only acceptable inside an emoji sequence (family emoji)
    # or between letters of scripts that need them (Persian, Indic); never in Latin text.
    for joiner in _JOINERS:
        start = 0
        while True:
            i = text.find(joiner, start)
            if i < 0:
                break
            start = i + 1
            before = text[i - 1] if i > 0 else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if joiner == _ZWJ and _is_emoji_neighbour(before) and _is_emoji_neighbour(after):
                continue
            if _is_script_letter(before) and _is_script_letter(after):
                continue
            found.append(Finding("invisible-character", f"invisible character U+{ord(joiner):04X} outside an emoji sequence or joining script", line_of(i)))
            if len(found) >= limit:
                return found
    # Two or more variation selectors in a row select nothing a reader can see: they are
    # a known way to smuggle hidden bytes after an emoji.
    for m in _VS_RUN.finditer(text):
        found.append(Finding("invisible-character", f"{len(m.group())} variation selectors in a row (hidden data)", line_of(m.start())))
        if len(found) >= limit:
            return found
    # Markers are matched on the compatibility-folded text too, so fullwidth or styled
    # letters (ｉｇｎｏｒｅ, 𝐢𝐠𝐧𝐨𝐫𝐞) do not slip past them. NFKC keeps line breaks.
    folded = unicodedata.normalize("NFKC", text)
    for name, rx in INJECTION_PATTERNS:
        m = rx.search(text) or (rx.search(folded) if folded != text else None)
        if m:
            found.append(Finding("prompt-injection", f"prompt-injection marker ({name})",
                                 (m.string.count("\n", 0, m.start()) + 1)))
            if len(found) >= limit:
                return found
    return found


def reveal(text: str) -> str:
    """Make refused characters visible (`<U+202E>`), for quarantined copies and messages."""

    def sub(m: re.Match[str]) -> str:
        return f"<U+{ord(m.group()):04X}>"

    text = _CONTROL.sub(sub, text)
    text = _INVISIBLE.sub(sub, text)
    text = _VS_RUN.sub(lambda m: "".join(f"<U+{ord(c):04X}>" for c in m.group()), text)
    for joiner in _JOINERS:
        text = text.replace(joiner, f"<U+{ord(joiner):04X}>")
    return text


# --------------------------------------------------------------------------- paths


_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")


def _refuse(target: str, why: str) -> InvalidTarget:
    shown = reveal(target[:120])
    return InvalidTarget(f"invalid path {shown!r}: {why}")


def normalize_target(target: Any, *, require_md: bool = True) -> str:
    """Check the *shape* of a corpus-relative path (no filesystem access); return it.

    Raises InvalidTarget. Paths are never decoded or normalised here, so what is checked
    is exactly what is opened.
    """
    if not isinstance(target, str):
        raise InvalidTarget(f"path must be a string, not {type(target).__name__}")
    if not target or not target.strip():
        raise InvalidTarget("path is empty")
    if len(target) > MAX_PATH_CHARS:
        raise InvalidTarget(f"path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in target:
        raise _refuse(target, "contains a NUL character")
    if _CONTROL.search(target) or _INVISIBLE.search(target) or any(j in target for j in _JOINERS):
        raise _refuse(target, "contains a control or invisible character")
    try:
        target.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(target, "is not valid Unicode") from None
    if "\\" in target:
        raise _refuse(target, "contains a backslash (use '/' between folders)")
    if target.startswith("/") or _DRIVE.match(target) or target.startswith("~"):
        raise _refuse(target, "must be relative to the corpus")
    if _ENCODED.search(target):
        raise _refuse(target, "contains a percent-encoded character")
    if target != target.strip():
        raise _refuse(target, "starts or ends with whitespace")
    parts = target.split("/")
    for part in parts:
        if part == "":
            raise _refuse(target, "has an empty folder name ('//' or a trailing '/')")
        if part in (".", ".."):
            raise _refuse(target, "contains '.' or '..'")
        folded = unicodedata.normalize("NFKC", part)
        if part.startswith(".") or folded.startswith(".") or folded in ("..", "."):
            raise _refuse(target, "names a hidden file or folder")
        if part != part.strip() or folded != folded.strip():
            raise _refuse(target, "has a file or folder name that starts or ends with whitespace")
        if len(part.encode("utf-8")) > MAX_PART_BYTES:
            raise _refuse(target, f"has a name longer than {MAX_PART_BYTES} bytes")
    if parts[0].lower() == STATE_DIR:
        raise _refuse(target, "is inside commonplace's state folder")
    if require_md and not target.endswith(".md"):
        raise _refuse(target, "must end in .md")
    if require_md and parts[-1] == ".md":
        raise _refuse(target, "has no file name")
    return target


def _inside(child: Path, parent: Path) -> bool:
    try:
        child.relative_to(parent)
        return True
    except ValueError:
        return False


def locate(root: Path, rel: str, excluded: tuple[Path, ...] = ()) -> Path:
    """`root/rel` once every existing part of it is known to stay in the corpus.

    Refuses (InvalidTarget) a symlinked file or folder on the way that resolves outside the
    corpus, into a hidden path, or into an excluded folder (the site output).
    """
    root = root.resolve()
    full = root / rel
    # The deepest existing ancestor (or the file itself) must resolve inside the corpus.
    probe = full
    while not os.path.lexists(probe) and probe != root:
        probe = probe.parent
    try:
        real = probe.resolve(strict=False)
    except (OSError, RuntimeError):  # symlink loop
        raise InvalidTarget(f"invalid path {rel!r}: a symlink on the way cannot be resolved") from None
    if not _inside(real, root):
        raise InvalidTarget(f"invalid path {rel!r}: leads outside the corpus")
    real_rel = real.relative_to(root).as_posix()
    if real_rel != "." and any(p.startswith(".") for p in real_rel.split("/")):
        raise InvalidTarget(f"invalid path {rel!r}: leads into a hidden folder")
    for ex in excluded:
        ex = ex.resolve()
        if _inside(real, ex) or _inside(full, ex):
            raise InvalidTarget(f"invalid path {rel!r}: inside the build output folder")
    return full


def check_target(root: Path, target: Any, excluded: tuple[Path, ...] = ()) -> tuple[str, Path]:
    rel = normalize_target(target)
    return rel, locate(root, rel, excluded)


# --------------------------------------------------------------------------- hashing, io


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


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


# --------------------------------------------------------------------------- locking


class _ProcessLock:
    """Exclusive across threads (RLock, re-entrant) and processes (flock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None

    def acquire(self) -> None:
        self.rlock.acquire()
        if self.depth == 0:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # Read-only is enough for flock, and still opens on a read-only corpus.
                fd = os.open(self.path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                self.rlock.release()
                raise
            self.fd = fd
        self.depth += 1

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.rlock.release()


_locks: dict[str, _ProcessLock] = {}
_locks_guard = threading.Lock()


@contextmanager
def write_lock(root: Path) -> Iterator[None]:
    """One corpus writer at a time, across threads and processes."""
    key = str(Path(root).resolve())
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = _ProcessLock(Path(key) / STATE_DIR / "writes.lock")
    with ExitStack() as stack:
        try:
            lock.acquire()
        except OSError as exc:  # no lock file and a read-only or full disk
            raise _os_error(exc, "the corpus") from None
        stack.callback(lock.release)
        try:  # the claim store compiles canonical pages under its own lock
            from .claims.fsutil import corpus_lock
        except ImportError:  # pragma: no cover - claims not installed
            corpus_lock = None
        if corpus_lock is not None:
            try:
                stack.enter_context(corpus_lock(Path(key)))
            except OSError as exc:
                raise _os_error(exc, "the corpus") from None
        yield


# --------------------------------------------------------------------------- requests


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


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _check_frontmatter(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"frontmatter must be an object, not {type(value).__name__}")
    try:
        text = fm.dump(value)
        loaded = fm.load(text)
    except fm.FrontmatterError as exc:
        raise InvalidInput(f"frontmatter refused: {exc}") from None
    except (yaml_errors() + (TypeError, ValueError, RecursionError)) as exc:
        raise InvalidInput(f"frontmatter cannot be written as YAML: {type(exc).__name__}") from None
    return loaded


def yaml_errors() -> tuple[type[BaseException], ...]:
    import yaml

    return (yaml.YAMLError,)


def _split_content(content: str) -> tuple[dict[str, Any] | None, str]:
    """Content that starts with its own frontmatter block -> (that frontmatter, body)."""
    try:
        raw, body, _ = fm.split(content)
    except fm.FrontmatterError:
        return None, content
    if raw is None:
        return None, content
    try:
        return fm.load(raw), body
    except fm.FrontmatterError as exc:
        raise InvalidInput(f"content starts with unusable frontmatter: {exc}") from None


def _list_union(a: Any, b: Any) -> list[Any]:
    def as_list(v: Any) -> list[Any]:
        if v is None:
            return []
        if isinstance(v, str):
            return [s.strip() for s in v.split(",") if s.strip()]
        if isinstance(v, list):
            return list(v)
        return [v]

    out: list[Any] = []
    for item in as_list(a) + as_list(b):
        if item not in out:
            out.append(item)
    return out


_LIST_FIELDS = ("tags", "aliases")


def merge_frontmatter(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """New values win; `tags` and `aliases` are unioned (old order first)."""
    merged = dict(old)
    for key, value in new.items():
        if key in _LIST_FIELDS and key in merged:
            merged[key] = _list_union(merged[key], value)
        else:
            merged[key] = value
    return merged


def compose(meta: dict[str, Any] | None, body: str) -> str:
    if not body.endswith("\n") and body:
        body += "\n"
    if meta is None:
        return body
    return "---\n" + fm.dump(meta) + "---\n" + (body if body.startswith("\n") or not body else "\n" + body)


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


def tombstone_text(old_text: str, rel: str, reason: str, actor: str | None = None) -> str:
    """The page that replaces a forgotten document: title kept, text gone, reason given."""
    meta: dict[str, Any] = {}
    title = rel.rsplit("/", 1)[-1][:-3]
    try:
        raw, body, _ = fm.split(old_text)
        old_meta = fm.load(raw) if raw is not None else {}
    except fm.FrontmatterError:
        old_meta, body = {}, old_text
    if isinstance(old_meta.get("title"), str) and old_meta["title"].strip():
        title = old_meta["title"].strip()
    else:
        m = re.search(r"^#[ \t]+(.+?)[ \t#]*$", body, re.MULTILINE)
        if m:
            title = m.group(1).strip()
    meta["title"] = title
    meta["type"] = "tombstone"
    meta["status"] = "superseded"
    meta["forgotten"] = True
    meta["action"] = "forget"
    meta["at"] = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    meta["forget_reason"] = reason
    if actor:
        meta["actor"] = actor
    from .claims.text import md_inline  # escapes markdown: the reason renders as plain text

    body = (
        f"# {md_inline(title, 300)}\n\n"
        "This page was forgotten: its text was removed from the corpus, the site and the "
        "search indexes.\n\n"
        f"Reason: {md_inline(reason, 2000)}\n"
    )
    return compose(meta, body)


def _strings(value: Any) -> Iterator[str]:
    """Every key and string value in a frontmatter tree."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


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
    req.frontmatter = _check_frontmatter(req.frontmatter)
    rel = normalize_target(req.target)
    # Scan what was sent as well as its YAML round trip: YAML folds some characters
    # (NEL U+0085 becomes a line break), which must not launder a refused one.
    scanned = "\n".join([req.content, req.reason or "", *_strings(sent), *_strings(req.frontmatter)])
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
        own, body = _split_content(req.content)
        meta = merge_frontmatter(own or {}, req.frontmatter) if req.frontmatter else own
        if own is None and not req.frontmatter:
            return "created", compose(None, req.content).encode("utf-8")
        return "created", compose(meta, body).encode("utf-8")

    if req.kind == "append":
        own, body = _split_content(req.content)
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
        own, body = _split_content(req.content)
        if own is None and not req.frontmatter:
            return "replaced", compose(None, req.content).encode("utf-8")
        meta = merge_frontmatter(own or {}, req.frontmatter or {})
        return "replaced", compose(meta, body).encode("utf-8")

    # forget
    text = _decode_existing(old, rel)
    return "forgotten", tombstone_text(text, rel, req.reason.strip(), req.actor).encode("utf-8")  # type: ignore[union-attr]


# --------------------------------------------------------------------------- reads


@dataclass
class ReadResult:
    path: str
    content: str
    start: int
    total_lines: int
    lines_returned: int
    frontmatter: dict[str, Any]
    hash: str

    def as_dict(self, debug: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "from": self.start, "content": self.content}
        if debug:
            d.update(total_lines=self.total_lines, lines_returned=self.lines_returned,
                     frontmatter=self.frontmatter, hash=self.hash)
        return d


def resolve_readable(root: Path, path: Any, excluded: tuple[Path, ...] = ()) -> tuple[str, Path]:
    """A document path an API client may read. Anything outside the corpus, hidden, under
    the output folder or missing is NotFound (404); a malformed path is InvalidTarget."""
    if not isinstance(path, str):
        raise InvalidTarget(f"path must be a string, not {type(path).__name__}")
    if not path or not path.strip():
        raise InvalidTarget("path is empty")
    if "\x00" in path or "\\" in path:
        normalize_target(path)  # raises InvalidTarget (400) with the reason
    cand = path if path.endswith(".md") else path + ".md"
    missing = NotFound(f"no document at {reveal(path[:200])!r}")
    try:
        rel = normalize_target(cand)
        full = locate(root, rel, excluded)
    except InvalidTarget:
        raise missing from None
    if not full.is_file():
        raise missing
    if full.is_symlink() and not full.resolve().name.endswith(".md"):
        raise missing
    return rel, full


def read_document(root: Path, path: Any, start: int = 1, lines: int | None = None,
                  excluded: tuple[Path, ...] = ()) -> ReadResult:
    rel, full = resolve_readable(root, path, excluded)
    try:
        data = full.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(f"no document at {rel!r}") from None
    except OSError as exc:
        raise WriteFailed(f"cannot read {rel}: {exc.strerror or 'I/O error'}") from None
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    all_lines = text.splitlines(keepends=True)
    start = max(1, start)
    sliced = all_lines[start - 1 : (start - 1 + lines) if lines is not None else None]
    try:
        raw, _, _ = fm.split(text.replace("\r\n", "\n"))
        meta = fm.load(raw) if raw is not None else {}
    except fm.FrontmatterError:
        meta = {}
    return ReadResult(rel, "".join(sliced), start, len(all_lines), len(sliced), meta, content_hash(data))
