"""The document model every stage shares.

A `Document` is one markdown file of the corpus after parsing. Later stages add to it
(resolved links, rendered HTML) but never re-read the file.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Folder prefix -> default `type`. Longest prefix wins (logs/daily before logs).
FOLDER_TYPES: dict[str, str] = {
    "core/": "core",
    "people/": "person",
    "projects/": "project",
    "concepts/": "concept",
    "decisions/": "decision",
    "logs/daily/": "daily",
    "logs/sessions/": "session",
    "sources/": "source",
    "references/": "reference",
    "inbox/": "capture",
    "wiki/": "wiki",
}

STATUSES = ("active", "done", "interrupted", "paused", "pending", "raw", "superseded")
# Dory's other names for them (its writes and its reports use `draft`, `final`...): valid too.
STATUS_ALIASES = {
    "abandoned": "superseded", "archive": "superseded", "archived": "superseded",
    "actionable": "pending", "backlog": "pending", "draft": "pending", "idea": "pending", "ideation": "pending",
    "planning": "pending", "research": "pending", "complete": "done", "deployed": "done", "reference": "done",
    "in-progress": "active", "urgent": "active", "inbox": "raw", "parked": "paused", "someday": "paused",
}

# Where derived state lives inside a corpus; never scanned, rendered or served.
STATE_DIR = ".commonplace"
# Derived state elsewhere (`commonplace --state-dir DIR`, or `state_dir` under [site] in
# commonplace.toml): a synced vault then holds no index files.
STATE_ENV = "COMMONPLACE_STATE_DIR"


def state_path(root: "str | os.PathLike[str]") -> "Path":
    """The folder holding a corpus's derived state (indexes, manifest, tokens, locks):
    `$COMMONPLACE_STATE_DIR`, else the corpus's `state_dir` setting (relative to the
    corpus), else `<corpus>/.commonplace`."""
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    root = Path(root)
    try:
        st = os.stat(root / "commonplace.toml")
    except OSError:
        return root / STATE_DIR
    configured = _configured(str(root.resolve()), st.st_mtime_ns, st.st_size)
    return Path(configured) if configured else root / STATE_DIR


@functools.lru_cache(maxsize=64)
def _configured(root: str, _mtime: int, _size: int) -> str:
    import tomllib

    try:
        data = tomllib.loads((Path(root) / "commonplace.toml").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""  # the build reports a bad settings file
    site = data.get("site")
    value = site.get("state_dir") if isinstance(site, dict) else None
    if not isinstance(value, str) or not value.strip():
        return ""
    return str((Path(root) / Path(value.strip()).expanduser()).resolve())


def content_hash(data: bytes) -> str:
    """`Document.hash` and the hash write requests check: "sha256:<hex>" of the raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def type_for_path(path: str) -> str:
    """Default document type from its folder (design: corpus conventions)."""
    for prefix in sorted(FOLDER_TYPES, key=len, reverse=True):
        if path.startswith(prefix):
            return FOLDER_TYPES[prefix]
    return "note"


def is_session_path(path: str) -> bool:
    """Raw session transcripts are kept out of durable search by default."""
    return path.startswith("logs/sessions/")


@dataclass
class Warning_:
    """A problem found while building: never fatal, always names the file."""

    path: str
    message: str
    line: int | None = None
    code: str = "warning"

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class Link:
    """One outgoing link as written in the source, plus where it resolved."""

    target: str  # as written, without `#heading` and `|label`
    label: str | None = None
    heading: str | None = None
    line: int = 0  # 1-based line in the source file
    kind: str = "wiki"  # wiki | md
    resolved: str | None = None  # corpus-relative path of the target document
    candidates: tuple[str, ...] = ()  # set when the target is ambiguous

    @property
    def broken(self) -> bool:
        return self.resolved is None

    def __reduce__(self) -> tuple:
        # Build workers send every link to the parent: positional fields pickle in well
        # under half the time of a dataclass's state dict (measured on 50,000 links).
        return (Link, (self.target, self.label, self.heading, self.line, self.kind, self.resolved, self.candidates))


@dataclass
class Document:
    path: str  # corpus-relative POSIX path, e.g. "people/alex.md"
    text: str  # whole decoded source
    body: str  # markdown after the frontmatter
    body_line: int  # 1-based source line where `body` starts
    frontmatter: dict[str, Any]
    title: str
    type: str
    status: str | None
    tags: list[str]
    aliases: list[str]
    created: str | None
    updated: str | None
    date: str | None
    hash: str  # "sha256:<hex>" of the raw bytes
    links: list[Link] = field(default_factory=list)
    title_from_frontmatter: bool = False
    html: str = ""  # rendered body, filled by the render stage
    excerpt: str = ""  # plain text of the rendered body (first 600 characters)
    # All of it by section, for the site's offline search: [[anchor, heading, text], ...]
    # as JSON in UTF-8, the bytes its text shard holds (site_search.sections_json).
    search_text: bytes = field(default=b"", repr=False)
    # Without a frontmatter date: the last commit or modification day (dates.fill).
    file_date: str | None = None
    title_anchor: str = ""  # anchor of a leading `# Title` the page shows as its title
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, text, anchor)
    # Parse output kept until the render stage, then dropped to free memory.
    # (TRANSIENT_FIELDS below lists these four.)
    tokens: list | None = field(default=None, repr=False, compare=False)
    md_env: dict | None = field(default=None, repr=False, compare=False)
    # Or, in a build, the body rendered but for its links (`render.draft_document`).
    draft: str | None = field(default=None, repr=False, compare=False)
    deferred: list | None = field(default=None, repr=False, compare=False)

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def url(self) -> str:
        """Site-relative URL of the document page (pretty URL, file on disk)."""
        return page_url(self.path)

    @property
    def sort_date(self) -> str | None:
        """The date recent-changes and feeds use: updated, then date, then created, then
        the file's own date (dates.py)."""
        return self.updated or self.date or self.created or self.file_date

    @property
    def canonical(self) -> bool:
        return bool(self.frontmatter.get("canonical"))

    @property
    def is_session(self) -> bool:
        return is_session_path(self.path)


# `Document` fields that only live between parsing and rendering: a build worker keeps
# them (they never travel to the parent) and the manifest never saves them.
TRANSIENT_FIELDS = ("tokens", "md_env", "draft", "deferred")


# Names the site writes for itself at its top level; `_/` holds the rest (static files,
# generated pages, search data). A document may not take a page there.
SITE_TOP_FILES = frozenset({"index.html", "404.html", "feed.xml", "graph.json"})


def reserved_path(path: str) -> str | None:
    """Why a document at corpus path `path` cannot have a page (its page would replace or
    collide with one the site generates), or None. Compared case-insensitively, as a
    site may be copied to a case-insensitive disk."""
    base = path[:-3] if path.endswith(".md") else path
    parts = [p.lower() for p in base.split("/")]
    if parts[0] == "_":
        return "'_/' is the site's own folder (its pages, scripts and search data)"
    if parts[0] in SITE_TOP_FILES:
        return f"{parts[0]!r} is a file the site generates"
    if "index.html" in parts:
        return "a folder or file named 'index.html' collides with a page of the site"
    return None


def page_url(path: str) -> str:
    """`people/alex.md` -> `people/alex/index.html` (works from disk and when served)."""
    base = path[:-3] if path.endswith(".md") else path
    folder, _, name = base.rpartition("/")
    if name and not name.strip("."):  # `..md`: no folder may be named "." or ".." (nor start so: hidden)
        base = (folder + "/" if folder else "") + "_" + "dot" * len(name)
    return f"{base}/index.html"
