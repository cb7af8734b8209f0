"""Forgetting: retire claims for good and purge their text from everything derived.

The log keeps the events (history stays auditable), but a forgotten claim's text is
never compiled into a page again, is cut out of every evidence artifact that quoted
it, and — because pages are rebuilt from markdown — disappears from the site and the
search indexes at the next build (the build stage reports `forgotten` so the search
stage can purge caches). Text a person wrote by hand is not edited by a claim's forget;
where the text still appears, `remaining()` names the files so the person can decide. A
saved research report is no such text: it quoted memory when it was made, so a forgotten
fact it quotes is cut out of it and the report is marked superseded (`with_reports`). A
forget of what only the page's own prose says (`forget_prose`) takes that sentence out,
and is recorded as a claim's forget is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..corpus.scan import scan
from ..markdown import frontmatter as fm
from .evidence import ARTIFACT_DIR, artifact_files, contains, redact_file
from .fold import Claim

# Secrets shorter than this are only redacted from the claim's own artifacts, not from
# every artifact that happens to contain the same short phrase.
MIN_SCAN_LENGTH = 8


def secrets_of(claims: list[Claim]) -> list[str]:
    out: list[str] = []
    for c in claims:
        for s in c.statements:
            if s not in out:
                out.append(s)
    return out


def linked_artifacts(claims: list[Claim]) -> list[str]:
    out: list[str] = []
    for c in claims:
        for ev in c.events:
            src = ev.source
            if isinstance(src, str) and src.startswith(ARTIFACT_DIR + "/") and ev.forgotten is not True and src not in out:
                out.append(src)
    return out


def redact_artifacts(root: Path, claims: list[Claim], full_scan: bool = True) -> list[str]:
    """Cut the claims' texts out of their artifacts (and, with `full_scan`, out of any
    other artifact quoting them). Returns the files changed."""
    changed: list[str] = []
    by_tomb: dict[str | None, list[Claim]] = {}
    for c in claims:
        by_tomb.setdefault(c.forgotten_by.source if c.forgotten_by else None, []).append(c)
    for tomb, group in by_tomb.items():
        secrets = secrets_of(group)
        for rel in linked_artifacts(group):
            if redact_file(root, rel, secrets, tomb):
                changed.append(rel)
        long = [s for s in secrets if len(s.strip()) >= MIN_SCAN_LENGTH]
        if full_scan and long:
            for rel in artifact_files(root):
                if rel not in changed and rel != tomb and redact_file(root, rel, long, tomb):
                    changed.append(rel)
    return sorted(set(changed))


def remaining(root: Path, secrets: list[str], out_dir: Path | None = None) -> list[str]:
    """Corpus markdown files that still contain any of `secrets` (whole words, any case)."""
    files, _ = scan(root, out_dir)
    hits = []
    for f in files:
        try:
            text = f.abspath.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if contains(text, secrets):
            hits.append(f.path)
    return hits


REPORTS = ("references/reports/", "references/briefings/")  # where research saves its reports


def with_reports(root: Path, still: list[str], secrets: list[str], tombstone: str | None,
                 redacted: list[str]) -> tuple[list[str], list[str]]:
    """(`still` without the saved research reports that quoted the forgotten text, and
    `redacted` with them): each such report (generated, under `REPORTS`) has the text cut
    out and is marked superseded. Left as it was, default search returned a report
    quoting what had just been forgotten."""
    long = [x for x in secrets if len(x.strip()) >= MIN_SCAN_LENGTH]
    done: list[str] = []
    for rel in still:
        if not rel.startswith(REPORTS) or not long:
            continue
        try:
            raw, _, _ = fm.split((root / rel).read_text("utf-8"))
            generated = raw is not None and str(fm.load(raw).get("source_kind") or "") == "generated"
        except (OSError, UnicodeError, fm.FrontmatterError):
            generated = False
        if generated and redact_file(root, rel, long, tombstone):
            done.append(rel)
    return [p for p in still if p not in done], sorted({*redacted, *done})


def forget_prose(store: Any, entity: Any, content: str, *, kind: str, reason: str, ignore: frozenset[str],
                 dry_run: bool = False, artifact_fields: dict[str, Any] | None = None) -> Any:
    """Forget what no claim holds but the page's hand-written prose says: the sentence (or
    clause, list item, table row) that says `content` closely is taken out of the page
    (`prose.forget_sentence`). So that the log, the history and a tombstone show it as
    every forget, the words taken out are recorded as a claim of `kind` (its page edit
    takes them out) and that claim is forgotten at once. None when no sentence says it."""
    from .canonical import PageChange, read_page
    from .prose import forget_sentence

    old = read_page(store.root, entity.path)
    try:
        text = old.decode("utf-8") if old is not None else None
    except UnicodeDecodeError:
        text = None
    new, removed = forget_sentence(text, content, entity.path, ignore) if text else ("", [])
    if not removed:
        return None
    said = "; ".join(dict.fromkeys(removed))
    what = f"{'would take' if dry_run else 'took'} the page's own text {said!r} out of {entity.path}"

    def edit(page: str) -> str:  # again on the text as read under the claims lock
        return forget_sentence(page, content, entity.path, ignore)[0]

    if dry_run:  # the store's own preview of an add, made the page without the text and nothing more
        result = store.add(entity.id, said, kind, edit=edit, dry_run=True)
        result.action, result.claim_ids, result.events, result.evidence_path = "forget", [], [], None
        result.page, result.message = PageChange(entity.path, old, new.encode("utf-8")), what
        return result

    added = store.add(entity.id, said, kind, reason=f"the text {entity.path} said by hand, recorded to be forgotten",
                      edit=edit, artifact_fields=artifact_fields)
    result = store.forget(entity.id, added.claim_ids[0], reason=reason)
    result.message = f"{what}; {result.message}"
    return result
