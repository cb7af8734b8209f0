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


# ----- the common case without the YAML machinery ------------------------------------
# Most frontmatter is flat: `key: scalar` lines and lists of scalars. For exactly the
# forms below, whose YAML meaning is plain, `_simple` builds the dict itself (a tenth of
# PyYAML's time; YAML was 6% of parsing). Anything else, down to a comment or a tab, returns
# None and goes to PyYAML. A property test holds the two to the same results.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ITEM = re.compile(r"( *)- (.*)")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_ ./+-]*")  # no `:`, `#`, quotes or flow characters
_INT = re.compile(r"0|[1-9][0-9]*")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# YAML 1.1 gives these plain words other types (bool, null), in any case here for margin.
_WORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}
# What PyYAML's reader refuses (its NON_PRINTABLE), plus tab and BOM, which we leave to it.
_UNUSUAL = re.compile("[^\x0A\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD\U00010000-\U0010FFFF]")
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NO = object()


def _scalar(text: str, flow: bool = False) -> Any:
    text = text.strip(" ")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        if text[0] in inner or "\\" in inner or (flow and any(c in inner for c in ",[]{}")):
            return _NO
        return inner
    if _INT.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # past Python's digit limit: YAML's path reports it
            return _NO
    if _DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return _NO  # YAML reports the bad date
    if text in _BOOLS:
        return _BOOLS[text]
    if _PLAIN.fullmatch(text) and text.lower() not in _WORDS:
        return text
    return _NO


def _simple(raw: str) -> dict[str, Any] | None:
    if _UNUSUAL.search(raw):
        return None
    data: dict[str, Any] = {}
    lines = raw.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip(" "):
            continue
        key, sep, rest = line.partition(":")
        if not sep or not _KEY.fullmatch(key) or key.lower() in _WORDS or key in data:
            return None
        if rest and rest[0] != " ":
            return None  # `key:value` is a plain scalar in YAML, not a pair
        rest = rest.strip(" ")
        if rest.startswith("["):
            if not rest.endswith("]"):
                return None
            inner = rest[1:-1].strip(" ")
            items = [_scalar(x, flow=True) for x in inner.split(",")] if inner else []
            if any(x is _NO for x in items):
                return None
            data[key] = items
        elif rest:
            value = _scalar(rest)
            if value is _NO:
                return None
            data[key] = value
        else:  # a block list, or nothing (null)
            items, indent = [], None
            while i < len(lines):
                m = _ITEM.fullmatch(lines[i])
                if m is None:
                    break
                if indent is None:
                    indent = m.group(1)
                elif m.group(1) != indent:
                    return None
                value = _scalar(m.group(2))
                if value is _NO:
                    return None
                items.append(value)
                i += 1
            data[key] = items if indent is not None else None
    return data


def load(raw: str) -> dict[str, Any]:
    """Parse frontmatter YAML into a JSON-safe dict, or raise FrontmatterError."""
    if len(raw.encode("utf-8", "replace")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"frontmatter larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    if not raw.strip():
        return {}
    data = _simple(raw)
    if data is None:
        return load_yaml(raw)
    _check_shape(data, 0, [MAX_NODES])
    return _plain(data)


def load_yaml(raw: str) -> dict[str, Any]:
    """`load` always through PyYAML (size limit and blank input already checked)."""
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
