"""Parsed documents kept between builds, keyed by what decides a parse.

Parsing (and rendering the body but for its links, `render.draft_document`) is most of
a `--clean` build. Its result depends only on the file's path and bytes, the corpus's
`site.titles` rule, and the code and libraries that parse; so a rebuild after a template
change, an upgrade of the templates, or `--clean` loads what an earlier build parsed.

One file per entry under `<state>/cache/parse/<2 hex>/<rest>`, named by
`blake2b(code fingerprint, titles rule, path, content hash)`. A file holds a magic word,
its own key and a digest of its pickled payload; anything that does not match (a torn
or half-written file, another version's entry, a file copied to another name, garbage)
is a miss and the document is parsed again, never trusted. So concurrent builds and
servers need no lock: writers of one key write the same bytes, and a reader that meets a
file being written parses instead. The folder is bounded (`COMMONPLACE_PARSE_CACHE_MB`, default 256):
`prune` drops the least recently used entries (a hit touches its file).
`COMMONPLACE_PARSE_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from ..model import TRANSIENT_FIELDS, Document, Warning_, content_hash, state_path

ENV = "COMMONPLACE_PARSE_CACHE"
SIZE_ENV = "COMMONPLACE_PARSE_CACHE_MB"
DEFAULT_MB = 256
MAGIC = b"cpparse1"
_DIGEST = 16
_HEADER = len(MAGIC) + 2 * _DIGEST
# The libraries whose versions change a parse or a draft.
_LIBRARIES = ("markdown-it-py", "mdit-py-plugins", "pyyaml", "nh3", "linkify-it-py")
# Our code that parses and drafts: the markdown room, the link extraction and the site's
# URL and render rules the draft uses, the document model and this file. Broad on purpose:
# an edit anywhere in them costs one full parse, a missed one would cost wrong pages.
_CODE = ("markdown", "corpus", "site", "model.py", "build/stages.py", "build/parse_cache.py")
# Saved from a document: not the text (decoded again from the file's bytes) and not what
# only rendering fills in; the draft and its deferred links are the point of the cache.
_SKIP = {"text", "html", "excerpt", "search_text", "tokens", "md_env"}
PRUNE_EVERY = 24 * 3600.0  # a build that parsed little prunes at most once a day

_FINGERPRINT: bytes | None = None


def code_fingerprint() -> bytes:
    """A digest of the Python version, the parsing libraries' versions and our parsing
    code's source. Computed once a process (the build computes it before forking)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.blake2b(f"{MAGIC!r}{sys.version_info[:2]}{pickle.HIGHEST_PROTOCOL}".encode(), digest_size=_DIGEST)
        for name in _LIBRARIES:
            try:
                h.update(f"\0{name}={metadata.version(name)}".encode())
            except metadata.PackageNotFoundError:
                h.update(f"\0{name}=-".encode())
        top = Path(__file__).resolve().parent.parent
        for part in _CODE:
            p = top / part
            files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
            for f in files:
                h.update(f"\0{f.relative_to(top).as_posix()}\0".encode())
                try:
                    h.update(f.read_bytes())
                except OSError:  # no readable source (a frozen install): a key no other build shares
                    h.update(os.urandom(16))
        _FINGERPRINT = h.digest()
    return _FINGERPRINT


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def folder(root: Path) -> Path:
    return state_path(root) / "cache" / "parse"


class ParseCache:
    def __init__(self, where: Path):
        self.where = where
        self.hits = self.misses = self.writes = 0
        self._dirs: set[Path] = set()
        self._fp = code_fingerprint()

    def key(self, path: str, digest: str, titles: str) -> bytes:
        h = hashlib.blake2b(self._fp, digest_size=_DIGEST)
        h.update(f"\0{titles}\0{path}\0{digest}".encode())
        return h.digest()

    def _file(self, key: bytes) -> Path:
        name = key.hex()
        return self.where / name[:2] / name[2:]

    def get(self, key: bytes, path: str, text: str) -> tuple[Document, list[Warning_]] | None:
        """The document parsed from these bytes before, or None (never a doubtful one)."""
        f = self._file(key)
        try:
            blob = f.read_bytes()
        except OSError:
            self.misses += 1
            return None
        got = _decode(blob, key, path, text)
        if got is None:
            self.misses += 1
            return None
        self.hits += 1
        try:
            os.utime(f)  # recently used: `prune` keeps it
        except OSError:
            pass
        return got

    def put(self, key: bytes, doc: Document, warnings: list[Warning_]) -> None:
        fields = {k: v for k, v in doc.__dict__.items() if k not in _SKIP}
        if doc.text.endswith(doc.body):
            fields["body"] = len(doc.text) - len(doc.body)  # the body is the text's tail
        try:
            payload = pickle.dumps((fields, warnings), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an entry we cannot write is only a miss next time
            return
        f = self._file(key)
        blob = MAGIC + key + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload
        try:
            if f.parent not in self._dirs:
                f.parent.mkdir(parents=True, exist_ok=True)
                self._dirs.add(f.parent)
            # Written in place, not renamed into place (half the file-system work, measured):
            # a reader that meets a half-written file finds its digest wrong and parses; two
            # writers of one key write the same bytes.
            fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(blob)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            self.writes += 1
        except OSError:
            pass


def _decode(blob: bytes, key: bytes, path: str, text: str) -> tuple[Document, list[Warning_]] | None:
    if len(blob) < _HEADER or blob[:len(MAGIC)] != MAGIC or blob[len(MAGIC):len(MAGIC) + _DIGEST] != key:
        return None
    payload = blob[_HEADER:]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != blob[len(MAGIC) + _DIGEST:_HEADER]:
        return None
    try:
        fields, warnings = pickle.loads(payload)
        body = fields.get("body")
        if isinstance(body, int):
            fields["body"] = text[body:]
        doc = Document(text=text, **fields)
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a miss
        return None
    if doc.path != path or doc.draft is None or doc.deferred is None or not isinstance(warnings, list):
        return None
    return doc, warnings


_OPEN: dict[str, ParseCache] = {}


def for_root(root: str | Path) -> ParseCache | None:
    """This process's cache for the corpus at `root`, or None when it is turned off."""
    if not enabled():
        return None
    key = str(root)
    cache = _OPEN.get(key)
    if cache is None:
        cache = _OPEN[key] = ParseCache(folder(Path(root)))
    return cache


def cached_parse(parse_page: Any, path: str, data: bytes, titles: str, root: str) -> tuple[Document | None, list[Warning_]]:
    """`parse_page(path, data, titles)` through the cache of the corpus at `root`.
    `parse_page` raises or returns as `stages` does; only documents are kept."""
    cache = for_root(root)
    if cache is None:
        return parse_page(path, data, titles)
    from ..markdown.parse import SkipFile, decode

    try:
        text = decode(path, data)
    except SkipFile:
        return parse_page(path, data, titles)  # it says why, as without the cache
    key = cache.key(path, content_hash(data), titles)
    got = cache.get(key, path, text)
    if got is not None:
        return got
    doc, warnings = parse_page(path, data, titles)
    if doc is not None and doc.draft is not None:
        cache.put(key, doc, warnings)
    return doc, warnings


def prune(root: Path, parsed: int, limit_mb: float | None = None) -> int:
    """Keep the cache under its bound: drop the least recently used entries until it
    holds 80% of the bound. Runs after a
    build that parsed at least 200 documents, else at most once a day. Returns the
    number of files removed."""
    where = folder(root)
    if not where.is_dir():
        return 0
    stamp = where / ".pruned"
    now = time.time()
    if parsed < 200:
        try:
            if now - stamp.stat().st_mtime < PRUNE_EVERY:
                return 0
        except OSError:
            pass
    if limit_mb is None:
        try:
            limit_mb = float(os.environ.get(SIZE_ENV, DEFAULT_MB))
        except ValueError:
            limit_mb = DEFAULT_MB
    limit = int(limit_mb * 1024 * 1024)
    entries: list[tuple[float, int, str]] = []
    removed = 0
    total = 0
    for sub in os.scandir(where):
        if not sub.is_dir(follow_symlinks=False):
            continue
        for e in os.scandir(sub.path):
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, e.path))
            total += st.st_size
    if total > limit:
        entries.sort()
        for _, size, p in entries:
            if total <= limit * 0.8:
                break
            if _remove(p):
                removed += 1
                total -= size
    try:
        stamp.touch()
    except OSError:
        pass
    return removed


def clear(root: str | Path) -> None:
    """Drop every entry: after a forget or an erase. An entry holds a document's rendered
    body, so the text a purge removes from the files and indexes would live on here (keyed
    by the old content's hash) until pruned. The folder is renamed away first, so a build
    reading at the same moment only misses."""
    import shutil
    import uuid

    where = folder(Path(root))
    if not where.exists():
        return
    gone = where.with_name(f".parse-purged-{uuid.uuid4().hex}")
    try:
        os.rename(where, gone)
    except OSError:
        gone = where
    shutil.rmtree(gone, ignore_errors=True)


def _remove(p: str) -> bool:
    try:
        os.unlink(p)
        return True
    except OSError:
        return False


# The fields a cached document carries must stay in step with what a build worker holds.
assert set(TRANSIENT_FIELDS) - _SKIP == {"draft", "deferred"}
