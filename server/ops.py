"""The API's operations, free of Flask: each takes the live corpus and validated
parameters and returns the JSON answer (or raises `ApiError`).

`server/api.py` calls these for HTTP; an MCP bridge can call them directly with the same
parameters (`schema.parse_params`), so both offer exactly the same tools.
"""

from __future__ import annotations

import inspect
import logging
import threading
import weakref
from collections import deque
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from commonplace.compiler import writes as w

from .errors import ApiError

log = logging.getLogger("commonplace.server")


def from_write_error(exc: w.WriteError) -> ApiError:
    extra = {k: v for k, v in exc.details.items() if k in ("findings", "current_hash")}
    return ApiError(exc.status, exc.code, exc.message, type=exc.type, **extra)


def _lock(live: Any) -> Any:
    lock = getattr(live, "write_lock", None)
    return lock if lock is not None else nullcontext()


def _refresh_now(live: Any, paths: list[str]) -> tuple[bool, str | None]:
    try:
        r = live.refresh(paths)
    except Exception as exc:  # noqa: BLE001 - reported in the answer, logged in full
        log.exception("refresh of %s failed", paths[:5])
        return False, f"written, but updating the site and index failed ({type(exc).__name__}); it will be retried"
    indexed = bool(getattr(r, "indexed", True))
    note = None
    if not indexed:
        note = "written; the search index will include it once embedding succeeds"
    return indexed, note


class RefreshBatcher:
    """Group commit for refreshes: concurrent writers share one refresh.

    A writer registers its paths and waits. If no refresh is running, it becomes the
    leader: it takes every pending path (its own and those of writers that arrived
    meanwhile), runs one `live.refresh`, and wakes everyone whose paths were in it.
    Each writer returns only after a refresh that started after its write finished, so
    `indexed: true` still means "searchable now". Under load this turns N refreshes into
    about N / (writers waiting) refreshes; alone, a writer refreshes at once.
    """

    def __init__(self) -> None:
        # No reference to the live corpus: the registry's weak key must be able to die.
        self.cv = threading.Condition()
        self.pending: set[str] = set()
        self.ticket = 0  # last ticket handed out
        self.done = 0  # every ticket <= done has been refreshed
        self.running = False
        self.outcomes: list[tuple[int, tuple[bool, str | None]]] = []
        self.batches = 0

    def refresh(self, live: Any, paths: list[str]) -> tuple[bool, str | None]:
        with self.cv:
            self.ticket += 1
            mine = self.ticket
            self.pending.update(paths)
            while True:
                if self.done >= mine:
                    return self._outcome(mine)
                if not self.running:
                    batch, self.pending = sorted(self.pending), set()
                    upto = self.ticket
                    self.running = True
                    break
                self.cv.wait()
        outcome: tuple[bool, str | None] = (False, "written; refresh did not run")
        try:
            outcome = _refresh_now(live, batch)
        finally:
            with self.cv:
                self.running = False
                self.done = upto
                self.batches += 1
                self.outcomes.append((upto, outcome))
                del self.outcomes[:-64]
                self.cv.notify_all()
        return outcome

    def _outcome(self, ticket: int) -> tuple[bool, str | None]:
        for upto, outcome in self.outcomes:
            if upto >= ticket:
                return outcome
        return True, None  # pragma: no cover - pruned long ago


_batchers: "weakref.WeakKeyDictionary[Any, RefreshBatcher]" = weakref.WeakKeyDictionary()
_batchers_guard = threading.Lock()


def batcher(live: Any) -> RefreshBatcher:
    """The batcher of a live corpus (one per corpus object, dropped with it)."""
    with _batchers_guard:
        try:
            b = _batchers.get(live)
            if b is None:
                b = _batchers[live] = RefreshBatcher()
        except TypeError:  # not weak-referenceable: no sharing, refresh directly
            b = RefreshBatcher()
        return b


def refresh(live: Any, paths: list[str]) -> tuple[bool, str | None]:
    """Rebuild what `paths` touch (shared with concurrent writers). Never raises: a write
    that landed is not undone by a failed index update; the answer says `indexed: false`
    and the next refresh catches up."""
    return batcher(live).refresh(live, paths)


def links_of(live: Any, rel: str, data: bytes | None) -> set[str]:
    """Documents that `data` (the bytes of `rel`) links to, resolved against the live corpus."""
    if not data:
        return set()
    resolver = getattr(live, "resolver", None)
    if resolver is None:
        return set()
    from commonplace.compiler.parse import SkipFile, parse

    try:
        doc, _ = parse(rel, data)
    except SkipFile:
        return set()
    out = set()
    for link in doc.links:
        try:
            res = resolver.resolve(link, rel)
        except Exception:  # noqa: BLE001
            continue
        if res.path and res.path != rel:
            out.add(res.path)
    return out


# --------------------------------------------------------------------------- search


def search(live: Any, params: dict[str, Any]) -> dict[str, Any]:
    try:
        from commonplace.compiler.search.query import InvalidRequest
    except ImportError:  # pragma: no cover
        InvalidRequest = ValueError  # type: ignore[misc,assignment]
    try:
        from commonplace.compiler.search.engine import IndexNotReady
    except ImportError:  # pragma: no cover
        IndexNotReady = LookupError  # type: ignore[misc,assignment]
    req = {k: v for k, v in params.items() if v is not None}
    try:
        return call_search(live, req)
    except InvalidRequest as exc:
        raise ApiError(400, "invalid_parameter", str(exc)) from None
    except IndexNotReady:
        raise ApiError(503, "index_not_ready", "the search index is not built yet; try again shortly") from None


def call_search(live: Any, req: dict[str, Any]) -> dict[str, Any]:
    """`live.search(request)` (LiveCorpus) or `live.search(**request)`; without either, the
    process-wide engine of the corpus."""
    run = getattr(live, "search", None)
    if not callable(run):
        from commonplace.compiler.search import open_engine

        return open_engine(live.root).search(req)
    try:
        params = inspect.signature(run).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins
        params = ()
    if params and all(p.kind == p.VAR_KEYWORD for p in params):
        return run(**req)
    return run(req)


# --------------------------------------------------------------------------- get


def get(root: Path, params: dict[str, Any], excluded: tuple[Path, ...] = ()) -> dict[str, Any]:
    try:
        r = w.read_document(root, params["path"], params.get("from") or 1, params.get("lines"), excluded)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    return r.as_dict(debug=bool(params.get("debug")))


# --------------------------------------------------------------------------- write


def write(live: Any, root: Path, params: dict[str, Any], actor: str | None,
          excluded: tuple[Path, ...] = ()) -> dict[str, Any]:
    req = w.WriteRequest(
        kind=params.get("kind") or "append",
        target=params["target"],
        content=params.get("content") or "",
        frontmatter=params.get("frontmatter"),
        expected_hash=params.get("expected_hash"),
        reason=params.get("reason"),
        dry_run=bool(params.get("dry_run")),
        soft=bool(params.get("soft")),
        actor=actor,
    )
    try:
        res = w.apply_write(root, req, excluded)  # serialized by the corpus write lock
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    out = res.as_dict()
    if res.dry_run:
        out.update(indexed=False, edges_added=0)
        return out
    before = links_of(live, res.path, res.old_data)
    indexed, note = refresh(live, [res.path])
    if res.action == "forgotten":
        _purge(live)
    out["indexed"] = indexed
    out["edges_added"] = len(links_of(live, res.path, res.new_data) - before)
    if note:
        out["message"] = (out.get("message", "") + "; " if out.get("message") else "") + note
    return out


def _purge(live: Any) -> None:
    """After a forget: physically drop the forgotten text from derived state a refresh
    keeps (older index generations, deleted index entries, the embedding cache). Runs
    under the live corpus's write lock, like its own purge after claim-log forgets."""
    purge = getattr(live, "purge", None)
    try:
        if callable(purge):
            purge()
        elif getattr(live, "index", False) and getattr(live, "root", None) is not None:
            from commonplace.compiler.search import purge as purge_index

            with _lock(live):
                purge_index(live.root)
    except Exception:  # noqa: BLE001 - the tombstone is written; the next build purges too
        log.exception("purge after forget failed")


# --------------------------------------------------------------------------- memory-write


def memory_write(live: Any, root: Path, params: dict[str, Any], actor: str | None) -> dict[str, Any]:
    from commonplace.compiler import claims as c

    action = params.get("action") or "write"
    kind = params.get("kind") or "fact"
    subject = params["subject"]
    content = params.get("content") or ""
    reason = params.get("reason")
    dry_run = bool(params.get("dry_run"))
    soft = bool(params.get("soft"))
    confidence = params.get("confidence")
    answer: dict[str, Any] = {
        "resolved": False, "action": action, "kind": kind, "subject_ref": None, "target_path": None,
        "result": "rejected", "confidence": confidence, "indexed": False, "quarantined": False, "message": "",
        "dry_run": dry_run,
    }
    if action in ("write", "replace") and not content.strip():
        raise ApiError(400, "missing_parameter", f"`content` is required for action={action}")
    if action == "forget" and not (reason or "").strip():
        raise ApiError(400, "missing_parameter", "`reason` is required for action=forget")

    findings = w.scan_content("\n".join([content, reason or "", subject, params.get("scope") or ""]))
    if findings:
        if not soft:
            first = findings[0]
            raise ApiError(422, "content_refused",
                           f"content refused: {first.message}; send soft=true to quarantine it for review",
                           findings=[f.as_dict() for f in findings])
        return _quarantine(live, root, answer, params, actor, findings, "content refused by the write checks")

    store = c.ClaimStore(root, actor=actor or "api")
    try:
        entity = store.resolve(subject)
    except (c.UnknownSubject, c.AmbiguousSubject) as exc:
        if soft:
            return _quarantine(live, root, answer, params, actor, [], exc.message)
        answer.update(message=exc.message, candidates=exc.candidates)
        return answer
    except c.ClaimError as exc:
        raise _claim_error(exc) from None
    answer.update(resolved=True, subject_ref=entity.id, target_path=entity.path)

    canonical = entity.exists and _is_canonical(root, entity.path)
    if params.get("force_inbox") or (canonical and not params.get("allow_canonical")):
        if not params.get("force_inbox"):
            answer.update(message=f"{entity.path} is a canonical page: send allow_canonical=true to change it, "
                                  "or force_inbox=true to file the statement in the inbox for a person")
            return answer
        return _inbox(live, root, answer, params, actor, entity)

    try:
        if action == "write":
            r = store.add(entity.id if entity.exists else subject, content, kind, confidence=confidence,
                          reason=reason, evidence=params.get("source"), dry_run=dry_run, raw_input=content)
        elif action == "replace":
            r = store.replace(entity.id, content, claim=params.get("claim"), kind=kind,
                              confidence=confidence, reason=reason, evidence=params.get("source"),
                              dry_run=dry_run, raw_input=content)
        else:
            r = store.forget(entity.id, content.strip() or None, reason=reason or "",
                             all=bool(params.get("all")), dry_run=dry_run)
    except c.ClaimError as exc:
        raise _claim_error(exc) from None
    answer["result"] = "dry_run" if dry_run else {"add": "written", "replace": "replaced", "forget": "forgotten",
                                                   "noop": "unchanged"}.get(r.action, r.action)
    answer["message"] = r.message + ("" if not r.warnings else " (" + "; ".join(r.warnings[:5]) + ")")
    answer["target_path"] = r.target_path
    answer["claim_ids"] = r.claim_ids
    answer["evidence_path"] = r.evidence_path
    if dry_run:
        d = r.as_dict(preview=True)
        answer["preview"] = d.get("preview")
        answer["diff"] = d.get("diff")
        return answer
    if r.action == "noop":
        answer["indexed"] = True
        return answer
    # The claim store already compiled the page; refresh it, the evidence file and any
    # artifact a forget redacted (the claim log itself is not a document).
    paths = [r.target_path] + ([r.evidence_path] if r.evidence_path else []) + list(r.redacted)
    indexed, note = refresh(live, list(dict.fromkeys(paths)))
    if r.action == "forget":
        _purge(live)
    answer["indexed"] = indexed
    if note:
        answer["message"] += "; " + note
    return answer


def _claim_error(exc: Any) -> ApiError:
    from commonplace.compiler import claims as c

    if isinstance(exc, (c.UnknownSubject, c.ClaimNotFound)):
        status = 404
    elif isinstance(exc, (c.AmbiguousSubject, c.AmbiguousClaim, c.PageConflict)):
        status = 409
    else:
        status = 400
    return ApiError(status, exc.code, exc.message, candidates=list(exc.candidates))


def _is_canonical(root: Path, rel: str) -> bool:
    try:
        r = w.read_document(root, rel)
    except w.WriteError:
        return False
    v = r.frontmatter.get("canonical")
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))


def _note_text(title: str, meta: dict[str, Any], body: str) -> str:
    from commonplace.compiler import frontmatter as fm

    meta = {"title": title, **meta}
    return "---\n" + fm.dump(meta) + "---\n\n" + body


def _inbox(live: Any, root: Path, answer: dict[str, Any], params: dict[str, Any], actor: str | None,
           entity: Any) -> dict[str, Any]:
    import datetime as dt

    now = dt.datetime.now(dt.timezone.utc)
    slug = entity.slug[:60] if entity else "memory"
    target = f"inbox/{now:%Y-%m-%d}-{slug}-{params.get('action') or 'write'}.md"
    meta = {"type": "capture", "status": "raw", "entity": entity.id if entity else None,
            "memory_action": params.get("action") or "write", "claim_kind": params.get("kind") or "fact",
            "actor": actor or "api", "tags": ["memory-write"]}
    if params.get("confidence") is not None:
        meta["confidence"] = params["confidence"]
    line = params.get("content") or ""
    body = f"- {now:%H:%M:%S}Z ({params.get('kind') or 'fact'}) {line.strip()}\n"
    if params.get("reason"):
        body += f"  - reason: {params['reason'].strip()}\n"
    if params.get("source"):
        body += f"  - source: {params['source'].strip()}\n"
    req = w.WriteRequest("append", target, _note_text(f"Inbox: {entity.title if entity else 'memory'} {now:%Y-%m-%d}", meta, body),
                         dry_run=bool(params.get("dry_run")), actor=actor)
    try:
        res = w.apply_write(root, req)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    answer.update(result="dry_run" if res.dry_run else "inbox", target_path=res.path,
                  message=f"filed in {res.path} for a person to review")
    if not res.dry_run:
        answer["indexed"], note = refresh(live, [res.path])
        if note:
            answer["message"] += "; " + note
    return answer


def _quarantine(live: Any, root: Path, answer: dict[str, Any], params: dict[str, Any], actor: str | None,
                findings: list[w.Finding], why: str) -> dict[str, Any]:
    content = params.get("content") or ""
    text = (f"subject: {params.get('subject')}\naction: {params.get('action') or 'write'}\n"
            f"kind: {params.get('kind') or 'fact'}\nreason: {params.get('reason') or ''}\n\n{content}")
    req = w.WriteRequest("create", "inbox/memory-write.md", text, dry_run=bool(params.get("dry_run")),
                         soft=True, actor=actor)
    try:
        res = w.quarantine(root, req, findings or [w.Finding("unresolved-subject", why, 1)], why=why)
    except w.WriteError as exc:
        raise from_write_error(exc) from None
    if not res.dry_run:
        answer["indexed"], _ = refresh(live, [res.path])
    answer.update(result="quarantined", quarantined=True, target_path=res.path,
                  message=f"{why}; quarantined in {res.path} for review")
    return answer


# --------------------------------------------------------------------------- wake


def wake(live: Any, params: dict[str, Any]) -> dict[str, Any]:
    from commonplace.compiler.wake import wake as run

    r = run(live.docs, budget_tokens=params.get("budget_tokens") or 2000, profile=params.get("profile"),
            project=params.get("project"), agent=params.get("agent"), resolver=getattr(live, "resolver", None))
    return r.as_dict()


# --------------------------------------------------------------------------- link

MAX_WALK = 200_000


def resolve_doc(live: Any, path: str) -> str:
    docs = live.docs
    if path in docs:
        return path
    if not path.endswith(".md") and path + ".md" in docs:
        return path + ".md"
    resolver = getattr(live, "resolver", None)
    if resolver is not None and "\x00" not in path:
        try:
            res = resolver.resolve_wiki(path, "")
        except Exception:  # noqa: BLE001
            res = None
        if res is not None and res.path in docs:
            return res.path
    raise ApiError(404, "not_found", f"no document {w.reveal(path[:200])!r}")


def link(live: Any, params: dict[str, Any]) -> dict[str, Any]:
    op = params.get("op") or "neighbors"
    limit = params.get("max_edges") or 200
    path = params.get("path")
    if op in ("neighbors", "backlinks") and not path:
        raise ApiError(400, "missing_parameter", f"`path` is required for op={op}")
    rel = resolve_doc(live, path) if path else None
    graph = live.graph
    docs = live.docs
    if op == "neighbors":
        direction = params.get("direction") or "both"
        depth = params.get("depth") or 1
        edges: list[dict[str, Any]] = []
        seen_edges: set[tuple[str, str]] = set()
        visited = {rel}
        frontier = deque([(rel, 0)])
        while frontier and len(seen_edges) < MAX_WALK:
            node, d = frontier.popleft()
            if d >= depth:
                continue
            steps: list[tuple[str, str, str]] = []
            if direction in ("out", "both"):
                steps += [(node, t, "out") for t in graph.outgoing.get(node, ())]
            if direction in ("in", "both"):
                steps += [(s, node, "in") for s in graph.backlinks.get(node, ())]
            for src, dst, how in steps:
                if (src, dst) not in seen_edges:
                    seen_edges.add((src, dst))
                    edges.append({"source": src, "target": dst, "direction": how, "depth": d + 1})
                nxt = dst if how == "out" else src
                if nxt not in visited:
                    visited.add(nxt)
                    frontier.append((nxt, d + 1))
        total = len(edges)
        shown = edges[:limit]
        for e in shown:
            other = e["target"] if e["direction"] == "out" else e["source"]
            e["title"] = docs[other].title if other in docs else None
        return {"op": op, "path": rel, "direction": direction, "depth": depth, "edges": shown,
                "count": len(shown), "total_count": total, "truncated": total > len(shown)}
    if op == "backlinks":
        edges = []
        for src in graph.backlinks.get(rel, ()):
            d = docs.get(src)
            lines = sorted({l.line for l in d.links if l.resolved == rel}) if d else []
            edges.append({"source": src, "target": rel, "title": d.title if d else None, "lines": lines})
        total = len(edges)
        shown = edges[:limit]
        return {"op": op, "path": rel, "edges": shown, "count": len(shown), "total_count": total,
                "truncated": total > len(shown)}
    # lint
    broken: list[dict[str, Any]] = []
    self_links: list[dict[str, Any]] = []
    pool = [docs[rel]] if rel else [docs[p] for p in sorted(docs)]
    for d in pool:
        for l in d.links:
            shown_target = l.target or (f"#{l.heading}" if l.heading else "")
            if l.resolved is None:
                item = {"source": d.path, "target": shown_target, "line": l.line}
                if l.candidates:
                    item["candidates"] = list(l.candidates)
                broken.append(item)
            elif l.resolved == d.path and l.target:
                self_links.append({"source": d.path, "target": shown_target, "line": l.line})
    total = len(broken) + len(self_links)
    b = broken[:limit]
    s = self_links[: max(0, limit - len(b))]
    return {"op": op, "path": rel, "broken": b, "self_links": s, "count": len(b) + len(s),
            "total_count": total, "truncated": total > len(b) + len(s)}


# --------------------------------------------------------------------------- status


def status(live: Any, root: Path, server: dict[str, Any], out: Path | None = None,
           freshness: bool = False) -> dict[str, Any]:
    ready = bool(getattr(live, "ready", False))
    docs = (getattr(live, "docs", None) or {}) if ready else {}
    answer: dict[str, Any] = {
        "ok": True,
        "ready": ready,
        "documents": len(docs),
        "files": len(docs),
        "chunks": None,
        "vectors": None,
        "index": {},
        "model": None,
        "dimensions": None,
        "pending": None,
        "last_build": None,
        "last_refresh": None,
        "server": server,
    }
    try:
        from commonplace.compiler.search import index_status

        info = index_status(root, out, check_freshness=freshness)
    except Exception as exc:  # noqa: BLE001 - status must answer even with a broken index
        info = {"index": False, "error": type(exc).__name__}
    if isinstance(info, dict):
        info = {k: v for k, v in info.items() if k != "corpus"}  # no server filesystem paths
        answer["index"] = info
        answer["chunks"] = info.get("chunks")
        answer["vectors"] = info.get("vectors")
        emb = info.get("embedding") or {}
        answer["model"] = emb.get("model") or emb.get("configured_model")
        answer["dimensions"] = emb.get("dimensions")
        answer["pending"] = (info.get("pending") or {}).get("documents")
    for key, attr in (("last_build", "last_build"), ("last_refresh", "last_refresh")):
        value = getattr(live, attr, None)
        if value is not None:
            answer[key] = value.as_dict() if hasattr(value, "as_dict") else value
    lb = answer["last_build"]
    if isinstance(lb, dict):  # warnings name corpus files only; keep the answer small
        lb.pop("warnings", None)
    return answer
