"""Deleting a file for good (`/v1/purge`, Dory's contract §1.5).

A dry run (the default) says what would go. A live purge needs `reason` and the file's
current `expected_hash`, unlinks the file (and with `include_related_tombstone` its
`<stem>.tombstone.md`), refreshes the site and indexes, and then purges the deleted text
from derived state (older index generations, the embedding cache), which is how
commonplace erases: `forget` keeps the text and marks it superseded.

Paths as Dory allows them: `inbox/`, `sources/semantic/`, `logs/evals/`, `eval/` and
`tmp/` freely; `core/`, `people/`, `projects/`, `decisions/canonical/` and any page with
`canonical: true` only with `allow_canonical`; anything else also needs `allow_canonical`,
except a report research saved: generated (the search's `audit_kind` "report") and under
`references/reports/` or `references/briefings/`, where research saves them. It is not
memory anyone wrote, and an agent that saved one can take it back. Frontmatter alone is
not enough: a token holder could rewrite any page's to read as a report.
"""

from __future__ import annotations

from typing import Any

from commonplace.compiler.markdown import frontmatter as fm
from commonplace.compiler import writes as w
from commonplace.compiler.fsutil import fsync_dir
from commonplace.compiler.model import content_hash

from ..errors import ApiError, from_write_error
from ..models import PurgeRequest
from . import OpContext
from .refresh import note

FREE = ("inbox/", "sources/semantic/", "logs/evals/", "eval/", "tmp/")
PROTECTED = ("core/", "people/", "projects/", "decisions/canonical/")


def _refuse(message: str, code: str = "invalid_request", **extra: Any) -> ApiError:
    detail = {"code": "dory_validation_error", "message": message, "type": "validation"}
    return ApiError(400, code, message, detail=detail, **extra)


def _meta(data: bytes) -> dict[str, Any]:
    try:
        raw, _, _ = fm.split(data.decode("utf-8", "replace"))
        meta = fm.load(raw) if raw is not None else {}
    except fm.FrontmatterError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _generated_report(rel: str, meta: dict[str, Any]) -> bool:
    """A report research saved (`save: true`): in its folders, and generated."""
    from commonplace.compiler.search import REPORT_PREFIXES, audit_kind

    return rel.startswith(REPORT_PREFIXES) and audit_kind(rel, meta) == "report"


def _file(ctx: OpContext, rel: str) -> tuple[Any, bytes]:
    full = w.locate(ctx.root, rel, ctx.excluded)
    if full.is_symlink():
        raise _refuse(f"target is a symlink: {rel}; purge the file it points at")
    if not full.exists():
        raise _refuse(f"target does not exist: {rel}", "not_found")
    if not full.is_file():
        raise _refuse(f"target is not a file: {rel}")
    return full, full.read_bytes()


def purge(ctx: OpContext, req: PurgeRequest) -> dict[str, Any]:
    from .erase import erase, is_claim_target

    if is_claim_target(req.target):  # a claim or an entity: erased from the claim log too
        return erase(ctx, req)
    try:
        rel = w.normalize_target(req.target)
        with w.write_lock(ctx.root):
            full, data = _file(ctx, rel)
            current = content_hash(data)
            meta = _meta(data)
            protected = rel.startswith(PROTECTED) or meta.get("canonical") is True
            if protected and not req.allow_canonical:
                raise _refuse("purge of canonical/protected memory requires allow_canonical=true", "protected")
            free = rel.startswith(FREE) or _generated_report(rel, meta)
            if not protected and not free and not req.allow_canonical:
                raise _refuse("purge outside inbox/, sources/semantic/, logs/evals/, eval/, tmp/ or a saved "
                              "research report requires allow_canonical=true", "protected")
            if not req.dry_run:
                if not (req.reason or "").strip():
                    raise _refuse("live purge requires a reason")
                if req.expected_hash is None or req.expected_hash.lower() != current:
                    raise _refuse("live purge requires a matching expected_hash", "hash_mismatch",
                                  current_hash=current)
            files = [(rel, full, len(data))]
            if req.include_related_tombstone and not rel.endswith(".tombstone.md"):
                trel = w.tombstone_path(rel)
                tfull = w.locate(ctx.root, trel, ctx.excluded)
                if tfull.is_file() and not tfull.is_symlink():
                    files.append((trel, tfull, tfull.stat().st_size))
            answer: dict[str, Any] = {
                "path": rel, "action": "would_purge" if req.dry_run else "purged",
                "paths": [f[0] for f in files], "bytes_deleted": sum(f[2] for f in files), "hash": current,
                "indexed": False, "dry_run": req.dry_run,
            }
            if req.dry_run:
                return answer
            for _, path, _ in files:
                path.unlink()
                fsync_dir(path.parent)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    except OSError as exc:
        raise ApiError(503, "write_failed", f"cannot purge {rel}: {exc.strerror or 'I/O error'}") from None
    # The deleted text also leaves older index generations and caches (purge=True).
    done = ctx.live.commit(answer["paths"], purge=True)
    answer["indexed"] = done.indexed
    message = note(done)
    if message:
        answer["message"] = message
    return answer
