"""What happened in a span of days, as evidence: the sessions of those days, their daily
notes, and the claims and pages written or changed in them, newest first.

A question about recent work ("What did I do yesterday?", "What changed this week?")
shares no word with the notes and sessions that answer it, so a search cannot find them:
they are found by their day. Active memory reads a day's sessions and daily note this way
(`sessions_in`, `notes_in`); research reads all three for the span the question names
(`when.asked_window`), and leads with them instead of what the question's few words match.

- `sessions_in`: the newest session files (by modification time), those said on a day of
  the span, each as its summary line or, with `lines`, the lines a digest keeps of it
  (its facts, decisions and follow-ups);
- `notes_in`: the daily notes of the span's days, newest first, each read whole up to
  `DAY_NOTE_CHARS` (the rest is its `rest`);
- `changed_in`: pages with claims recorded in the span (the claims, newest first), or
  whose own text was written in it (its first sentences); never sessions, logs or audit
  material (per-write evidence, inbox, saved research, generated pages).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any, Callable

from .evidence import STOP, Evidence, Reader, is_audit, load_page, overlap, query_terms
from .facts import said_on, session_summary, split_meta

RECENT_SCAN = 50  # newest session files looked at
RECENT_CHARS = 200
DAY_NOTE_CHARS = 600  # a daily note shown whole up to this; the rest fills the budget left
CHANGED_UNITS = 3  # claims (or first sentences) of a changed page
SESSION_LINE_TOKENS = 90  # a session's kept lines, with `lines`
# Words a question about recent change is made of: what is left is its subject.
ABOUT_TIME = frozenset(query_terms(
    "what changed change changes happened happen going new news update updates updated recent recently lately "
    "week weeks weekly today yesterday tonight morning afternoon evening night days day past last this so far "
    "since work worked working session sessions done did"))


def _in(day: "dt.date | None", window: Any) -> bool:
    return window is None or (day is not None and window[0] <= day <= window[1])


def _day(value: str) -> "dt.date | None":
    try:
        return dt.date.fromisoformat(str(value or "")[:10])
    except ValueError:
        return None


def subject_terms(question: str) -> dict[str, float]:
    """The question's words besides those about time and change ("Ledgerline" of "what
    changed on Ledgerline this week?"); empty when it asks about the span alone."""
    return {k: v for k, v in query_terms(question).items() if k not in ABOUT_TIME and k not in STOP}


def subject_query(question: str) -> str:
    """The question without its words about time and change, for the search ("What
    changed on Ledgerline this week?" -> "Ledgerline"): "changed" and "week" matched
    pages that say something changed once, long ago."""
    keep = [w for w in re.findall(r"[\w']+", question) if query_terms(w) and not set(query_terms(w)) & ABOUT_TIME]
    return " ".join(keep)


def sessions_in(docs: dict[str, Any], root: Path, read: Reader, window: Any, limit: int, *,
                skip: "set[str] | frozenset[str]" = frozenset(), allows: Callable[[str], bool] = lambda p: True,
                lines: bool = False) -> list[Evidence]:
    """The sessions said in `window` (else the newest ones), newest first, up to `limit`."""
    from ..sessions import digest as dg
    from ..sessions.transcript import turns
    from .wake import recent_sessions

    out: list[Evidence] = []
    for rel in recent_sessions(docs, Path(root), RECENT_SCAN):
        if rel in skip or not allows(rel):
            continue
        text, modified = read(rel)
        if not text:
            continue
        said = said_on(rel, split_meta(text)[0])
        when = said.isoformat() if said else modified
        if not _in(_day(when), window):
            continue
        summary = session_summary(text, RECENT_CHARS, rel)
        if lines:  # what the session established, as a digest keeps it
            kept = dg.select(dg.candidates(rel, turns(text)), SESSION_LINE_TOKENS)
            said_lines = [it.text for it in kept if it.section != "question"]
            summary = " ".join(said_lines) or summary
        if summary:
            out.append(Evidence(rel, summary, when, 1.0, True, matched=1.0))
        if len(out) >= limit:
            break
    return out


def notes_in(docs: dict[str, Any], root: Path, read: Reader, window: Any, *,
             allows: Callable[[str], bool] = lambda p: True) -> list[Evidence]:
    """The daily notes of the window's days, newest first (else the newest note)."""
    from .wake import notes_of

    if window is None:
        dated = [(d, p) for p, doc in docs.items() if p.startswith("logs/daily/")
                 for d in [said_on(p, doc.frontmatter)] if d is not None]
        paths = [max(dated)[1]] if dated else []
    else:
        days = [window[1] - dt.timedelta(days=i) for i in range((window[1] - window[0]).days + 1)]
        paths = notes_of(docs, lambda rel: (Path(root) / rel).is_file(), *days)
    out: list[Evidence] = []
    for rel in paths:
        if not allows(rel):
            continue
        page, mdate = load_page(read, rel)
        if page is None or not page.units:
            continue
        shown: list[str] = []
        for u in page.units:
            if shown and sum(map(len, shown)) + len(u.text) > DAY_NOTE_CHARS:
                break
            shown.append(u.text if u.text[-1] in ".!?;:" else u.text + ".")
        out.append(Evidence(rel, " ".join(shown), page.date or mdate, 1.0, units=page.units[:len(shown)],
                            rest=page.units[len(shown):], matched=1.0))
    return out


CLAIM_FOLDERS = ("people/", "projects/", "concepts/", "decisions/", "core/")  # where the claim store writes


def _may_have_changed(doc: Any, root: Path, start: dt.date, claims_since: bool) -> bool:
    """A page's frontmatter date (or, without one, its last commit's or file's day) is
    in or after the window, or it is an entity page whose file changed since while claims
    were recorded in the window (`claims_since`: a claim write changes the file, not always
    its frontmatter). No other page is opened: a fresh checkout's files all changed today,
    and opening each of 10,000 took research 11 s."""
    said = [d for d in (_day(v) for v in (doc.updated, doc.date, doc.created) if v) if d is not None]
    if said:
        if max(said) >= start:
            return True
    elif (_day(doc.file_date or "") or dt.date.min) >= start:
        return True
    if not claims_since or not doc.path.startswith(CLAIM_FOLDERS):
        return False
    try:
        mtime = os.stat(Path(root) / doc.path).st_mtime
    except OSError:
        return False
    return dt.datetime.fromtimestamp(mtime, dt.timezone.utc).date() >= start


def _claims_recorded(root: Path, start: dt.date, end: dt.date) -> bool:
    """Whether the claim log holds a file of a day in the window (`claims/YYYY/MM/DD/`,
    the claim store's layout, `claims/log.py`; context may not import the store)."""
    day = start
    while day <= end:
        d = Path(root) / "claims" / f"{day:%Y/%m/%d}"
        if d.is_dir() and any(n.endswith(".jsonl") for n in os.listdir(d)):
            return True
        day += dt.timedelta(days=1)
    return False


def changed_in(docs: dict[str, Any], root: Path, read: Reader, window: Any, limit: int, *,
               allows: Callable[[str], bool] = lambda p: True) -> list[Evidence]:
    """Pages written or changed in the window, newest first: a page's claims recorded
    in it, else, when its own text was written in it (its prose date, and its
    frontmatter date when it has one), its first sentences. A page only touched in the
    window (a claim written elsewhere, a link added) says nothing here."""
    if window is None:
        return []
    start, end = window
    claims_since = _claims_recorded(root, start, end)
    found: list[Evidence] = []
    for rel, doc in docs.items():
        if (doc.is_session or rel.startswith(("logs/", "archive/")) or is_audit(rel, doc.frontmatter)
                or not allows(rel) or not _may_have_changed(doc, root, start, claims_since)):
            continue
        status = str(doc.frontmatter.get("status") or "").strip().lower()
        if status in ("superseded", "stale", "quarantined") or doc.frontmatter.get("superseded_by"):
            continue
        page, mdate = load_page(read, rel)
        if page is None or not page.units:
            continue
        claims = sorted((u for u in page.units if u.kind == "claim" and _in(_day(u.date), window)),
                        key=lambda u: u.date, reverse=True)[:CHANGED_UNITS]
        if claims:
            units = claims
        else:
            # its text's day (kept across claim writes), and the day its frontmatter or, without
            # one, its last commit gives: a fresh checkout's files are all new, their text is not
            written = min(filter(None, (_day(mdate), _day(page.date or doc.file_date or ""))), default=None)
            if written is None or not start <= written <= end:
                continue
            units = [u for u in page.units if u.kind != "claim"][:CHANGED_UNITS]
            if not units:
                continue
        date = max((u.date for u in units if u.date), default="") or min(filter(None, (mdate, page.date)), default="")
        text = " ".join(u.text if u.text[-1:] in ".!?;:" else u.text + "." for u in units)
        found.append(Evidence(rel, text, date, 1.0, units=units, matched=1.0))
    found.sort(key=lambda e: (e.date, e.path), reverse=True)
    return found[:limit]


def about(items: list[Evidence], terms: dict[str, float]) -> list[Evidence]:
    """The items that hold a word of the subject (`subject_terms`), in their path or text;
    all of them when there is no subject."""
    if not terms:
        return items
    return [e for e in items if overlap(terms, e.text + " " + e.path.replace("/", " ").replace("-", " ")) > 0]


def window_evidence(question: str, docs: dict[str, Any], root: Path, read: Reader, today: dt.date, limit: int, *,
                    sessions: bool = True, durable: bool = True) -> "tuple[Any, dict[str, float], list[Evidence]]":
    """For a question that names a span of days (`when.asked_window`): (the span, the
    question's subject words, what changed in it, at most `limit`), newest first: each day's sessions
    (the lines a digest keeps of them), then its daily notes, then the pages with claims
    or text written that day; only those about the subject when the question has one
    ("what changed on Ledgerline this week?"). (None, {}, []) for any other question."""
    from .when import asked_window

    window = asked_window(question, today)
    if window is None:
        return None, {}, []
    terms = subject_terms(question)
    scan = limit * 3 if terms else limit  # the subject keeps some of them
    said = (about(sessions_in(docs, root, read, window, scan, lines=True), terms) if sessions else [])[:limit]
    written: list[Evidence] = []
    if durable:
        written += about(notes_in(docs, root, read, window), terms)[:limit]
        written += about(changed_in(docs, root, read, window, scan), terms)[:limit]
    # When the span holds more than `limit`, what was said (sessions) keeps two thirds of
    # it and what was written (daily notes, then changed pages) the rest, each newest
    # first, and either takes the room the other leaves: cut newest first over all,
    # today's changed pages pushed Monday's session out of "what changed this week?".
    room = max(limit - len(written), (2 * limit + 2) // 3)
    kept = said[:room]
    kept += written[:limit - len(kept)]
    kept.sort(key=lambda e: e.date, reverse=True)  # stable: sessions, notes, pages within a day
    return window, terms, kept
