"""Erasing claims: their text leaves the claim log itself, not only the pages.

`forget` (the claim store's) keeps history: the log still holds what was said. Erasing
first forgets (the page is recompiled without the text, evidence artifacts are redacted,
a tombstone records why), then rewrites every log file holding the claims' events: each
event keeps its ids, entity, kind, times and actor, but its statement becomes
`[erased]` and its free-text fields (reason, evidence, key) are dropped. One more
`retired` event marked `erased` (and `forgotten`, so nothing ever compiles the claim
again) records who erased it and when, with no text.

A compacted transcript's original is erased too (`redact_blobs`): the redacted original
goes to a new blob, the transcript is rewritten to point at it (its gist redacted as
well), and the old blob is deleted once nothing refers to it.

A rewrite is one file at a time, atomically (temp file, fsync, rename), under the claim
store's lock, so readers see the old file or the new one. Lines of other claims are kept
byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from ..fsutil import atomic_replace
from ..locks import claims_lock

PLACEHOLDER = "[erased]"
_TEXT_FIELDS = ("reason", "evidence", "key", "raw_input")


def _scrub(event: dict[str, Any]) -> dict[str, Any]:
    out = dict(event)
    if out.get("event") in ("added", "replaced"):
        out["statement"] = PLACEHOLDER
    elif "statement" in out and out["statement"] is not None:
        out["statement"] = None
    for name in _TEXT_FIELDS:
        if out.get(name) is not None:
            out[name] = None
    out["erased"] = True
    return out


def rewrite_log(root: Path, claim_ids: Iterable[str]) -> list[str]:
    """Scrub the events of `claim_ids` from every claim log file; returns the files
    rewritten (corpus-relative)."""
    from ..claims.log import ClaimLog, encode_event

    ids = set(claim_ids)
    changed = []
    if not ids:
        return changed
    log = ClaimLog(root)
    with claims_lock(root):
        for full in log.files():
            data = full.read_bytes()
            lines = data.split(b"\n")
            touched = False
            for i, raw in enumerate(lines):
                if not raw.strip():
                    continue
                try:
                    ev = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(ev, dict) and ev.get("claim_id") in ids and not ev.get("erased"):
                    lines[i] = encode_event(_scrub(ev)).rstrip(b"\n")
                    touched = True
            if touched:
                atomic_replace(full, b"\n".join(lines))
                changed.append(full.relative_to(root).as_posix())
    return changed


def erased_events(claims: list[Any], actor: str, at: str) -> list[dict[str, Any]]:
    """One text-free record per erased claim (appended by the caller through the log)."""
    from ..claims.log import new_id

    return [{"id": new_id("e"), "claim_id": c.claim_id, "entity": c.entity, "kind": c.kind, "event": "retired",
             "actor": actor, "at": at, "forgotten": True, "erased": True} for c in claims]


def redact_text(text: str, secrets: list[str]) -> str:
    for s in sorted({s for s in secrets if s.strip()}, key=len, reverse=True):
        text = re.sub(re.escape(s), PLACEHOLDER, text, flags=re.IGNORECASE)
    return text


def redact_files(root: Path, rels: Iterable[str], secrets: list[str]) -> list[str]:
    """Replace the secrets in these corpus files (erasure reaches hand-written text too)."""
    changed = []
    for rel in rels:
        full = Path(root) / rel
        try:
            text = full.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = redact_text(text, secrets)
        if new != text:
            atomic_replace(full, new.encode("utf-8"))
            changed.append(rel)
    return changed


def redact_blobs(root: Path, secrets: list[str]) -> list[str]:
    """Erase the secrets from compacted transcripts' originals; returns the files changed
    (transcripts, new blobs, deleted blobs). Call it before `redact_files`, under the
    corpus write lock."""
    from ..fsutil import fsync_dir
    from . import blobs
    from .compact import MARK, candidates, compacted_text

    root = Path(root)
    listed = [c for c in candidates(root) if c.compacted]
    refs = {}
    for c in listed:
        m = MARK.search((root / c.path).read_bytes().decode("utf-8", "replace"))
        if m:
            refs[c.path] = m.group(1)
    changed, dropped = [], set()
    for rel, sha in refs.items():
        try:
            meta, original = blobs.decode((root / blobs.blob_rel(sha)).read_bytes())
            text = original.decode("utf-8")
        except (blobs.BlobError, OSError, UnicodeDecodeError, ValueError):
            continue  # nothing we can read to redact (uncompact reports a damaged blob)
        new = redact_text(text, secrets)
        if new == text:
            continue
        at, gist = str(meta.get("at", "")), redact_text(str(meta.get("gist", "")), secrets)
        data = new.encode("utf-8")
        fresh = blobs.put(root, data, at, gist, rel)
        atomic_replace(root / rel, compacted_text(data, fresh, gist, at))
        refs[rel] = fresh
        changed += [rel, blobs.blob_rel(fresh)]
        dropped.add(sha)
    for sha in dropped - set(refs.values()):
        old = root / blobs.blob_rel(sha)
        if old.is_file():
            old.unlink()
            fsync_dir(old.parent)
            changed.append(blobs.blob_rel(sha))
    return changed
