"""Where indexes live: generations under `<corpus>/.commonplace/index/`.

    .commonplace/index/
      CURRENT          name of the live generation ("g000012")
      .lock            held (flock) by the one writer at a time
      g000012/
        meta.json      model, dims, precision, counts, chunker identity, pending docs
        table.sqlite   documents and chunks (chunk id = hnswlib label = Whoosh `cid`)
        whoosh/        the BM25 index
        vectors.hnsw   the HNSW index (absent until something is embedded)

A writer clones the live generation into a new directory (hard links for the immutable
Whoosh segment files and the HNSW file, a copy of the table), applies its changes, fsyncs
everything, then atomically replaces CURRENT. Readers open whatever CURRENT names, so they
always see a complete generation. Older generations are removed (the newest previous one
is kept for readers that are mid-query; `purge` keeps none).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..model import STATE_DIR

INDEX_FORMAT = 2
MAX_PENDING_LISTED = 100
_GEN = re.compile(r"^g(\d{6,})$")

TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT,
    tags TEXT NOT NULL,          -- JSON list
    sort_date TEXT,
    canonical INTEGER NOT NULL,
    is_session INTEGER NOT NULL,
    evidence_class TEXT NOT NULL,
    confidence TEXT NOT NULL,
    prior REAL NOT NULL,
    superseded_by TEXT,
    frontmatter TEXT NOT NULL,   -- JSON object
    mtime_ns INTEGER,
    size INTEGER,
    pending INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,     -- sha256 of the embedded text (prefix + cleaned text)
    prefix TEXT NOT NULL,        -- "title > headings" line prepended for the model
    has_vector INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(path) WHERE has_vector = 0;
CREATE INDEX IF NOT EXISTS docs_pending ON docs(path) WHERE pending = 1;
"""


def state_dir(root: Path) -> Path:
    return Path(root) / STATE_DIR


def index_root(root: Path) -> Path:
    return state_dir(root) / "index"


def cache_path(root: Path) -> Path:
    return state_dir(root) / "cache" / "embeddings.sqlite"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_tree(path: Path) -> None:
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            fp = os.path.join(dirpath, name)
            try:
                fd = os.open(fp, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


@dataclass
class Meta:
    format: int = INDEX_FORMAT
    generation: str = ""
    model: str | None = None  # model id (tokenizer of the chunks, model of the vectors)
    model_location: str | None = None  # what to load for query embeddings
    dim: int | None = None
    precision: str | None = None  # of the most recent embedding run
    chunker: str = ""
    next_id: int = 0
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    deleted_vectors: int = 0  # marked deleted in the HNSW file, awaiting compaction
    pending_documents: list[str] = field(default_factory=list)  # the first MAX_PENDING_LISTED
    pending_count: int = 0  # documents with chunks not embedded yet
    built_at: float = 0.0
    hnsw: dict[str, int] = field(default_factory=dict)  # M, ef_construction, max_elements

    @classmethod
    def load(cls, gen_dir: Path) -> "Meta":
        data = json.loads((gen_dir / "meta.json").read_text("utf-8"))
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def save(self, gen_dir: Path) -> None:
        data = json.dumps(self.__dict__, indent=2, sort_keys=True).encode("utf-8")
        write_atomic(gen_dir / "meta.json", data)


class IndexStore:
    def __init__(self, root: Path):
        self.corpus = Path(root)
        self.dir = index_root(root)

    # -- reading
    def current_name(self) -> str | None:
        try:
            name = (self.dir / "CURRENT").read_text("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not _GEN.match(name) or not (self.dir / name / "meta.json").is_file():
            return None
        return name

    def current(self) -> Path | None:
        name = self.current_name()
        return self.dir / name if name else None

    def generations(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.name for p in self.dir.iterdir() if _GEN.match(p.name) and p.is_dir())

    # -- writing
    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """One index writer at a time (a build and a server in the same corpus)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".lock", "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def new_generation(self, base: Path | None) -> Path:
        """A fresh generation directory, cloned from `base` when given."""
        existing = self.generations()
        n = max((int(_GEN.match(g).group(1)) for g in existing), default=0) + 1  # type: ignore[union-attr]
        gen = self.dir / f"g{n:06d}"
        if gen.exists():
            shutil.rmtree(gen)
        gen.mkdir(parents=True)
        if base is None:
            return gen
        # Whoosh writes new segment/TOC files and never modifies old ones; hnswlib files
        # are rewritten whole. So both are shared by hard link; the SQLite table is copied.
        for src in base.rglob("*"):
            rel = src.relative_to(base)
            dst = gen / rel
            if src.is_dir():
                dst.mkdir(parents=True, exist_ok=True)
                continue
            if src.name.endswith("WRITELOCK") or src.name.startswith(".") or src.name == "meta.json":
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.suffix == ".sqlite" or src.name.endswith((".sqlite-wal", ".sqlite-shm")):
                continue
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
        src_db = base / "table.sqlite"
        if src_db.exists():
            # A plain copy is consistent: only the writer (holding the lock) ever writes a
            # table, and a committed generation's table is never written again.
            shutil.copyfile(src_db, gen / "table.sqlite")
        return gen

    def commit(self, gen: Path, keep_previous: bool = True) -> None:
        fsync_tree(gen)
        _fsync_dir(self.dir)
        write_atomic(self.dir / "CURRENT", (gen.name + "\n").encode("ascii"))
        self.gc(keep_previous=keep_previous)

    def discard(self, gen: Path) -> None:
        shutil.rmtree(gen, ignore_errors=True)

    def gc(self, keep_previous: bool = True) -> list[str]:
        cur = self.current_name()
        gens = self.generations()
        keep = {cur} if cur else set()
        if keep_previous and cur:
            older = [g for g in gens if g < cur]
            if older:
                keep.add(older[-1])
        removed = []
        for g in gens:  # called under the write lock: anything else is garbage
            if g in keep:
                continue
            shutil.rmtree(self.dir / g, ignore_errors=True)
            removed.append(g)
        return removed


def open_table(gen: Path, readonly: bool = False) -> sqlite3.Connection:
    path = gen / "table.sqlite"
    if readonly:
        db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    else:
        db = sqlite3.connect(str(path), check_same_thread=False)
        db.execute("PRAGMA journal_mode=DELETE")
        db.executescript(TABLE_SCHEMA)
    db.row_factory = sqlite3.Row
    return db


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def dir_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total
