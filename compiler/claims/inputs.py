"""Checks of what a claim write is given: kind, key, confidence, validity bounds, raw
input, evidence, and the write safety scan. Each returns the normalised value or raises
`InvalidClaim` (`RefusedContent` for the scan) before anything is written."""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from pathlib import Path
from typing import Any

from ..fsutil import inside
from . import times
from .errors import InvalidClaim, RefusedContent
from .log import KINDS
from .text_rules import MAX_RAW_INPUT, check_text, one_line

CONFIDENCE_WORDS = ("low", "medium", "high")
_LINES = re.compile(r"^(\d{1,7})(?:-(\d{1,7}))?$")


def evidence_ref(root: Path, value: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """`evidence` as given (a corpus path, `path:START-END`, a URL or free text) -> the
    event's evidence field and warnings (a path that does not exist yet)."""
    if value is None or value == "":
        return None, []
    if isinstance(value, dict):
        target, lines = value.get("url") or value.get("path"), value.get("lines")
    elif isinstance(value, str):
        target, lines = value.strip(), None
        m = re.match(r"^(.*?)(?::|#L?)(\d{1,7}(?:-L?\d{1,7})?)$", target)
        if m and not target.startswith(("http://", "https://")):
            target, lines = m.group(1), m.group(2).replace("L", "")
    else:
        raise InvalidClaim("evidence must be a corpus path (optionally path:START-END) or a URL")
    target = check_text(target, "evidence", 1000)
    assert target is not None
    if re.match(r"^https?://", target):
        if re.search(r"[\s<>\"]", target):
            raise InvalidClaim("evidence URL contains spaces or <>\"")
        return {"url": target}, []
    if isinstance(value, str) and not _looks_like_path(target):
        return {"text": one_line(value)}, []  # a free-text source: "call with Alex, 3 March"
    if lines is not None:
        lines = str(lines).strip()
        m = _LINES.match(lines)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))) or int(m.group(1)) < 1:
            raise InvalidClaim(f"evidence line range {lines[:20]!r} is not START or START-END (1-based)")
    rel = target.replace("\\", "/")
    if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        abs_path = Path(target).resolve()
        if not abs_path.is_relative_to(root):
            raise InvalidClaim(f"evidence {target[:80]!r} is outside the corpus")
        rel = abs_path.relative_to(root).as_posix()
    rel = posixpath.normpath(rel)
    parts = rel.split("/")
    if rel in (".", "") or ".." in parts or any(p.startswith(".") for p in parts):
        raise InvalidClaim(f"evidence {target[:80]!r} must be a path inside the corpus (no .., no hidden folders)")
    warnings = []
    try:
        full = inside(root, rel)
    except ValueError:
        raise InvalidClaim(f"evidence {target[:80]!r} resolves outside the corpus") from None
    if not full.exists():
        warnings.append(f"evidence {rel} does not exist (yet); it will show as a broken link")
    out: dict[str, Any] = {"path": rel}
    if lines:
        out["lines"] = lines
    return out, warnings


def _looks_like_path(text: str) -> bool:
    """`notes/a.md`, `a.md`, `/abs/in/corpus.md`, `docs/x.png` are paths; prose is not."""
    return text.lower().endswith(".md") or (("/" in text or "\\" in text) and not re.search(r"\s", text))



def scan_texts(**texts: str | None) -> None:
    """The write safety checks every write passes (invisible characters, prompt
    injection): refused text never reaches the log, a page or an artifact."""
    from ..writes.checks import scan_content

    for what, text in texts.items():
        if not text:
            continue
        findings = scan_content(text)
        if findings:
            first = findings[0]
            raise RefusedContent(f"{what.replace('_', ' ')} refused: {first.message}",
                                 [f.as_dict() for f in findings])


def instant(value: Any, what: str) -> dt.datetime:
    try:
        return times.as_of_instant(value)
    except ValueError as exc:
        raise InvalidClaim(f"{what}: {exc}") from None


def check_kind(kind: Any) -> str:
    k = str(kind or "").strip().lower()
    if k not in KINDS:
        raise InvalidClaim(f"kind must be one of {', '.join(KINDS)} (got {str(kind)[:40]!r})")
    return k


def check_key(key: Any) -> str | None:
    k = check_text(key, "key", 100, required=False)
    return one_line(k) if k else None


def check_confidence(value: Any) -> float | str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidClaim("confidence must be a number from 0 to 1 or low/medium/high, not a boolean")
    if isinstance(value, str) and value.strip().lower() in CONFIDENCE_WORDS:
        return value.strip().lower()
    try:
        num = float(value)
    except (TypeError, ValueError):
        raise InvalidClaim(f"confidence must be a number from 0 to 1 or low/medium/high (got {str(value)[:40]!r})") from None
    if not 0.0 <= num <= 1.0 or num != num:
        raise InvalidClaim(f"confidence must be between 0 and 1 (got {value})")
    return round(num, 4)


def check_bounds(valid_from: Any, valid_to: Any) -> tuple[str | None, str | None]:
    try:
        vf = times.normalize_bound(valid_from)
        vt = times.normalize_bound(valid_to)
    except ValueError as exc:
        raise InvalidClaim(str(exc)) from None
    if vf and vt:
        start, end = times.bound_start(vf), times.bound_end(vt)
        assert start is not None and end is not None
        if end <= start:
            raise InvalidClaim(f"valid_to ({vt}) is before valid_from ({vf})")
    return vf, vt


def check_raw(raw_input: Any) -> str | None:
    if raw_input is None:
        return None
    if not isinstance(raw_input, str):
        raise InvalidClaim("raw input must be text")
    if len(raw_input) > MAX_RAW_INPUT:
        raise InvalidClaim(f"raw input is {len(raw_input):,} characters; the limit is {MAX_RAW_INPUT:,}")
    if "\x00" in raw_input:
        raise InvalidClaim("raw input contains NUL")
