"""The embedding cache: `.commonplace/cache/embeddings.sqlite`, keyed by (model id, chunk
text hash). A rebuild looks chunks up here first and embeds only the misses."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterable


class EmbeddingCache:
    """Vectors by (model, text hash) in SQLite; safe for one writer and many readers."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        try:
            self._open()
            self._db.execute("SELECT count(*) FROM (SELECT 1 FROM emb LIMIT 1)").fetchone()
        except sqlite3.DatabaseError as exc:  # garbage or truncated: a cache, so start it again
            self._discard(exc)

    def _discard(self, exc: BaseException) -> None:
        """Move the unreadable cache aside (kept for a look, replaced next time) and open an
        empty one: every vector it held can be computed again."""
        from ..store.recover import record

        try:
            self._db.close()
        except Exception:  # noqa: BLE001 - it may never have opened
            pass
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.replace(part.with_name(part.name + ".unreadable"))
        record("the embedding cache", exc, "moved aside and started empty")
        self._open()

    def _open(self) -> None:
        path = self.path
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA page_size = 8192")  # vectors are ~1.5 KB: 5 per page, no overflow
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS emb (model TEXT NOT NULL, hash TEXT NOT NULL, dim INTEGER NOT NULL,"
            " vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
        )
        self._db.commit()

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, Any]:
        import numpy as np

        out: dict[str, Any] = {}
        keys = list(dict.fromkeys(hashes))
        try:
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                q = f"SELECT hash, vec FROM emb WHERE model = ? AND hash IN ({','.join('?' * len(batch))})"
                for h, blob in self._db.execute(q, [model, *batch]):
                    out[h] = np.frombuffer(blob, dtype=np.float32)
        except sqlite3.DatabaseError as exc:  # a page deep in the file is bad: all misses
            self._discard(exc)
            return {}
        return out

    def put_many(self, model: str, items: Iterable[tuple[str, Any]]) -> None:
        import numpy as np

        rows = [(model, h, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for h, v in items]
        if rows:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def count(self, model: str | None = None) -> int:
        if model is None:
            return int(self._db.execute("SELECT count(*) FROM emb").fetchone()[0])
        return int(self._db.execute("SELECT count(*) FROM emb WHERE model = ?", [model]).fetchone()[0])

    def retain(self, model: str, keep: set[str]) -> int:
        """Delete this model's entries whose hash is not in `keep`; vacuum. Returns removed."""
        have = [h for (h,) in self._db.execute("SELECT hash FROM emb WHERE model = ?", [model])]
        drop = [h for h in have if h not in keep]
        for i in range(0, len(drop), 500):
            batch = drop[i : i + 500]
            self._db.execute(f"DELETE FROM emb WHERE model = ? AND hash IN ({','.join('?' * len(batch))})", [model, *batch])
        self._db.commit()
        if drop:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
        return len(drop)

    def close(self) -> None:
        self._db.close()
