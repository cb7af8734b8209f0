"""The built wiki in a real browser (Debian's Chromium driven by Playwright), from file://.

What a person does first: search as they type, open the graph, switch to dark mode,
read on a phone, land on a missing page. tests/browser/browserkit.py says how Chromium
is found; without it these tests skip and say why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browserkit import PHONE, RARE_WORD, build_site, checked_page, make_corpus, why_no_browser

REASON = why_no_browser()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no browser: {REASON}")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    return build_site(make_corpus(tmp / "corpus"), tmp / "site")


@pytest.fixture
def page(browser):
    with checked_page(browser) as p:  # no script error on any page a test visited
        yield p


def url(site: Path, rel: str) -> str:
    return (site / rel).as_uri()


def test_typing_a_word_from_the_last_section_finds_the_page_highlighted(site: Path, page):
    page.goto(url(site, "core/overview/index.html"))
    page.keyboard.press("/")
    page.keyboard.type(RARE_WORD[:7])  # at once (no letter lost while search loads), no Enter
    first = page.locator(".search-results li").first
    first.wait_for(timeout=5000)
    assert first.locator(".r-title").inner_text() == "Long page"
    assert first.locator("mark").first.inner_text().lower() == RARE_WORD
    assert "The very end" in first.locator(".r-section").inner_text()
    href = first.locator("a").get_attribute("href")
    assert href.endswith("#the-very-end") and "notes/long/index.html" in href
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*notes/long/index\.html.*#the-very-end$"))
    hit = page.locator(".content mark.hit").first
    assert hit.inner_text().lower() == RARE_WORD and hit.is_visible()


def test_keyboard_opens_moves_and_closes_the_search(site: Path, page):
    page.goto(url(site, "index.html"))
    page.keyboard.press("Control+k")
    box = page.locator(".search-backdrop input")
    box.wait_for()
    page.keyboard.type("search")
    page.locator(".search-results li").nth(1).wait_for()
    assert page.locator('.search-results li[aria-selected="true"]').count() == 1
    first_id = page.locator('.search-results li[aria-selected="true"]').get_attribute("id")
    page.keyboard.press("ArrowDown")
    assert page.locator('.search-results li[aria-selected="true"]').get_attribute("id") != first_id
    page.keyboard.press("ArrowUp")
    assert page.locator('.search-results li[aria-selected="true"]').get_attribute("id") == first_id
    page.keyboard.press("Escape")
    assert page.locator(".search-backdrop").count() == 0


def test_literal_brackets_in_page_text_are_not_marked(site: Path, page):
    page.goto(url(site, "index.html"))
    page.keyboard.press("/")
    page.keyboard.type("syntax brackets")
    # Past the first few results a snippet is still loading (li.r-pending): wait for its text.
    result = page.locator(".search-results li:not(.r-pending)", has_text="Wide things").first
    result.wait_for(timeout=5000)
    snippet = result.locator(".r-snippet")
    assert "[[syntax and brackets]]" in snippet.inner_text()
    marks = [m.lower() for m in snippet.locator("mark").all_inner_texts()]
    assert marks and set(marks) <= {"syntax", "brackets"}


def test_the_search_page_searches_from_its_address(site: Path, page):
    page.goto(url(site, "_/search/index.html") + "?q=" + RARE_WORD)
    page.locator(".search-results li").first.wait_for(timeout=5000)
    assert page.locator(".search-results li .r-title").first.inner_text() == "Long page"


def test_offline_index_ranks_as_minisearch_indexing_the_pages_itself(site: Path, page):
    """The build hands MiniSearch ready postings; MiniSearch indexing the same text in
    the page must give the same pages, in the same order, with the same scores."""
    page.goto(url(site, "index.html"))
    page.keyboard.press("/")
    page.locator(".search-backdrop input").wait_for()
    # data.js loads on demand (the first query, or a link preview); one engine query is
    # what brings it in, so the comparison does not race the lazy load.
    compared = page.evaluate("""async () => {
        await window.CommonplaceSearch.engineSearch("search");
        const D = window.CommonplaceData, meta = await D.loadMeta();
        const own = new MiniSearch({fields: meta.fields, tokenize: t => (t.toLowerCase().match(/[\\p{L}\\p{N}]+/gu) || []).filter(w => w.length <= 40)});
        const docs = [];
        for (let i = 0; i < meta.docs.length; i++) {
            const secs = await D.sections(i);
            docs.push({id: i, title: [meta.docs[i][1]].concat(meta.docs[i][3]).join(" "),
                       text: secs.map(s => s.length === 3 ? s[1] + " " + s[2] : s[s.length - 1]).join(" ")});
        }
        own.addAll(docs);
        const out = {};
        for (const q of ["search", "hybrid rank", "vnni", "build incremental", "quill", "zzznothing"]) {
            const mine = await window.CommonplaceSearch.engineSearch(q);
            const theirs = own.search(q, {prefix: true, boost: {title: 3}, combineWith: "AND"});
            out[q] = [mine.map(r => [r.id, r.score.toFixed(6)]), theirs.map(r => [r.id, r.score.toFixed(6)])];
        }
        return out;
    }""")
    for q, (mine, theirs) in compared.items():
        assert mine == theirs, q
    assert compared["vnni"][0] and not compared["zzznothing"][0]


def test_graph_page_draws_every_node_and_filters_by_type(site: Path, page):
    page.goto(url(site, "_/graph/index.html"))
    page.locator("#graph canvas").first.wait_for(timeout=10000)
    nodes = int(page.locator("#graph").get_attribute("data-nodes"))
    assert nodes == len(json.loads((site / "graph.json").read_text())["nodes"])
    page.locator('#graph[data-settled="true"]').wait_for(timeout=20000)
    page.wait_for_timeout(600)  # the zoom-to-fit animation
    painted = page.evaluate("""() => {
        const c = document.querySelector('#graph canvas'), ctx = c.getContext('2d');
        const d = ctx.getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n; }""")
    assert painted > 500  # nodes and links were drawn
    # Clicking a node opens its page (the node's place on screen from force-graph itself;
    # asked again before each try, as the zoom-to-fit may still be moving the view). The
    # view is zoomed in on the node first: at the fitted zoom a neighbour can lie under the
    # same pixel, and the click then opens that one.
    graph_url = page.url
    for _ in range(10):
        if page.url != graph_url:  # a neighbour's page opened: back to the graph
            page.goto(graph_url)
            page.locator('#graph[data-settled="true"]').wait_for(timeout=20000)
        page.evaluate("""() => {  // bring the node into the visible part of the canvas
            const g = window.CommonplaceGraph.instance, n = g.graphData().nodes.find(n => n.title === 'Long page');
            document.querySelector('#graph').scrollIntoView(); g.centerAt(n.x, n.y, 0); g.zoom(8, 0); }""")
        page.wait_for_timeout(200)
        target = page.evaluate("""() => {
            const g = window.CommonplaceGraph.instance, n = g.graphData().nodes.find(n => n.title === 'Long page');
            const p = g.graph2ScreenCoords(n.x, n.y), r = document.querySelector('#graph canvas').getBoundingClientRect();
            return {x: r.left + p.x, y: r.top + p.y}; }""")
        page.mouse.move(target["x"], target["y"])
        page.mouse.click(target["x"], target["y"])
        try:
            page.wait_for_url(re.compile(r".*notes/long/index\.html$"), timeout=1000)
            break
        except Exception:  # noqa: BLE001 - the view moved under the pointer: ask again
            page.wait_for_timeout(300)
    assert page.url.endswith("notes/long/index.html"), page.url
    page.go_back()
    page.locator("#graph canvas").first.wait_for(timeout=10000)
    page.locator('input[name="type"][value="decision"]').uncheck()
    shown = int(page.locator("#graph").get_attribute("data-shown"))
    assert 0 < shown < nodes


def test_dark_mode_is_remembered_across_a_reload(site: Path, page):
    page.goto(url(site, "concepts/wikilinks/index.html"))
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.locator(".theme-toggle").click()
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark" and dark != light
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark
    page.goto(url(site, "index.html"))  # another page remembers it too
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark
    page.locator(".theme-toggle").click()
    page.reload()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == light


@pytest.mark.parametrize("rel", ["index.html", "references/cli/index.html", "notes/wide/index.html",
                                 "notes/long/index.html", "_/graph/index.html", "_/broken/index.html", "404.html"])
def test_no_sideways_scroll_on_a_phone(site: Path, browser, rel: str):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(url(site, rel))
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], rel
    context.close()


def test_phone_menu_opens_the_navigation(site: Path, browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(url(site, "core/overview/index.html"))
    side = page.locator("nav.side")
    assert not side.is_visible()
    page.locator(".menu-toggle").click()
    assert side.is_visible() and side.locator("a", has_text="Recent changes").is_visible()
    page.keyboard.press("Escape")
    assert not side.is_visible()
    context.close()


def test_not_found_page_from_disk_is_styled_and_leads_home(site: Path, page):
    page.goto(url(site, "404.html"))
    assert page.evaluate("getComputedStyle(document.querySelector('.top')).position") == "sticky"  # style.css applied
    page.locator("a.start").click()
    page.wait_for_url(url(site, "index.html"))
    assert page.locator("h1").inner_text() == "corpus"


def test_table_of_contents_permalinks_and_previews(site: Path, page):
    page.goto(url(site, "notes/wide/index.html"))
    assert page.locator(".toc").count() == 0  # no headings: no table of contents
    link = page.locator(".content a.wikilink", has_text="Long page")
    link.hover()
    preview = page.locator(".preview")
    preview.wait_for(timeout=5000)
    assert preview.locator("strong").inner_text() == "Long page"
    assert "gardens" in preview.inner_text()
    page.goto(url(site, "notes/long/index.html"))
    toc = page.locator(".toc a")
    assert toc.count() == 41
    assert page.locator("h2#the-very-end a.anchor").get_attribute("href") == "#the-very-end"
    page.locator(".toc a", has_text="The very end").click()
    assert page.evaluate("location.hash") == "#the-very-end"


def test_local_graph_shows_the_page_and_its_neighbours(site: Path, page):
    page.goto(url(site, "concepts/wikilinks/index.html"))
    graph = page.locator("[data-local-graph]")
    graph.scroll_into_view_if_needed()
    page.locator("[data-local-graph] canvas").first.wait_for(timeout=10000)
    neighbours = page.locator(".links ul.outgoing > li, .links ul.backlinks > li").count()
    assert int(graph.get_attribute("data-nodes")) >= 2 and neighbours >= 1
