"""Where indexes live: generations under `<corpus>/.commonplace/index/`.

    .commonplace/index/
      CURRENT          name of the live generation ("g000012")
      .lock            held (flock) by the one writer at a time
      g000012/
        meta.json      model, dims, precision, counts, chunker identity, pending docs
        table.sqlite   documents and chunks (chunk id = hnswlib label = Whoosh `cid`)
        delta.sqlite   (small updates) rows changed since table.sqlite was written
        whoosh/        the BM25 index
        vectors.hnsw   the HNSW index (absent until something is embedded)
        vectors.delta  (small updates) vectors added and removed since vectors.hnsw

A writer clones the live generation into a new directory, applies its changes, fsyncs
the files it wrote, then atomically replaces CURRENT. Readers open whatever CURRENT
names, so they always see a complete generation. Older generations are removed (the
newest previous one is kept for readers that are mid-query; `purge` keeps none).

Files are never modified once a generation is committed, so a clone shares them by hard
link: the Whoosh segments (Whoosh writes new segment and TOC files and never modifies old
ones), the HNSW file, and for a small update the table too. A small update (`share_table`)
writes its table changes to `delta.sqlite` (copied from the base generation, so it holds
every change since `table.sqlite` was written); `open_table` presents the two as the
`docs` and `chunks` tables (temporary views over both files; writes through them land in
the delta). A big update, or a delta past `DELTA_FOLD_BYTES`, copies the table and folds
the delta into it. See docs/decisions/2026-11-22-shared-generation-files.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ...locks import file_lock
from ...model import state_path

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
CREATE INDEX IF NOT EXISTS chunks_vector ON chunks(has_vector, id);
CREATE INDEX IF NOT EXISTS docs_pending ON docs(path) WHERE pending = 1;
"""

# The delta of a small update: the changed rows (`delta_docs`, `delta_chunks`, with the
# tables' columns) and the base rows they hide. (Own names: a trigger may not qualify the
# table it writes, and the unqualified `docs`/`chunks` are the views.)
DELTA_SCHEMA = (TABLE_SCHEMA.replace("TABLE IF NOT EXISTS docs", "TABLE IF NOT EXISTS delta_docs")
                .replace("TABLE IF NOT EXISTS chunks", "TABLE IF NOT EXISTS delta_chunks")
                .replace("ON chunks(", "ON delta_chunks(").replace("ON docs(", "ON delta_docs(")
                .replace("EXISTS chunks_", "EXISTS delta_chunks_").replace("EXISTS docs_", "EXISTS delta_docs_")
                + """
CREATE TABLE IF NOT EXISTS gone_docs (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS gone_chunks (id INTEGER PRIMARY KEY);
""")
DELTA_FOLD_BYTES = 16 << 20  # a bigger delta is folded into a fresh table by the next update
DELTA_FOLD_SHARE = 0.25  # ... or one past this share of the table's size (and 1 MB)

_DOC_COLS = ("path, hash, title, type, status, tags, sort_date, canonical, is_session, evidence_class, "
             "confidence, prior, superseded_by, frontmatter, mtime_ns, size, pending")
_CHUNK_COLS = "id, path, ordinal, start_line, end_line, heading, text, text_hash, prefix, has_vector"


def _views_sql(base: str, delta: str, writable: bool) -> str:
    """Temporary `docs`/`chunks` views over a base table and its delta (and, for a writer,
    whose main database is the delta, triggers that send inserts, deletes and updates to
    the delta)."""
    sql = f"""
CREATE TEMP VIEW docs AS
  SELECT {_DOC_COLS} FROM {base}.docs WHERE path NOT IN (SELECT path FROM {delta}.gone_docs)
  UNION ALL SELECT {_DOC_COLS} FROM {delta}.delta_docs;
CREATE TEMP VIEW chunks AS
  SELECT {_CHUNK_COLS} FROM {base}.chunks WHERE id NOT IN (SELECT id FROM {delta}.gone_chunks)
  UNION ALL SELECT {_CHUNK_COLS} FROM {delta}.delta_chunks;
"""
    if not writable:
        return sql
    for view, key, cols in (("docs", "path", _DOC_COLS), ("chunks", "id", _CHUNK_COLS)):
        new = ", ".join(f"NEW.{c.strip()}" for c in cols.split(","))
        hide = (f"INSERT OR IGNORE INTO gone_{view} ({key}) SELECT {{r}}.{key} "
                f"WHERE EXISTS (SELECT 1 FROM {base}.{view} WHERE {key} = {{r}}.{key});")
        sql += f"""
CREATE TEMP TRIGGER {view}_insert INSTEAD OF INSERT ON {view} BEGIN
  {hide.format(r="NEW")}
  DELETE FROM delta_{view} WHERE {key} = NEW.{key};
  INSERT INTO delta_{view} ({cols}) VALUES ({new});
END;
CREATE TEMP TRIGGER {view}_delete INSTEAD OF DELETE ON {view} BEGIN
  {hide.format(r="OLD")}
  DELETE FROM delta_{view} WHERE {key} = OLD.{key};
END;
CREATE TEMP TRIGGER {view}_update INSTEAD OF UPDATE ON {view} BEGIN
  {hide.format(r="OLD")}
  DELETE FROM delta_{view} WHERE {key} = OLD.{key};
  {hide.format(r="NEW")}
  INSERT INTO delta_{view} ({cols}) VALUES ({new});
END;
"""
    return sql


def state_dir(root: Path) -> Path:
    return state_path(root)


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


def _fsync_file(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_paths(paths: list[str]) -> None:
    """fsync these files (or folders), several at a time: concurrent fsyncs share the
    file system's journal commits, so ten small files cost about one."""
    if len(paths) <= 1:
        for p in paths:
            _fsync_file(p)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(paths))) as pool:
        list(pool.map(_fsync_file, paths))


def fsync_tree(path: Path, new_only: bool = False, also: tuple[Path, ...] = ()) -> None:
    """fsync every file and folder under `path` (and the folders in `also`), all in one
    concurrent round: each must be durable before anything names them, and none depends on
    another (files, then folders, then the parent were three rounds, each a thread pool
    whose threads queue for the GIL behind a refresh's Python work). `new_only`: skip files with other hard links
    (shared with a generation that was fsynced when it was committed)."""
    files: list[str] = []
    dirs: list[str] = []
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            fp = os.path.join(dirpath, name)
            if new_only:
                try:
                    if os.stat(fp).st_nlink > 1:
                        continue
                except OSError:
                    continue
            files.append(fp)
        dirs.append(dirpath)
    fsync_paths(files + dirs + [str(p) for p in also])


def _link_tree(src: str, dst: str) -> None:
    """Hard-link a generation's files into a new one (copies where linking fails), but not
    its table files (`new_generation` handles those), meta, locks or hidden files. Plain
    `os.scandir`: the pathlib walk cost ~10 ms of the writer's GIL per update."""
    with os.scandir(src) as it:
        for entry in it:
            name = entry.name
            s, d = os.path.join(src, name), os.path.join(dst, name)
            if entry.is_dir(follow_symlinks=False):
                os.makedirs(d, exist_ok=True)
                _link_tree(s, d)
                continue
            if (name.endswith(("WRITELOCK", ".sqlite", ".sqlite-wal", ".sqlite-shm", "-journal"))
                    or name.startswith(".") or name == "meta.json"):
                continue
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)


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

    def save(self, gen_dir: Path, durable: bool = True) -> None:
        """`durable=False`: a new generation's file (fsynced by `IndexStore.commit`)."""
        data = json.dumps(self.__dict__, indent=2, sort_keys=True).encode("utf-8")
        if durable:
            write_atomic(gen_dir / "meta.json", data)
        else:
            (gen_dir / "meta.json").write_bytes(data)


# Generations a searcher in this process has open. Whoosh opens a segment's files lazily
# (the stored fields on the first result), so removing a generation under an open searcher
# failed its next query (`'NoneType' object is not subscriptable`, seen under writes every
# second: the reader's generation had become older than the previous one). `gc` leaves
# pinned generations for a later collection.
_PINNED: dict[str, int] = {}
_PINNED_LOCK = threading.Lock()


def _key(gen: Path) -> str:
    return os.path.realpath(gen)


def pin(gen: Path) -> None:
    with _PINNED_LOCK:
        key = _key(gen)
        _PINNED[key] = _PINNED.get(key, 0) + 1


def unpin(gen: Path) -> None:
    with _PINNED_LOCK:
        key = _key(gen)
        n = _PINNED.get(key, 0) - 1
        if n > 0:
            _PINNED[key] = n
        else:
            _PINNED.pop(key, None)


def pinned(gen: Path) -> bool:
    key = _key(gen)
    with _PINNED_LOCK:
        return key in _PINNED


class IndexNotReady(RuntimeError):
    """No search index has been built for this corpus (HTTP 503)."""


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
        with file_lock(self.dir / ".lock"):
            yield

    def new_generation(self, base: Path | None, share_table: bool = False) -> Path:
        """A fresh generation directory, cloned from `base` when given.

        Whoosh writes new segment/TOC files and never modifies old ones; hnswlib files
        and the HNSW delta are replaced whole (write, then rename). So all of them are
        shared by hard link. The table: with `share_table` it is hard-linked too and the
        base's delta copied (writes go to the delta); otherwise it is copied with the
        base's delta folded in.
        """
        existing = self.generations()
        n = max((int(_GEN.match(g).group(1)) for g in existing), default=0) + 1  # type: ignore[union-attr]
        gen = self.dir / f"g{n:06d}"
        if gen.exists():
            shutil.rmtree(gen)
        gen.mkdir(parents=True)
        if base is None:
            return gen
        _link_tree(str(base), str(gen))
        src_db, src_delta = base / "table.sqlite", base / "delta.sqlite"
        if not src_db.exists():
            return gen
        # Plain copies are consistent: only the writer (holding the lock) ever writes a
        # table, and a committed generation's files are never written again.
        if share_table:
            try:
                os.link(src_db, gen / "table.sqlite")
            except OSError:
                shutil.copyfile(src_db, gen / "table.sqlite")
            if src_delta.exists():
                shutil.copyfile(src_delta, gen / "delta.sqlite")
            else:
                db = sqlite3.connect(str(gen / "delta.sqlite"))
                db.executescript(DELTA_SCHEMA)
                db.commit()
                db.close()
        else:
            shutil.copyfile(src_db, gen / "table.sqlite")
            if src_delta.exists():
                fold_delta(gen / "table.sqlite", src_delta)
        return gen

    def delta_too_big(self, base: Path) -> bool:
        """Whether the next update should fold the base's table delta (see module doc)."""
        try:
            size = (base / "delta.sqlite").stat().st_size
        except OSError:
            return False
        try:
            table = (base / "table.sqlite").stat().st_size
        except OSError:
            return True
        return size > DELTA_FOLD_BYTES or size > max(1 << 20, DELTA_FOLD_SHARE * table)

    def commit(self, gen: Path, keep_previous: bool = True, collect: bool = True) -> None:
        """Make `gen` the live generation; then (`collect`) remove older ones (`gc`)."""
        fsync_tree(gen, new_only=True, also=(self.dir,))
        write_atomic(self.dir / "CURRENT", (gen.name + "\n").encode("ascii"))
        if collect:
            self.gc(keep_previous=keep_previous)

    def discard(self, gen: Path) -> None:
        shutil.rmtree(gen, ignore_errors=True)

    def gc(self, keep_previous: bool = True, older_only: bool = False) -> list[str]:
        """Remove generations other than the current one (and, with `keep_previous`, the
        newest older one). Under the write lock anything else is garbage; without it
        (`older_only`), only generations older than those: a newer one may be being written."""
        cur = self.current_name()
        gens = self.generations()
        keep = {cur} if cur else set()
        if keep_previous and cur:
            older = [g for g in gens if g < cur]
            if older:
                keep.add(older[-1])
        removed = []
        for g in gens:
            # A purge (keep_previous=False) removes pinned ones too: forgotten text must go.
            if g in keep or (older_only and (cur is None or g > cur)) or (keep_previous and pinned(self.dir / g)):
                continue
            shutil.rmtree(self.dir / g, ignore_errors=True)
            removed.append(g)
        return removed


def _uri(path: Path, readonly: bool = True) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path))}" + ("?mode=ro&immutable=1" if readonly else "")


def fold_delta(table: Path, delta: Path) -> None:
    """Apply a generation's delta to a (private, writable) copy of its table."""
    db = sqlite3.connect(_uri(table, readonly=False), uri=True)
    try:
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA secure_delete = ON")
        db.execute("ATTACH DATABASE ? AS d", (_uri(delta),))
        with db:
            db.execute("DELETE FROM main.chunks WHERE id IN (SELECT id FROM d.gone_chunks) "
                       "OR id IN (SELECT id FROM d.delta_chunks)")
            db.execute("DELETE FROM main.docs WHERE path IN (SELECT path FROM d.gone_docs) "
                       "OR path IN (SELECT path FROM d.delta_docs)")
            db.execute(f"INSERT INTO main.chunks ({_CHUNK_COLS}) SELECT {_CHUNK_COLS} FROM d.delta_chunks")
            db.execute(f"INSERT INTO main.docs ({_DOC_COLS}) SELECT {_DOC_COLS} FROM d.delta_docs")
        db.execute("DETACH DATABASE d")
    finally:
        db.close()


def open_table(gen: Path, readonly: bool = False) -> sqlite3.Connection:
    """The generation's `docs` and `chunks` tables (over table.sqlite and, when there is
    one, delta.sqlite: see the module doc). A writable connection writes to the delta
    when there is one, else to table.sqlite itself (a private copy)."""
    path = gen / "table.sqlite"
    delta = gen / "delta.sqlite"
    has_delta = delta.exists()
    if readonly:
        db = sqlite3.connect(_uri(path), uri=True, check_same_thread=False)
        if has_delta:
            db.execute("ATTACH DATABASE ? AS delta", (_uri(delta),))
            db.executescript(_views_sql("main", "delta", writable=False))
    elif has_delta:
        db = sqlite3.connect(_uri(delta, readonly=False), uri=True, check_same_thread=False)
        db.execute("PRAGMA journal_mode=DELETE")
        db.executescript(DELTA_SCHEMA)
        db.execute("ATTACH DATABASE ? AS base", (_uri(path),))
        db.executescript(_views_sql("base", "main", writable=True))
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
