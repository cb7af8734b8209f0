"""The text a write produces: frontmatter checked and merged, and a document composed
from frontmatter and body."""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterator

from ..markdown import frontmatter as fm
from .errors import InvalidInput


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def check_frontmatter(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"frontmatter must be an object, not {type(value).__name__}")
    try:
        text = fm.dump(value)
        loaded = fm.load(text)
    except fm.FrontmatterError as exc:
        raise InvalidInput(f"frontmatter refused: {exc}") from None
    except (yaml_errors() + (TypeError, ValueError, RecursionError)) as exc:
        raise InvalidInput(f"frontmatter cannot be written as YAML: {type(exc).__name__}") from None
    return loaded


def yaml_errors() -> tuple[type[BaseException], ...]:
    import yaml

    return (yaml.YAMLError,)


def split_content(content: str) -> tuple[dict[str, Any] | None, str]:
    """Content that starts with its own frontmatter block -> (that frontmatter, body)."""
    try:
        raw, body, _ = fm.split(content)
    except fm.FrontmatterError:
        return None, content
    if raw is None:
        return None, content
    try:
        return fm.load(raw), body
    except fm.FrontmatterError as exc:
        raise InvalidInput(f"content starts with unusable frontmatter: {exc}") from None


def _list_union(a: Any, b: Any) -> list[Any]:
    def as_list(v: Any) -> list[Any]:
        if v is None:
            return []
        if isinstance(v, str):
            return [s.strip() for s in v.split(",") if s.strip()]
        if isinstance(v, list):
            return list(v)
        return [v]

    out: list[Any] = []
    for item in as_list(a) + as_list(b):
        if item not in out:
            out.append(item)
    return out


_LIST_FIELDS = ("tags", "aliases")


def merge_frontmatter(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """New values win; `tags` and `aliases` are unioned (old order first)."""
    merged = dict(old)
    for key, value in new.items():
        if key in _LIST_FIELDS and key in merged:
            merged[key] = _list_union(merged[key], value)
        else:
            merged[key] = value
    return merged


def compose(meta: dict[str, Any] | None, body: str) -> str:
    if not body.endswith("\n") and body:
        body += "\n"
    if meta is None:
        return body
    return "---\n" + fm.dump(meta) + "---\n" + (body if body.startswith("\n") or not body else "\n" + body)


def frontmatter_strings(value: Any) -> Iterator[str]:
    """Every key and string value in a frontmatter tree."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from frontmatter_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from frontmatter_strings(v)
    elif isinstance(value, str):
        yield value
