"""What a write produces: for a request and the target's current bytes, the new bytes of
every file it changes (the target first; a forget also writes `<stem>.tombstone.md`).

With `schema` (the API's writes) Dory's corpus schema applies (`schema.py`): a new file
needs title and type and gets normalised frontmatter, an append or replace merges the
existing frontmatter and sets `updated`, and an append that is a dated timeline entry goes
under the page's timeline marker. Without it (the command line, generated artifacts),
frontmatter is whatever the writer gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..markdown import frontmatter as fm
from ..model import content_hash
from . import schema as sc
from .compose import compose, merge_frontmatter, split_content
from .errors import Exists, HashMismatch, InvalidInput, TargetMissing

_TIMELINE_ENTRY = re.compile(r"(?m)^\s*-\s*\d{4}-\d{2}-\d{2}:")


@dataclass
class Change:
    path: str
    old: bytes | None
    new: bytes


def _decode(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{rel} is not valid UTF-8 text; refusing to edit it") from None


def _parts(text: str, rel: str) -> tuple[str | None, dict[str, Any], str]:
    """(raw frontmatter or None, its mapping, body) of an existing file."""
    try:
        raw, body, _ = fm.split(text)
        return raw, (fm.load(raw) if raw is not None else {}), body
    except fm.FrontmatterError as exc:
        raise InvalidInput(f"{rel} has unusable frontmatter ({exc}); cannot merge into it") from None


def request_meta(content: str, frontmatter: dict[str, Any] | None, schema: bool) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter the request carries: content's own block merged with the field, body)."""
    own, body = split_content(content)
    sent = dict(frontmatter) if frontmatter else None
    if schema and sent:
        sent = sc.check_fields(sent)
    if own is None and sent is None:
        return None, body
    return merge_frontmatter(own or {}, sent or {}), body


def plan(rel: str, req: Any, old: bytes | None, tomb_old: bytes | None = None) -> tuple[str, list[Change]]:
    """(action, changes) for `req` against the current bytes (`tomb_old`: the tombstone's)."""
    schema = bool(getattr(req, "schema", False))
    if req.kind == "create":
        if old is not None:
            raise Exists(f"target already exists: {rel}; use kind=append or kind=replace",
                         current_hash=content_hash(old))
        return "created", [Change(rel, None, _new_file(rel, req, schema))]
    if req.kind == "append":
        if old is None:
            return "created", [Change(rel, None, _new_file(rel, req, schema))]
        return "appended", [Change(rel, old, _append(rel, req, old, schema))]
    if old is None:
        raise TargetMissing(f"target does not exist: {rel}")
    current = content_hash(old)
    if req.expected_hash is not None and req.expected_hash.lower() != current or (
            req.kind == "replace" and req.expected_hash is None):
        raise HashMismatch(
            f"{req.kind} requires a matching expected_hash: "
            + (f"{rel} changed since you read it ({current}, not {req.expected_hash})" if req.expected_hash
               else f"{rel} is {current}")
            + "; get it again (get with debug=true) and retry", current_hash=current)
    if req.kind == "replace":
        return "replaced", [Change(rel, old, _replace(rel, req, old, schema))]
    return "forgotten", _forget(rel, req, old, tomb_old)


def _new_file(rel: str, req: Any, schema: bool) -> bytes:
    meta, body = request_meta(req.content, req.frontmatter, schema)
    if schema:
        meta = sc.normalize_new(meta or {}, rel)
        if sc.TIMELINE_MARKER in body:
            meta["has_timeline"] = True
        return compose(meta, body.lstrip("\n")).encode("utf-8")
    if req.kind == "append" and meta is not None:
        meta = merge_frontmatter({"created": sc.today()}, meta)
    if meta is None:
        return compose(None, req.content).encode("utf-8")
    return compose(meta, body.lstrip("\n") if req.kind == "append" else body).encode("utf-8")


def _append(rel: str, req: Any, old: bytes, schema: bool) -> bytes:
    extra, body = request_meta(req.content, req.frontmatter, schema)
    text = _decode(old, rel)
    raw, old_meta, old_body = _parts(text, rel) if (extra or schema) else (None, {}, text)
    addition = body.strip("\n")
    timeline = False
    if schema and addition and sc.TIMELINE_MARKER in old_body:
        new_body, timeline = _timeline_append(old_body, addition)
    else:
        new_body = None
    merged = merge_frontmatter(old_meta, extra or {})
    if schema and raw is not None:
        if not timeline:
            merged["updated"] = sc.today()
        if sc.TIMELINE_MARKER in (new_body if new_body is not None else old_body + addition):
            merged["has_timeline"] = True
    if new_body is not None:
        return compose(merged if (raw is not None or merged) else None, new_body).encode("utf-8")
    if merged != old_meta or (raw is None and merged):
        text = compose(merged, old_body) if raw is not None else compose(merged, "\n" + old_body.lstrip("\n"))
    if addition:
        if text and not text.endswith("\n"):
            text += "\n"
        if text and not text.endswith("\n\n"):
            text += "\n"
        text += addition + "\n"
    return text.encode("utf-8")


def _timeline_append(body: str, addition: str) -> tuple[str, bool]:
    """Dory's timeline-aware append: a `- YYYY-MM-DD: ...` entry goes below the marker,
    anything else above it."""
    above, _, below = body.partition(sc.TIMELINE_MARKER)
    above, below = above.rstrip(), below.strip("\n").rstrip()
    is_entry = bool(_TIMELINE_ENTRY.search(addition))
    if is_entry:
        below = f"{below}\n{addition}" if below else addition
    else:
        above = f"{above}\n\n{addition}" if above else addition
    parts = [p for p in (above.strip(), sc.TIMELINE_MARKER, below.strip()) if p]
    return "\n\n".join(parts) + "\n", is_entry


def _replace(rel: str, req: Any, old: bytes, schema: bool) -> bytes:
    meta, body = request_meta(req.content, req.frontmatter, schema)
    if not schema:
        if meta is None:
            return compose(None, req.content).encode("utf-8")
        return compose(meta, body).encode("utf-8")
    raw, old_meta, _ = _parts(_decode(old, rel), rel)
    merged = merge_frontmatter(old_meta, meta or {})
    if raw is None and not merged:
        return compose(None, body).encode("utf-8")
    merged["updated"] = sc.today()
    if sc.TIMELINE_MARKER in body:
        merged["has_timeline"] = True
    return compose(merged, body).encode("utf-8")


def tombstone_path(rel: str) -> str:
    folder, _, name = rel.rpartition("/")
    stem = name[:-3] if name.endswith(".md") else name
    return (folder + "/" if folder else "") + f"{stem}.tombstone.md"


def _forget(rel: str, req: Any, old: bytes, tomb_old: bytes | None) -> list[Change]:
    """Dory's forget: the document stays, marked superseded by `<stem>.tombstone.md`,
    which records the reason. Nothing is deleted (that is `purge`)."""
    raw, meta, body = _parts(_decode(old, rel), rel)
    tomb = tombstone_path(rel)
    name = tomb.rsplit("/", 1)[-1]
    marked = merge_frontmatter(meta, {"superseded_by": name, "status": "superseded", "canonical": False,
                                      "source_kind": "generated", "temperature": "cold"})
    new_text = compose(marked, body if raw is not None else "\n" + body.lstrip("\n"))
    stem = name[: -len(".tombstone.md")]
    kind = meta.get("type")
    try:
        kind = sc.doc_type(kind) if kind is not None else "capture"
    except InvalidInput:
        kind = "capture"
    tomb_meta = {"title": f"Tombstone for {stem}", "type": kind, "status": "superseded", "canonical": False,
                 "source_kind": "generated", "temperature": "cold", "created": sc.today(),
                 "tombstone_for": rel.rsplit("/", 1)[-1]}
    tomb_text = compose(tomb_meta, req.reason.strip() + "\n")
    return [Change(rel, old, new_text.encode("utf-8")), Change(tomb, tomb_old, tomb_text.encode("utf-8"))]
