"""The people a prompt is about, for active memory (and research): the pages its names
name, the names that are people's (a filter on the evidence), and, for a prompt about
food, every person whose page states an allergy or a diet."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from commonplace.compiler.context.caution import cautions
from commonplace.compiler.context.evidence import Evidence, gather
from commonplace.compiler.context.terms import stem


NAMED_PAGES = 3  # people pages a prompt's names bring in


def named_people(docs: Iterable[str], query: str, have: set[str], allows: Callable[[str, bool], bool]) -> list[dict[str, Any]]:
    """The pages of the people the prompt names (a word of the page's name is a name of
    the prompt) that the search did not return: "Leo's been invited to a party, what should
    I tell the host?" shares only "Leo" with his page, and a words-only search ranked
    pages about parties above it. The name filter (`rerank`) then puts them with the
    other sources that name him."""
    asked = asked_names(query)
    if not asked:
        return []
    _, by = _people(_people_paths(docs))
    out = [{"path": p, "score_normalized": 0.0} for p in sorted(by)
           if asked & by[p] and p not in have and allows(p, False)]
    return out[:NAMED_PAGES]


_PATHS: dict[int, tuple[int, tuple[str, ...]]] = {}  # id(docs) -> (its size, its people pages)


def _people_paths(docs: Iterable[str]) -> tuple[str, ...]:
    """The people pages among `docs`, remembered for the same documents while their count
    holds and every page remembered is still there (a rename removes one): reading 10,000
    paths took 9 ms of a call at 10,000 documents, several times a call."""
    hit = _PATHS.get(id(docs))
    size = len(docs) if hasattr(docs, "__len__") else -1  # type: ignore[arg-type]
    if hit is not None and hit[0] == size >= 0 and all(p in docs for p in hit[1]):
        return hit[1]
    paths = tuple(p for p in docs if p.startswith("people/"))
    _PATHS.clear()
    _PATHS[id(docs)] = (size, paths)
    return paths


@lru_cache(maxsize=8)
def _people(paths: tuple[str, ...]) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """(every word of the people pages' names, stemmed; each page's), made once per set of
    pages: stemming 2,000 names at every call took 4 ms of one at 10,000 documents."""
    by = {p: page_name(p) for p in paths}
    return frozenset().union(*by.values()) if by else frozenset(), by


def asked_names(query: str) -> set[str]:
    """The stems of the prompt's capitalised words, its first word too ("Leo's been
    invited..."), without a possessive "'s": what may name a person's page."""
    return {stem(re.sub(r"['’]s$", "", w)) for w in re.findall(r"\b[A-Z][\w'’-]+", query)}


def names_page(asked: set[str], path: str) -> bool:
    return bool(asked & page_name(path))


@lru_cache(maxsize=1 << 14)
def page_name(path: str) -> frozenset[str]:
    """The stemmed words of a people page's name, from its path (`people/ruth-abernathy.md`)."""
    return frozenset(stem(w) for w in path[len("people/"):-3].split("-"))


PEOPLE_READ = 2000  # people pages read for a prompt about food, at most


def people_with_cautions(docs: Mapping[str, Any], durable: list[Evidence],
                         allows: Callable[[str, bool], bool], read: Any) -> list[Evidence]:
    """The people pages, found or not, that state an allergy or a diet (`caution`): a
    prompt about food ("what can I put in the kids' lunchboxes?") concerns people it does
    not name, and a words-only search (the query model loading) finds none of them."""
    have = {e.path for e in durable}
    paths = [p for p in sorted(docs) if p.startswith("people/") and p not in have
             and allows(p, False)][:PEOPLE_READ]
    found = []
    for p in paths:
        text, _ = read(p)
        if text and cautions(text):
            found.append({"path": p, "score_normalized": 0.0})
    return gather(found, "", read) if found else []


def person_names(docs: Mapping[str, Any] | Iterable[str], asked: list[str]) -> list[str]:
    """The prompt's names for the name filter. When one names a person's page, a brand's
    name beside it is no one to filter by ("Does Priya prefer GitHub review comments?":
    "GitHub" let another person's line about GitHub suggestions ahead of Priya's own), and
    a person asked about by their surname ("Mrs Abernathy") brings their other names
    (title, aliases: the daily note calls her Ruth). A first name is kept as it is: it may
    be another person's page of the same first name (at 10,000 documents, dropping the
    prompt's other names for it cost the dialogue corpus 2.8 points of evidence)."""
    pages = _people_paths(docs)
    people, _ = _people(pages)
    theirs = [n for n in asked if stem(n) in people]
    if not theirs:
        return asked
    kept = [n for n in asked if n in theirs or not _BRAND.fullmatch(n) and n.casefold() not in _TITLES]
    surnames = {stem(n) for n in theirs}
    more: list[str] = []
    for p in pages:
        if "-" in p and stem(p[len("people/"):-3].split("-")[-1]) in surnames:
            doc = docs.get(p) if isinstance(docs, Mapping) else None
            said = [str(getattr(doc, "title", "") or "")] + [str(a) for a in (getattr(doc, "aliases", None) or [])]
            more += [w for n in said for w in re.findall(r"[A-Z][\w'’-]+", n) if w.casefold() not in _TITLES]
    return list(dict.fromkeys(kept + more))


_BRAND = re.compile(r"[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}")  # GitHub, PostgreSQL, AWS: products, not people


_TITLES = frozenset(("mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame"))  # no name of anyone in particular
