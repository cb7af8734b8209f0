"""Stage 6, emit: the site model -> output files (site-relative path -> bytes).

The page functions, each over the `Site`; `emitters.py` lists them as the build's
emitters. The build collects their outputs and writes only the files whose bytes
changed. Output never depends on the clock.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

import jinja2
from markupsafe import Markup, escape

from ...templates import STATIC_DIR, TEMPLATE_DIR
from ..model import Document, page_url
from .render import quote_url, root_prefix
from . import emit_parts, search as site_search
from .folder_tree import tree_html
from .model import Site, SiteContext, folder_url, slug, tag_url, type_label, type_url

Output = tuple[str, bytes]

# Frontmatter keys already shown as chips; everything else appears in the metadata table.
_CHIP_KEYS = {"title", "type", "status", "tags", "created", "updated", "date", "canonical", "pinned"}


def xml_escape(text: str, entities: dict[str, str] | None = None) -> str:
    """`xml.sax.saxutils.escape`, whose import pulls in urllib.request, http.client and
    email: 38 ms of every build's start-up (measured)."""
    text = text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    for key, value in (entities or {}).items():
        text = text.replace(key, value)
    return text


_ENV: jinja2.Environment | None = None


def make_env() -> jinja2.Environment:
    """One environment per process: compiling the templates again on every refresh
    cost a server about 40% of a write's site update (measured)."""
    global _ENV
    if _ENV is None:
        _ENV = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
            autoescape=True,
            trim_blocks=False,
            keep_trailing_newline=True,
            auto_reload=False,
        )
    return _ENV


def _meta_value(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)[:2000]
    return str(v)[:2000]


def _entry(d: Document) -> dict:
    return {"title": d.title, "url": d.url, "path": d.path, "status": d.status, "date": d.sort_date}


_NAV_CACHE: dict[tuple, Markup] = {}


def _nav(site: SiteContext, root: str) -> Markup:
    """The type list of the side navigation: the same on every page of one depth, so it
    is rendered once per depth rather than once per page."""
    key = (tuple(site.types), root)
    nav = _NAV_CACHE.get(key)
    if nav is None:
        if len(_NAV_CACHE) > 256:
            _NAV_CACHE.clear()
        items = "".join(f'<li><a href="{escape(root + t["url"])}">{escape(t["label"])}</a></li>'
                        for t in site.nav_types())
        nav = _NAV_CACHE[key] = Markup(items)
    return nav


def _common(site: SiteContext, url: str) -> dict:
    # `root` is only "./" or "../" repeated: safe as it is, so the templates skip escaping it.
    root = Markup(root_prefix(url))
    return {"root": root, "site_name": _escaped(site.name), "nav_types_html": _nav(site, root),
            "nav_folders_html": tree_html(site.folders, root, folder_url)}


# Escaped fragments reused across pages. A page lists ~30 links and the same documents
# appear on many pages; escaping each item in the template cost a third of page
# rendering (measured). Keys hold everything a fragment shows, so a changed title or
# path makes a new entry; the caches are dropped when they grow large (long-running server).
_FRAGMENTS: dict = {}
_FRAGMENTS_MAX = 200_000


def _remember(key: tuple, value: Any) -> Any:
    if len(_FRAGMENTS) > _FRAGMENTS_MAX:
        _FRAGMENTS.clear()
    _FRAGMENTS[key] = value
    return value


def _escaped(text: str) -> Markup:
    key = ("e", text)
    return _FRAGMENTS.get(key) or _remember(key, escape(text))


def _link_items(site: SiteContext, root: str, paths: list[str]) -> Markup:
    """`<li>` items for the Links and Backlinks lists (as page.html used to loop them)."""
    parts = []
    titles = site.titles
    for p in paths:
        title = titles.get(p, p)
        key = ("l", p, title)
        frag = _FRAGMENTS.get(key)
        if frag is None:
            frag = _remember(key, (str(escape(page_url(p))),
                                   f'">{escape(title)}</a> <span class="path">{escape(p)}</span></li>'))
        parts.append(f'<li><a href="{root}{frag[0]}{frag[1]}')
    return Markup("".join(parts))


def _tag_chips(root: str, tags: list[str]) -> Markup:
    parts = []
    for t in tags:
        key = ("t", t)
        frag = _FRAGMENTS.get(key)
        if frag is None:
            frag = _remember(key, (str(escape(tag_url(t))), f'">#{escape(t)}</a></li>'))
        parts.append(f'<li class="chip tag"><a href="{root}{frag[0]}{frag[1]}')
    return Markup("".join(parts))


def _crumbs_html(root: str, folder: str) -> Markup:
    key = ("c", root, folder)
    html = _FRAGMENTS.get(key)
    if html is None:
        html = _remember(key, Markup("".join(f'<a href="{root}{escape(c["url"])}">{escape(c["label"])}</a> / '
                                             for c in crumbs(folder))))
    return html


def crumbs(folder: str) -> list[dict]:
    out = [{"label": "Home", "url": "index.html"}]
    parts = folder.split("/") if folder else []
    for i in range(len(parts)):
        f = "/".join(parts[: i + 1])
        out.append({"label": parts[i], "url": folder_url(f)})
    return out


def document_page(site: SiteContext, env: jinja2.Environment, d: Document) -> Output:
    url = d.url
    superseded = None
    for link in d.links:
        if link.kind == "meta":
            superseded = {"label": site.title_of(link.resolved) if link.resolved else link.target,
                          "url": page_url(link.resolved) if link.resolved else None}
    common = _common(site, url)
    root = common["root"]
    html = env.get_template("page.html").render(
        **common,
        title=d.title,
        doc=d,
        type_url=type_url(d.type),
        tags_html=_tag_chips(root, d.tags),
        meta=[(k, _meta_value(v)) for k, v in d.frontmatter.items() if k not in _CHIP_KEYS],
        content=Markup(d.html),
        crumbs_html=_crumbs_html(root, d.folder),
        superseded_by=superseded,
        outgoing_html=_link_items(site, root, site.graph.outgoing.get(d.path, [])),
        backlinks_html=_link_items(site, root, site.graph.backlinks.get(d.path, [])),
        broken=[{"target": l.target, "line": l.line, "candidates": l.candidates} for l in d.links if l.broken],
        toc=table_of_contents(d),
    )
    return url, html.encode("utf-8")


TOC_MIN_HEADINGS = 3


def table_of_contents(d: Document) -> list[tuple[int, str, str]]:
    """(level, text, anchor) of the headings a page lists beside it: levels 1-4 but the
    heading that repeats the title; none when there are fewer than three."""
    items = [h for h in d.headings if h[0] <= 4 and h[2] and not (h[0] == 1 and (h[2] == d.title_anchor or h[1] == d.title))]
    return items if len(items) >= TOC_MIN_HEADINGS else []


def home_page(site: Site, env: jinja2.Environment) -> Output:
    url = "index.html"
    pinned = [d for d in site.docs if d.frontmatter.get("pinned") is True or (d.type == "core" and d.canonical)]
    html = env.get_template("home.html").render(
        **_common(site, url), title="Home", count=len(site.docs),
        pinned=[_entry(d) for d in pinned],
        types=[{"label": type_label(t), "url": type_url(t), "count": len(ds)} for t, ds in site.by_type.items()],
        recent=[_entry(d) for d in site.recent(10)],
    )
    return url, html.encode("utf-8")


def _doc_items(root: str, docs: list[Document]) -> Markup:
    """The `<li>` lines of a document list; each document's escaped line is cached, as
    it shows on its type, folder and tag pages (and these on every rebuild)."""
    parts = []
    for d in docs:
        date = d.sort_date
        key = ("d", d.path, d.title, d.status, date)
        frag = _FRAGMENTS.get(key)
        if frag is None:
            status = f' <span class="chip status status-{escape(d.status)}">{escape(d.status)}</span>' if d.status else ""
            when = f" <time>{escape(date)}</time>" if date else ""
            frag = _remember(key, f'{escape(d.url)}">{escape(d.title)}</a>{status}{when} '
                                  f'<span class="path">{escape(d.path)}</span></li>\n')
        parts.append(f'<li><a href="{root}{frag}')
    return Markup("".join(parts))


def _list_page(site: Site, env: jinja2.Environment, url: str, title: str, items: list[Document], **extra: Any) -> Output:
    common = _common(site, url)
    html = env.get_template("list.html").render(
        **common, title=title, items_html=_doc_items(common["root"], items), **extra
    )
    return url, html.encode("utf-8")


def _by_title(docs: list[Document]) -> list[Document]:
    return sorted(docs, key=lambda d: (d.title.lower(), d.path))


def type_pages(site: Site, env: jinja2.Environment, only: set[str] | None = None) -> Iterator[Output]:
    for t, docs in site.by_type.items():
        if only is None or t in only:
            yield _list_page(site, env, type_url(t), type_label(t), _by_title(docs))


def tag_pages(site: Site, env: jinja2.Environment, only: set[str] | None = None) -> Iterator[Output]:
    url = "_/tags/index.html"
    tags = [{"label": t, "url": tag_url(t), "count": len(ds)} for t, ds in site.by_tag.items()]
    yield url, env.get_template("tags.html").render(**_common(site, url), title="Tags", tags=tags).encode("utf-8")
    for t, docs in site.by_tag.items():
        if only is None or t in only:
            yield _list_page(site, env, tag_url(t), f"#{t}", _by_title(docs))


def folder_pages(site: Site, env: jinja2.Environment, only: set[str] | None = None) -> Iterator[Output]:
    folders = site.all_folders()
    counts: dict[str, int] = {f: 0 for f in folders}
    for f, docs in site.by_folder.items():
        parts = f.split("/") if f else []
        for i in range(len(parts) + 1):
            counts["/".join(parts[:i])] += len(docs)
    for f in folders:
        if only is not None and f not in only:
            continue
        depth = 0 if not f else f.count("/") + 1
        subs = [s for s in folders if s and s.count("/") + 1 == depth + 1 and (not f or s.startswith(f + "/"))]
        yield _list_page(
            site, env, folder_url(f), (f + "/") if f else "All folders",
            sorted(site.by_folder.get(f, []), key=lambda d: d.path),
            subfolders=[{"label": s.rsplit("/", 1)[-1], "url": folder_url(s), "count": counts[s]} for s in subs],
        )


def recent_page(site: Site, env: jinja2.Environment) -> Output:
    return _list_page(
        site, env, "_/recent/index.html", "Recent changes", site.recent(200),
        intro="Documents by their updated, date or created field, newest first.",
    )


def broken_page(site: Site, env: jinja2.Environment, broken: list[dict] | None = None) -> Output:
    url = "_/broken/index.html"
    broken = site.broken_links() if broken is None else broken
    html = env.get_template("broken.html").render(**_common(site, url), title="Broken links", broken=broken)
    return url, html.encode("utf-8")


def search_page(site: Site, env: jinja2.Environment) -> Output:
    url = "_/search/index.html"
    return url, env.get_template("search.html").render(**_common(site, url), title="Search").encode("utf-8")


def not_found_page(site: Site, env: jinja2.Environment) -> Output:
    """Served for any missing path, at any depth, so its assets are asked for twice:
    relative (right from disk and at the top of the site) and from the site's root path
    (right under a server at any depth; `<base>` is no help where CSP has base-uri 'none')."""
    url = "404.html"
    return url, env.get_template("404.html").render(**_common(site, url), title="Not found",
                                                    abs_root=site.root_path).encode("utf-8")


def _json(data: Any) -> str:
    # No indent: with one, json falls back to its pure-Python encoder (slow at 10k nodes).
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _dumps(data: Any) -> bytes:
    return (_json(data) + "\n").encode("utf-8")


def graph_json(site: Site, broken_links: list[dict] | None = None) -> Output:
    """What `_dumps({"nodes": ..., "edges": ..., "broken": ...})` gives, assembled from each
    document's node and edges encoded once (`emit_parts`)."""
    nodes = emit_parts.node_fragments(site, "graph-nodes", lambda d: _json(
        {"id": d.path, "title": d.title, "type": d.type, "url": d.url, "tags": d.tags}))
    links = site.broken_links() if broken_links is None else broken_links
    broken = [{"source": b["path"], "target": b["target"], "line": b["line"]} for b in links]
    text = f'{{"broken":{_json(broken)},"edges":[{emit_parts.graph_edges(site)}],"nodes":[{",".join(nodes)}]}}\n'
    return "graph.json", text.encode("utf-8")


def search_shard(path: str) -> int:
    """The search text shard that holds `path` (`Selection.search_shards`)."""
    return site_search.text_shard(path)


def search_data(site: Site, only: set[int] | None = None) -> Iterator[Output]:
    """Offline search data (see `site_search`): the index, and the text shards in `only`."""
    yield from site_search.search_files(site.docs, only, owner=site.resolver)  # one model per site state


def graph_data(site: Site) -> Output:
    """The graph page's data as a script, so it loads from file:// too: nodes as
    [path, title, type, tags, url] and edges as pairs of node numbers (what
    `_json({"edges": ..., "nodes": ...})` gives, assembled from fragments: `emit_parts`)."""
    index = {d.path: i for i, d in enumerate(site.docs)}
    nodes = emit_parts.node_fragments(site, "graph-data-nodes",
                                      lambda d: site_search.script_safe(_json([d.path, d.title, d.type, d.tags, d.url])))
    payload = f'{{"edges":[{emit_parts.graph_data_edges(site, index)}],"nodes":[{",".join(nodes)}]}}'
    return "_/graph-data.js", f"window.COMMONPLACE_GRAPH = {payload};\n".encode("utf-8")


def graph_page(site: Site, env: jinja2.Environment) -> Output:
    url = "_/graph/index.html"
    html = env.get_template("graph.html").render(**_common(site, url), title="Graph",
                                                  types=[{"name": t, "label": type_label(t)} for t in site.by_type],
                                                  tags=list(site.by_tag))
    return url, html.encode("utf-8")


def _abs(site: Site, url: str) -> str:
    if site.site_url:
        return f"{site.site_url}/{quote_url(url)}"
    # A relative URL whose first folder holds a ':' would read as a scheme (javascript:...).
    return "./" + url if ":" in url.split("/", 1)[0] else url


def sitemap(site: Site) -> Output:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for d in site.docs:
        lines.append("  <url>")
        lines.append(f"    <loc>{xml_escape(_abs(site, d.url))}</loc>")
        if d.sort_date:
            lines.append(f"    <lastmod>{xml_escape(d.sort_date[:10])}</lastmod>")
        lines.append("  </url>")
    lines.append("</urlset>")
    return "sitemap.xml", ("\n".join(lines) + "\n").encode("utf-8")


def _atom_date(value: str) -> str:
    return value + "T00:00:00Z" if len(value) == 10 else value


def feed(site: Site) -> Output:
    recent = site.recent(50)
    updated = _atom_date(recent[0].sort_date) if recent else "1970-01-01T00:00:00Z"
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f"  <title>{xml_escape(site.name)}: recent changes</title>",
        f"  <id>urn:commonplace:{xml_escape(slug(site.name))}</id>",
        f"  <updated>{updated}</updated>",
        f'  <link rel="alternate" href="{xml_escape(_abs(site, "index.html"))}"/>',
    ]
    for d in recent:
        out += [
            "  <entry>",
            f"    <title>{xml_escape(d.title)}</title>",
            f"    <id>urn:commonplace:{xml_escape(site.name)}:{xml_escape(d.path)}</id>",
            f'    <link href="{xml_escape(_abs(site, d.url), {chr(34): "&quot;"})}"/>',
            f"    <updated>{_atom_date(d.sort_date or '')}</updated>",
            f"    <summary>{xml_escape(d.excerpt[:300])}</summary>",
            "  </entry>",
        ]
    out.append("</feed>")
    return "feed.xml", ("\n".join(out) + "\n").encode("utf-8")


def static_files() -> list[tuple[str, Path]]:
    """The templates' static files (vendored libraries and their licences included)."""
    return sorted((f"_/static/{f.relative_to(STATIC_DIR).as_posix()}", f) for f in STATIC_DIR.rglob("*")
                  if f.is_file() and not any(p.startswith(".") or p == "__pycache__"
                                             for p in f.relative_to(STATIC_DIR).parts))


def static_assets() -> Iterator[Output]:
    for url, f in static_files():
        yield url, f.read_bytes()
