"""The content-addressed store of compacted session originals: `logs/blobs/<sha256[:16]>.blob`.

It is source of truth (the only copy of a compacted transcript's words), so it lives in
the corpus and in git, never in `.commonplace/`. It is not markdown (`.blob`), so the
site and the indexes never read it. A blob is a tiny header and the original bytes:

    ---
    at: "2026-11-27T11:00:00Z"
    gist: "<the digest, JSON-quoted on one line>"
    parent: "logs/sessions/a/b.md"
    sha256: "<hex of the original>"
    size: 1234
    ---
    <the original bytes, unchanged>

Header values are JSON strings (valid YAML), so no header line can be a bare `---`, and
the original starts right after the first `\\n---\\n`. The name is the first 16 hex
digits of the original's sha256; a blob is written once (atomically, never replaced) and
read back only after its hash checks out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..fsutil import atomic_create, fsync_dir, makedirs

BLOB_DIR = "logs/blobs"


class BlobError(Exception):
    pass


def blob_rel(sha: str) -> str:
    return f"{BLOB_DIR}/{sha[:16]}.blob"


def encode(original: bytes, at: str, gist: str, parent: str) -> tuple[str, bytes]:
    sha = hashlib.sha256(original).hexdigest()
    head = "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in
                   (("at", at), ("gist", gist), ("parent", parent), ("sha256", sha), ("size", len(original))))
    return sha, b"---\n" + head.encode("utf-8") + b"---\n" + original


def decode(data: bytes) -> tuple[dict, bytes]:
    if not data.startswith(b"---\n"):
        raise BlobError("not a blob (no header)")
    end = data.find(b"\n---\n", 3)
    if end < 0:
        raise BlobError("not a blob (header not closed)")
    meta = {}
    for line in data[4:end].decode("utf-8").split("\n"):
        key, _, value = line.partition(": ")
        meta[key] = json.loads(value)
    original = data[end + 5:]
    if hashlib.sha256(original).hexdigest() != meta.get("sha256"):
        raise BlobError("blob content does not match its sha256")
    return meta, original


def put(root: Path, original: bytes, at: str, gist: str, parent: str) -> str:
    """Store `original` (once); returns its sha256. Crash-safe: the file appears whole or
    not at all, and an existing blob of the same content is left as it is."""
    sha, data = encode(original, at, gist, parent)
    full = Path(root) / blob_rel(sha)
    makedirs(full.parent)
    if not atomic_create(full, data):
        get(root, sha)  # one already there: it must be this content
    fsync_dir(full.parent)
    return sha


def get(root: Path, sha: str) -> bytes:
    full = Path(root) / blob_rel(sha)
    try:
        data = full.read_bytes()
    except FileNotFoundError:
        raise BlobError(f"blob {blob_rel(sha)} is missing") from None
    meta, original = decode(data)
    if meta.get("sha256") != sha:
        raise BlobError(f"blob {blob_rel(sha)} holds another content")
    return original
