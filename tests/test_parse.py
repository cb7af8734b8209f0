"""Parsing one file into a Document: frontmatter, titles, types, dates, hostile YAML."""

from __future__ import annotations

import pytest

from commonplace.compiler.markdown.parse import SkipFile, parse


def p(path: str, text: str | bytes):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse(path, data)


def test_frontmatter_fields_are_read_and_unknown_fields_kept():
    doc, warnings = p("people/alex.md", "---\ntitle: Alex Chen\naliases: [Alex, AC]\ntags: [team, '#infra']\n"
                      "created: 2026-01-02\nstatus: Active\nfavourite_color: teal\n---\n# Ignored H1\nBody\n")
    assert warnings == []
    assert doc.title == "Alex Chen"
    assert doc.type == "person"
    assert doc.status == "active"
    assert doc.aliases == ["Alex", "AC"]
    assert doc.tags == ["team", "infra"]
    assert doc.created == "2026-01-02"
    assert doc.frontmatter["favourite_color"] == "teal"
    assert doc.body_line == 9


def test_title_falls_back_to_first_h1_then_file_name():
    assert p("notes/a.md", "intro\n\n# The Heading\n")[0].title == "The Heading"
    assert p("notes/plain-name.md", "no heading here\n")[0].title == "plain-name"


@pytest.mark.parametrize("path,expected", [
    ("core/x.md", "core"), ("people/x.md", "person"), ("projects/a/state.md", "project"),
    ("concepts/x.md", "concept"), ("decisions/x.md", "decision"), ("logs/daily/2026-01-01.md", "daily"),
    ("logs/sessions/s.md", "session"), ("sources/x.md", "source"), ("references/x.md", "reference"),
    ("inbox/x.md", "capture"), ("wiki/x.md", "wiki"), ("random/x.md", "note"), ("x.md", "note"),
])
def test_type_comes_from_folder(path, expected):
    assert p(path, "text")[0].type == expected


def test_frontmatter_type_overrides_folder():
    assert p("notes/x.md", "---\ntype: Decision\n---\n")[0].type == "decision"


def test_daily_log_takes_its_date_from_the_file_name():
    assert p("logs/daily/2026-03-04.md", "did things")[0].date == "2026-03-04"


def test_tags_as_comma_string_and_scalar():
    assert p("a.md", "---\ntags: a, b ,c\n---\n")[0].tags == ["a", "b", "c"]
    assert p("a.md", "---\ntags: 42\n---\n")[0].tags == ["42"]


@pytest.mark.parametrize("text,reason", [
    ("---\ntitle: [unclosed\n---\nbody", "invalid YAML"),
    ("---\n- a list\n- not a map\n---\nbody", "must be a mapping"),
    ("---\ntitle: never closed\nbody", "never closed"),
    ("---\nx: !!python/object/apply:os.system ['echo pwned']\n---\nbody", "invalid YAML"),
])
def test_malformed_frontmatter_warns_and_keeps_the_body(text, reason):
    doc, warnings = p("notes/bad.md", text)
    assert doc.frontmatter == {}
    assert len(warnings) == 1 and reason in warnings[0].message
    assert warnings[0].path == "notes/bad.md"


def test_billion_laughs_is_refused_not_expanded():
    lol = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for i in range(9):
        name = f"l{i}"
        lol += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
        prev = name
    lol += "---\nbody\n"
    doc, warnings = p("x.md", lol)
    assert doc.frontmatter == {}
    assert "too large" in warnings[0].message


def test_deeply_nested_yaml_is_refused():
    text = "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nbody\n"
    doc, warnings = p("x.md", text)
    assert doc.frontmatter == {}
    assert warnings and "frontmatter" in warnings[0].code


def test_enormous_frontmatter_is_refused():
    doc, warnings = p("x.md", "---\nbig: '" + "a" * 200_000 + "'\n---\nbody\n")
    assert doc.frontmatter == {} and "larger than" in warnings[0].message


def test_binary_and_non_utf8_files_are_skipped_with_reason():
    with pytest.raises(SkipFile, match="binary"):
        p("x.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(SkipFile, match="UTF-8"):
        p("x.md", b"caf\xe9 au lait")


def test_bom_and_crlf_are_normalised():
    doc, warnings = p("x.md", "\ufeff---\r\ntitle: T\r\n---\r\nline\r\n".encode("utf-8"))
    assert warnings == [] and doc.title == "T" and doc.body == "line\n"


def test_bad_date_warns_but_keeps_document():
    doc, warnings = p("x.md", "---\ncreated: yesterday\n---\n")
    assert doc.created is None and warnings[0].code == "bad-date"
    assert doc.frontmatter["created"] == "yesterday"


def test_dorys_names_of_a_status_are_valid_and_a_made_up_one_warns():
    """A saved research report says `status: draft`, as Dory writes it: no lint finding."""
    for status in ("draft", "in-progress", "ready-to-publish", "done"):
        assert [w for w in p("r.md", f"---\nstatus: {status}\n---\n")[1] if w.code == "status"] == [], status
    assert [w.code for w in p("r.md", "---\nstatus: frobbed\n---\n")[1]] == ["status"]


def test_links_are_extracted_with_source_lines_but_not_from_code():
    doc, _ = p("notes/a.md", "---\ntitle: A\n---\nSee [[b]] and [c](c.md#top).\n\n```\n[[in-code]]\n```\n`[[inline]]`\n![[embed]]\n")
    assert [(l.target, l.line, l.kind) for l in doc.links] == [
        ("b", 4, "wiki"), ("c.md", 4, "md"), ("embed", 10, "embed")]
    assert doc.links[1].heading == "top"


KEYS = ["title", "tags", "a", "x-y", "_k", "yes", "On", "null", "y", "1a", "k k", "é", "created", "Title"]
SEPS = [": ", ":", ":  ", ": \t", " : "]
VALUES = ['"q"', "'s'", '"a\\"b"', "'it''s'", '"x: y"', '"a # b"', '"é"', '""', "''", '"tab\there"', "plain",
          "plain words", "a - b", "a: b", "a:b", "a #c", "#c", "yes", "No", "TRUE", "tRue", "true", "False", "null",
          "Null", "~", "", "0", "007", "12", "-3", "+4", "1_000", "1.5", ".inf", "0x1F", "1:20", "2024-02-30",
          "2024-01-05", "2024-1-5", "2024-01-05T10:00:00", "[a, b]", "[]", "[ ]", "[a,]", "[ 'x', \"y\" ]",
          "[a, [b]]", "[a, b: c]", '["a,b"]', "{a: 1}", "é", "a/b.c+d", "-x", "- x", "&anchor x", "*alias",
          "!tag x", "|", ">", "@at", "`bt`", "%p", "=", "<<", "a  b", "trailing ", "x\u0085y", "\ufeffbom",
          "9" * 5000]
ITEMS = ["  - ", "- ", "    - ", "  -", "\t- ", "   - "]
OTHER = ["# comment", "", "  ", "---", "...", "  continuation", "? complex", "key: value # comment", "\ufeff"]


def test_simple_frontmatter_reads_exactly_as_yaml_does():
    """`frontmatter.load` reads common frontmatter without PyYAML; wherever it does, the
    result must be PyYAML's (errors included), for any mix of tricky lines."""
    from hypothesis import given, settings, strategies as st

    from commonplace.compiler.markdown import frontmatter as fm

    pair = st.tuples(st.sampled_from(KEYS), st.sampled_from(SEPS), st.sampled_from(VALUES)).map("".join)
    item = st.tuples(st.sampled_from(ITEMS), st.sampled_from(VALUES)).map("".join)
    line = st.one_of(pair, item, st.sampled_from(OTHER), st.text(max_size=12))
    random_raw = st.lists(line, min_size=1, max_size=8).map("\n".join)

    # Well-shaped frontmatter (distinct keys; scalars or block lists) with tricky values:
    # the fast path's own ground.
    common = [v for v in VALUES if v and v[0] not in "&*!|>@`%=<-+.~" and ":" not in v and "#" not in v]
    value = st.one_of(*[st.sampled_from(common)] * 4, st.sampled_from(VALUES))

    @st.composite
    def shaped_raw(draw):
        out = []
        keys = st.one_of(st.sampled_from(KEYS[:5] + KEYS[-2:]), st.sampled_from(KEYS))
        for key in draw(st.lists(keys, unique=True, min_size=1, max_size=6)):
            if draw(st.booleans()):
                out.append(key + draw(st.sampled_from([": ", ": ", ":  ", ":"])) + draw(value))
            else:
                indent = draw(st.sampled_from(["", "  ", "    "]))
                out.append(key + ":")
                for v in draw(st.lists(value, max_size=4)):
                    out.append(draw(st.sampled_from([indent] * 5 + [" "])) + "- " + v)
        return "\n".join(out)

    def outcome(load, raw):
        try:
            return load(raw)
        except fm.FrontmatterError:
            return "error"

    used = []

    @settings(max_examples=4000, deadline=None)
    @given(st.one_of(random_raw, shaped_raw(), shaped_raw(), shaped_raw()))
    def check(raw):
        raw += "\n"
        if not raw.strip():
            return
        used.append(fm._simple(raw) is not None)
        assert outcome(fm.load, raw) == outcome(fm.load_yaml, raw), raw

    check()
    assert sum(used) > 150  # the fast path was exercised (about 8% of cases), not just the fallback


def test_common_frontmatter_takes_the_fast_path():
    from commonplace.compiler.markdown import frontmatter as fm

    raw = 'title: "Accessibility Audits"\ntags:\n  - "frontend"\n  - area/ui\ncreated: 2024-04-19\nstatus: active\n' \
          "canonical: true\naliases: [AA, 'a11y']\nreviews: 3\nempty:\n"
    assert fm._simple(raw) is not None
    assert fm.load(raw) == {"title": "Accessibility Audits", "tags": ["frontend", "area/ui"], "created": "2024-04-19",
                            "status": "active", "canonical": True, "aliases": ["AA", "a11y"], "reviews": 3,
                            "empty": None}
