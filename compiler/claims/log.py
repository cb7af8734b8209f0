"""The durable claim log: append-only JSON Lines, `claims/YYYY/MM/DD/<actor>.jsonl`.

One file per actor per UTC day, so two writers never append to the same file and git
merges never conflict. Appending one event is a single `os.write` of one complete line
under an exclusive `flock` on the file (plus a per-file thread lock), so lines from
threads and processes never interleave. Lines are never rewritten; unknown fields in
existing lines are kept as they are and passed through to readers. A corrupt line is
reported with file and line number and skipped.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import secrets
import threading
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..fsutil import fsync_dir, makedirs
from ..locks import at_fork_in_child, track_fd, untrack_fd
from ..model import Warning_
from . import times

LOG_DIR = "claims"

# Field order of a written line (the design's list); extra fields follow.
FIELDS = (
    "id", "claim_id", "entity", "kind", "statement", "event", "valid_from", "valid_to",
    "confidence", "evidence", "reason", "actor", "at",
)
EVENTS = ("added", "replaced", "retired", "invalidated")
KINDS = ("fact", "preference", "state", "decision", "note")
REQUIRED = ("id", "claim_id", "entity", "event", "at")

_ENTITY = re.compile(r"^(person|project|concept|decision|core):([^/\\\x00-\x1f]{1,200})$")
_ACTOR_UNSAFE = re.compile(r"[^\w.-]+")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
MAX_LINE = 1024 * 1024  # a longer line is reported, not parsed


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def valid_entity_id(value: object) -> bool:
    if not isinstance(value, str):
        return False
    m = _ENTITY.match(value)
    if not m:
        return False
    slug = m.group(2)
    return not slug.startswith(".") and slug.strip() == slug and ".." not in slug


def actor_label(actor: object) -> str:
    """The actor as recorded in events: one line, trimmed, at most 100 characters."""
    text = unicodedata.normalize("NFC", str(actor or "")).strip()
    text = re.sub(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", "", text)
    text = re.sub(r"\s+", " ", text)[:100].strip()
    return text or "unknown"


def actor_file_stem(actor: object) -> str:
    """A safe, distinct file name for an actor.

    Plain names (`alex`, `agent-7`, `José`) are used as they are. Anything else is
    reduced to word characters, dots and dashes, and gets a short hash of the original
    so two different actors never share a file: `../x` -> `x-2c3d9f1a`.
    """
    label = actor_label(actor)
    stem = _ACTOR_UNSAFE.sub("-", label).strip(".-_")[:64].strip(".-_")
    if stem != label or not stem or stem.lower() in _RESERVED:
        digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:8]
        stem = f"{stem}-{digest}" if stem else f"actor-{digest}"
    return stem


def log_relpath(at: dt.datetime, actor: object) -> str:
    at = at.astimezone(times.UTC)
    return f"{LOG_DIR}/{at:%Y/%m/%d}/{actor_file_stem(actor)}.jsonl"


def encode_event(event: dict[str, Any]) -> bytes:
    ordered = {k: event[k] for k in FIELDS if k in event}
    ordered.update((k, v) for k, v in event.items() if k not in ordered)
    line = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return line.encode("utf-8") + b"\n"


@dataclass(slots=True)
class Event:
    """One line of the log, as read. `data` holds every field, known or not. Read-only."""

    data: dict[str, Any]
    path: str  # corpus-relative log file
    line: int  # 1-based
    at: dt.datetime

    def __getattr__(self, name: str) -> Any:  # event.statement, event.kind, ...
        if name in FIELDS or name in ("key", "source", "forgotten", "entity_title"):
            return self.data.get(name)
        raise AttributeError(name)

    @property
    def extra(self) -> dict[str, Any]:
        known = set(FIELDS) | {"key", "source", "forgotten", "entity_title"}
        return {k: v for k, v in self.data.items() if k not in known}

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def sort_key(self) -> tuple:
        return (self.at, self.path, self.line)


@dataclass
class LogRead:
    events: list[Event] = field(default_factory=list)
    warnings: list[Warning_] = field(default_factory=list)
    files: int = 0


_thread_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
_thread_locks_guard = threading.Lock()


def _thread_lock(path: Path) -> threading.Lock:
    with _thread_locks_guard:
        return _thread_locks[str(path)]


class ClaimLog:
    """Append to and read the event log of one corpus."""

    def __init__(self, root: Path, fsync: bool = True) -> None:
        self.root = Path(root)
        self.fsync = fsync

    @property
    def dir(self) -> Path:
        return self.root / LOG_DIR

    # -- writing -----------------------------------------------------------------------

    def append(self, event: dict[str, Any]) -> str:
        """Append one event to its actor's file for the event's day. Returns the file."""
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[dict[str, Any]]) -> list[str]:
        """Append events; each file gets one write holding all of its new lines."""
        batches: dict[str, list[bytes]] = {}
        files = []
        for ev in events:
            rel = log_relpath(times.parse_at(ev["at"]), ev.get("actor"))
            batches.setdefault(rel, []).append(encode_event(ev))
            files.append(rel)
        for rel, lines in batches.items():
            self._append_bytes(self.root / rel, b"".join(lines))
        return files

    def _append_bytes(self, path: Path, data: bytes) -> None:
        if path.is_symlink():
            raise OSError(f"refusing to append to symlink {path}")
        makedirs(path.parent)
        with _thread_lock(path):
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            track_fd(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data  # a crash left a partial line: never glue onto it
                try:
                    written = os.write(fd, data)
                    while written < len(data):  # only after a short write (disk full); still locked
                        written += os.write(fd, data[written:])
                    if self.fsync:
                        os.fsync(fd)
                except OSError:
                    # Disk full or I/O error: the append failed, so take back what part of
                    # it landed (still under the lock), leaving no partial line behind.
                    try:
                        os.ftruncate(fd, size)
                    except OSError:
                        pass
                    raise
            finally:
                untrack_fd(fd)
                os.close(fd)  # releases the flock
        if size == 0 and self.fsync:
            fsync_dir(path.parent)

    # -- reading -----------------------------------------------------------------------

    def files(self) -> list[Path]:
        if not self.dir.is_dir() or self.dir.is_symlink():
            return []
        out = []
        for dirpath, dirnames, filenames in os.walk(self.dir):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
            for name in filenames:
                if name.endswith(".jsonl") and not name.startswith("."):
                    full = Path(dirpath) / name
                    if not full.is_symlink():
                        out.append(full)
        return sorted(out)

    def read(self) -> LogRead:
        """Every well-formed event, in log order (time, then file, then line).

        Parsed files are cached in memory per process; since the log is append-only, a
        file that grew is parsed from where the last read stopped, so a long-lived
        process (the server) pays only for new lines.
        """
        files = self.files()
        states = []
        for full in files:
            try:
                st = full.stat()
            except OSError:
                st = None
            states.append((str(full), st and (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)))
        key = tuple(states)
        with _cache_lock:
            hit = _merged.get(str(self.root))
        if hit is not None and hit[0] == key:
            cached = hit[1]
            return LogRead(list(cached.events), list(cached.warnings), cached.files)
        result = LogRead()
        seen: dict[str, str] = {}
        for full in files:
            rel = full.relative_to(self.root).as_posix()
            try:
                events, warnings = _read_file(full, rel)
            except OSError as exc:
                result.warnings.append(Warning_(rel, f"cannot read claim log: {exc.strerror or exc}", code="claims-log"))
                continue
            result.files += 1
            result.warnings.extend(warnings)
            for ev in events:
                first = seen.get(ev.id)
                if first is not None:
                    result.warnings.append(Warning_(rel, f"duplicate event id {ev.id} (first at {first}); skipped", line=ev.line, code="claims-duplicate"))
                    continue
                seen[ev.id] = ev.where
                result.events.append(ev)
        result.events.sort(key=Event.sort_key)
        with _cache_lock:
            _merged[str(self.root)] = (key, result)
        return LogRead(list(result.events), list(result.warnings), result.files)


@dataclass
class _Parsed:
    ident: tuple  # (st_dev, st_ino)
    size: int  # bytes consumed: up to the end of the last complete line
    mtime: int
    lines: int  # complete lines consumed
    events: list[Event]
    warnings: list[Warning_]


_cache_lock = threading.Lock()
_parsed: dict[str, _Parsed] = {}
_merged: dict[str, tuple[tuple, LogRead]] = {}


def _reset_after_fork() -> None:
    """A forked child must not inherit locks another thread held at fork time."""
    global _thread_locks, _thread_locks_guard, _cache_lock
    _thread_locks = defaultdict(threading.Lock)
    _thread_locks_guard = threading.Lock()
    _cache_lock = threading.Lock()


at_fork_in_child(_reset_after_fork)


def _read_file(full: Path, rel: str) -> tuple[list[Event], list[Warning_]]:
    """Events and warnings of one file, reusing what an earlier read already parsed."""
    with open(full, "rb") as fh:
        track_fd(fh.fileno())  # a shared flock: a child forked meanwhile must not keep it
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH)
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino)
            with _cache_lock:
                c = _parsed.get(str(full))
            grown = (c is not None and c.ident == ident and st.st_size >= c.size
                     and (st.st_size > c.size or st.st_mtime_ns == c.mtime))
            if grown and c is not None and c.size:
                fh.seek(c.size - 1)
                grown = fh.read(1) == b"\n"  # still a line boundary: only appended to
            if grown and c is not None:
                base, lines, events, warnings = c.size, c.lines, list(c.events), list(c.warnings)
            else:
                base, lines, events, warnings = 0, 0, [], []
            fh.seek(base)
            data = fh.read()
        finally:
            untrack_fd(fh.fileno())
    cut = data.rfind(b"\n") + 1  # complete lines end here; the rest is an unfinished write
    for raw in data[:cut].split(b"\n")[:-1]:
        lines += 1
        if not raw.strip():
            continue
        ev, problem = _parse_line(raw, rel, lines)
        if problem:
            warnings.append(Warning_(rel, f"corrupt claim event skipped: {problem}", line=lines, code="claims-corrupt"))
        else:
            assert ev is not None
            events.append(ev)
    with _cache_lock:
        _parsed[str(full)] = _Parsed(ident, base + cut, st.st_mtime_ns, lines, events, warnings)
    tail = data[cut:]
    if tail.strip():
        ev, problem = _parse_line(tail, rel, lines + 1)
        if problem:
            return events, warnings + [Warning_(
                rel, f"corrupt claim event skipped: {problem} (last line, no newline: an interrupted write?)",
                line=lines + 1, code="claims-corrupt")]
        assert ev is not None
        return events + [ev], warnings  # a whole event missing only its newline (hand-edited)
    return events, warnings


def _parse_line(raw: bytes, rel: str, line: int) -> tuple[Event | None, str]:
    if len(raw) > MAX_LINE:
        return None, f"line longer than {MAX_LINE // 1024} KiB"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"not JSON ({getattr(exc, 'msg', type(exc).__name__)})"
    if not isinstance(data, dict):
        return None, f"not a JSON object ({type(data).__name__})"
    missing = [k for k in REQUIRED if not isinstance(data.get(k), str) or not data.get(k)]
    if missing:
        return None, f"missing or empty {', '.join(missing)}"
    if data["event"] not in EVENTS:
        return None, f"unknown event {str(data['event'])[:40]!r} (expected {', '.join(EVENTS)})"
    if not valid_entity_id(data["entity"]):
        return None, f"bad entity {str(data['entity'])[:80]!r} (expected family:slug)"
    if data["event"] in ("added", "replaced"):
        if not isinstance(data.get("statement"), str) or not data["statement"].strip():
            return None, f"{data['event']} event without a statement"
    for bound in ("valid_from", "valid_to"):
        value = data.get(bound)
        if value is not None:
            try:
                if not isinstance(value, str):
                    raise ValueError(value)
                times.bound_start(value)
            except (ValueError, TypeError):
                return None, f"bad {bound} {str(value)[:40]!r}"
    try:
        at = times.parse_at(data["at"])
    except (ValueError, TypeError):
        return None, f"bad timestamp {str(data['at'])[:40]!r}"
    return Event(data, rel, line, at), ""
