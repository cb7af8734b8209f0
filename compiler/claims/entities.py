"""The entity registry: which people, projects, concepts, decisions and core pages exist,
and how a subject someone typed resolves to exactly one of them.

Entity ids are `family:slug`. Canonical pages live at fixed paths:

    person   people/<slug>.md          concept  concepts/<slug>.md
    project  projects/<slug>/state.md  decision decisions/<slug>.md
    core     core/<slug>.md

A project kept by hand as one page, `projects/<slug>.md`, is that project (its page takes
the claims) unless `projects/<slug>/state.md` exists too: a write must not start a second
page that would stand for the project and hide the first.

Resolution, case-insensitive, never fuzzy: an exact id (`person:alex`), a corpus path
(`people/alex.md`), or a slug, title or alias; failing those, one word of one person's
title (a first or last name: "Tom" is `people/tom-berg.md`, "# Tom Berg"), ignoring
case and accents. `family:Name` restricts the search to one family. No match or several
matches is an error that names the candidates; a name two people share names those two.

Near matches (an unknown subject's suggestions) rank a name that shares a whole word
with the subject before one merely spelled alike; `UnknownSubject.best` is the one
candidate that is clearly the one meant, or None.
"""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..markdown import frontmatter as fm
from ..locks import at_fork_in_child
from ..model import Warning_
from .errors import AmbiguousSubject, InvalidClaim, UnknownSubject
from .log import valid_entity_id
from .text_rules import one_line

FAMILIES = ("person", "project", "concept", "decision", "core")
CREATABLE = ("project", "concept", "decision")  # person and core need explicit creation
FAMILY_NAMES = {
    "person": "person", "people": "person", "persons": "person",
    "project": "project", "projects": "project",
    "concept": "concept", "concepts": "concept",
    "decision": "decision", "decisions": "decision",
    "core": "core",
}
_FOLDERS = {"person": "people", "concept": "concepts", "decision": "decisions", "core": "core"}
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
MAX_SUBJECT = 300
_SLUGGY = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
# A name's word, folded: letters, joined by apostrophes or hyphens ("o'brien", "jean-luc").
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")
# Letters NFKD does not take apart: "Søren" is typed "Soren" too.
_PLAIN = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
                        "\u2019": "'", "\u2018": "'", "\u2010": "-", "\u2011": "-"})
NEAR_CUTOFF = 0.6  # a near match's similarity (difflib ratio), 0.8 when either name is short
CLEAR = 0.8  # how alike a name must be to be clearly the one meant (without a shared word)
MARGIN = 0.15  # and how much more alike than the runner-up


def entity_path(family: str, slug: str) -> str:
    if family == "project":
        return f"projects/{slug}/state.md"
    return f"{_FOLDERS[family]}/{slug}.md"


def entity_of_path(rel: str) -> tuple[str, str] | None:
    parts = rel.split("/")
    if len(parts) == 3 and parts[0] == "projects" and parts[2] == "state.md":
        return "project", parts[1]
    if len(parts) == 2 and parts[0] == "projects" and parts[1].endswith(".md"):
        return "project", parts[1][:-3]
    if len(parts) == 2 and parts[1].endswith(".md"):
        for family, folder in _FOLDERS.items():
            if parts[0] == folder:
                return family, parts[1][:-3]
    return None


def slugify(name: str) -> str:
    """`My New Project!` -> `my-new-project`. Raises InvalidClaim when nothing is left."""
    text = unicodedata.normalize("NFKC", one_line(name)).lower()
    text = re.sub(r"[^\w]+|_", "-", text).strip("-")
    if len(text) > 80:
        text = text[:80].rsplit("-", 1)[0] or text[:80]
    if not text:
        raise InvalidClaim(f"cannot make a file name from {name[:60]!r}")
    return text


def _key(text: str) -> str:
    return unicodedata.normalize("NFKC", one_line(text)).casefold()


def _fold(text: str) -> str:
    """`_key` without accents: "Zoë Müller" and "zoe muller" fold alike."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", one_line(text)) if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare.casefold().translate(_PLAIN))


def name_words(text: str) -> set[str]:
    """The folded words of a name, a hyphenated one whole and in parts: "Jean-Luc Picard"
    -> {"jean-luc", "jean", "luc", "picard"}. Single letters (initials) are not words."""
    out: set[str] = set()
    for m in _WORD.finditer(_fold(text)):
        out.update(w for w in (m.group(0), *m.group(0).split("-")) if len(w) > 1)
    return out


@dataclass(frozen=True)
class Entity:
    id: str
    family: str
    slug: str
    path: str
    title: str
    aliases: tuple[str, ...] = ()
    exists: bool = True

    def as_dict(self) -> dict:
        return {"id": self.id, "family": self.family, "slug": self.slug, "path": self.path,
                "title": self.title, "aliases": list(self.aliases), "exists": self.exists}


def read_title(text: str, fallback: str) -> tuple[str, tuple[str, ...], str | None]:
    """(title, aliases, problem) from a page's text, the way the parse stage does it."""
    meta: dict = {}
    problem = None
    try:
        raw, body, _ = fm.split(text)
        if raw is not None:
            meta = fm.load(raw)
    except fm.FrontmatterError as exc:
        problem = f"malformed frontmatter: {exc}"
        body = text
    title = meta.get("title")
    if not (isinstance(title, (str, int, float)) and str(title).strip()):
        m = _H1.search(body)
        title = m.group(1).strip() if m else fallback
    aliases = meta.get("aliases")
    if isinstance(aliases, str):
        aliases = [a for a in re.split(r"[,\n]", aliases)]
    if not isinstance(aliases, list):
        aliases = []
    clean = tuple(dict.fromkeys(str(a).strip() for a in aliases if isinstance(a, (str, int, float)) and str(a).strip()))
    return str(title).strip(), clean, problem


@dataclass
class Registry:
    root: Path
    entities: dict[str, Entity] = field(default_factory=dict)
    warnings: list[Warning_] = field(default_factory=list)

    @classmethod
    def load(cls, root: Path) -> "Registry":
        reg = cls(Path(root))
        for rel in _candidate_paths(reg.root):
            fam_slug = entity_of_path(rel)
            if fam_slug is None:
                continue
            family, slug = fam_slug
            eid = f"{family}:{slug}"
            full = reg.root / rel
            if full.is_symlink():
                reg.warnings.append(Warning_(rel, "entity page is a symlink; not used for claims", code="claims-entity"))
                continue
            if not valid_entity_id(eid):
                reg.warnings.append(Warning_(rel, "file name cannot be an entity id; not used for claims", code="claims-entity"))
                continue
            try:
                title, aliases, problem = _page_names(full, slug)
            except OSError:
                continue
            if problem:
                reg.warnings.append(Warning_(rel, problem, code="claims-entity"))
            reg.entities[eid] = Entity(eid, family, slug, rel, title, aliases)
        return reg

    def get(self, eid: str) -> Entity | None:
        if eid in self.entities:
            return self.entities[eid]
        folded = eid.casefold()
        hits = [e for k, e in self.entities.items() if k.casefold() == folded]
        return hits[0] if len(hits) == 1 else None

    def by_path(self, rel: str) -> Entity | None:
        for e in self.entities.values():
            if e.path == rel:
                return e
        return None

    def resolve(self, subject: str) -> Entity:
        """Exactly one entity for `subject`, or UnknownSubject / AmbiguousSubject."""
        if not isinstance(subject, str) or not one_line(subject):
            raise InvalidClaim("subject is empty")
        if len(subject) > MAX_SUBJECT:
            raise InvalidClaim(f"subject is {len(subject):,} characters; the limit is {MAX_SUBJECT}")
        s = one_line(subject)
        if s.startswith("[[") and s.endswith("]]"):
            s = s[2:-2].split("|", 1)[0].strip()
        if s.endswith(".md"):
            hit = self.by_path(s.lstrip("./").lstrip("/"))
            if hit:
                return hit
        family = None
        name = s
        if ":" in s:
            prefix, rest = s.split(":", 1)
            if prefix.strip().lower() in FAMILY_NAMES and rest.strip():
                family, name = FAMILY_NAMES[prefix.strip().lower()], rest.strip()
                exact = self.get(f"{family}:{name}")
                if exact:
                    return exact
        pool = [e for e in self.entities.values() if family is None or e.family == family]
        key = _key(name)
        hits = sorted(
            {e.id for e in pool if key in {_key(e.slug), _key(e.title), *(_key(a) for a in e.aliases)}}
        )
        if len(hits) == 1:
            return self.entities[hits[0]]
        if hits:
            raise AmbiguousSubject(
                f"subject {s!r} matches {len(hits)} entities: {', '.join(self._label(h) for h in hits)}; "
                "use the entity id (family:slug)", hits)
        people = self.title_word(name, pool)
        if len(people) == 1:
            return self.entities[people[0]]
        if people:
            raise AmbiguousSubject(
                f"{s!r} is a name of {len(people)} people: {', '.join(self._label(h) for h in people)}; "
                "pick the one you mean and send its id (family:slug)", people)
        scored = self._near(name, pool)
        near = [eid for eid, _, _ in scored]
        best = _clear_best(scored)
        if best:
            rest = [h for h in near if h != best]
            hint = f"; did you mean {self._label(best)}?" + (
                f" (less alike: {', '.join(self._label(h) for h in rest)})" if rest else "")
        elif near:
            hint = (f"; did you mean one of {', '.join(self._label(h) for h in near)}? "
                    "none is clearly the one; pick one and name it by its id (family:slug)")
        else:
            hint = ""
        where = f" among {family} entities" if family else ""
        # Neutral words: this reaches the command line and HTTP clients alike; each caller
        # names its own way to create the entity (`create_path` says where its page goes).
        create, create_path = "", None
        if family in CREATABLE:
            create = f" (adding a claim to {family}:{name} creates it)"
        elif family:
            create_path = entity_path(family, slugify(name))
            create = f" ({create_path} does not exist yet)"
        exc = UnknownSubject(f"no entity matches {s!r}{where}{hint}{create}", near)
        exc.create_path = create_path
        exc.best = best  # the candidate to send, when one is clearly meant; else None
        raise exc

    def _label(self, eid: str) -> str:
        e = self.entities[eid]
        return f"{eid} ({e.title})" if e.title.casefold() != e.slug.casefold() else eid

    def title_word(self, name: str, pool: list[Entity]) -> list[str]:
        """The people in `pool` one of whose title's words `name` is, whole ("Tom" of
        "Tom Berg", "Muller" of "Zoë Müller"); [] when `name` is not one word."""
        word = _fold(name)
        if len(word) < 2 or not _WORD.fullmatch(word):
            return []
        return sorted(e.id for e in pool if e.family == "person" and word in name_words(e.title))

    def near(self, name: str, pool: list[Entity]) -> list[str]:
        """Near matches of `name`, best first (see `_near`)."""
        return [eid for eid, _, _ in self._near(name, pool)]

    def _near(self, name: str, pool: list[Entity]) -> list[tuple[str, int, float]]:
        """(id, words shared with `name`, similarity) of the entities near `name`, at most 8:
        those sharing a whole word of a name (slug, title, alias) first, more words before
        fewer, then the most alike (difflib ratio over the folded names). A name spelled
        alike counts only when it is long enough for the likeness to mean something: "Tom"
        and the alias "Oma" share two letters, not a name."""
        key = _fold(name)
        words = name_words(name)
        scored = []
        for e in pool:
            names = {_fold(n) for n in (e.slug, e.title, e.id, *e.aliases)}
            own = set().union(*(name_words(n) for n in (e.slug.replace("-", " "), e.title, *e.aliases)))
            shared = len(words & own)
            ratios = [(_ratio(key, n), n) for n in names]
            ratio = max((r for r, _ in ratios), default=0.0)
            alike = any(r >= (CLEAR if min(len(key), len(n)) <= 4 else NEAR_CUTOFF) for r, n in ratios)
            inside = len(key) >= 3 and (key in _fold(e.title) or key in _fold(e.slug))
            if shared or inside or alike:
                scored.append((e.id, shared, ratio))
        scored.sort(key=lambda t: (-t[1], -t[2], t[0]))
        return scored[:8]

    def plan(self, subject: str) -> Entity:
        """The entity a `family:Name` subject would create (or the existing one)."""
        s = one_line(subject)
        if ":" not in s or s.split(":", 1)[0].strip().lower() not in FAMILY_NAMES:
            raise InvalidClaim(f"to create an entity, name it as family:name (e.g. project:{slugify(s) if s else 'atlas'})")
        prefix, name = s.split(":", 1)
        family = FAMILY_NAMES[prefix.strip().lower()]
        name = name.strip()
        slug = slugify(name)
        eid = f"{family}:{slug}"
        existing = self.get(eid)
        if existing:
            return existing
        if not valid_entity_id(eid):
            raise InvalidClaim(f"cannot create entity {eid!r}")
        title = name if not _SLUGGY.match(name) else re.sub(r"[-_]+", " ", name).strip().capitalize()
        return Entity(eid, family, slug, entity_path(family, slug), title, (), exists=False)


def _ratio(a: str, b: str) -> float:
    m = difflib.SequenceMatcher(None, a, b)
    return m.ratio() if m.real_quick_ratio() >= NEAR_CUTOFF and m.quick_ratio() >= NEAR_CUTOFF else 0.0


def _clear_best(scored: list[tuple[str, int, float]]) -> str | None:
    """The first near match when it is clearly the one meant: it shares more whole words
    with the subject than the runner-up, or (sharing as many) it is spelled all but the
    same and much more alike. Else None: the caller picks."""
    if not scored:
        return None
    eid, shared, ratio = scored[0]
    if len(scored) == 1:
        return eid if shared or ratio >= CLEAR else None
    _, shared2, ratio2 = scored[1]
    if shared > shared2:
        return eid
    return eid if shared == shared2 and ratio >= CLEAR and ratio - ratio2 >= MARGIN else None


_names_cache: dict[str, tuple[tuple, tuple[str, tuple[str, ...], str | None]]] = {}
_names_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _names_lock
    _names_lock = threading.Lock()


at_fork_in_child(_reset_after_fork)


def _page_names(full: Path, slug: str) -> tuple[str, tuple[str, ...], str | None]:
    """read_title() of a page, cached in memory until the file changes."""
    st = full.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, slug)
    with _names_lock:
        hit = _names_cache.get(str(full))
    if hit is not None and hit[0] == key:
        return hit[1]
    value = read_title(full.read_bytes().decode("utf-8", "replace"), slug)
    with _names_lock:
        _names_cache[str(full)] = (key, value)
    return value


def _candidate_paths(root: Path) -> list[str]:
    out: list[str] = []
    for family, folder in _FOLDERS.items():
        d = root / folder
        if d.is_dir() and not d.is_symlink():
            # `<stem>.tombstone.md` records a forgotten page; it is not an entity of its own.
            out.extend(f"{folder}/{p.name}" for p in sorted(d.iterdir())
                       if p.name.endswith(".md") and not p.name.endswith(".tombstone.md")
                       and not p.name.startswith(".") and (p.is_file() or p.is_symlink()))
    d = root / "projects"
    if d.is_dir() and not d.is_symlink():
        folders = set()
        for p in sorted(d.iterdir()):
            if not p.name.startswith(".") and p.is_dir() and not p.is_symlink() and ((p / "state.md").is_file() or (p / "state.md").is_symlink()):
                out.append(f"projects/{p.name}/state.md")
                folders.add(p.name)
        out.extend(f"projects/{p.name}" for p in sorted(d.iterdir())
                   if p.name.endswith(".md") and not p.name.endswith(".tombstone.md") and not p.name.startswith(".")
                   and p.name[:-3] not in folders and (p.is_file() or p.is_symlink()))
    return out


def entity_from_log(reg: Registry, eid: str, events: list) -> Entity:
    """The registered entity, or (page missing) one rebuilt from its claim events."""
    hit = reg.entities.get(eid)
    if hit is not None:
        return hit
    family, slug = eid.split(":", 1)
    title = next((e.data["entity_title"].strip() for e in events
                  if isinstance(e.data.get("entity_title"), str) and e.data["entity_title"].strip()), slug)
    return Entity(eid, family, slug, entity_path(family, slug), title, (), exists=False)
