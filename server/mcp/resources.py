"""MCP resources: the corpus's markdown documents, by corpus path.

A document's URI is `commonplace:///<corpus path>` (percent-encoded), for example
`commonplace:///core/identity.md`; the template `commonplace:///{+path}` names them all.
The list is the corpus folder as the build sees it (hidden folders and the site output
left out), sorted by path, in pages of `PAGE` with an opaque cursor. Reading goes through
`dory_get`, so it obeys the same path rules and answers what `/v1/get` answers.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..errors import ApiError
from ..registry import BY_NAME
from .backend import Backend

SCHEME = "commonplace:///"
TEMPLATE = SCHEME + "{+path}"
MIME = "text/markdown"
PAGE = 200
_HEAD_BYTES = 8192  # enough for the frontmatter and the first heading of nearly any page


def uri_of(path: str) -> str:
    return SCHEME + quote(path, safe="/")


def path_of(uri: str) -> str:
    if not uri.startswith(SCHEME):
        raise MCPError(types.INVALID_PARAMS, f"not a commonplace document URI: {uri[:200]!r} "
                                             f"(expected {SCHEME}<corpus path>)")
    return unquote(uri[len(SCHEME):])


def _title(full: os.PathLike[str] | str, fallback: str) -> str:
    """The frontmatter title, else the first '# ' heading, else the file name."""
    from commonplace.compiler.markdown import frontmatter as fm

    try:
        with open(full, "rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return fallback
    try:
        raw, body, _ = fm.split(head)
    except fm.FrontmatterError:  # longer than the head read, or never closed
        return fallback
    try:
        meta = fm.load(raw) if raw is not None else {}
    except Exception:  # noqa: BLE001 - broken frontmatter: the heading may still say it
        meta = {}
    title = meta.get("title") if isinstance(meta, dict) else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    for line in body.splitlines():
        if line.startswith("# ") and line[2:].strip():
            return line[2:].strip()
    return fallback


def list_page(backend: Backend, cursor: str | None) -> types.ListResourcesResult:
    from commonplace.compiler.corpus.scan import scan

    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        raise MCPError(types.INVALID_PARAMS, "invalid cursor") from None
    files, _ = scan(backend.root, backend.out)
    if start < 0 or start > len(files):
        raise MCPError(types.INVALID_PARAMS, "invalid cursor")
    page = files[start:start + PAGE]
    resources = []
    for f in page:
        try:
            size: int | None = f.abspath.stat().st_size
        except OSError:
            size = None
        name = f.path.rsplit("/", 1)[-1]
        resources.append(types.Resource(uri=uri_of(f.path), name=f.path, title=_title(f.abspath, name),
                                        mime_type=MIME, size=size))
    end = start + len(page)
    return types.ListResourcesResult(resources=resources, next_cursor=str(end) if end < len(files) else None)


def templates() -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[
        types.ResourceTemplate(uri_template=TEMPLATE, name="document", title="A document of the corpus",
                               description="A markdown document by its corpus-relative path, as dory_search "
                                           "returns it (e.g. core/identity.md).", mime_type=MIME)])


def read(backend: Backend, uri: str, actor: str | None = None) -> types.ReadResourceResult:
    path = path_of(uri)
    try:
        data: dict[str, Any] = backend.call(BY_NAME["get"], {"path": path}, actor)
    except ApiError as exc:
        code = types.INVALID_PARAMS if exc.status in (400, 404, 422) else types.INTERNAL_ERROR
        raise MCPError(code, exc.message) from None
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=MIME,
                                                                         text=str(data.get("content", "")))])
