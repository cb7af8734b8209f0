"""The sessions plane and OpenClaw's two routes: `/v1/session-ingest`, `/v1/recall-event`,
`/v1/public-artifacts` (dory-contract.md §1.5).

Session transcripts are ordinary corpus documents under `logs/sessions/`. The compiler
already treats that folder as the sessions plane (`model.is_session_path`): it indexes the
transcripts as session chunks, which `corpus=sessions` (or `all`) searches and `durable`
(the default) leaves out. Ingest only writes the file, atomically, and refreshes it, so the
answer means "searchable now".

Recall events are telemetry, not memory: one JSON line each in
`.commonplace/recall-events.jsonl` (see `RecallLog`).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from commonplace.compiler.markdown import frontmatter as fm
from commonplace.compiler import writes as w
from commonplace.compiler.fsutil import atomic_replace, makedirs
from commonplace.compiler.model import STATE_DIR, is_session_path, state_path
from commonplace.compiler.writes.checks import has_hidden_characters

from ..errors import ApiError, from_write_error
from ..models import EmptyRequest, RecallEventRequest, SessionIngestRequest
from . import OpContext
from .refresh import refresh

# Dory's wording (a client may match on it).
SESSION_PATH_MESSAGE = "session ingest path must live under logs/sessions/*.md"
_META_FIELDS = ("agent", "device", "session_id", "captured_from", "updated")
_HIDDEN_CODES = {"control-character", "invisible-character", "bidi-control"}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --------------------------------------------------------------------------- session ingest


def _session_target(path: str) -> str:
    """The corpus path of a session transcript, or 400 (Dory's message when it is not a
    logs/sessions/*.md path; the write path policy's when it is malformed)."""
    if not isinstance(path, str) or not is_session_path(path) or not path.endswith(".md"):
        raise ApiError(400, "invalid_session_path", SESSION_PATH_MESSAGE)
    try:
        rel = w.normalize_target(path)
    except w.WriteError as exc:
        raise ApiError(400, "invalid_session_path", f"{exc.message}; {SESSION_PATH_MESSAGE}") from None
    if rel.count("/") < 2 or rel.endswith("/.md"):
        raise ApiError(400, "invalid_session_path", SESSION_PATH_MESSAGE)
    return rel


def existing_session(ctx: OpContext, path: str, field: str = "path") -> str:
    """The corpus path of an existing session transcript named by a request (digest,
    compaction), or 400 (not a logs/sessions/...md path) or 404."""
    try:
        rel = w.normalize_target(path)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    if not is_session_path(rel):
        raise ApiError(400, "invalid_session_path", f"`{field}` must be a session transcript (a logs/sessions/...md "
                                                    f"path)")
    full = w.locate(ctx.root, rel, ctx.excluded)
    if not full.is_file() or full.is_symlink():
        raise ApiError(404, "not_found", f"path not found: {rel}")
    return rel


def _check_fields(req: SessionIngestRequest) -> None:
    for name in _META_FIELDS:
        value = getattr(req, name)
        if not value.strip():
            raise ApiError(400, "invalid_parameter", f"`{name}` must not be empty")
        if has_hidden_characters(value) or "\n" in value or "\r" in value:
            raise ApiError(400, "invalid_parameter", f"`{name}` contains a line break, control or invisible character")
    size = len(req.content.encode("utf-8"))
    if size > w.MAX_CONTENT_BYTES:
        raise ApiError(413, "too_large", f"content is {size:,} bytes; the limit is {w.MAX_CONTENT_BYTES:,}")


def _existing_created(data: bytes | None) -> str | None:
    """`created` of the transcript already on disk: a session keeps the day it started,
    where Dory resets it to the latest `updated` on every turn."""
    if not data:
        return None
    try:
        raw, _, _ = fm.split(data.decode("utf-8"))
        meta = fm.load(raw) if raw is not None else {}
    except (UnicodeDecodeError, fm.FrontmatterError):
        return None
    created = meta.get("created")
    return str(created) if created else None


# A fenced block at the top is the transcript's frontmatter only if it names one of these:
# turns between `---` rules ("user: ...", "assistant: ...") are YAML mappings too, and
# lifting them out of the body would lose what was said.
_FRONTMATTER_KEYS = frozenset(("title", "type", "status", "created", "updated", "date", "tags", "aliases",
                               "canonical", "source_kind", "temperature", "agent", "device", "session_id",
                               "captured_from", "visibility", "sensitivity", "area"))
_KEY_LINE = re.compile(r"[A-Za-z_][\w-]*[ \t]*:")


def _own_frontmatter(content: str) -> tuple[dict[str, Any], str, str | None]:
    """(the content's own frontmatter, the body without it, a warning). A block that is
    meant as frontmatter (its first line a `key:`) but is not valid YAML stays in the body
    as a code block: kept verbatim, and no second `---` pair after the server's block
    (which renders as a rule and a heading, and which a reader may take for the header)."""
    try:
        raw, body, _ = fm.split(content)
    except fm.FrontmatterError:
        return {}, content, None  # an opening rule never closed: plain text
    if raw is None:
        return {}, content, None
    first = next((line.strip() for line in raw.splitlines() if line.strip()), "")
    if not _KEY_LINE.match(first):
        return {}, content, None
    try:
        meta = fm.load(raw)
        fm.load(fm.dump(meta))  # it must survive being written back as the page's header
    except (fm.FrontmatterError, *w.yaml_errors(), TypeError, ValueError) as exc:
        fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", raw)), default=0))
        kept = f"{fence}text\n---\n{raw.rstrip()}\n---\n{fence}\n\n{body.lstrip(chr(10))}"
        why = exc.args[0] if isinstance(exc, fm.FrontmatterError) and exc.args else type(exc).__name__
        return {}, kept, f"the content's frontmatter is unusable ({why}); it is kept as text in a code block"
    if not _FRONTMATTER_KEYS & set(meta):
        return {}, content, None
    return meta, body.lstrip("\n"), None


def _title(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = " ".join(str(value).split())
    return text or None


def session_text(req: SessionIngestRequest, created: str | None) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The transcript as a document (Dory's frontmatter fields), what the content checks
    found, and warnings. Hidden characters are shown as `<U+XXXX>` rather than stored
    invisible; prompt-injection markers are kept (a transcript records what was said) but
    flagged in the frontmatter and the answer, so readers know to treat the text as data.
    Content that starts with its own frontmatter is merged into the page's one header:
    the server's fields win, the others are kept, and its title leads the body."""
    findings = w.scan_content(req.content)
    content = req.content
    if any(f.code in _HIDDEN_CODES for f in findings):
        content = w.reveal(content)
    own, body, warning = _own_frontmatter(content)
    meta: dict[str, Any] = {
        "title": f"{req.agent} session {req.session_id}",
        "type": "session",
        "status": req.status,
        "source_kind": "extracted",
        "temperature": "warm",
        "agent": req.agent,
        "device": req.device,
        "session_id": req.session_id,
        "captured_from": req.captured_from,
        "created": created or req.updated,
        "updated": req.updated,
        "canonical": False,
    }
    # The server's fields win (Dory's title "<agent> session <id>" too); the transcript's
    # own title leads its body as a heading, so it is still read and searched.
    meta.update((k, v) for k, v in own.items() if k not in meta and k != "content_flags")
    heading = _title(own.get("title"))
    if heading and heading != meta["title"]:
        body = f"# {heading}\n\n{body}"
    flags = sorted({f.code for f in findings})
    if flags:
        meta["content_flags"] = flags
    return w.compose(meta, body), [f.as_dict() for f in findings], [warning] if warning else []


def ingest(ctx: OpContext, req: SessionIngestRequest) -> dict[str, Any]:
    rel = _session_target(req.path)
    _check_fields(req)
    root = ctx.root
    with w.write_lock(root):
        try:
            full = w.locate(root, rel, ctx.excluded)
        except w.WriteError as exc:
            raise ApiError(400, "invalid_session_path", f"{exc.message}; {SESSION_PATH_MESSAGE}") from None
        if full.is_symlink() or (full.exists() and not full.is_file()):
            raise ApiError(400, "invalid_session_path", f"{rel} is not a regular file; {SESSION_PATH_MESSAGE}")
        try:
            old = full.read_bytes() if full.exists() else None
            text, findings, warnings = session_text(req, _existing_created(old))
            data = text.encode("utf-8")
            if data != old:
                makedirs(full.parent)
                atomic_replace(full, data)
        except OSError as exc:
            raise _disk_error(exc, rel) from None
    indexed, note = refresh(ctx.live, [rel]) if data != old else (True, None)
    action = "created" if old is None else "updated" if data != old else "unchanged"
    out: dict[str, Any] = {"stored": True, "path": rel, "reindexed": False, "indexed": indexed,
                           "action": action, "hash": w.content_hash(data)}
    if findings:
        out["findings"] = findings
    if warnings:
        out["warnings"] = warnings
    if note:
        out["message"] = note
    return out


def _disk_error(exc: OSError, rel: str) -> ApiError:
    import errno

    why = w.disk_refusal(exc)
    if why is not None:
        return ApiError(503, "write_failed", f"cannot write {rel}: {why}; nothing was changed")
    if exc.errno in (errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG):
        return ApiError(400, "invalid_session_path", f"cannot write {rel}: a folder and a file share a name, or a "
                                                     f"name is too long")
    return ApiError(503, "write_failed", f"cannot write {rel}: {exc.strerror or 'I/O error'}; nothing was changed")


# --------------------------------------------------------------------------- recall events


class RecallLog:
    """OpenClaw's recall events: `.commonplace/recall-events.jsonl`, one JSON object a line.

    Why a JSON Lines file: events are only ever appended and read back newest first for
    status, so an append-only log is all that is needed; each event is one `write` of a
    whole line under an exclusive `flock` and fsynced, so concurrent writers (threads or
    processes) never interleave and a crash can at worst tear the last line, which readers
    skip and the next append starts afresh after. It lives in the state folder because it
    is telemetry, not memory: never indexed, rendered or served, never in `git`. It holds
    queries, so it is private (0600) and bounded: past `max_bytes` it rotates to
    `recall-events.1.jsonl`, keeping at most two files.
    """

    NAME = "recall-events.jsonl"
    _lock = threading.Lock()

    def __init__(self, root: Path, max_bytes: int = 4 * 1024 * 1024) -> None:
        self.path = state_path(root) / self.NAME
        self.max_bytes = max_bytes

    def append(self, event: dict[str, Any]) -> None:
        line = (json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._rotate_if_full()
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a torn last line from a crash: start on a fresh one
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)  # also releases the flock

    def _rotate_if_full(self) -> None:
        try:
            if os.stat(self.path).st_size < self.max_bytes:
                return
        except FileNotFoundError:
            return
        os.replace(self.path, self.path.with_name("recall-events.1.jsonl"))

    def recent(self, limit: int = 10) -> list[dict[str, Any]]:
        """The newest `limit` events, newest first (torn or foreign lines skipped)."""
        events: list[dict[str, Any]] = []
        for path in (self.path, self.path.with_name("recall-events.1.jsonl")):
            try:
                with open(path, "rb") as fh:
                    size = fh.seek(0, os.SEEK_END)
                    fh.seek(max(0, size - 256 * 1024))
                    tail = fh.read()
            except OSError:
                continue
            for raw in reversed(tail.splitlines()):
                try:
                    item = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(item, dict):
                    events.append(item)
                    if len(events) >= limit:
                        return events
        return events


def recall_event(ctx: OpContext, req: RecallEventRequest) -> dict[str, Any]:
    for name in ("agent", "source"):
        if not getattr(req, name).strip():
            raise ApiError(400, "invalid_parameter", f"`{name}` must not be empty")
    created_at = _now()
    event = {"agent": req.agent, "session_key": req.session_key, "query": req.query,
             "result_paths": list(req.result_paths), "selected_path": req.selected_path, "corpus": req.corpus,
             "source": req.source, "created_at": created_at, "actor": ctx.actor}
    try:
        RecallLog(ctx.root).append(event)
    except OSError as exc:
        raise _disk_error(exc, f"{STATE_DIR}/{RecallLog.NAME}") from None
    return {"stored": True, "selected_path": req.selected_path, "created_at": created_at}


def recall_summary(root: Path) -> dict[str, Any]:
    """Dory's `openclaw` block of `/v1/status?debug=true`, from the recall log. commonplace
    has no flush job and no recall promotion, so those stay off, zero or null."""
    try:
        recent = RecallLog(root).recent(10)
    except OSError:
        recent = []
    last = recent[0] if recent else {}
    return {
        "flush_enabled": False,
        "recall_tracking_enabled": True,
        "artifact_listing_enabled": True,
        "recent_recall_count": len(recent),
        "promotion_candidate_count": 0,
        "last_recall_event_at": last.get("created_at"),
        "last_recall_selected_path": last.get("selected_path"),
        "last_recall_promotion_at": None,
        "last_flush_status": None,
        "recent_backend_error": None,
    }


# --------------------------------------------------------------------------- public artifacts

# Dory's artifact kinds by folder (openclaw_parity.list_public_artifacts).
ARTIFACT_KINDS = (
    ("core/", "core"),
    ("references/reports/", "report"),
    ("references/briefings/", "briefing"),
    ("references/slides/", "slide"),
    ("references/notes/", "note"),
    ("wiki/", "wiki"),
)


def _agent_ids(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("agent_ids")
    values = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    out = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    agent = meta.get("agent")
    if isinstance(agent, str) and agent.strip() and agent.strip() not in out:
        out.append(agent.strip())
    return out


def public_artifacts(ctx: OpContext, req: EmptyRequest) -> dict[str, Any]:
    """Documents an OpenClaw agent may list as artifacts: core files, reports, briefings,
    slides, reference notes and wiki pages (Dory's folders), sorted by path. Each is given
    in Dory's snake_case and, for the OpenClaw plugin's own type, camelCase."""
    artifacts = []
    for path in sorted(ctx.live.docs):
        kind = next((k for prefix, k in ARTIFACT_KINDS if path.startswith(prefix)), None)
        if kind is None or not path.endswith(".md"):
            continue
        doc = ctx.live.docs[path]
        meta = doc.frontmatter if isinstance(doc.frontmatter, dict) else {}
        title = meta.get("title")
        title = title.strip() if isinstance(title, str) and title.strip() else doc.title
        agents = _agent_ids(meta)
        artifacts.append({"kind": kind, "relative_path": path, "content_type": "markdown", "title": title,
                          "agent_ids": agents, "relativePath": path, "contentType": "markdown", "agentIds": agents})
    return {"count": len(artifacts), "artifacts": artifacts}


def openclaw_diagnostics(ctx: OpContext) -> dict[str, Any]:
    """What `/v1/status?debug=true` shows under `openclaw` (ops/status.py calls it)."""
    return recall_summary(ctx.root)
