"""YAML frontmatter: split it from the body and load it safely.

Safe loading only (no Python tags). YAML anchors are allowed but a document whose
structure expands past a node budget (billion laughs) or nests too deep is refused,
because later stages walk the values (chips, JSON, indexes).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import yaml

try:  # libyaml is ~10x faster; fall back to the pure-Python loader if absent.
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_NODES = 5_000
MAX_DEPTH = 20

_FENCE = re.compile(r"^---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


class FrontmatterError(ValueError):
    """Frontmatter present but unusable; the body is still rendered."""


def split(text: str) -> tuple[str | None, str, int]:
    """Return (yaml_text or None, body, body_start_line).

    `body_start_line` is the 1-based line of the source where the body begins.
    Raises FrontmatterError when an opening fence is never closed.
    """
    if not _FENCE.match(text):
        return None, text, 1
    first_nl = text.index("\n") + 1
    m = _CLOSE.search(text, first_nl)
    if m is None:
        raise FrontmatterError("frontmatter opened with '---' but never closed")
    raw = text[first_nl : m.start()]
    end = m.end()
    if end < len(text) and text[end] == "\n":
        end += 1
    body_line = text.count("\n", 0, end) + 1
    return raw, text[end:], body_line


def _check_shape(value: Any, depth: int, budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise FrontmatterError(f"frontmatter too large (more than {MAX_NODES} values once aliases expand)")
    if depth > MAX_DEPTH:
        raise FrontmatterError(f"frontmatter nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_shape(k, depth + 1, budget)
            _check_shape(v, depth + 1, budget)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            _check_shape(v, depth + 1, budget)


def _plain(value: Any) -> Any:
    """JSON-safe copy: dates become ISO strings, keys become strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None  # NaN and infinities (YAML .nan, .inf) are not JSON
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def load(raw: str) -> dict[str, Any]:
    """Parse frontmatter YAML into a JSON-safe dict, or raise FrontmatterError."""
    if len(raw.encode("utf-8", "replace")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"frontmatter larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    if not raw.strip():
        return {}
    try:
        data = yaml.load(raw, Loader=_Loader)  # noqa: S506 - CSafeLoader/SafeLoader only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(f"invalid YAML{where}: {problem}") from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise FrontmatterError(f"invalid YAML: {type(exc).__name__}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping, got {type(data).__name__}")
    _check_shape(data, 0, [MAX_NODES])
    return _plain(data)


def dump(data: dict[str, Any]) -> str:
    """Serialize frontmatter the way commonplace writes it (stable key order)."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
