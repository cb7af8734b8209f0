"""Compiling claims into an entity's canonical page.

The page gets three managed sections, each between marker comments on lines of
their own:

    <!-- commonplace:claims:start -->    current claims by kind, contradictions,
    ...                                 upcoming claims, collapsed history
    <!-- commonplace:claims:end -->
    <!-- commonplace:timeline:start -->  every event, oldest first
    <!-- commonplace:evidence:start -->  links to evidence files and tombstones

Everything outside the markers (frontmatter included) is kept byte for byte. Marker
lines inside fenced code blocks or the frontmatter are not markers. Missing sections
are added after the section before them (else before the one after them, else at the
end of the page). A page whose markers are broken (unclosed, nested, duplicated) is
refused, never guessed at. The file is written only when its bytes change, atomically.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..corpus.prose_dates import remember as remember_prose_date
from ..markdown import frontmatter as fm
from ..fsutil import atomic_write, inside
from . import times
from .entities import Entity
from .errors import PageConflict
from .fold import (
    ENDED, FORGOTTEN, INVALIDATED, RETIRED, UPCOMING, Claim, Version, conflict_groups,
)
from .text_rules import md_code, md_inline, one_line, wikilink

SECTIONS = ("claims", "timeline", "evidence")
KIND_ORDER = ("fact", "preference", "state", "decision", "note")
KIND_LABELS = {"fact": "Facts", "preference": "Preferences", "state": "State", "decision": "Decisions", "note": "Notes"}
TIMELINE_LIMIT = 200

_MARKER = re.compile(r"^ {0,3}<!-- commonplace:([a-z0-9_-]+):(start|end) -->[ \t\r]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


# -- finding sections -------------------------------------------------------------------


@dataclass
class Span:
    name: str
    start: int  # char offset of the start marker line
    end: int  # char offset just past the end marker line's text (before its "\n")
    start_line: int  # 1-based
    end_line: int


def _body_first_line(text: str) -> int:
    """0-based index of the first body line (after frontmatter)."""
    try:
        raw, _, body_line = fm.split(text.lstrip("\ufeff"))
    except fm.FrontmatterError:
        return 0
    return body_line - 1 if raw is not None else 0


def find_sections(text: str, path: str = "page") -> dict[str, Span]:
    """Managed sections of a page. Raises PageConflict when the markers are broken."""
    spans: dict[str, Span] = {}
    open_name: str | None = None
    open_at = (0, 0)
    fence: tuple[str, int] | None = None
    first = _body_first_line(text)
    offset = 0
    for i, line in enumerate(text.split("\n")):
        here = offset
        offset += len(line) + 1
        if i < first:
            continue
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
                fence = None
            continue
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            continue
        mk = _MARKER.match(line)
        if not mk or mk.group(1) not in SECTIONS:
            continue
        name, which = mk.group(1), mk.group(2)
        if which == "start":
            if open_name is not None:
                raise PageConflict(f"{path}:{i + 1}: managed section `{name}` starts inside `{open_name}` (opened at line {open_at[1]}); fix the markers by hand")
            if name in spans:
                raise PageConflict(f"{path}:{i + 1}: managed section `{name}` appears twice (first at line {spans[name].start_line}); remove one")
            open_name, open_at = name, (here, i + 1)
        else:
            if open_name != name:
                raise PageConflict(f"{path}:{i + 1}: end marker for `{name}` without a matching start; fix the markers by hand")
            spans[name] = Span(name, open_at[0], here + len(line.rstrip("\r")), open_at[1], i + 1)
            open_name = None
    if open_name is not None:
        raise PageConflict(f"{path}:{open_at[1]}: managed section `{open_name}` never ends; add `<!-- commonplace:{open_name}:end -->` or remove the start marker")
    return spans


def _outside(text: str, spans: dict[str, Span]) -> list[str]:
    out, pos = [], 0
    for span in sorted(spans.values(), key=lambda s: s.start):
        out.append(text[pos:span.start])
        pos = span.end
    out.append(text[pos:])
    return out


def heal_merge_conflict(text: str, path: str = "page") -> str | None:
    """A page with git conflict markers whose two sides differ only inside managed
    sections (two machines compiled different claims) -> our side; the sections are
    recompiled from the merged log anyway. None when there is no conflict. Raises
    PageConflict when the conflict touches text a person wrote."""
    if not re.search(r"(?m)^<{7}(?: |\r?$)", text):
        return None
    ours: list[str] = []
    theirs: list[str] = []
    side = None
    for line in text.split("\n"):
        bare = line.rstrip("\r")
        if side is None and bare.startswith("<<<<<<<") and bare[7:8] in ("", " "):
            side = "ours"
        elif side in ("ours", "base") and bare.startswith("|||||||"):
            side = "base"
        elif side in ("ours", "base") and bare == "=======":
            side = "theirs"
        elif side == "theirs" and bare.startswith(">>>>>>>") and bare[7:8] in ("", " "):
            side = None
        elif side is None:
            ours.append(line)
            theirs.append(line)
        elif side == "ours":
            ours.append(line)
        elif side == "theirs":
            theirs.append(line)
    if side is not None:
        raise PageConflict(f"{path}: unfinished git conflict markers; resolve them by hand")
    a, b = "\n".join(ours), "\n".join(theirs)
    try:
        same = _outside(a, find_sections(a, path)) == _outside(b, find_sections(b, path))
    except PageConflict:
        same = False
    if not same:
        raise PageConflict(f"{path}: git conflict markers in text outside the managed sections; resolve them by hand")
    return a


def splice(text: str, contents: dict[str, list[str]], path: str = "page") -> str:
    """Replace (or add) the managed sections; every other byte stays as it was."""
    nl = "\r\n" if "\r\n" in text else "\n"

    def block(name: str) -> str:
        lines = [f"<!-- commonplace:{name}:start -->", *contents[name], f"<!-- commonplace:{name}:end -->"]
        return nl.join(lines)

    spans = find_sections(text, path)
    for span in sorted(spans.values(), key=lambda s: s.start, reverse=True):
        if span.name in contents:
            text = text[: span.start] + block(span.name) + text[span.end:]
    for idx, name in enumerate(SECTIONS):
        if name not in contents or name in spans:
            continue
        spans = find_sections(text, path)
        before = [spans[n] for n in SECTIONS[:idx] if n in spans]
        after = [spans[n] for n in SECTIONS[idx + 1:] if n in spans]
        if before:
            at = before[-1].end
            text = text[:at] + nl + nl + block(name) + text[at:]
        elif after:
            at = after[0].start
            text = text[:at] + block(name) + nl + nl + text[at:]
        else:
            if text and not text.endswith("\n"):
                text += nl
            text += (nl if text.strip() else "") + block(name) + nl
        spans = find_sections(text, path)
    return text


# -- rendering sections -------------------------------------------------------------------


def _meta(c: Claim, v: Version, conflicts: dict[str, list[str]], show_confidence: bool = True) -> str:
    parts = []
    if v.key:
        parts.append(f"{md_inline(v.key, 80)}")
    if show_confidence and v.confidence is not None:
        parts.append(f"confidence {md_inline(str(v.confidence), 40)}")
    if v.valid_from:
        parts.append(f"since {times.display_bound(v.valid_from)}")
    if v.valid_to:
        parts.append(f"until {times.display_bound(v.valid_to)}")
    parts.append(f"recorded {v.event.at:%Y-%m-%d}" + (f" by {md_inline(str(v.event.actor), 80)}" if v.event.actor else ""))
    parts.append(md_code(c.claim_id))
    others = conflicts.get(c.claim_id)
    if others:
        parts.append("⚠ contradicts " + ", ".join(md_code(o) for o in others))
    return " · ".join(parts)


def _kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind) or md_inline(kind.capitalize(), 60)


def _kind_sorted(kinds: set[str]) -> list[str]:
    return [k for k in KIND_ORDER if k in kinds] + sorted(k for k in kinds if k not in KIND_ORDER)


def render_claims(claims: list[Claim], now: dt.datetime) -> list[str]:
    current = [(c, v) for c in claims if (v := c.version_at(now)) is not None]
    groups = conflict_groups(current)
    conflicts: dict[str, list[str]] = defaultdict(list)
    for _, _, ids in groups:
        for cid in ids:
            conflicts[cid].extend(o for o in ids if o != cid and o not in conflicts[cid])

    out = ["## Claims", ""]
    if not current:
        out += ["*No current claims.*", ""]
    for rule, name, ids in groups:
        what = "current `state` claims" if rule == "kind" else f"current claims with key {md_inline(name, 80)}"
        out += [f"> ⚠ **Contradiction:** {len(ids)} {what} disagree: {', '.join(md_code(i) for i in ids)}. "
                "Keep one with `commonplace claim replace` or `commonplace claim retire`.", ""]
    by_kind: dict[str, list[tuple[Claim, Version]]] = defaultdict(list)
    for c, v in current:
        by_kind[v.kind].append((c, v))
    for kind in _kind_sorted(set(by_kind)):
        out += [f"### {_kind_label(kind)}", ""]
        for c, v in by_kind[kind]:
            out.append(f"- {md_inline(v.statement, start=True)} — {_meta(c, v, conflicts)}")
        out.append("")

    upcoming = [c for c in claims if c.state_at(now) == UPCOMING]
    if upcoming:
        out += ["### Upcoming", ""]
        for c in upcoming:
            out.append(f"- {md_inline(c.statement, start=True)} — {c.kind} · {_meta(c, c.last, {})}")
        out.append("")

    history: list[tuple[dt.datetime, str]] = []
    for c in claims:
        state = c.state_at(now)
        if state == FORGOTTEN:
            continue
        # A replaced version is superseded: the page shows only the current statement
        # (issue 28); what held before is in the claim log (`claim list --as-of`, `--history`).
        if state in (RETIRED, INVALIDATED, ENDED):
            closed = c.closed_by
            if state == ENDED:
                label, when, reason = "ended", c.last.end, None
            else:
                label = "retired" if state == RETIRED else "invalidated"
                when, reason = (closed.at if closed else c.updated_at), (closed.reason if closed else None)
            why = f" Reason: {md_inline(str(reason))}" if reason else ""
            stamp = f" {when:%Y-%m-%d}" if when else ""
            history.append((when or c.updated_at, f"- *{label}{stamp}:* {md_inline(c.statement)} — {c.kind} · {_meta(c, c.last, {})}.{why}"))
    if history:
        history.sort(key=lambda h: h[0])
        n = len(history)
        out += [f"<!-- commonplace:details:start History: {n} retired or ended claim{'s' if n != 1 else ''} -->", ""]
        out += [line for _, line in history]
        out += ["", "<!-- commonplace:details:end -->", ""]
    return out


def render_timeline(claims: list[Claim]) -> list[str]:
    entries: list[tuple[dt.datetime, str, str]] = []
    forgets: dict[str, list[tuple[dt.datetime, str, str]]] = defaultdict(list)
    for c in claims:
        # Events whose statement a later replacement superseded keep their place in the
        # Timeline without the old text: the page says only what holds now.
        superseded = {v.event.id for v in c.versions[:-1]}
        for ev in c.events:
            who = f" (by {md_inline(str(ev.actor), 80)})" if ev.actor else ""
            when = times.display(ev.at)
            cid = md_code(c.claim_id)
            if ev.forgotten is True:
                forgets[ev.source or ev.id].append((ev.at, c.claim_id, who))
                continue
            if c.forgotten:
                text = f"{ev.event} {cid} (text forgotten)"
            elif ev.event == "added" and ev.id in superseded:
                text = f"added {md_inline(str(ev.kind or c.kind), 40)} {cid} (since replaced)"
            elif ev.event == "added":
                text = f"added {md_inline(str(ev.kind or c.kind), 40)} {cid}: {md_inline(ev.statement)}"
            elif ev.event == "replaced" and ev.id in superseded:
                text = f"replaced {cid} (since replaced again)"
            elif ev.event == "replaced":
                text = f"replaced {cid}: {md_inline(ev.statement)}"
            else:
                text = f"{ev.event} {cid}" + (f" — {md_inline(str(ev.reason))}" if ev.reason else "")
            entries.append((ev.at, ev.id, f"- {when} · {text}{who}"))
    for source, items in forgets.items():
        at = min(i[0] for i in items)
        ids = ", ".join(md_code(cid) for cid in sorted({i[1] for i in items}))
        link = f" — {wikilink(source, 'tombstone')}" if source.endswith(".md") else ""
        n = len({i[1] for i in items})
        entries.append((at, source, f"- {times.display(at)} · forgot {n} claim{'s' if n != 1 else ''} ({ids}){link}{items[0][2]}"))
    entries.sort(key=lambda e: (e[0], e[1]))
    out = ["## Timeline", ""]
    if len(entries) > TIMELINE_LIMIT:
        skipped = len(entries) - TIMELINE_LIMIT
        out.append(f"- … {skipped} earlier events (see `commonplace claim list --history`)")
        entries = entries[skipped:]
    out += [e[2] for e in entries] or ["*No events.*"]
    out.append("")
    return out


def render_evidence(claims: list[Claim]) -> list[str]:
    rows: dict[str, tuple[dt.datetime, str, set[str]]] = {}
    for c in claims:
        for ev in c.events:
            if ev.forgotten is True:
                if isinstance(ev.source, str) and ev.source:
                    rows.setdefault(ev.source, (ev.at, f"{times.display(ev.at)} · forget (tombstone)", set()))
                continue
            if c.forgotten:
                continue
            if isinstance(ev.source, str) and ev.source:
                action = {"added": "add", "replaced": "replace", "retired": "retire", "invalidated": "invalidate"}[ev.event]
                row = rows.setdefault(ev.source, (ev.at, f"{times.display(ev.at)} · {action}", set()))
                row[2].add(c.claim_id)
            evidence = ev.evidence
            if isinstance(evidence, dict) and isinstance(evidence.get("text"), str) and evidence["text"].strip():
                row = rows.setdefault("text:" + evidence["text"], (ev.at, "", set()))
                row[2].add(c.claim_id)
            elif isinstance(evidence, dict):
                target = evidence.get("path") or evidence.get("url")
                if isinstance(target, str) and target:
                    lines = evidence.get("lines")
                    key = f"{target}#{lines}" if lines else target
                    row = rows.setdefault(key, (ev.at, "", set()))
                    row[2].add(c.claim_id)
    out = ["## Evidence", ""]
    if not rows:
        out += ["*No evidence recorded.*", ""]
        return out
    for key, (at, label, ids) in sorted(rows.items(), key=lambda kv: (kv[1][0], kv[0])):
        cited = (" — " + ", ".join(md_code(i) for i in sorted(ids))) if ids else ""
        if label:
            out.append(f"- {wikilink(key, label)}{cited}")
            continue
        if key.startswith("text:"):
            out.append(f"- Source: {md_inline(key[5:], 300)}{cited}")
            continue
        target, _, lines = key.partition("#")
        span = f" (lines {md_inline(lines, 40)})" if lines else ""
        if re.match(r"^https?://[^\s<>]+$", target):
            out.append(f"- <{target}>{span}{cited}")
        else:
            out.append(f"- {wikilink(target)}{span}{cited}")
    out.append("")
    return out


def render_sections(claims: list[Claim], now: dt.datetime) -> dict[str, list[str]]:
    return {
        "claims": [""] + render_claims(claims, now),
        "timeline": [""] + render_timeline(claims),
        "evidence": [""] + render_evidence(claims),
    }


# -- pages ------------------------------------------------------------------------------


def stub_page(entity: Entity, created: dt.datetime) -> str:
    meta: dict = {"title": one_line(entity.title), "type": entity.family}
    if entity.family in ("project", "decision"):
        meta["status"] = "active"
    meta["canonical"] = True
    meta["created"] = created.date()
    return f"---\n{fm.dump(meta)}---\n# {md_inline(entity.title, 200, start=True)}\n"


@dataclass
class PageChange:
    path: str
    old: bytes | None  # None: the page did not exist
    new: bytes

    @property
    def created(self) -> bool:
        return self.old is None

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        old = (self.old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = self.new.decode("utf-8").splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"a/{self.path}", f"b/{self.path}"))

    def line_counts(self) -> tuple[int, int]:
        added = removed = 0
        for line in self.diff().splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed

    def summary(self) -> str:
        if self.created:
            return f"created {self.path}"
        if not self.changed:
            return f"{self.path} unchanged"
        a, r = self.line_counts()
        return f"updated {self.path} (+{a} -{r} lines)"


def read_page(root: Path, rel: str) -> bytes | None:
    try:
        full = inside(root, rel)
    except ValueError as exc:
        raise PageConflict(f"{rel}: {exc}") from None
    if full.is_symlink():
        raise PageConflict(f"{rel} is a symlink; claims are only compiled into regular files")
    try:
        return full.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise PageConflict(f"{rel} is a folder") from None


def plan_page(root: Path, entity: Entity, claims: list[Claim], now: dt.datetime,
              old: bytes | None = None, read: bool = True, edit: Callable[[str], str] | None = None) -> PageChange:
    """The page as it would be after compiling `claims` (nothing written). `edit` may
    change the page's text (outside the managed sections) first."""
    if read:
        old = read_page(root, entity.path)
    if old is None:
        created = min((c.created_at for c in claims), default=now)
        text = stub_page(entity, created)
    else:
        try:
            text = old.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PageConflict(f"{entity.path} is not valid UTF-8 (byte {exc.start}); not compiled") from None
        healed = heal_merge_conflict(text, entity.path)
        if healed is not None:
            text = healed
    if edit is not None:
        text = edit(text)
    new = splice(text, render_sections(claims, now), entity.path)
    return PageChange(entity.path, old, new.encode("utf-8"))


def compile_page(root: Path, entity: Entity, claims: list[Claim], now: dt.datetime, dry_run: bool = False,
                 edit: Callable[[str], str] | None = None) -> PageChange:
    """Plan, then write if the bytes changed; retried if someone edits the page meanwhile."""
    for _ in range(5):
        change = plan_page(root, entity, claims, now, edit=edit)
        if dry_run or not change.changed:
            return change
        if read_page(root, entity.path) != change.old:
            continue  # edited between our read and now: recompute from the new text
        full = inside(root, entity.path)
        mtime = full.stat().st_mtime if change.old is not None else None
        atomic_write(full, change.new)
        remember_prose_date(root, entity.path, change.old, mtime, change.new)  # corpus/prose_dates.py
        return change
    raise PageConflict(f"{entity.path} kept changing while it was compiled; try again")


# -- frontmatter edits ------------------------------------------------------------------


def set_frontmatter_fields(text: str, fields: dict[str, str]) -> str:
    """Set top-level scalar frontmatter fields, touching only those lines.

    Values are YAML-quoted. Adds a frontmatter block when the page has none. Returns
    the text unchanged if the result would not parse.
    """
    nl = "\r\n" if "\r\n" in text else "\n"
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body_text = text[len(bom):]
    lines_out = {k: f"{k}: {fm.dump({k: v}).split(':', 1)[1].strip()}" for k, v in fields.items()}
    try:
        raw, _, _ = fm.split(body_text)
    except fm.FrontmatterError:
        return text
    if raw is None:
        block = nl.join(["---", *lines_out.values(), "---"]) + nl
        return bom + block + body_text
    head_end = body_text.index("\n") + 1
    lines = raw.split("\n")
    done = set()
    out: list[str] = []
    skip_continuation = False
    for line in lines:
        if skip_continuation and (line.startswith((" ", "\t")) or not line.strip()) and line != "":
            continue
        skip_continuation = False
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:", line)
        if m and m.group(1) in fields:
            out.append(lines_out[m.group(1)] + ("\r" if line.endswith("\r") else ""))
            done.add(m.group(1))
            skip_continuation = True
            continue
        out.append(line)
    missing = [lines_out[k] + ("\r" if nl == "\r\n" else "") for k in fields if k not in done]
    if out and out[-1] == "":
        out = out[:-1] + missing + [""]
    else:
        out = out + missing
    new_raw = "\n".join(out)
    try:
        fm.load(new_raw)
    except fm.FrontmatterError:
        return text
    return bom + body_text[:head_end] + new_raw + body_text[head_end + len(raw):]
