"""Path policy: which corpus-relative paths a write (or an API read) may name.

`normalize_target` checks the shape of a path without touching the disk; `locate` then
makes sure no symlink on the way leads outside the corpus, into a hidden folder or into
the build output. What is checked is exactly what is opened: nothing is decoded or
normalised.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from ..model import STATE_DIR, reserved_path
from .checks import has_hidden_characters, reveal
from .errors import InvalidTarget

MAX_PATH_CHARS = 512
MAX_PART_BYTES = 255

_WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                              *(f"COM{c}" for c in "123456789\u00b9\u00b2\u00b3"),
                              *(f"LPT{c}" for c in "123456789\u00b9\u00b2\u00b3")})
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")


def _refuse(target: str, why: str) -> InvalidTarget:
    shown = reveal(target[:120])
    return InvalidTarget(f"invalid path {shown!r}: {why}")


def normalize_target(target: Any, *, require_md: bool = True) -> str:
    """Check the *shape* of a corpus-relative path (no filesystem access); return it.

    Raises InvalidTarget. Paths are never decoded or normalised here, so what is checked
    is exactly what is opened.
    """
    if not isinstance(target, str):
        raise InvalidTarget(f"path must be a string, not {type(target).__name__}")
    if not target or not target.strip():
        raise InvalidTarget("path is empty")
    if len(target) > MAX_PATH_CHARS:
        raise InvalidTarget(f"path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in target:
        raise _refuse(target, "contains a NUL character")
    if has_hidden_characters(target):
        raise _refuse(target, "contains a control or invisible character")
    try:
        target.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(target, "is not valid Unicode") from None
    if "\\" in target:
        raise _refuse(target, "contains a backslash (use '/' between folders)")
    if target.startswith("/") or _DRIVE.match(target) or target.startswith("~"):
        raise _refuse(target, "must be relative to the corpus")
    if _ENCODED.search(target):
        raise _refuse(target, "contains a percent-encoded character")
    if target != target.strip():
        raise _refuse(target, "starts or ends with whitespace")
    parts = target.split("/")
    for part in parts:
        if part == "":
            raise _refuse(target, "has an empty folder name ('//' or a trailing '/')")
        if part in (".", ".."):
            raise _refuse(target, "contains '.' or '..'")
        folded = unicodedata.normalize("NFKC", part)
        if part.startswith(".") or folded.startswith(".") or folded in ("..", "."):
            raise _refuse(target, "names a hidden file or folder")
        if part != part.strip() or folded != folded.strip():
            raise _refuse(target, "has a file or folder name that starts or ends with whitespace")
        if len(part.encode("utf-8")) > MAX_PART_BYTES:
            raise _refuse(target, f"has a name longer than {MAX_PART_BYTES} bytes")
    for part in parts:
        stem = part.split(".", 1)[0].rstrip(" ").upper()
        if stem in _WINDOWS_DEVICES:
            raise _refuse(target, f"uses {stem!r}, a device name on Windows (the corpus could not be copied there)")
    if parts[0].lower() == STATE_DIR:
        raise _refuse(target, "is inside commonplace's state folder")
    if require_md and reserved_path(target) is not None:
        raise _refuse(target, f"is reserved for the site: {reserved_path(target)}")
    if require_md and not target.endswith(".md"):
        raise _refuse(target, "must end in .md")
    if require_md and parts[-1] == ".md":
        raise _refuse(target, "has no file name")
    return target


def locate(root: Path, rel: str, excluded: tuple[Path, ...] = ()) -> Path:
    """`root/rel` once every existing part of it is known to stay in the corpus.

    Refuses (InvalidTarget) a symlinked file or folder on the way that resolves outside the
    corpus, into a hidden path, or into an excluded folder (the site output).
    """
    root = root.resolve()
    full = root / rel
    # The deepest existing ancestor (or the file itself) must resolve inside the corpus.
    probe = full
    while not os.path.lexists(probe) and probe != root:
        probe = probe.parent
    try:
        real = probe.resolve(strict=False)
    except (OSError, RuntimeError):  # symlink loop
        raise InvalidTarget(f"invalid path {rel!r}: a symlink on the way cannot be resolved") from None
    if not real.is_relative_to(root):
        raise InvalidTarget(f"invalid path {rel!r}: leads outside the corpus")
    real_rel = real.relative_to(root).as_posix()
    if real_rel != "." and any(p.startswith(".") for p in real_rel.split("/")):
        raise InvalidTarget(f"invalid path {rel!r}: leads into a hidden folder")
    for ex in excluded:
        ex = ex.resolve()
        if real.is_relative_to(ex) or full.is_relative_to(ex):
            raise InvalidTarget(f"invalid path {rel!r}: inside the build output folder")
    return full


def check_target(root: Path, target: Any, excluded: tuple[Path, ...] = ()) -> tuple[str, Path]:
    rel = normalize_target(target)
    return rel, locate(root, rel, excluded)


def excluded_folders(root: Path, out: Path | None) -> tuple[Path, ...]:
    """Folders inside the corpus that are not corpus content: the site output, when it is
    built inside the corpus (`locate` refuses paths under them)."""
    if out is None:
        return ()
    out = Path(out).resolve()
    return (out,) if out.is_relative_to(Path(root).resolve()) else ()


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def check_collision(root: Path, rel: str) -> None:
    """Refuse a new path whose file or folder names equal existing ones after NFC and case
    folding (`Core/Identity.md` beside `core/identity.md`, NFD `café.md` beside NFC): on a
    case-insensitive or normalising disk they are one file, and links could not tell them
    apart. Folders that exist with the same spelling are walked into."""
    here = Path(root)
    for part in rel.split("/"):
        try:
            names = os.listdir(here)
        except (FileNotFoundError, NotADirectoryError):
            return  # the rest is new: nothing to collide with
        if part in names:
            here = here / part
            continue
        folded = _fold(part)
        clash = next((n for n in names if _fold(n) == folded), None)
        if clash is not None:
            from .errors import Conflict

            raise Conflict(f"invalid path {reveal(rel[:120])!r}: {reveal(part)!r} and the existing "
                           f"{reveal(clash)!r} differ only in case or Unicode form; use the existing name",
                           existing=clash)
        return
