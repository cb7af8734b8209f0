"""The corpus schema a write through the API follows (Dory's, `dory-contract.md` §2.3-2.4).

A file a write *creates* needs a `title` and a `type`; its frontmatter is normalised:
type aliases folded (`todo` -> capture), `status` defaulted by type and checked,
`canonical`, `source_kind` and `temperature` defaulted, dates cut to `YYYY-MM-DD`.
Files that already exist keep the frontmatter they have; only the fields a request sends
are checked. `route` picks where a new file goes: `auto/<name>.md` or a bare `<name>.md`
goes to its type's folder, an explicit path in one of Dory's folders must lie under its
type's folder (other folders take any type), `archive/` takes no
new files, and Dory's legacy folders (`daily/`, `weekly/`, `sessions/`, `resources/`) are
redirected.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

from ..model import STATUS_ALIASES
from .errors import InvalidInput

TYPES = frozenset((
    "capture", "briefing", "concept", "core", "daily", "decision", "digest-daily", "digest-weekly", "idea",
    "knowledge", "note", "person", "project", "reference", "report", "session", "slide", "source", "weekly", "wiki",
))
TYPE_ALIASES = {
    "action-item": "capture", "draft": "capture", "inbox": "capture", "overnight": "capture",
    "overnight-summary": "capture", "task": "capture", "todo": "capture",
    "analysis": "report", "strategy": "report",
    "content-idea": "idea", "strategic-idea": "idea", "tweet-idea": "idea",
    "daily-log": "daily", "digest": "digest-daily",
    "engagement-pattern": "knowledge", "preference": "knowledge", "saved": "knowledge", "tool": "knowledge",
    "link": "reference", "resource": "reference", "tweet-digest": "reference", "tweets": "reference",
    "product": "project", "session-archive": "session", "session-log": "session",
}
# `interrupted` is commonplace's (a session cut short); Dory's model allows it too.
STATUSES = frozenset(("active", "done", "paused", "pending", "raw", "superseded", "interrupted"))
ENUMS = {
    "area": frozenset(("coding", "writing", "marketing", "product", "design", "ops", "personal", "health",
                       "finance", "relationships", "sales")),
    "source_kind": frozenset(("canonical", "distilled", "extracted", "generated", "human", "imported", "legacy",
                              "recall-promotion", "research", "semantic", "web")),
    "temperature": frozenset(("hot", "warm", "cold")),
    "visibility": frozenset(("private", "internal", "public")),
    "sensitivity": frozenset(("personal", "financial", "legal", "contact", "credentials", "health", "none")),
}
BUCKETS = {
    "capture": "inbox", "briefing": "references/briefings", "concept": "concepts", "core": "core",
    "daily": "logs/daily", "decision": "decisions", "digest-daily": "digests/daily", "digest-weekly": "digests/weekly",
    "idea": "ideas", "knowledge": "knowledge", "note": "references/notes", "person": "people", "project": "projects",
    "reference": "references", "report": "references/reports", "session": "logs/sessions",
    "slide": "references/slides", "source": "sources/imported", "weekly": "logs/weekly", "wiki": "wiki",
}
_ROOTS = frozenset(b.split("/", 1)[0] for b in BUCKETS.values()) | {"archive"}
LEGACY_REDIRECTS = {"daily": "digests/daily", "weekly": "digests/weekly", "sessions": "logs/sessions",
                    "resources": "references/notes"}
_NOT_CANONICAL = frozenset(("reference", "report", "briefing", "slide", "note", "daily", "digest-daily", "session",
                            "weekly", "digest-weekly", "capture", "source", "wiki", "idea"))
_DATED = frozenset(("daily", "digest-daily", "session", "weekly", "digest-weekly"))
TIMELINE_MARKER = "<!-- TIMELINE: append-only below this line -->"


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def doc_type(value: Any) -> str:
    """A type as written ('Product  # comment', 'todo') -> one of TYPES, or InvalidInput."""
    raw = str(value).strip()
    for mark in ("#", "|", "\u2014"):
        i = raw.find(mark)
        if i > 0:
            raw = raw[:i].strip()
    t = raw.lower()
    t = TYPE_ALIASES.get(t, t)
    if t not in TYPES:
        raise InvalidInput(f"invalid frontmatter type: {str(value)[:80]}")
    return t


def status(value: Any) -> str:
    s = str(value).strip().lower()
    s = STATUS_ALIASES.get(s, s)
    if s.startswith("ready-to-"):
        s = "pending"
    if s not in STATUSES:
        raise InvalidInput(f"invalid status: {str(value)[:80]}")
    return s


def _bool(field: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in ("true", "false"):
        return s == "true"
    raise InvalidInput(f"invalid {field}: {str(value)[:80]}")


def _date(field: str, value: Any) -> str:
    raw = value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value).strip()
    try:
        return dt.date.fromisoformat(raw[:10]).isoformat()
    except ValueError:
        raise InvalidInput(f"invalid {field}: {str(value)[:80]}") from None


def type_of_path(rel: str) -> str | None:
    """The type a folder implies (the longest bucket that holds `rel`)."""
    best = None
    for t, bucket in BUCKETS.items():
        if rel.startswith(bucket + "/") and (best is None or len(bucket) > len(BUCKETS[best])):
            best = t
    return best


def require_new(meta: dict[str, Any] | None) -> dict[str, Any]:
    """A new file's frontmatter must name its title and type."""
    if not meta:
        raise InvalidInput("frontmatter is required when creating a new file (title and type)")
    missing = [k for k in ("title", "type") if k not in meta or not str(meta[k]).strip()]
    if missing:
        raise InvalidInput(f"frontmatter missing required fields: {', '.join(missing)}")
    return meta


def normalize_new(meta: dict[str, Any], rel: str) -> dict[str, Any]:
    """Full normalisation of a new file's frontmatter (defaults filled, values checked)."""
    out = dict(require_new(meta))
    raw_type = str(out["type"]).strip().lower()
    t = (type_of_path(rel) or doc_type(raw_type)) if raw_type == "archive" else doc_type(raw_type)
    out["type"] = t
    out["status"] = status(out["status"]) if "status" in out else (
        "raw" if t in ("capture", "session") else "pending" if t == "idea" else
        "done" if t in ("daily", "weekly", "digest-daily", "digest-weekly", "reference", "report", "briefing",
                        "slide") else "active")
    if "canonical" in out:
        out["canonical"] = _bool("canonical", out["canonical"])
    else:
        out["canonical"] = (rel.endswith("/state.md") if t == "project" else t not in _NOT_CANONICAL)
    if "source_kind" not in out:
        sources = out.get("sources")
        out["source_kind"] = ("canonical" if t in ("core", "person", "project", "concept", "decision") else
                              "extracted" if (isinstance(sources, (list, str)) and sources and str(sources).strip())
                              else "imported" if t in ("reference", "source") else
                              "generated" if t in ("report", "briefing", "slide", "note", "wiki") else "human")
    if "temperature" not in out:
        out["temperature"] = ("hot" if t == "core" else
                              "warm" if t in ("decision", "knowledge", "concept", "person", "project", "idea")
                              else "cold")
    out.setdefault("created", today())
    return check_fields(out)


def check_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """Check (and fold) the schema's fields that are present; others pass untouched."""
    out = dict(meta)
    if out.get("type") is not None and "type" in meta:
        out["type"] = doc_type(out["type"])
    if out.get("status") is not None:
        out["status"] = status(out["status"])
    if out.get("canonical") is not None:
        out["canonical"] = _bool("canonical", out["canonical"])
    for field, allowed in ENUMS.items():
        if out.get(field) is not None:
            v = str(out[field]).strip().lower()
            if v not in allowed:
                raise InvalidInput(f"invalid {field}: {str(out[field])[:80]}")
            out[field] = v
    for field in ("created", "updated", "date"):
        if out.get(field) is not None:
            out[field] = _date(field, out[field])
    return out


def slug_segment(text: str) -> str:
    """Dory's path-segment slug: ASCII-folded, lower case, `-` between words."""
    s = unicodedata.normalize("NFKD", text)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = re.sub(r"\s+", "-", s)
    s = re.sub(r"[^a-z0-9_/-]", "", s)
    s = re.sub(r"-{2,}", "-", s)
    return s.strip("-")


def route(target: str, meta: dict[str, Any]) -> str:
    """Where a new file with frontmatter `meta`, asked for at `target`, is written."""
    t = doc_type(meta["type"])
    if target.startswith("archive/"):
        raise InvalidInput("new writes cannot target archive/; migrate into canonical buckets first")
    parts = target.split("/")
    if parts[0] == "auto" or len(parts) == 1:
        return _infer(meta, t, parts[-1])
    if parts[0] in LEGACY_REDIRECTS:
        target = LEGACY_REDIRECTS[parts[0]] + "/" + "/".join(parts[1:])
    bucket = BUCKETS[t]
    # Dory's layout check, for Dory's folders; a folder Dory does not know (commonplace's
    # `notes/`, `docs/`) takes any type, as the corpus format allows.
    if not target.startswith(bucket + "/") and target.split("/", 1)[0] in _ROOTS:
        raise InvalidInput(f"type={t} must write under {bucket}/, got {target}")
    return target


def _infer(meta: dict[str, Any], t: str, name: str) -> str:
    stem = name[:-3] if name.endswith(".md") else name
    slug = slug_segment(stem or str(meta.get("title", ""))) or "note"
    bucket = BUCKETS[t]
    if t == "core":
        raise InvalidInput("type=core requires an explicit target under core/")
    if t == "project":
        return f"{bucket}/{slug}/state.md"
    day = _first_date(meta)
    if t == "decision" and not _bool("canonical", meta.get("canonical", True)):
        return f"{bucket}/{day or today()}-{slug}.md"
    if t in _DATED:
        return f"{bucket}/{day or slug}.md"
    return f"{bucket}/{slug}.md"


def _first_date(meta: dict[str, Any]) -> str | None:
    for key in ("date", "created"):
        if meta.get(key) is not None:
            try:
                return _date(key, meta[key])
            except InvalidInput:
                continue
    return None
