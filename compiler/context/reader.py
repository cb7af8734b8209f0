"""Corpus files by path for one context call: from disk under the corpus root (symlinks
and paths leaving the corpus refused), else the parsed document's text, each read once."""

from __future__ import annotations

from pathlib import Path

from ..markdown.comments import strip_comments
from ..model import Document

READ_LIMIT = 256 * 1024  # a wake never shows more than a few thousand characters of a file


class Reader:
    """File text by corpus path: from disk under `root` (symlinks and paths leaving the
    corpus refused), else the parsed document's text. One reader serves one wake call and
    remembers what it read: several sections can ask for the same file."""

    def __init__(self, root: Path | None, docs: dict[str, Document]) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self.docs = docs
        self._texts: dict[str, str | None] = {}

    def full(self, rel: str) -> Path | None:
        if self.root is None:
            return None
        p = self.root / rel
        try:
            if p.is_symlink() or not p.is_file():
                return None
            p.resolve().relative_to(self.root)
        except (OSError, ValueError):
            return None
        return p

    def text(self, rel: str) -> str | None:
        """The file's text without its `%%comments%%` (an author's private notes)."""
        if rel not in self._texts:
            self._texts[rel] = self._read(rel)
        return self._texts[rel]

    def _read(self, rel: str) -> str | None:
        p = self.full(rel)
        if p is not None:
            try:
                with open(p, "rb") as f:
                    return strip_comments(f.read(READ_LIMIT).decode("utf-8", "replace").replace("\r\n", "\n"))
            except OSError:
                pass
        doc = self.docs.get(rel)
        if doc is not None and doc.text:
            return strip_comments(doc.text)
        return None

    def exists(self, rel: str) -> bool:
        return self.full(rel) is not None or bool(self.docs.get(rel) and self.docs[rel].text)
