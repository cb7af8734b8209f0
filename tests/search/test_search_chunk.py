"""Analyzer and chunking: identifiers stay findable, chunks map back to source lines."""

from __future__ import annotations

from commonplace.compiler.markdown.parse import parse
from commonplace.compiler.search.index.chunk import ChunkConfig, RegexTokenCounter, chunk_document, token_counter
from commonplace.compiler.search.text import terms


def _doc(path: str, text: str):
    return parse(path, text.encode("utf-8"))[0]


# --------------------------------------------------------------------------- analyzer


def test_identifiers_are_kept_whole_and_split():
    t = terms("svc-auth-v2 and C++ and C# and foo_bar and node.js and foo/bar")
    for ident in ["svc-auth-v2", "c++", "c#", "foo_bar", "node.js", "foo/bar"]:
        assert ident in t
    for part in ["svc", "auth", "v2", "foo", "bar", "node", "js"]:
        assert part in t


def test_words_are_stemmed_and_stop_words_dropped():
    assert terms("Running the databases") == ["run", "databas"]
    assert terms("what is the") == []
    assert terms("Café") == ["cafe"]


def test_camel_case_parts():
    t = terms("getUserName")
    assert t[0] == "getusername" and {"get", "user", "name"} <= set(t)


# --------------------------------------------------------------------------- chunks

FM = "---\ntitle: Test doc\ntags: [a]\n---\n"


def test_line_ranges_are_source_lines_with_frontmatter_offset():
    text = FM + "# Test doc\n\nintro line\n\n## Alpha\n\nalpha text\n\n## Beta\n\nbeta text here\n"
    doc = _doc("notes/t.md", text)
    src = text.split("\n")
    chunks = chunk_document(doc, token_counter(), ChunkConfig(min_tokens=0))
    assert [c.headings for c in chunks] == [("Test doc",), ("Test doc", "Alpha"), ("Test doc", "Beta")]
    for c in chunks:
        first, last = src[c.start_line - 1], src[c.end_line - 1]
        assert c.text.split("\n")[0] == first
        assert c.text.split("\n")[-1] == last
    assert chunks[1].start_line == 9 and chunks[1].end_line == 11  # "## Alpha" .. "alpha text"


def test_small_sections_merge_into_previous_chunk():
    text = FM + "## Alpha\n\n" + "alpha words " * 20 + "\n\n## Links\n\n- [[x]]\n"
    doc = _doc("notes/t.md", text)
    chunks = chunk_document(doc, token_counter())
    assert len(chunks) == 1
    assert "## Links" in chunks[0].text
    assert chunks[0].end_line == len(text.rstrip("\n").split("\n"))


def test_headings_inside_fenced_code_are_not_sections():
    text = FM + "## Real\n\n```bash\n# not a heading\necho hi\n```\n"
    chunks = chunk_document(_doc("n.md", text), token_counter())
    assert len(chunks) == 1 and chunks[0].headings == ("Real",)


def test_long_sections_split_within_budget_with_overlap():
    cfg = ChunkConfig(max_tokens=96, overlap=16, min_tokens=0)
    paras = "\n\n".join(f"Paragraph {i} talks about replication lag number {i} and the vacuum job." for i in range(30))
    text = FM + "## Long\n\n" + paras + "\n"
    doc = _doc("n.md", text)
    counter = token_counter()
    chunks = chunk_document(doc, counter, cfg)
    assert len(chunks) > 3
    for c in chunks:
        assert counter.count_many([c.text])[0] <= cfg.budget + 2  # joining lines may add a token or two
        assert c.headings == ("Long",)
    # consecutive chunks overlap (the next starts at or before the previous one's last line)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start_line <= a.end_line + 2
    # every paragraph is somewhere
    joined = "\n".join(c.text for c in chunks)
    for i in range(30):
        assert f"Paragraph {i} " in joined


def test_a_single_huge_line_is_cut_at_token_boundaries():
    cfg = ChunkConfig(max_tokens=64, overlap=8, min_tokens=0)
    line = " ".join(f"word{i}" for i in range(400))
    doc = _doc("n.md", FM + line + "\n")
    counter = token_counter()
    chunks = chunk_document(doc, counter, cfg)
    assert len(chunks) > 5
    assert all(c.start_line == c.end_line == 5 for c in chunks)
    assert all(counter.count_many([c.text])[0] <= cfg.budget + 1 for c in chunks)
    assert "word399" in chunks[-1].text and "word0 " in chunks[0].text


def test_editing_one_section_changes_only_its_chunks():
    sections = {name: f"## {name}\n\n" + f"{name} talks about topic {name} in some depth. " * 12 for name in "ABCDE"}
    before = FM + "\n\n".join(sections.values()) + "\n"
    sections["C"] = sections["C"].replace("some depth", "much more depth, with an extra sentence or two added")
    after = FM + "\n\n".join(sections.values()) + "\n"
    counter = token_counter()
    h1 = [c.text_hash for c in chunk_document(_doc("n.md", before), counter)]
    h2 = [c.text_hash for c in chunk_document(_doc("n.md", after), counter)]
    assert len(h1) == len(h2) == 5
    changed = [i for i, (a, b) in enumerate(zip(h1, h2)) if a != b]
    assert changed == [2]


def test_empty_document_still_gets_a_title_chunk():
    chunks = chunk_document(_doc("n.md", FM), token_counter())
    assert len(chunks) == 1 and chunks[0].text == "" and "Test doc" in chunks[0].embed_text


def test_embed_text_has_title_and_heading_path_and_link_labels():
    text = FM + "## Links here\n\nSee [[people/alex|Alex]] and [the doc](other.md) and [[plain-target]].\n"
    c = chunk_document(_doc("n.md", text), token_counter())[0]
    assert c.embed_text.startswith("Test doc > Links here\n")
    assert "See Alex and the doc and plain-target." in c.embed_text
    assert "[[" not in c.embed_text


def test_model_tokenizer_is_used_and_regex_fallback_works():
    counter = token_counter()
    assert "tokenizer.json" in counter.name
    assert counter.count_many(["unbelievably"])[0] >= 1
    doc = _doc("n.md", FM + "## A\n\nsome text\n")
    assert chunk_document(doc, RegexTokenCounter())[0].text.startswith("## A")


def test_fenced_code_is_indexed_but_not_embedded():
    text = FM + "## Setup\n\nRun the migration:\n\n```sql\nCREATE INDEX idx_orders ON orders(id);\n```\n\nThen check.\n"
    c = chunk_document(_doc("n.md", text), token_counter())[0]
    assert "CREATE INDEX idx_orders" in c.text
    assert "CREATE INDEX" not in c.embed_text
    assert "```sql" in c.embed_text and "Then check." in c.embed_text


def test_table_rules_and_emphasis_are_not_embedded():
    text = FM + "## Owners\n\n| Item | Owner |\n|---|:---:|\n| **route** | `Wen` |\n\nSee ~~old~~ notes.\n"
    c = chunk_document(_doc("n.md", text), token_counter())[0]
    assert "| **route** |" in c.text  # the indexed text is the source
    assert "---" not in c.embed_text and "**" not in c.embed_text and "~~" not in c.embed_text
    assert "Item ; Owner" in c.embed_text and "route ; `Wen`" in c.embed_text and "See old notes." in c.embed_text


def test_headings_over_nothing_are_no_chunk():
    """A decision page written through memory-write: its title and `## Claims` stand
    before the claims block's marker, and were a chunk of their own, found as "Harbor
    Claims" (a result an agent can do nothing with). They stay in the chunks' prefix."""
    text = ("---\ntitle: Harbor\ntype: decision\n---\n# Harbor\n\n<!-- commonplace:claims:start -->\n\n## Claims\n\n"
            "### Decisions\n\n" + "".join(
                f"- We decided to build Harbor with React Native rather than separate Swift and Kotlin apps, "
                f"reason {i}. — recorded 2026-11-27 by agent · `c_9011fb97e85ef7a{i}`\n" for i in range(4))
            + "\n<!-- commonplace:claims:end -->\n")
    chunks = chunk_document(_doc("decisions/harbor.md", text), RegexTokenCounter(), ChunkConfig())
    assert chunks and all("React Native" in c.text for c in chunks), [c.text for c in chunks]
    assert all(c.prefix.startswith("Harbor") for c in chunks)
    only = chunk_document(_doc("notes/empty.md", "---\ntitle: Empty\n---\n# Empty\n\n## Nothing yet\n"),
                          RegexTokenCounter(), ChunkConfig())
    assert len(only) == 1  # a page of headings alone is still found by them
