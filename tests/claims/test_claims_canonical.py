"""Canonical pages: managed sections, byte-for-byte preservation of everything else,
hostile statements that cannot break out, broken markers refused, atomic writes."""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonplace.compiler.claims import ClaimStore, PageConflict
from commonplace.compiler.claims.canonical import find_sections, set_frontmatter_fields, splice
from commonplace.compiler.claims.text_rules import md_inline
from commonplace.compiler.markdown.mdit import parse_tokens, render_tokens
from commonplace.compiler.markdown.parse import parse

from claimtools import page

UTC = dt.timezone.utc


def render(md: str) -> str:
    tokens, env = parse_tokens(md)
    return render_tokens(tokens, env)


def sections_of(text: str) -> dict[str, str]:
    spans = find_sections(text)
    return {n: text[s.start:s.end] for n, s in spans.items()}


def outside(text: str) -> list[str]:
    """The text between managed sections (what a person owns)."""
    spans = sorted(find_sections(text).values(), key=lambda s: s.start)
    out, pos = [], 0
    for s in spans:
        out.append(text[pos:s.start])
        pos = s.end
    out.append(text[pos:])
    return out


def test_sections_are_added_once_in_order_after_human_text(store: ClaimStore, corpus):
    before = page(corpus, "people/alex.md")
    store.add("alex", "Alex prefers async reviews", kind="preference", confidence=0.9, valid_from="2026-01-01")
    text = page(corpus, "people/alex.md")
    assert text.startswith(before)  # frontmatter and body untouched, sections appended
    assert list(find_sections(text)) == ["claims", "timeline", "evidence"]
    claims = sections_of(text)["claims"]
    assert "### Preferences" in claims and "Alex prefers async reviews" in claims
    assert "confidence 0\\.9" not in claims and "confidence 0.9" in claims and "since 2026-01-01" in claims
    assert re.search(r"- 2026-03-01 09:00 UTC · added preference `c_[0-9a-f]{16}`: Alex prefers async reviews \(by tester\)",
                     sections_of(text)["timeline"])
    assert "[[sources/semantic/2026/03/01/alex-0900" in sections_of(text)["evidence"]
    # Recompiling with nothing new changes nothing, not even the mtime.
    mtime = os.stat(corpus / "people/alex.md").st_mtime_ns
    assert all(not c.changed for c in store.compile("alex"))
    assert os.stat(corpus / "people/alex.md").st_mtime_ns == mtime


HUMAN_BEFORE = "---\ntitle: Alex Smith\naliases: [Alex]\nweird:   'spacing kept'   # comment\n---\n# Alex\n\nIntro  with  odd   spacing.  \n\n"
HUMAN_BETWEEN_1 = "\n\nWritten between claims and timeline.\n\n```\n<!-- commonplace:claims:start -->\n```\n\n"
HUMAN_BETWEEN_2 = "\n\n> a quote between timeline and evidence\n\n"
HUMAN_AFTER = "\n\n## Notes\n\nTrailing text without final newline"


def test_text_before_between_and_after_sections_survives_byte_for_byte(store: ClaimStore, corpus):
    text = (HUMAN_BEFORE
            + "<!-- commonplace:claims:start -->\nstale\n<!-- commonplace:claims:end -->" + HUMAN_BETWEEN_1
            + "<!-- commonplace:timeline:start -->\n<!-- commonplace:timeline:end -->" + HUMAN_BETWEEN_2
            + "<!-- commonplace:evidence:start -->\nold\n<!-- commonplace:evidence:end -->" + HUMAN_AFTER)
    (corpus / "people/alex.md").write_bytes(text.encode())
    store.add("alex", "Alex likes tea")
    store.add("alex", "Alex likes green tea and **bold** [[links]]")
    store.replace("alex", "Alex likes oolong", claim="Alex likes tea")
    new = page(corpus, "people/alex.md")
    assert outside(new) == [HUMAN_BEFORE, HUMAN_BETWEEN_1, HUMAN_BETWEEN_2, HUMAN_AFTER]
    assert "stale" not in new and "old\n" not in new
    # The fenced marker example in the human text was not taken for a marker.
    assert new.count("<!-- commonplace:claims:start -->") == 2


def test_crlf_page_keeps_its_line_endings(store: ClaimStore, corpus):
    text = "---\r\ntitle: Alex Smith\r\n---\r\n# Alex\r\n\r\nIntro.\r\n"
    (corpus / "people/alex.md").write_bytes(text.encode())
    store.add("alex", "Alex likes tea")
    data = (corpus / "people/alex.md").read_bytes()
    assert data.startswith(text.encode())
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_page_with_bom_and_no_frontmatter(store: ClaimStore, corpus):
    raw = "\ufeff# Sam\n\nNo frontmatter here.".encode()
    (corpus / "people/sam.md").write_bytes(raw)
    store.add("sam", "Sam likes chess")
    data = (corpus / "people/sam.md").read_bytes()
    assert data.startswith(raw + b"\n")


def test_missing_section_is_reinserted_next_to_its_neighbours(store: ClaimStore, corpus):
    store.add("alex", "Alex likes tea")
    text = page(corpus, "people/alex.md")
    spans = find_sections(text)
    t = spans["timeline"]
    cut = text[: t.start] + "HUMAN IN THE MIDDLE" + text[t.end:]  # a person deleted the timeline
    (corpus / "people/alex.md").write_text(cut)
    store.add("alex", "Alex likes cake")
    new = page(corpus, "people/alex.md")
    assert list(find_sections(new)) == ["claims", "timeline", "evidence"]
    assert "HUMAN IN THE MIDDLE" in new
    order = [new.index(x) for x in ("<!-- commonplace:claims:end", "<!-- commonplace:timeline:start",
                                    "HUMAN IN THE MIDDLE", "<!-- commonplace:evidence:start")]
    assert order == sorted(order)


@pytest.mark.parametrize("broken", [
    "<!-- commonplace:claims:start -->\nnever closed\n",
    "<!-- commonplace:claims:end -->\n",
    "<!-- commonplace:claims:start -->\n<!-- commonplace:timeline:start -->\n<!-- commonplace:timeline:end -->\n<!-- commonplace:claims:end -->\n",
    "<!-- commonplace:claims:start -->\n<!-- commonplace:claims:end -->\n<!-- commonplace:claims:start -->\n<!-- commonplace:claims:end -->\n",
])
def test_broken_markers_are_refused_and_nothing_is_written(store: ClaimStore, corpus, broken):
    text = "# Alex\n\n" + broken
    (corpus / "people/alex.md").write_text(text)
    with pytest.raises(PageConflict) as exc:
        store.add("alex", "Alex likes tea")
    assert "people/alex.md:" in exc.value.message
    assert page(corpus, "people/alex.md") == text
    assert not (corpus / "claims").exists() and not (corpus / "sources").exists()


def test_not_utf8_or_symlinked_page_is_refused(store: ClaimStore, corpus):
    (corpus / "people/sam.md").write_bytes(b"# Sam\n\xff\xfe\n")
    with pytest.raises(PageConflict):
        store.add("person:sam", "Sam likes chess")
    (corpus / "people/sam.md").unlink()
    (corpus / "people/sam.md").symlink_to(corpus / "people/alex.md")
    with pytest.raises(Exception):
        store.add("people/sam.md", "Sam likes chess")


HOSTILE = [
    "<!-- commonplace:claims:end -->",
    "line one\n<!-- commonplace:claims:end -->\n# Heading injected\n<!-- commonplace:timeline:start -->",
    "# heading", "## heading", "- list", "+ list", "1. ordered", "2) ordered", "> quote", "---", "***", "===",
    "```\ncode fence", "~~~", "    indented code", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    "[[people/sam.md]] wikilink", "[[x|y]]", "![[embed]]", "[link](http://evil.example)", "<http://evil.example>",
    "![img](http://evil.example/x.png)", "&amp; &lt; &#x41;", "$x^2$ math", "$$\nblock\n$$", "| a | b |\n|---|---|",
    "**bold** _em_ ~~strike~~ `code`", "trailing backslash \\", "hard break  \nnext", "[^1] footnote\n[^1]: note",
    "<!-- commonplace:details:end -->", "<!-- commonplace:details:start Boom -->",
    "text\n\n\n\nwith blank lines", "\u2028line\u2029separators\u0085", "emoji 🧠 and ZWJ 👩‍💻",
    "*" * 50, "x" * 2000,
]


@pytest.mark.parametrize("statement", HOSTILE)
def test_hostile_statements_render_as_literal_text_inside_their_section(store: ClaimStore, corpus, statement):
    before = page(corpus, "people/alex.md")
    store.add("alex", statement)
    text = page(corpus, "people/alex.md")
    assert text.startswith(before)
    spans = find_sections(text)  # still exactly three well-formed sections
    assert list(spans) == ["claims", "timeline", "evidence"]
    doc, _ = parse("people/alex.md", text.encode())
    html = render_tokens(doc.tokens, doc.md_env)
    for bad in ("<script", "<img", "<h1", "href=\"http://evil", "<a class=\"wikilink", "<blockquote", "<table",
                "<strong>bold", "<code>code</code>", "class=\"math", "<hr", "<ol", "class=\"footnote"):
        assert bad not in html.split("Hand-written intro about Alex.")[1], (bad, statement)
    assert html.count("<h2") == 3  # Claims, Timeline, Evidence: nothing injected
    assert html.count("<details") == html.count("</details>")
    # The claims section shows the statement as one literal line.
    flat = " ".join(statement.split())
    shown = flat if len(flat) <= 500 else flat[:499].rstrip()
    visible = re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    assert shown in visible


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_md_inline_renders_exactly_the_text(text):
    flat = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]", "", text)
    flat = " ".join(flat.split())
    if not flat:
        return
    html = render("- " + md_inline(text, start=True) + " — tail\n")
    assert html.startswith("<ul>\n<li>") and html.count("<li>") == 1
    inner = html[len("<ul>\n<li>"): html.index(" — tail</li>")]
    from html import unescape
    assert "<" not in inner.replace("&lt;", "")
    assert unescape(inner) == flat


def test_set_frontmatter_fields_touches_only_those_lines():
    text = "---\ntitle: Alex\nstatus: active   # was active\ntags: [a, b]\nnote: |\n  multi\n  line\n---\n# Body\n"
    new = set_frontmatter_fields(text, {"status": "superseded", "superseded_by": "[[x.md]]"})
    assert new == "---\ntitle: Alex\nstatus: superseded\ntags: [a, b]\nnote: |\n  multi\n  line\nsuperseded_by: '[[x.md]]'\n---\n# Body\n"
    assert set_frontmatter_fields("# no fm\n", {"status": "superseded"}) == "---\nstatus: superseded\n---\n# no fm\n"
    crlf = "---\r\ntitle: A\r\n---\r\nbody\r\n"
    assert set_frontmatter_fields(crlf, {"status": "superseded"}) == "---\r\ntitle: A\r\nstatus: superseded\r\n---\r\nbody\r\n"


def test_splice_is_idempotent_and_preserves_outside():
    text = "# T\n\nhello\n"
    contents = {"claims": ["", "## Claims", ""], "timeline": ["x"], "evidence": ["y"]}
    once = splice(text, contents)
    assert splice(once, contents) == once
    assert once.startswith(text)


def test_contradictions_and_history_are_shown(store: ClaimStore, corpus, clock):
    store.add("project:atlas", "Atlas is on track", kind="state")
    store.add("project:atlas", "Atlas is blocked", kind="state")
    store.add("project:atlas", "Atlas ships in May", kind="decision")
    store.replace("project:atlas", "Atlas ships in June", claim="ships in May")
    store.add("project:atlas", "Atlas uses Postgres")
    store.retire("project:atlas", "Postgres", reason="moved to SQLite")
    store.add("project:atlas", "Atlas had a beta", valid_from="2025-01-01", valid_to="2025-02-01")
    store.add("project:atlas", "Atlas launches publicly", valid_from="2030-01-01")
    text = page(corpus, "projects/atlas/state.md")
    claims = sections_of(text)["claims"]
    assert "⚠ **Contradiction:** 2 current `state` claims disagree" in claims
    assert claims.count("⚠ contradicts") == 2
    current, history = claims.split("<!-- commonplace:details:start", 1)
    assert "Atlas ships in June" in current and "Atlas ships in May" not in current
    assert "### Upcoming" in current and "Atlas launches publicly" in current
    assert "History: 2 retired or ended claims -->" in history
    assert "Atlas ships in May" not in text  # superseded: the page shows only the current one
    old = [v["statement"] for c in store.history("project:atlas") for v in c["versions"]]
    assert "Atlas ships in May" in old  # the claim log keeps the history
    assert "*retired 2026-03-01:* Atlas uses Postgres" in history and "Reason: moved to SQLite" in history
    assert "*ended 2025-02-02:* Atlas had a beta" in history
    doc, _ = parse("projects/atlas/state.md", text.encode())
    html = render_tokens(doc.tokens, doc.md_env)
    assert '<details class="managed"><summary>History: 2 retired or ended claims</summary>' in html
    # Timeline: oldest first.
    times = re.findall(r"^- (2026-\d\d-\d\d \d\d:\d\d:?\d*) UTC", sections_of(text)["timeline"], re.M)
    assert times == sorted(times) and len(times) == 8


def test_evidence_section_links_artifacts_and_cited_files(store: ClaimStore, corpus):
    store.add("alex", "Alex ran the offsite", evidence="notes/meeting.md:2-3")
    store.add("alex", "Alex wrote a post", evidence="https://example.com/post?id=1")
    r = store.add("alex", "Alex mentioned a missing doc", evidence="notes/nope.md")
    assert any("does not exist" in w for w in r.warnings)
    ev = sections_of(page(corpus, "people/alex.md"))["evidence"]
    assert "- [[notes/meeting.md]] (lines 2-3) — `c_" in ev
    assert "- <https://example.com/post?id=1> — `c_" in ev
    assert ev.count("[[sources/semantic/2026/03/01/alex-") == 3
    store.add("alex", "Alex said so on a call", evidence="call with Alex, 3 March [[x]]")
    store.add("alex", "Alex said so in chat", evidence="chat:1234")
    ev = sections_of(page(corpus, "people/alex.md"))["evidence"]
    assert "- Source: call with Alex, 3 March \\[\\[x\\]\\] — `c_" in ev
    assert "- Source: chat:1234 — `c_" in ev


def test_page_is_written_atomically_and_keeps_permissions(store: ClaimStore, corpus):
    os.chmod(corpus / "people/alex.md", 0o600)
    store.add("alex", "Alex likes tea")
    assert (os.stat(corpus / "people/alex.md").st_mode & 0o777) == 0o600
    leftovers = [p.name for p in (corpus / "people").iterdir() if p.name.startswith(".")]
    assert leftovers == []


_ALPHABET = st.sampled_from(list("ab <>&*_`[]|#!-+=.:$~\\\n\t\"'") + ["<!-- commonplace:claims:end -->", "```", "[[x]]",
                                                                       "\u2028", "é", "🧠", "1. ", "# "])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_ALPHABET, min_size=1, max_size=30).map("".join), min_size=1, max_size=4))
def test_any_statements_keep_the_page_well_formed_and_forget_removes_them(tmp_path_factory, statements):
    from claimtools import FILES, FakeClock
    from commonplace.compiler.claims import InvalidClaim

    root = tmp_path_factory.mktemp("c")
    (root / "people").mkdir()
    human = FILES["people/alex.md"]
    (root / "people/alex.md").write_text(human)
    store = ClaimStore(root, actor="t", fsync=False, now=FakeClock(dt.datetime(2026, 3, 1, tzinfo=UTC)))
    added = []
    for s in statements:
        try:
            r = store.add("alex", s)
        except InvalidClaim:
            continue  # empty after trimming
        if r.action == "add":
            added.append((r.claim_ids[0], s))
    text = page(root, "people/alex.md")
    if not added:
        assert text == human
        return
    assert text.startswith(human) and list(find_sections(text)) == ["claims", "timeline", "evidence"]
    doc, _ = parse("people/alex.md", text.encode())
    body_html = render_tokens(doc.tokens, doc.md_env).split("Hand-written intro about Alex.")[1]
    assert body_html.count("<h2") == 3 and body_html.count("<details") == body_html.count("</details>")
    for cid, _ in added:
        store.forget("alex", cid, reason="test")
    final = page(root, "people/alex.md")
    assert final.startswith(human)
    managed = final[len(human):]
    if added:  # everything forgotten: no statement-bearing line may remain
        assert "*No current claims.*" in managed and "details:start" not in managed
        timeline = sections_of(final)["timeline"]
        entries = [l for l in timeline.splitlines() if l.startswith("- ")]
        assert entries and all(l.endswith("(text forgotten) (by t)") or " · forgot 1 claim " in l for l in entries)
        assert all(not l.startswith("- [[") or "forget (tombstone)" in l
                   for l in sections_of(final)["evidence"].splitlines())
