"""A person's, project's or concept's page: the names it goes by, and its lines led by
the page's name when they do not say it."""

from __future__ import annotations

from .facts import Page
from .plain import STOP, words
from .terms import stem

TYPES = ("person", "project", "concept")
FOLDERS = ("people/", "projects/", "concepts/")


def names_of(page: Page) -> list[str]:
    """The page's title and aliases when it is an entity's page, else none."""
    kind = str(page.meta.get("type") or "").casefold()
    if not page.title or not (kind in TYPES or page.path.startswith(FOLDERS)):
        return []
    aliases = page.meta.get("aliases")
    return [page.title, *(a for a in aliases if isinstance(a, str))] if isinstance(aliases, list) else [page.title]


def entity_names(page: Page) -> frozenset[str]:
    """The stems of an entity page's names (none for other pages)."""
    return frozenset(stem(w) for n in names_of(page) for w in words(n))


def named(page: Page, text: str) -> str:
    """An entity page's line led by the page's name when it does not say it: "Field
    technician. Collects the transects" is about nobody an agent can tell; "Tomás Ibarra:
    Field technician. ..." is about him."""
    names_ = names_of(page) if text else []
    said = {stem(w) for w in words(text)}
    if not names_ or any(stem(w) in said for n in names_ for w in words(n) if len(w) > 2 and w not in STOP):
        return text
    return f"{page.title}: {text}"
