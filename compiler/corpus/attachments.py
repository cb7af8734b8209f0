"""Attachments: the corpus's other files (images, PDFs, audio, video...) that pages use.

Every file a page links or embeds is copied into the site at a stable path,
`_/files/<its corpus path>`, so a page's reference is known before any copy exists and
an edit to a file changes only that file in the site. A file is copied again only when
its size or modification time changed; one no page references any more is removed.

Limits (documented in docs/references/corpus-format.md): at most `MAX_FILES`
attachments are considered, a file over `MAX_FILE_BYTES` is not published, and
active content (HTML, scripts) is never published: served from the site's own origin
it could run as the site.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Warning_

FILES_PREFIX = "_/files/"
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_FILES = 50_000

IMAGE = {"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "avif", "ico", "tif", "tiff"}
AUDIO = {"mp3", "wav", "ogg", "oga", "m4a", "flac", "aac", "opus", "3gp"}
VIDEO = {"mp4", "webm", "ogv", "mov", "mkv", "m4v"}
DOCUMENT = {"pdf"}
OTHER = {"txt", "csv", "tsv", "json", "yaml", "yml", "toml", "zip", "gz", "tgz", "tar", "7z", "epub",
         "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "canvas", "excalidraw",
         "drawio", "py", "sh", "c", "h", "cpp", "rs", "go", "java", "tex", "bib", "ipynb", "log", "xml", "ics"}
KNOWN = IMAGE | AUDIO | VIDEO | DOCUMENT | OTHER
# Never published: a browser would run them as the site itself.
ACTIVE = {"html", "htm", "xhtml", "xht", "shtml", "js", "mjs", "cjs", "wasm", "svgz"}


def extension(path: str) -> str:
    name = posixpath.basename(path)
    return name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""


def is_attachment_target(target: str) -> bool:
    """Whether a link target names an attachment (by its extension) rather than a note.
    Asked of every link of every page: most have no dot and answer at once."""
    dot = target.rfind(".")
    if dot < 0:
        return False
    ext = target[dot + 1:].rstrip().lower()
    return (ext in KNOWN or ext in ACTIVE) and "/" not in ext


def kind_of(path: str) -> str:
    ext = extension(path)
    for name, exts in (("image", IMAGE), ("audio", AUDIO), ("video", VIDEO), ("pdf", DOCUMENT)):
        if ext in exts:
            return name
    return "file"


def file_url(path: str) -> str:
    """Where an attachment lives in the site (site-relative)."""
    return FILES_PREFIX + path


Stat = tuple[int, int]  # (size, mtime_ns)


def scan_files(root: Path, out: Path | None = None) -> tuple[dict[str, Stat], list[Warning_]]:
    """Every non-markdown file of the corpus that could be published: path -> (size,
    mtime). Hidden paths (`.obsidian/`, `.commonplace/`), the output folder, symlinks and
    active content are left out; files over the size limit are reported and left out."""
    root = root.resolve()
    outp = out.resolve() if out is not None else None
    found: dict[str, Stat] = {}
    warnings: list[Warning_] = []
    stack = [(str(root), "")]
    while stack:
        folder, rel = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") or e.is_symlink():
                continue
            path = rel + e.name
            try:
                if e.is_dir():
                    if outp is None or Path(e.path).resolve() != outp:
                        stack.append((e.path, path + "/"))
                    continue
                if e.name.endswith(".md") or not e.is_file():
                    continue
                ext = extension(e.name)
                if ext in ACTIVE or not ext:
                    continue
                st = e.stat()
            except OSError:
                continue
            if st.st_size > MAX_FILE_BYTES:
                warnings.append(Warning_(path, f"attachment over {MAX_FILE_BYTES // (1024 * 1024)} MB; not published",
                                         code="attachment-too-large"))
                continue
            if len(found) >= MAX_FILES:
                warnings.append(Warning_(path, f"more than {MAX_FILES} attachments; the rest are not published",
                                         code="attachment-limit"))
                return found, warnings
            found[path] = (st.st_size, st.st_mtime_ns)
    return dict(sorted(found.items())), warnings


@dataclass
class Attachments:
    """The corpus's attachments as last scanned, and those the site holds copies of."""

    disk: dict[str, Stat] = field(default_factory=dict)
    copied: dict[str, Stat] = field(default_factory=dict)

    def urls(self) -> set[str]:
        return {file_url(p) for p in self.copied}

    def publish(self, root: Path, out: Path, referenced: set[str]) -> tuple[int, int]:
        """Copy every referenced attachment whose file changed, remove the copies no page
        references any more; returns (copied, removed)."""
        wanted = {p: self.disk[p] for p in referenced if p in self.disk}
        written = removed = 0
        for p in sorted(set(self.copied) - set(wanted)):
            try:
                (out / file_url(p)).unlink()
                removed += 1
            except FileNotFoundError:
                pass
            _prune(out, posixpath.dirname(file_url(p)))
            del self.copied[p]
        for p, stat in sorted(wanted.items()):
            dest = out / file_url(p)
            if self.copied.get(p) == stat and dest.is_file():
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
            try:
                shutil.copyfile(root / p, tmp)
                os.replace(tmp, dest)
            except OSError:
                tmp.unlink(missing_ok=True)
                continue  # vanished or unreadable: the next build tries again
            self.copied[p] = stat
            written += 1
        return written, removed

    def as_json(self) -> dict:
        return {"disk": {p: list(s) for p, s in self.disk.items()},
                "copied": {p: list(s) for p, s in self.copied.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "Attachments":
        return cls({p: (int(s[0]), int(s[1])) for p, s in data.get("disk", {}).items()},
                   {p: (int(s[0]), int(s[1])) for p, s in data.get("copied", {}).items()})


def _prune(out: Path, folder: str) -> None:
    """Remove folders an attachment left empty, up to `_/files`."""
    while folder and folder.startswith(FILES_PREFIX.rstrip("/")):
        try:
            os.rmdir(out / folder)
        except OSError:
            return
        folder = posixpath.dirname(folder)
