"""What depends on what: the facts about a document that other outputs show.

Each document is summarised as *facets* (title, type, tags, links, ...). After an
update, the facets that changed decide which pages must be re-emitted: a body edit
touches the document's own page and the search data; a title change also touches
every page that shows that title; a new type touches the navigation of every page.
Getting these rules wrong shows up as an incremental build that differs from a clean
one, which the property tests check.
"""

from __future__ import annotations

from typing import Any

from ..model import Document

FACETS = ("content", "title", "type", "status", "date", "tags", "meta", "links", "headings", "excerpt", "folder",
          "search_text")

# Facets only rendering produces. Emitters that show none of them can run while the
# documents are still being rendered (a clean build overlaps the two). Which emitter shows
# which facets: `emitters.EMITTERS`.
RENDER_FACETS = {"excerpt", "search_text"}


def facets(d: Document) -> dict[str, Any]:
    return {
        "content": d.hash,
        "title": d.title,
        "type": d.type,
        "status": d.status,
        "date": d.sort_date,
        "tags": list(d.tags),
        "meta": [bool(d.frontmatter.get("pinned") is True), d.canonical],
        "links": [[l.target, l.heading, l.line, l.kind, l.resolved, list(l.candidates)] for l in d.links],
        "headings": [list(h) for h in d.headings],
        "excerpt": d.excerpt,
        "folder": d.folder,
        "search_text": d.search_text,  # the document's own string: no copy is kept
    }


def changed_facets(old: dict[str, Any] | None, new: dict[str, Any] | None) -> set[str]:
    if old is None or new is None:
        return set(FACETS) | {"exists"} if (old is None) != (new is None) else set()
    return {k for k in FACETS if old.get(k) != new.get(k)}

