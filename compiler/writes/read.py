"""Reads of corpus documents for API clients (`get`, `commonplace get`): a line range,
the frontmatter and the file's hash, never anything outside the corpus."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..markdown import frontmatter as fm
from ..model import content_hash
from .checks import reveal
from .errors import InvalidTarget, NotFound, WriteFailed
from .paths import locate, normalize_target


@dataclass
class ReadResult:
    path: str
    content: str
    start: int
    total_lines: int
    lines_returned: int
    frontmatter: dict[str, Any]
    hash: str

    def as_dict(self, debug: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "from": self.start, "content": self.content}
        if debug:
            d.update(total_lines=self.total_lines, lines_returned=self.lines_returned,
                     frontmatter=self.frontmatter, hash=self.hash)
        return d


def resolve_readable(root: Path, path: Any, excluded: tuple[Path, ...] = ()) -> tuple[str, Path]:
    """A document path an API client may read. Anything outside the corpus, hidden, under
    the output folder or missing is NotFound (404); a malformed path is InvalidTarget."""
    if not isinstance(path, str):
        raise InvalidTarget(f"path must be a string, not {type(path).__name__}")
    if not path or not path.strip():
        raise InvalidTarget("path is empty")
    if "\x00" in path or "\\" in path:
        normalize_target(path)  # raises InvalidTarget (400) with the reason
    cand = path if path.endswith(".md") else path + ".md"
    missing = NotFound(f"path not found: {reveal(path[:200])}")  # Dory's words
    try:
        rel = normalize_target(cand)
        full = locate(root, rel, excluded)
    except InvalidTarget:
        raise missing from None
    if not full.is_file():
        raise missing
    if full.is_symlink() and not full.resolve().name.endswith(".md"):
        raise missing
    return rel, full


STREAM_ABOVE = 1024 * 1024  # larger files are read line by line, only as far as asked
FRONTMATTER_BYTES = 128 * 1024


class _LargeRead(ReadResult):
    """A line range of a large file: the range and the frontmatter are read at once, the
    whole-file figures (line count, hash) only if someone asks, by streaming the file."""

    def __init__(self, full: Path, *args: Any) -> None:
        super().__init__(*args)
        self._full = full

    def _scan(self) -> None:
        import hashlib

        h, n, last = hashlib.sha256(), 0, b""
        with open(self._full, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
                n += block.count(b"\n")
                last = block[-1:]
        self.__dict__["hash"] = "sha256:" + h.hexdigest()
        self.__dict__["total_lines"] = n + (1 if last and last != b"\n" else 0)

    def __getattribute__(self, name: str) -> Any:
        if name in ("hash", "total_lines") and object.__getattribute__(self, "__dict__").get(name) is None:
            object.__getattribute__(self, "_scan")()
        return object.__getattribute__(self, name)


def _read_large(rel: str, full: Path, start: int, lines: int) -> ReadResult:
    out: list[str] = []
    with open(full, "rb") as fh:
        head = fh.read(FRONTMATTER_BYTES).decode("utf-8", "replace").lstrip("\ufeff")
        fh.seek(0)
        for i, raw in enumerate(fh, start=1):
            if i >= start + lines:
                break
            if i >= start:
                line = raw.decode("utf-8", "replace")
                out.append(line[1:] if i == 1 and line.startswith("\ufeff") else line)
    try:
        fm_raw, _, _ = fm.split(head.replace("\r\n", "\n"))
        meta = fm.load(fm_raw) if fm_raw is not None else {}
    except fm.FrontmatterError:
        meta = {}
    return _LargeRead(full, rel, "".join(out), start, None, len(out), meta, None)


def read_document(root: Path, path: Any, start: int = 1, lines: int | None = None,
                  excluded: tuple[Path, ...] = ()) -> ReadResult:
    rel, full = resolve_readable(root, path, excluded)
    try:
        if lines is not None and full.stat().st_size > STREAM_ABOVE:
            return _read_large(rel, full, max(1, start), lines)
        data = full.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(f"path not found: {rel}") from None
    except OSError as exc:
        raise WriteFailed(f"cannot read {rel}: {exc.strerror or 'I/O error'}") from None
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    all_lines = text.splitlines(keepends=True)
    start = max(1, start)
    sliced = all_lines[start - 1 : (start - 1 + lines) if lines is not None else None]
    try:
        raw, _, _ = fm.split(text.replace("\r\n", "\n"))
        meta = fm.load(raw) if raw is not None else {}
    except fm.FrontmatterError:
        meta = {}
    return ReadResult(rel, "".join(sliced), start, len(all_lines), len(sliced), meta, content_hash(data))
