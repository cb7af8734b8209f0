"""Parsing one file into a Document: frontmatter, titles, types, dates, hostile YAML."""

from __future__ import annotations

import pytest

from commonplace.compiler.parse import SkipFile, parse


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


def test_links_are_extracted_with_source_lines_but_not_from_code():
    doc, _ = p("notes/a.md", "---\ntitle: A\n---\nSee [[b]] and [c](c.md#top).\n\n```\n[[in-code]]\n```\n`[[inline]]`\n![[embed]]\n")
    assert [(l.target, l.line, l.kind) for l in doc.links] == [
        ("b", 4, "wiki"), ("c.md", 4, "md"), ("embed", 10, "wiki")]
    assert doc.links[1].heading == "top"
