"""The site's offline search data (compiler/site_search*.py): the words it holds, and a
long-running server's refresh writing the same bytes as a clean build, touching only the
files a change reaches."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.live.corpus import LiveCorpus
from commonplace.compiler.site.search_terms import MAX_TERM, parse_terms, sections_json, text_terms, tokens, words

DATA = "_/search-data"


def payload(raw: bytes) -> dict:
    text = raw.decode("utf-8")
    return json.loads(text[text.index("(") + 1: text.rindex(");")])


def search_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / DATA).glob("*.js"))}


def write_corpus(root: Path, n: int = 60) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        words_ = " ".join(f"word{(i * 7 + j) % 90}" for j in range(12))
        (root / f"note-{i:03d}.md").write_text(
            f"---\ntitle: Note {i}\ntags: [t{i % 3}]\n---\n# Note {i}\n\nIntro {words_}.\n\n"
            f"## Details {i}\n\nMore text about topic{i % 5} with Ünïcode café and “quotes” — dash.\n",
            encoding="utf-8")
    return root


def clean_build(corpus: Path, out: Path) -> dict[str, bytes]:
    build(BuildOptions(corpus=corpus, out=out, embed=False, index=False, clean=True))
    return search_files(out)


def decoded_postings(out: Path) -> dict[str, Counter]:
    """Path -> Counter of text words, read back from meta.js, page lists and term files."""
    meta = payload((out / DATA / "meta.js").read_bytes())
    paths: dict[int, list[str]] = {}
    for b, n in enumerate(meta["blocks"]):
        if n:
            block = payload((out / DATA / f"p-{b}.js").read_bytes())
            assert block["block"] == b and len(block["docs"]) == n == len(block["lengths"]) // 2
            paths[b] = [d[0] for d in block["docs"]]
    got: dict[str, Counter] = {p: Counter() for ps in paths.values() for p in ps}
    for key, blocks in meta["terms"].items():
        for b in blocks:
            shard = payload((out / DATA / f"t-{key}-{b}.js").read_bytes())
            for i, row in enumerate(shard["rows"].split(",")):
                if not row:
                    continue
                terms, counts = row.split(":")
                for t, c in zip(terms.split(" "), counts.split(" ")):
                    assert t[0] == key or key.startswith("u")
                    got[paths[b][i]][t] += int(c)
    return got


def test_words_fast_paths_agree_with_the_regex():
    samples = ["Plain ASCII, with_underscores and CamelCase 42x.", "café naïve Ünïcode ÆØÅ", "“quoted” — dash › arrow",
               "日本語のテキスト and mixed", "x" * 50 + " short", "", "a\u00a0b", "ﬁ ligature İstanbul"]
    for s in samples:
        assert words(s) == re.findall(r"[^\W_]+", s.lower()), s
    assert tokens("x" * (MAX_TERM + 1) + " ok") == ["ok"]


def test_text_terms_counts_every_word_of_headings_and_text_but_not_anchors():
    st = sections_json([["", "", "Intro words here here"], ["anchor-x", "A Heading", "More words, WORDS."]])
    n, groups = parse_terms(text_terms(st))
    got = {}
    for key, g in groups.items():
        terms, counts = g.split(":")
        got.update(zip(terms.split(" "), map(int, counts.split(" "))))
    assert got == {"intro": 1, "words": 3, "here": 2, "a": 1, "heading": 1, "more": 1}
    assert n == len(got) and "anchor" not in got


def test_postings_hold_every_word_of_every_page(tmp_path: Path):
    corpus = write_corpus(tmp_path / "corpus", 30)
    out = tmp_path / "site"
    clean_build(corpus, out)
    got = decoded_postings(out)
    assert len(got) == 30
    # Page text as the text shards hold it: headings and text of every section.
    texts: dict[str, str] = {}
    for f in (out / DATA).glob("[0-9]*.js"):
        for path, secs in payload(f.read_bytes())["pages"]:
            texts[path] = " ".join(s[1] + " " + s[2] for s in secs)
    assert set(texts) == set(got)
    for path, text in texts.items():
        assert got[path] == Counter(tokens(text)), path
    assert got["note-007.md"]["café"] == 1 and got["note-007.md"]["quotes"] == 1


@pytest.fixture
def live(tmp_path: Path):
    corpus = write_corpus(tmp_path / "corpus")
    lc = LiveCorpus(corpus, tmp_path / "site", embed=False, index=False)
    lc.open()
    yield lc
    lc.close()


def stamps(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (out / DATA).glob("*.js")}


def test_a_refresh_writes_what_a_clean_build_writes_and_only_what_changed(live, tmp_path: Path):
    corpus, out = live.root, live.out
    before = search_files(out)
    assert before == clean_build(corpus, tmp_path / "clean0")

    # An edit adding one new word: its text shard, its block's page list and one term
    # file of that block, and meta.js (the averages) change; nothing else is written.
    f = corpus / "note-010.md"
    f.write_text(f.read_text(encoding="utf-8") + "\nA zebra appears.\n", encoding="utf-8")
    t0 = stamps(out)
    live.refresh(["note-010.md"])
    after = search_files(out)
    assert after == clean_build(corpus, tmp_path / "clean1")
    rewritten = {name for name, t in stamps(out).items() if t != t0.get(name)}
    changed = {name for name in after if after[name] != before.get(name)}
    assert rewritten == changed
    assert "meta.js" in changed and any(n.startswith("t-z-") for n in changed)
    assert len([n for n in changed if n.startswith("t-")]) <= 2, changed  # z, and a (the article)
    assert len([n for n in changed if n.startswith("p-")]) == 1
    assert b"zebra" in b"".join(after[n] for n in changed if n.startswith("t-z-"))

    # A deleted page and an added one: the same bytes as a clean build, the deleted page's
    # words gone, the new page's words found.
    (corpus / "note-020.md").unlink()
    (corpus / "added.md").write_text("# Added\n\nQuokka sightings reported.\n", encoding="utf-8")
    live.refresh(["note-020.md", "added.md"])
    final = search_files(out)
    assert final == clean_build(corpus, tmp_path / "clean2")
    got = decoded_postings(out)
    assert "note-020.md" not in got and got["added.md"]["quokka"] == 1
    assert set(final) == set(search_files(tmp_path / "clean2"))  # no stale file left behind


def test_a_refresh_of_one_page_costs_little_at_a_thousand_pages(tmp_path: Path, monkeypatch):
    """Work proportional to the change: a body edit re-emits a few small files, and no
    other page's words are counted again (the server keeps the model between saves)."""
    from commonplace.compiler.site import search_model as site_search_model

    corpus = write_corpus(tmp_path / "corpus", 1000)
    lc = LiveCorpus(corpus, tmp_path / "site", embed=False, index=False)
    lc.open()
    counted: list[str] = []
    real = site_search_model.text_terms
    monkeypatch.setattr(site_search_model, "text_terms", lambda st: counted.append(st) or real(st))
    try:
        written = []
        for i in range(5):
            f = corpus / f"note-{i * 100:03d}.md"
            f.write_text(f.read_text(encoding="utf-8") + f"\nnewword{i}\n", encoding="utf-8")
            t0 = stamps(lc.out)
            lc.refresh([f.name])
            written.append(sum(1 for n, t in stamps(lc.out).items() if t != t0.get(n)))
        assert max(written) <= 5, written  # text shard, page list, term file, meta
        assert len(counted) == 0, len(counted)  # the edited page's words came with its render
    finally:
        lc.close()


def test_a_server_restarted_over_a_build_counts_no_words_on_its_first_save(tmp_path: Path, monkeypatch):
    """`serve` restarted over an existing build: the search model is made at start-up,
    so the first save re-counts only its own page, as every later save does, and the
    data it writes is still what a clean build writes."""
    from commonplace.compiler.site import search_model as site_search_model

    corpus = write_corpus(tmp_path / "corpus", 300)
    with LiveCorpus(corpus, tmp_path / "site", embed=False, index=False):
        pass  # the first run builds the site
    lc = LiveCorpus(corpus, tmp_path / "site", embed=False, index=False)
    lc.open()  # the restart: nothing to rebuild
    counted: list[str] = []
    real = site_search_model.text_terms
    monkeypatch.setattr(site_search_model, "text_terms", lambda st: counted.append(st) or real(st))
    try:
        f = corpus / "note-042.md"
        f.write_text(f.read_text(encoding="utf-8") + "\nA wombat appears.\n", encoding="utf-8")
        lc.refresh(["note-042.md"])
        assert len(counted) <= 1, len(counted)
        assert search_files(lc.out) == clean_build(corpus, tmp_path / "clean")
    finally:
        lc.close()


def test_the_manifest_leaves_page_text_to_the_text_shards(tmp_path: Path):
    """The build manifest does not keep the pages' text (it was half of the manifest); a
    later build reads it back from the text shards, and one whose text shards are
    damaged builds the site whole: either way the bytes of a clean build."""
    corpus = write_corpus(tmp_path / "corpus", 30)
    out = tmp_path / "site"
    clean_build(corpus, out)
    (manifest,) = (corpus / ".commonplace").rglob("manifest.json")
    docs = json.loads(manifest.read_text(encoding="utf-8"))["docs"]
    assert len(docs) == 30 and not any("search_text" in d for d in docs)

    f = corpus / "note-003.md"
    f.write_text(f.read_text(encoding="utf-8") + "\nA narwhal appears.\n", encoding="utf-8")
    again = build(BuildOptions(corpus=corpus, out=out, embed=False, index=False))
    assert again.documents_changed == 1  # incremental: the rest came from the manifest
    assert search_files(out) == clean_build(corpus, tmp_path / "clean1")
    assert any(b"narwhal" in data for data in search_files(out).values())

    shard = sorted((out / DATA).glob("[0-9]*.js"))[0]
    shard.write_text("CommonplaceData.text({broken", encoding="utf-8")
    f.write_text(f.read_text(encoding="utf-8") + "\nA second narwhal.\n", encoding="utf-8")
    build(BuildOptions(corpus=corpus, out=out, embed=False, index=False))
    assert search_files(out) == clean_build(corpus, tmp_path / "clean2")
