"""The build manifest: what the last build saw and wrote, so the next one redoes only
what changed. It is a cache: deleting it (or `--clean`) only costs a full build.

Stored as JSON in `.commonplace/manifest.json`, written atomically (temp file, fsync,
rename), so a build killed at any point leaves the previous manifest intact.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ...templates import TEMPLATE_DIR
from .. import __version__
from ..site import search as site_search
from ..site.deps import facets
from ..corpus.attachments import Attachments
from ..site.folder_tree import all_folders
from ..corpus.links import LinkGraph
from ..model import TRANSIENT_FIELDS, state_path, Document, Link, Warning_
from .state import SiteState

FORMAT = 3
# Not saved: the source text (read again when the file changes), the rendered HTML (it is
# in the pages), the text by section for the site's search (it is in the search data's
# text shards, about half the manifest otherwise), the parse-time fields, and links
# (saved as plain lists below).
_SKIP = {"text", "body", "html", "links", "search_text", *TRANSIENT_FIELDS}


def manifest_path(root: Path, out: Path) -> Path:
    """One manifest per output folder, so building to two places never thrashes."""
    key = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]
    return state_path(root) / "builds" / key / "manifest.json"


def fingerprint(name: str, site_url: str, out: Path, titles: str = "heading") -> str:
    """Anything that changes every page: code version, templates, site name and URL,
    and where titles come from (`site.titles`)."""
    h = hashlib.sha256(f"{FORMAT}\0{__version__}\0{name}\0{site_url}\0{out}\0{titles}".encode())
    for f in sorted(TEMPLATE_DIR.rglob("*")):
        if f.is_file() and f.suffix in {".html", ".css", ".js", ".xml"}:
            h.update(f.relative_to(TEMPLATE_DIR).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _doc_to_json(d: Document) -> dict[str, Any]:
    data = {k: v for k, v in d.__dict__.items() if k not in _SKIP}
    data["links"] = [[l.target, l.label, l.heading, l.line, l.kind, l.resolved, list(l.candidates)] for l in d.links]
    return data


def _doc_from_json(data: dict[str, Any]) -> Document:
    links = [Link(t, lab, h, line, kind, res, tuple(c)) for t, lab, h, line, kind, res, c in data.pop("links")]
    data["headings"] = [tuple(h) for h in data["headings"]]
    return Document(text="", body="", links=links, **data)


def save(state: SiteState, fp: str) -> None:
    write(snapshot(state, fp))


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # C encoder; dump() is not


def _encoded_docs(state: SiteState) -> list[str]:
    """Each document's JSON, sorted by path. Encoded once and kept on the state until an
    update touches the document (`SiteState.manifest_dirty`): at 10,000 documents the
    manifest is ~58 MB, and encoding all of it after every save held the GIL (and, for
    the dicts, the writer's lock) for about a second while readers waited."""
    cache: dict[str, str] = state.__dict__.setdefault("_manifest_json", {})
    dirty, state.manifest_dirty = state.manifest_dirty, set()
    if dirty is None:
        cache.clear()
    else:
        for p in dirty:
            cache.pop(p, None)
    out = []
    for p in sorted(state.docs):
        enc = cache.get(p)
        if enc is None:
            enc = cache[p] = _encode(_doc_to_json(state.docs[p]))
        out.append(enc)
    if len(cache) > len(out):  # removed documents
        for p in [p for p in cache if p not in state.docs]:
            del cache[p]
    return out


def snapshot(state: SiteState, fp: str) -> tuple[Path, dict[str, Any]]:
    """What `write` stores; cheap enough to take under the writer's lock (documents an
    update did not touch are not encoded again; `docs` holds encoded JSON)."""
    path = manifest_path(state.root, state.out)
    payload = {
        "format": FORMAT,
        "fingerprint": fp,
        "docs": _encoded_docs(state),
        "warnings": {p: [w.as_dict() for w in ws] for p, ws in sorted(state.doc_warnings.items()) if ws},
        "outputs": sorted(state.outputs),
        "attachments": state.attachments.as_json(),
        "home": state.home,
    }
    return path, payload


def write(snap: tuple[Path, dict[str, Any]]) -> None:
    """Serialize and store a snapshot atomically (no lock needed: the data is a copy)."""
    path, payload = snap
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    rest = {k: v for k, v in payload.items() if k != "docs"}
    head = _encode({k: rest[k] for k in ("format", "fingerprint")})
    tail = _encode({k: v for k, v in rest.items() if k not in ("format", "fingerprint")})
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(head[:-1] + ',"docs":[')
        fh.write(",".join(payload["docs"]))
        fh.write("]," + tail[1:])
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def load(root: Path, out: Path, name: str, site_url: str, fp: str) -> SiteState | None:
    """The state the last build left, or None when there is none we can trust."""
    path = manifest_path(root, out)
    try:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
        if payload.get("format") != FORMAT or payload.get("fingerprint") != fp:
            return None
        state = SiteState(root, out, name, site_url)
        for item in payload["docs"]:
            doc = _doc_from_json(item)
            state._put(doc)
        for p, ws in payload["warnings"].items():
            state.doc_warnings[p] = [Warning_(w["path"], w["message"], w.get("line"), w.get("code", "warning")) for w in ws]
        state.outputs = set(payload["outputs"])
        state.attachments = Attachments.from_json(payload.get("attachments", {}))
        state.home = payload.get("home")
        for p in state.attachments.disk:
            state.resolver.add_file(p)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or damaged: a full build recreates it
    texts = site_search.read_texts(out, [p for p, d in state.docs.items() if not d.is_session])
    if texts is None:
        return None  # the search data is gone or damaged: a full build recreates it
    for p, text in texts.items():
        state.docs[p].search_text = text
    state.graph = LinkGraph.build(state.docs.values())
    state.facets = {p: facets(d) for p, d in state.docs.items()}
    state.types = sorted({d.type for d in state.docs.values()})
    state.folders = tuple(all_folders({d.folder for d in state.docs.values()}))
    return state
