"""Link resolution order: path, path without .md, unique stem, title/alias; never a guess."""

from __future__ import annotations

from commonplace.compiler.corpus.links import Resolution, Resolver
from commonplace.compiler.markdown.parse import parse


def corpus(files: dict[str, str]) -> Resolver:
    return Resolver.build([parse(path, text.encode())[0] for path, text in files.items()])


FILES = {
    "people/alex.md": "---\ntitle: Alex Chen\naliases: [AC]\n---\n",
    "projects/atlas/state.md": "---\ntitle: Atlas\n---\n",
    "projects/zeus/state.md": "---\ntitle: Zeus\n---\n",
    "notes/alex.md": "---\ntitle: Other Alex note\n---\n",
    "notes/unique-stem.md": "# Unique\n",
    "notes/Twin.md": "---\ntitle: Shared Title\n---\n",
    "notes/twin2.md": "---\ntitle: shared title\n---\n",
}


def test_exact_path_and_path_without_extension():
    r = corpus(FILES)
    assert r.resolve_wiki("people/alex.md", "x.md").path == "people/alex.md"
    assert r.resolve_wiki("people/alex", "x.md").path == "people/alex.md"


def test_unique_stem_resolves():
    assert corpus(FILES).resolve_wiki("unique-stem", "x.md").path == "notes/unique-stem.md"


def test_duplicate_stem_is_ambiguous_not_guessed():
    res = corpus(FILES).resolve_wiki("alex", "x.md")
    assert res.path is None
    assert set(res.candidates) == {"people/alex.md", "notes/alex.md"}


def test_duplicate_stem_falls_through_to_unique_title():
    r = corpus(FILES)
    # "state" is the stem of two files; nothing is titled "state" -> broken, ambiguous.
    assert r.resolve_wiki("state", "x.md").path is None
    assert r.resolve_wiki("Atlas", "x.md").path == "projects/atlas/state.md"


def test_title_and_alias_are_case_insensitive():
    r = corpus(FILES)
    assert r.resolve_wiki("alex chen", "x.md").path == "people/alex.md"
    assert r.resolve_wiki("ac", "x.md").path == "people/alex.md"


def test_ambiguous_title_is_reported_with_candidates():
    res = corpus(FILES).resolve_wiki("Shared Title", "x.md")
    assert res.path is None and res.candidates == ("notes/Twin.md", "notes/twin2.md")


def test_no_fuzzy_matching():
    r = corpus(FILES)
    for near_miss in ("Alex Che", "atlass", "unique_stem", "people/alex.mdx"):
        assert r.resolve_wiki(near_miss, "x.md").path is None


def test_markdown_links_resolve_relative_to_the_source_and_stay_inside():
    r = corpus(FILES)
    assert r.resolve_md("../people/alex.md", "notes/x.md").path == "people/alex.md"
    assert r.resolve_md("/people/alex.md", "notes/deep/x.md").path == "people/alex.md"
    assert r.resolve_md("../../etc/passwd.md", "notes/x.md").path is None


def test_same_page_heading_link():
    assert corpus(FILES).resolve_wiki("", "notes/alex.md").path == "notes/alex.md"


def test_links_pickle_with_every_field():
    """`Link.__reduce__` lists the fields by hand (speed): a new field must be added there."""
    import dataclasses
    import pickle

    from commonplace.compiler.model import Link

    values = {"target": "t", "label": "l", "heading": "h", "line": 7, "kind": "md", "resolved": "r.md",
              "candidates": ("a.md", "b.md")}
    assert set(values) == {f.name for f in dataclasses.fields(Link)}
    link = Link(**values)
    assert pickle.loads(pickle.dumps(link)) == link


def test_resolve_all_resolves_each_name_once_but_as_each_page_would():
    """`resolve_all` shares one resolution between links that cannot mean different
    things; it must agree with resolving every link from its own page."""
    from hypothesis import given, settings, strategies as st

    from commonplace.compiler.corpus.links import resolve_all
    from commonplace.compiler.model import Link

    docs = [parse(path, text.encode())[0] for path, text in FILES.items()]
    resolver = Resolver.build(docs)
    names = ["alex", "Alex Chen", "ac", "state", "atlas/state", "../atlas/state.md", "state.md", "", " ",
             "/", "#", "projects/atlas/state", "zeus/state", "../people/alex.md", "unique-stem", "twin",
             "shared title", "nope", "notes/alex", "/people/alex", "alex.md", "..\\people\\alex"]
    link = st.builds(Link, target=st.sampled_from(names), kind=st.sampled_from(["wiki", "md"]))

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.lists(link, max_size=6), min_size=len(docs), max_size=len(docs)))
    def check(all_links):
        for d, links in zip(docs, all_links):
            d.links = links
        resolve_all(docs, resolver)
        for d in docs:
            for l in d.links:
                want = resolver.resolve(l, d.path)
                assert (l.resolved, l.candidates) == (want.path, want.candidates), (d.path, l)

    check()


def test_link_problems_lists_broken_ambiguous_and_self_links_with_their_place(write_corpus):
    """The one rule lint and the server's link op (op=lint) report from."""
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.build.lint import lint, link_problems

    root = write_corpus({
        "a.md": "# A\n\nsee [[missing page]]\n\nand [[a]] and [[#A]] and [[twin]]\n",
        "b.md": "# B\n\n[[a]] then [broken](nope.md) and [[b#B]]\n",
        "x/twin.md": "# Twin one\n",
        "y/twin.md": "# Twin two\n",
    })
    corpus = load_corpus(root)
    docs = {d.path: d for d in corpus.docs}
    found = link_problems(docs)
    assert [p.as_dict() for p in found.broken] == [
        {"source": "a.md", "target": "missing page", "line": 3},
        {"source": "a.md", "target": "twin", "line": 5, "candidates": ["x/twin.md", "y/twin.md"]},
        {"source": "b.md", "target": "nope.md", "line": 3},
    ]
    # [[#A]] is a same-page heading link, not a self link; nor is [[b#B]] on b, a link to
    # a part of its own page by name (Obsidian vaults write in-page navigation so)
    assert [(p.source, p.target, p.line) for p in found.self_links] == [("a.md", "a", 5)]
    one = link_problems(docs, "b.md")
    assert [p.source for p in one.broken + one.self_links] == ["b.md"]
    codes = sorted((f.code, f.path, f.line) for f in lint(corpus) if f.code.endswith("-link"))
    assert codes == [("ambiguous-link", "a.md", 5), ("broken-link", "a.md", 3), ("broken-link", "b.md", 3),
                     ("self-link", "a.md", 5)]


def test_a_project_slug_names_the_project_even_when_another_file_has_that_stem():
    # memory-write routes a project's decisions to decisions/<slug>.md; a [[slug]] link
    # elsewhere keeps meaning the project (projects/<slug>/state.md), not its decision log
    r = corpus({**FILES, "decisions/atlas.md": "---\ntitle: Atlas\ntype: decision\n---\n"})
    assert r.resolve_wiki("atlas", "people/alex.md").path == "projects/atlas/state.md"
    assert r.resolve_wiki("Atlas", "notes/x.md").path == "projects/atlas/state.md"
    assert r.resolve_wiki("decisions/atlas", "people/alex.md").path == "decisions/atlas.md"
    assert r.resolve_wiki("unique-stem", "x.md").path == "notes/unique-stem.md"  # other stems as before


# A project kept as one page, `projects/<slug>.md`, and the decision log a `kind: decision`
# memory-write files beside it under the project's title (the agent's-day probe's corpus).
ONE_PAGE_PROJECT = {
    "projects/northwind-renewal.md": "---\ntitle: Northwind renewal\ntype: project\n---\n# Northwind renewal\n\n"
                                     "The contract renews in March.\n",
    "people/priya-raman.md": "---\ntitle: Priya Raman\ntype: person\n---\n# Priya Raman\n\n"
                             "Priya leads [[northwind-renewal]] and reports on [[Northwind renewal]].\n",
    "decisions/northwind-renewal.md": "---\ntitle: Northwind renewal\ntype: decision\n---\n# Northwind renewal\n\n"
                                      "- Renew for two years at the current rate.\n",
}


def test_a_one_page_project_is_the_project_beside_its_decision_log(write_corpus, tmp_path, cli):
    import json
    import re

    from commonplace.compiler.build.pipeline import BuildOptions, build

    root = write_corpus(ONE_PAGE_PROJECT)
    out = tmp_path / "out"
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    page = (out / "people/priya-raman/index.html").read_text()
    assert "wikilink broken" not in page, page
    hrefs = re.findall(r'<a class="wikilink[^"]*" href="([^"]+)"', page)
    assert hrefs == ["../../projects/northwind-renewal/index.html"] * 2, hrefs
    lint = cli("lint", root, "--json")
    assert lint.exit_code == 0, lint.output
    assert json.loads(lint.output)["findings"] == []  # no ambiguous link, no duplicate title


def test_a_one_page_project_resolves_by_slug_and_title_in_any_case():
    r = corpus(ONE_PAGE_PROJECT)
    for name in ("northwind-renewal", "Northwind-Renewal", "northwind renewal", "Northwind Renewal",
                 "northwind-renewal.md"):
        assert r.resolve_wiki(name, "people/priya-raman.md").path == "projects/northwind-renewal.md", name
    assert r.resolve_md("northwind-renewal.md", "people/priya-raman.md").path == "projects/northwind-renewal.md"
    assert r.resolve_wiki("decisions/northwind-renewal", "people/priya-raman.md").path == \
        "decisions/northwind-renewal.md"


def test_a_project_folder_wins_over_a_one_page_project_of_the_same_slug():
    # as the entity registry has it: projects/<slug>/state.md, when it exists, is the project
    r = corpus({"projects/kestrel.md": "# Kestrel notes\n", "projects/kestrel/state.md": "---\ntitle: Kestrel\n---\n",
                "decisions/kestrel.md": "---\ntitle: Kestrel\n---\n"})
    assert r.resolve_wiki("kestrel", "x.md").path == "projects/kestrel/state.md"


def test_a_projects_title_wins_only_over_its_own_decision_log(write_corpus, tmp_path, cli):
    """A title the project shares with another page than its decision log is a true
    ambiguity: the site shows the link broken and, with lint, names the same pages (the
    decision log is not one of them)."""
    import json

    from commonplace.compiler.build.pipeline import BuildOptions, build

    files = {**ONE_PAGE_PROJECT, "notes/renewals.md": "---\ntitle: Northwind renewal\n---\n# Renewals\n"}
    r = corpus(files)
    res = r.resolve_wiki("Northwind renewal", "people/priya-raman.md")
    assert res.path is None and res.candidates == ("notes/renewals.md", "projects/northwind-renewal.md")
    assert r.resolve_wiki("northwind-renewal", "people/priya-raman.md").path == "projects/northwind-renewal.md"
    root = write_corpus(files)
    out = tmp_path / "out"
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    page = (out / "people/priya-raman/index.html").read_text()
    # [[Northwind renewal]] is broken; [[northwind-renewal]], the slug, still names the project
    assert page.count('<a class="wikilink broken"') == 1
    assert page.count('<a class="wikilink" href="../../projects/northwind-renewal/index.html">') == 1
    # the page's own list of its broken links, the broken-links page and lint: the same pages
    assert "ambiguous between notes/renewals.md, projects/northwind-renewal.md" in page
    broken = (out / "_/broken/index.html").read_text()
    assert "ambiguous: notes/renewals.md, projects/northwind-renewal.md" in broken
    findings = json.loads(cli("lint", root, "--json").output)["findings"]
    assert [(f["code"], f["path"], f["message"]) for f in findings if f["code"] != "duplicate-name"] == [
        ("ambiguous-link", "people/priya-raman.md", "[[Northwind renewal]] matches several pages, none nearest: "
         "notes/renewals.md, projects/northwind-renewal.md")]
    assert [(f["path"], f["message"]) for f in findings if f["code"] == "duplicate-name"] == [
        ("notes/renewals.md", "title or alias 'northwind renewal' is shared by notes/renewals.md, "
         "projects/northwind-renewal.md; links to it are ambiguous")]


def test_a_one_page_projects_name_is_otherwise_shared_as_any_notes_is():
    # only the project's decision log stands aside; another note of the name is Obsidian's
    # case as before: the nearest one, and from a folder neither is nearer to, broken
    r = corpus({**ONE_PAGE_PROJECT, "notes/northwind-renewal.md": "# Renewal notes\n"})
    both = ("notes/northwind-renewal.md", "projects/northwind-renewal.md")
    assert r.resolve_wiki("northwind-renewal", "people/priya-raman.md") == Resolution(None, both)
    assert r.resolve_wiki("northwind-renewal", "notes/x.md") == Resolution("notes/northwind-renewal.md", both)
    assert r.resolve_wiki("northwind-renewal", "projects/x.md") == Resolution("projects/northwind-renewal.md", both)


def test_the_decision_log_arriving_later_leaves_the_links_on_the_one_page_project(write_corpus, tmp_path):
    # as a memory-write does: the project and its links first, the decision page after,
    # rebuilt incrementally -- the same site a clean build makes
    from commonplace.compiler.build.pipeline import BuildOptions, build

    files = dict(ONE_PAGE_PROJECT)
    decision = files.pop("decisions/northwind-renewal.md")
    root = write_corpus(files)
    out = tmp_path / "out"
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    (root / "decisions").mkdir()
    (root / "decisions/northwind-renewal.md").write_text(decision, encoding="utf-8")
    build(BuildOptions(corpus=root, out=out, embed=False, index=False))
    page = (out / "people/priya-raman/index.html").read_text()
    assert "wikilink broken" not in page
    assert page.count('<a class="wikilink" href="../../projects/northwind-renewal/index.html"') == 2
    clean = tmp_path / "clean"
    build(BuildOptions(corpus=root, out=clean, embed=False, index=False))
    assert (clean / "people/priya-raman/index.html").read_text() == page
