"""The sidebar's folder tree: every folder that holds a document, as nested lists.

Folders only, not documents: a new page in an existing folder leaves every other page
as it was; a folder that appears or goes re-renders the navigation of every page, as a
new type does (`state`). A corpus with more than `MAX_FOLDERS` folders shows no tree
(the Folders page lists them all).
"""

from __future__ import annotations

from markupsafe import Markup, escape

MAX_FOLDERS = 400

_CACHE: dict[tuple, Markup] = {}


def all_folders(doc_folders: "list[str] | set[str]") -> list[str]:
    """Every folder holding a document, directly or below it (no top folder "")."""
    out: set[str] = set()
    for f in doc_folders:
        parts = f.split("/") if f else []
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return sorted(out)


def tree_html(folders: tuple[str, ...], root: str, url_of) -> Markup:
    """Nested `<ul>`s of `folders` (sorted), links relative to `root`; one rendering per
    page depth."""
    if not folders or len(folders) > MAX_FOLDERS:
        return Markup("")
    key = (folders, root)
    html = _CACHE.get(key)
    if html is not None:
        return html
    children: dict[str, list[str]] = {}
    for f in folders:
        children.setdefault(f.rpartition("/")[0], []).append(f)

    def items(parent: str) -> str:
        parts = []
        for f in children.get(parent, []):
            link = f'<a href="{escape(root + url_of(f))}">{escape(f.rpartition("/")[2])}</a>'
            if f in children:
                parts.append(f"<li><details><summary>{link}</summary><ul>{items(f)}</ul></details></li>")
            else:
                parts.append(f"<li>{link}</li>")
        return "".join(parts)

    if len(_CACHE) > 64:
        _CACHE.clear()
    html = _CACHE[key] = Markup(f'<ul class="tree">{items("")}</ul>')
    return html
