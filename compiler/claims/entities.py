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
(`people/alex.md`), or a slug, title or alias. `family:Name` restricts the search to
one family. No match or several matches is an error that names the candidates.
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
        near = self.near(name, pool)
        hint = f"; did you mean {', '.join(self._label(h) for h in near)}?" if near else ""
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
        raise exc

    def _label(self, eid: str) -> str:
        e = self.entities[eid]
        return f"{eid} ({e.title})" if e.title.casefold() != e.slug.casefold() else eid

    def near(self, name: str, pool: list[Entity]) -> list[str]:
        key = _key(name)
        names: dict[str, set[str]] = {}
        for e in pool:
            for n in (e.slug, e.title, e.id, *e.aliases):
                names.setdefault(_key(n), set()).add(e.id)
        close = difflib.get_close_matches(key, list(names), n=5, cutoff=0.6)
        out: list[str] = []
        for c in close:
            out.extend(sorted(names[c]))
        if len(key) >= 3:
            out.extend(sorted(e.id for e in pool if key in _key(e.title) or key in _key(e.slug)))
        return list(dict.fromkeys(out))[:8]

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
