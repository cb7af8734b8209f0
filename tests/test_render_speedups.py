"""The build's speed-ups must not change a byte of output.

- The markdown shortcuts (a direct rule for lines starting with a letter, a narrower
  text-rule terminator set, a regex-free normalize, the task-list rule only where a
  task marker occurs, inline runs without a terminator as one text token) give the
  same tokens and HTML as the plain configuration.
- Pages built from cached escaped fragments still escape titles, paths and tags.
- A clean build into a fresh folder skips the stale-file sweep, but a clean build into
  an old site still removes what is not part of it.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.markdown.mdit import make_markdown

from tests.benchmarks.corpus_gen import generate

FAST = make_markdown()
PLAIN = make_markdown(shortcuts=False)

TRICKY = [
    "name | value\n--- | ---\nalpha | `x|y`\n",
    "Setext\n===\nSecond\n---\n",
    "Para\n- list\nMore\n> quote\nPara\n# h\nPara\n```\nfence\n```\nPara\n    lazy\n",
    "Text[^n] and  \nhard\\\nbreak\n\n[^n]: note\n    more\n",
    "a - b : c # d = e + f @ g {h} % i > j ] k\n",
    "[label - with: stuff](target.md) [[wiki - link: x|lbl]] ![img: x](y.png)\n",
    "[a [nested - ] label](x) [^ref-1]: x\n\n[ref]: <u:v> 'title - x'\n\nuse [ref] and [ref][]\n",
    "**bold - x** _em: y_ ~~del - z~~ $m - n$ $$d:e$$ ^[inline - note]\n",
    "<http://a-b.c/d:e> <x@y.z> &amp; &#35; &bogus; \\- \\: \\#\n",
    "Ünïcode line\nÉcole - x\n2024-01-01 is a date\n1990. not a list?\n",
    "- [ ] task - x\n- [x] done: y\n  - nested a-b\n\n1) one\n2) two\n",
    "term\n: def\n\n***\n___\n- - -\n",
    "<!-- commonplace:details:start S - x -->\nin: side\n<!-- commonplace:details:end -->\n",
    "|a|b|\n|-|-|\n|c - d|e: f|\n\ntext | not table\n",
    "word\n\n\n  indented two\n      indented six\n\ttab\n",
    "CR\rline\r\n- [ ] crlf task\r\n- [X]\ttab task\r- [x]no space\n\0nul [ ] mid\n",
    "> - [ ] quoted task\n\n1. [x] ordered\n\n* [ ]\n\n- [ ] \n- a\n  [x] not first\n",
    # inline runs with no character any inline rule starts at (one text token, directly)
    "# Plain heading\n\n| a | b |\n|---|---|\n| plain cell |  |\n\n- plain item\n- 2 (x), y; z.\n\nEnds in spaces   \n",
    "> plain quote, then\n>\n> 1. item one\n\n    code: not inline\n\n# \n\nÉté, «quotes» 'single' \"double\" 100%\n",
]


def _tokens(md, text: str) -> list:
    def flat(tokens: list) -> list:
        return [(t.type, t.tag, t.nesting, t.level, t.content, t.markup, t.info, t.map, sorted(t.attrs.items()),
                 t.meta if t.type != "footnote_block_open" else None, t.block, t.hidden,
                 flat(t.children or [])) for t in tokens]

    env: dict = {}
    tokens = md.parse(text, env)
    return [flat(tokens), md.renderer.render(tokens, md.options, env)]


@pytest.mark.parametrize("text", TRICKY)
def test_shortcuts_give_the_same_tokens_on_tricky_markdown(text: str):
    assert _tokens(FAST, text) == _tokens(PLAIN, text)


def test_shortcuts_give_the_same_tokens_on_random_markdown():
    pieces = ["a", "word", "É", "1", "1.", "-", "- ", ":", "#", "# ", "=", "+", "@", "{", "}", "%", ">",
              "> ", "*", "_", "[", "]", "(", ")", "!", "<", "`", "```", "~", "$", "$$", "^", "&", "\\",
              "|", "---", "\n", "\n\n", "    ", "  ", "\t", "[[", "]]", "[^1]", "[^1]: ", "x.md",
              "[ ] ", "[x] ", "[X]", "- [ ] ", "\r", "\r\n", "\0"]
    rng = random.Random(7)
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert _tokens(FAST, text) == _tokens(PLAIN, text), text


def test_shortcuts_give_the_same_tokens_on_a_generated_corpus(tmp_path: Path):
    generate(tmp_path, 60, seed=3)
    for f in sorted(tmp_path.rglob("*.md")):
        text = f.read_text()
        assert _tokens(FAST, text) == _tokens(PLAIN, text), f


def test_cached_fragments_stay_escaped(tmp_path: Path):
    corpus, out = tmp_path / "c", tmp_path / "site"
    (corpus / "notes").mkdir(parents=True)
    (corpus / "notes" / "a.md").write_text(
        '---\ntitle: A <b>&"x\'\ntags: ["<t>&"]\nstatus: active\n---\nSee [[B]].\n')
    (corpus / "notes" / "b.md").write_text("# B\n\nBack to [[A <b>&\"x']].\n")
    build(BuildOptions(corpus=corpus, out=out, embed=False, index=False))
    page_b = (out / "notes/b/index.html").read_text()
    assert '<li><a href="../../notes/a/index.html">A &lt;b&gt;&amp;&#34;x&#39;</a>' in page_b
    page_a = (out / "notes/a/index.html").read_text()
    assert "#&lt;t&gt;&amp;</a></li>" in page_a
    assert '<a href="../../index.html">Home</a> / <a href="../../_/folders/notes/index.html">notes</a> / ' in page_a
    listing = (out / "_/types/note/index.html").read_text()
    day = time.strftime("%Y-%m-%d", time.gmtime((corpus / "notes" / "a.md").stat().st_mtime))  # no frontmatter date
    assert ('<li><a href="../../../notes/a/index.html">A &lt;b&gt;&amp;&#34;x&#39;</a> '
            f'<span class="chip status status-active">active</span> <time>{day}</time> <span class="path">notes/a.md</span></li>\n'
            in listing)
    assert "<b>" not in page_a + page_b + listing


def test_clean_build_into_an_old_site_still_removes_stale_files(tmp_path: Path):
    corpus, out = tmp_path / "c", tmp_path / "site"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n")
    (corpus / "b.md").write_text("# B\n")
    opts = BuildOptions(corpus=corpus, out=out, embed=False, index=False)
    build(opts)
    assert (out / "b/index.html").exists()
    (corpus / "b.md").unlink()
    (out / "stray" / "deep").mkdir(parents=True)
    (out / "stray" / "deep" / "x.html").write_text("x")
    result = build(BuildOptions(corpus=corpus, out=out, embed=False, index=False, clean=True))
    assert not (out / "b").exists() and not (out / "stray").exists()
    assert result.files_removed >= 2
    fresh = tmp_path / "fresh"
    build(BuildOptions(corpus=corpus, out=fresh, embed=False, index=False))
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    assert json.loads(json.dumps(files))  # both sites list the same files


def test_worker_documents_arrive_with_their_bodies(tmp_path: Path):
    from commonplace.compiler.corpus.scan import scan
    from commonplace.compiler.build.stages import parse_file, render_page
    from commonplace.compiler.build.workers import Pool

    generate(tmp_path, 40, seed=5)
    (tmp_path / "odd.md").write_text("---\ntitle: [unclosed\n---\nbody\n")  # malformed: body is the text
    (tmp_path / "fm.md").write_text("---\ntitle: x\n---\n---\nsecond: block\n---\nbody\n")
    files, _ = scan(tmp_path, tmp_path / "site")
    with Pool(2, parse_file, render_page) as pool:
        got = pool.parse(files)
    for f, (doc, _) in zip(files, got):
        want, _ = parse_file(f)
        assert (doc.text, doc.body, doc.body_line) == (want.text, want.body, want.body_line)
        assert type(doc.body) is str


def test_graph_json_is_canonical_json(tmp_path: Path):
    corpus, out = tmp_path / "c", tmp_path / "site"
    (corpus / "ü").mkdir(parents=True)
    (corpus / "ü" / 'a "q".md').write_text("---\ntags: [x, 'é\"']\n---\n# A\n[[b]] [[nope]] [[b]]\n")
    (corpus / "b.md").write_text("# B\n[[A]]\n")
    build(BuildOptions(corpus=corpus, out=out, embed=False, index=False))
    raw = (out / "graph.json").read_bytes()
    data = json.loads(raw)
    assert len(data["edges"]) == 2 and data["broken"] and len(data["nodes"]) == 2
    canonical = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    assert raw == canonical.encode("utf-8")


def test_excerpts_read_from_a_prefix_equal_the_whole_page_text():
    from hypothesis import given, settings, strategies as st

    from commonplace.compiler.site.render import _folded_text, plain_text

    pieces = st.sampled_from(["<p>", "</p>", "<a href=\"x>y\">", ">", "<", "&amp;", "&lt;", "&amp", "&#62;",
                              " ", "\n", "word", "é", "&", ";", "<br/>", "<>", "x" * 30])

    @settings(max_examples=500, deadline=None)
    @given(st.lists(pieces, max_size=120), st.integers(1, 40))
    def check(parts, limit):
        html = "".join(parts)
        assert plain_text(html, limit) == _folded_text(html)[:limit]

    check()


def test_drafts_filled_with_links_equal_rendering_with_links_in_place(tmp_path: Path):
    """A build renders each body right after parsing, with markers for its links, and
    fills them in once links resolve: byte for byte what rendering the parse tree with
    the resolved links gives."""
    from commonplace.compiler.corpus.links import Resolver
    from commonplace.compiler.markdown.mdit import render_tokens
    from commonplace.compiler.markdown.parse import parse
    from commonplace.compiler.site.render import _drop_title_heading, link_env, render_document

    generate(tmp_path, 60, seed=9)
    files = {f.relative_to(tmp_path).as_posix(): f.read_bytes() for f in sorted(tmp_path.rglob("*.md"))}
    extra = [t + "\n[[notes]] [x](../a.md) [[#Setext]] <http://e.x> [[Twin|t]] [y](nowhere.md#h)\n" for t in TRICKY]
    files |= {f"notes/tricky-{i}.md": t.encode() for i, t in enumerate(extra) if "\0" not in t}
    files["notes/titled.md"] = b"# Titled [[notes]]\n\ntext [[notes/tricky-1]]\n"
    docs = [parse(p, data)[0] for p, data in files.items()]
    resolver, titles = Resolver.build(docs), {d.path: d.title for d in docs}
    for d in docs:
        env = {**d.md_env, **link_env(d, resolver, titles)}
        want = render_tokens(_drop_title_heading(d, d.tokens), env)
        again = parse(d.path, files[d.path])[0]
        assert render_document(again, resolver, titles) == want, d.path
        assert again.title_anchor == d.title_anchor and again.draft is None
