"""Evidence artifacts, forget and tombstones, and the claims stage inside the real build:
forgotten text gone from every built file; markdown + claims/ rebuild to the same bytes."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest

from commonplace.compiler.markdown import frontmatter as fm
from commonplace.compiler.build.pipeline import BuildOptions, build
from commonplace.compiler.claims import ClaimStore, InvalidClaim, run_stage
from commonplace.compiler.claims.canonical import find_sections
from commonplace.compiler.claims.evidence import artifact_files
from commonplace.compiler.claims.log import ClaimLog

from claimtools import ALEX as FILES_ALEX
from claimtools import FILES, page, site_files

SECRET = "Alex's door code is <zq4711xv> & **never** share [[it]]"
SECRET_TOKEN = "zq4711xv"  # letters outside hex: never found by chance in a hash or a number


def run_build(corpus: Path, out: Path, **kw):
    return build(BuildOptions(corpus=corpus, out=out, embed=False, name="corpus", **kw))


def frontmatter_of(corpus: Path, rel: str) -> dict:
    raw, _, _ = fm.split(page(corpus, rel))
    return fm.load(raw or "")


def grep_tree(root: Path, needles: list[str]) -> list[str]:
    hits = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes().decode("utf-8", "replace")
            for n in needles:
                if n in data:
                    hits.append(f"{p.relative_to(root)}: {n!r}")
    return hits


def forms(text: str) -> list[str]:
    """The ways a statement can appear in built files: raw, HTML-escaped, JSON-escaped."""
    import json

    return sorted({text, html.escape(text), html.escape(text, quote=False), json.dumps(text)[1:-1],
                   json.dumps(text, ensure_ascii=False)[1:-1], SECRET_TOKEN})


# -- evidence artifacts -------------------------------------------------------------------


def test_every_write_stores_an_immutable_evidence_artifact(store: ClaimStore, corpus):
    r = store.add("alex", "Alex likes tea\nwith ```fences``` and <!-- commonplace:claims:end -->",
                  kind="preference", reason="said so in standup", evidence="notes/meeting.md:2")
    rel = r.evidence_path
    assert rel.startswith("sources/semantic/2026/03/01/alex-0900") and rel.endswith("-add.md")
    meta = frontmatter_of(corpus, rel)
    assert {k: meta[k] for k in ("entity", "action", "kind", "actor", "reason", "type", "source_kind")} == {
        "entity": "person:alex", "action": "add", "kind": "preference", "actor": "tester",
        "reason": "said so in standup", "type": "source", "source_kind": "semantic"}
    assert meta["claim_ids"] == r.claim_ids and meta["event_ids"] == [r.events[0]["id"]]
    assert meta["evidence"] == {"path": "notes/meeting.md", "lines": "2"}
    body = page(corpus, rel)
    assert "````text\nAlex likes tea\nwith ```fences``` and <!-- commonplace:claims:end -->\n````" in body
    # The event links the artifact.
    (ev,) = ClaimLog(corpus).read().events
    assert ev.source == rel and ev.evidence == {"path": "notes/meeting.md", "lines": "2"}
    # Replace, retire and invalidate write their own artifacts; nothing is overwritten.
    before = {p: (corpus / p).read_bytes() for p in artifact_files(corpus)}
    store.replace("alex", "Alex likes green tea", claim=r.claim_ids[0])
    store.retire("alex", "green tea", reason="switched to coffee")
    c2 = store.add("alex", "Alex speaks Klingon").claim_ids[0]
    store.invalidate("alex", c2, reason="joke")
    after = artifact_files(corpus)
    assert {p: (corpus / p).read_bytes() for p in before} == before
    assert sorted(p.rsplit("-", 1)[1] for p in after) == ["add.md", "add.md", "invalidate.md", "replace.md", "retire.md"]


def test_artifact_names_never_collide(make_store, corpus):
    import datetime as dt

    fixed = dt.datetime(2026, 3, 1, 9, 0, 0, tzinfo=dt.timezone.utc)
    store = make_store(now=lambda: fixed)  # every write in the same second
    paths = [store.add("alex", f"Alex fact number {i}").evidence_path for i in range(4)]
    assert len(set(paths)) == 4
    assert [p.rsplit("/", 1)[1] for p in paths] == ["alex-090000-add.md", "alex-090000-add-2.md",
                                                    "alex-090000-add-3.md", "alex-090000-add-4.md"]
    assert len({frontmatter_of(corpus, p)["title"] for p in paths}) == 4  # titles too: links stay unambiguous
    store.forget("alex", "number 1", reason="r")
    store.forget("alex", "number 2", reason="r")
    from commonplace.compiler.build.pipeline import load_corpus
    from commonplace.compiler.build.lint import lint

    findings = [f for f in lint(load_corpus(corpus)) if f.path.startswith(("sources/", "people/"))]
    assert findings == []


def test_dry_run_writes_nothing_and_previews_the_page(store: ClaimStore, corpus):
    before = page(corpus, "people/alex.md")
    r = store.add("alex", "Alex likes tea", dry_run=True)
    assert r.dry_run and r.page.changed and "Alex likes tea" in r.page.new.decode()
    assert "+- Alex likes tea" in r.page.diff()
    assert page(corpus, "people/alex.md") == before
    assert not (corpus / "claims").exists() and not (corpus / "sources").exists()
    created = store.add("project:brand-new", "It is new", dry_run=True)
    assert created.created and created.page.created and not (corpus / "projects/brand-new").exists()
    store.add("alex", "Alex likes tea")
    f = store.forget("alex", "Alex likes tea", reason="r", dry_run=True)
    assert "Alex likes tea" not in f.page.new.decode().split("<!-- commonplace:claims:start -->")[1]
    assert len(ClaimLog(corpus).read().events) == 1


# -- forget -----------------------------------------------------------------------------


def test_forget_retires_keeps_history_writes_tombstone_and_redacts(store: ClaimStore, corpus):
    keep = store.add("alex", "Alex likes tea").claim_ids[0]
    gone = store.add("alex", SECRET, reason="told me", evidence="notes/meeting.md").claim_ids[0]
    store.replace("alex", SECRET + " (updated)", claim=gone)  # both versions must go
    r = store.forget("alex", "door code", reason=f"personal data; the text was: {SECRET}")
    assert r.action == "forget" and r.claim_ids == [gone]
    tomb = r.evidence_path
    assert tomb.endswith("-forget.md")
    # 1. The canonical page has no trace of the text, before or after the managed sections.
    text = page(corpus, "people/alex.md")
    for f in forms(SECRET):
        assert f not in text
    assert "Alex likes tea" in text and "forgot 1 claim" in text and f"[[{tomb}|tombstone]]" in text
    assert frontmatter_of(corpus, "people/alex.md").get("status") is None  # partial forget: page stays active
    # 2. The tombstone records the reason (redacted) and the claim ids, never the text.
    meta = frontmatter_of(corpus, tomb)
    assert meta["type"] == "tombstone" and meta["claim_ids"] == [gone] and meta["entity"] == "person:alex"
    assert meta["reason"] == "personal data; the text was: [forgotten]"
    assert SECRET_TOKEN not in page(corpus, tomb)
    # 3. Artifacts that quoted it are redacted and point at the tombstone.
    assert len(r.redacted) == 2
    for rel in r.redacted:
        body = page(corpus, rel)
        assert SECRET_TOKEN not in body and "[forgotten]" in body
        m = frontmatter_of(corpus, rel)
        assert m["status"] == "superseded" and m["superseded_by"] == f"[[{tomb}]]" and m["redacted"] is True
    # 4. History stays in the log.
    events = ClaimLog(corpus).read().events
    assert [e.event for e in events if e.claim_id == gone] == ["added", "replaced", "retired"]
    assert events[-1].forgotten is True and events[-1].source == tomb
    assert [c["claim_id"] for c in store.current("alex")] == [keep]
    # 5. It cannot be forgotten twice, and is not offered as a candidate.
    with pytest.raises(Exception) as exc:
        store.forget("alex", "door code", reason="again")
    assert exc.value.code == "claim_not_found"


def test_forget_reports_text_that_a_person_wrote_by_hand(store: ClaimStore, corpus):
    store.add("alex", "Alex is allergic to peanuts")
    (corpus / "notes/meeting.md").write_text("# Meeting\n\nAlex is allergic to peanuts, remember.\n")
    r = store.forget("alex", "allergic", reason="health data")
    assert r.still_present == ["notes/meeting.md"]
    assert any("notes/meeting.md" in w for w in r.warnings)
    assert "Alex is allergic to peanuts" in page(corpus, "notes/meeting.md")  # never edited


def test_forget_requires_reason_and_a_target(store: ClaimStore):
    store.add("alex", "Alex likes tea")
    with pytest.raises(InvalidClaim):
        store.forget("alex", "tea", reason="")
    with pytest.raises(InvalidClaim):
        store.forget("alex", None, reason="why")
    store.add("alex", "Alex likes green tea")
    r = store.forget("alex", "alex likes tea.", reason="why")  # a whole statement wins over substrings
    assert [c["statement"] for c in store.current("alex")] == ["Alex likes green tea"] and len(r.claim_ids) == 1


def test_forget_substring_matching_several_needs_all(store: ClaimStore):
    store.add("alex", "Alex likes black tea")
    store.add("alex", "Alex likes green tea")
    with pytest.raises(Exception) as exc:
        store.forget("alex", "likes", reason="why")
    assert exc.value.code == "ambiguous_claim" and len(exc.value.candidates) == 2
    r = store.forget("alex", "likes", reason="why", all=True)
    assert len(r.claim_ids) == 2


def test_forget_all_marks_the_page_superseded(store: ClaimStore, corpus):
    store.add("alex", "Alex likes tea")
    store.add("alex", "Alex likes cake")
    r = store.forget("alex", reason="left the company", all=True)
    meta = frontmatter_of(corpus, "people/alex.md")
    # Dory's shape: superseded by <stem>.tombstone.md beside the page, which links the claim tombstone.
    assert meta["status"] == "superseded" and meta["superseded_by"] == "alex.tombstone.md"
    assert meta["canonical"] is False and meta["source_kind"] == "generated" and meta["temperature"] == "cold"
    side = page(corpus, "people/alex.tombstone.md")
    assert "left the company" in side and f"[[{r.evidence_path}|tombstone]]" in side and "Alex likes" not in side
    assert r.side_tombstone == "people/alex.tombstone.md"
    assert meta["custom_field"] == {"nested": [1, 2]} and meta["aliases"] == ["Alex", "A. Smith"]
    text = page(corpus, "people/alex.md")
    assert "Alex likes" not in text and "*No current claims.*" in text
    assert "Hand-written intro about Alex." in text
    assert frontmatter_of(corpus, r.evidence_path)["whole_entity"] is True
    # Recording a claim again later warns that the page is superseded.
    again = store.add("alex", "Alex is back")
    assert any("superseded" in w for w in again.warnings)


# -- the build ----------------------------------------------------------------------------


def test_after_forget_the_text_is_absent_from_every_built_file(store: ClaimStore, corpus, tmp_path):
    store.add("alex", SECRET, kind="fact", confidence=0.7)
    store.add("alex", "Alex likes tea")
    out = tmp_path / "site"
    first = run_build(corpus, out)
    assert first.extra["claims_forgotten"] is False
    assert grep_tree(out, [html.escape(SECRET, quote=False)]) or grep_tree(out, [SECRET_TOKEN])  # it was there
    store.forget("Alex Smith", SECRET, reason="privacy request")
    second = run_build(corpus, out)
    assert second.extra["claims_forgotten"] is True
    assert grep_tree(out, forms(SECRET)) == []
    assert grep_tree(corpus / ".commonplace", forms(SECRET)) == []
    assert grep_tree(corpus, forms(SECRET)) == [f for f in grep_tree(corpus, forms(SECRET)) if f.startswith("claims/")]
    assert "Alex likes tea" in (out / "people/alex/index.html").read_text()
    third = run_build(corpus, out)
    assert third.extra["claims_forgotten"] is False and third.pages_written == 0


def test_clean_rebuild_from_markdown_and_claims_gives_the_same_pages_and_site(store: ClaimStore, corpus, tmp_path):
    store.add("alex", "Alex prefers async reviews", kind="preference", confidence="high", evidence="notes/meeting.md:2-3")
    store.add("project:atlas", "Atlas is blocked on the vendor API", kind="state")
    store.replace("project:atlas", "Atlas is unblocked", kind="state")
    store.add("project:moon-base", "Moon Base needs funding", kind="state")
    store.add("concept:hybrid-search", "Hybrid search fuses BM25 and vectors", valid_from="2026-01-01")
    store.add("alex", "Alex's old phone number", kind="fact")
    store.forget("alex", "old phone", reason="stale")
    out_a = tmp_path / "site-a"
    run_build(corpus, out_a)
    pages_a = {p: (corpus / p).read_bytes() for p in ("people/alex.md", "projects/atlas/state.md",
                                                       "projects/moon-base/state.md", "concepts/hybrid-search.md")}

    # A fresh checkout holding only the markdown and claims/ (no .commonplace, no site) ...
    fresh = tmp_path / "fresh" / "corpus"
    for p in sorted(corpus.rglob("*")):
        rel = p.relative_to(corpus)
        if p.is_file() and (p.suffix == ".md" or rel.parts[0] == "claims") and not rel.parts[0].startswith("."):
            (fresh / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, fresh / rel)
    assert not (fresh / ".commonplace").exists()
    # ... where the compiled sections were even thrown away by hand, and a created page deleted.
    for rel in ("people/alex.md", "projects/atlas/state.md", "concepts/hybrid-search.md"):
        (fresh / rel).write_text(FILES[rel])
    (fresh / "projects/moon-base/state.md").unlink()
    out_b = tmp_path / "site-b"
    result = run_build(fresh, out_b)
    assert result.extra["claims_pages_updated"] == 4 and result.extra["claims_forgotten"] is True
    assert {p: (fresh / p).read_bytes() for p in pages_a} == pages_a
    assert site_files(out_b) == site_files(out_a)
    # And the forget stays true to its word in the fresh checkout too.
    assert grep_tree(out_b, ["old phone"]) == []


def test_stage_reports_corrupt_log_lines_as_build_warnings(store: ClaimStore, corpus, tmp_path):
    store.add("alex", "Alex likes tea")
    f = next((corpus / "claims").rglob("*.jsonl"))
    with open(f, "a") as fh:
        fh.write("{broken\n")
    result = run_build(corpus, tmp_path / "site")
    bad = [w for w in result.warnings if w.code == "claims-corrupt"]
    assert len(bad) == 1 and bad[0].line == 2 and bad[0].path == f.relative_to(corpus).as_posix()
    assert "Alex likes tea" in (tmp_path / "site/people/alex/index.html").read_text()


def test_stage_leaves_a_page_with_broken_markers_alone(store: ClaimStore, corpus):
    store.add("alex", "Alex likes tea")
    broken = page(corpus, "people/alex.md").replace("<!-- commonplace:claims:end -->", "")
    (corpus / "people/alex.md").write_text(broken)
    res = run_stage(corpus)
    assert [w.code for w in res.warnings] == ["claims-page"]
    assert page(corpus, "people/alex.md") == broken


def test_stage_without_claims_does_nothing(corpus, tmp_path):
    res = run_stage(corpus)
    assert res.events == 0 and not (corpus / ".commonplace").exists()
    result = run_build(corpus, tmp_path / "site")
    assert result.extra["claims_pages_updated"] == 0 and result.extra["claims_forgotten"] is False
    assert "claims" in result.stages


def test_stage_recompiles_when_a_validity_window_ends_or_the_page_changes(store: ClaimStore, corpus):
    import datetime as dt

    utc = dt.timezone.utc
    store.add("alex", "Alex is on call", valid_to="2026-03-10")
    first = run_stage(corpus, now=dt.datetime(2026, 3, 5, tzinfo=utc))
    assert first.entities == 1
    assert run_stage(corpus, now=dt.datetime(2026, 3, 6, tzinfo=utc)).unchanged == 1  # nothing to redo
    text = page(corpus, "people/alex.md")
    assert "- Alex is on call — " in text.split("<!-- commonplace:details:start")[0]
    later = run_stage(corpus, now=dt.datetime(2026, 3, 11, 0, 0, 1, tzinfo=utc))
    assert later.pages_updated == ["people/alex.md"]  # the window closed: the claim moved to the history
    assert "*ended 2026-03-11:* Alex is on call" in page(corpus, "people/alex.md")
    (corpus / "people/alex.md").write_text(page(corpus, "people/alex.md").replace("Alex is on call", "edited by hand!"))
    again = run_stage(corpus, now=dt.datetime(2026, 3, 12, tzinfo=utc))
    assert again.pages_updated == ["people/alex.md"] and "edited by hand!" not in page(corpus, "people/alex.md")


def _git(cwd: Path, *args: str) -> str:
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    return r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_merge_of_two_writers_heals_on_the_next_build(corpus, make_store, clock, tmp_path):
    _git(corpus, "init", "-q", "-b", "main")
    _git(corpus, "add", "-A")
    _git(corpus, "commit", "-q", "-m", "base")
    _git(corpus, "checkout", "-q", "-b", "laptop")
    make_store("laptop").add("alex", "Alex likes tea")
    _git(corpus, "add", "-A")
    _git(corpus, "commit", "-q", "-m", "laptop")
    _git(corpus, "checkout", "-q", "main")
    clock.set("2026-03-01T10:00:00")
    make_store("desktop").add("alex", "Alex likes chess")
    _git(corpus, "add", "-A")
    _git(corpus, "commit", "-q", "-m", "desktop")
    out = _git(corpus, "merge", "laptop")
    assert "CONFLICT (content): Merge conflict in people/alex.md" in out
    assert "claims/" not in out.split("CONFLICT")[1]  # the logs merged cleanly: one file per actor
    assert "<<<<<<<" in page(corpus, "people/alex.md")
    result = run_build(corpus, tmp_path / "site")
    assert result.extra["claims_pages_updated"] == 1 and not [w for w in result.warnings if w.code == "claims-page"]
    healed = page(corpus, "people/alex.md")
    assert "<<<<<<<" not in healed and "=======" not in healed
    assert "- Alex likes tea — " in healed and "- Alex likes chess — " in healed
    assert healed.startswith(FILES_ALEX)


def test_conflict_in_human_text_is_refused(store: ClaimStore, corpus):
    store.add("alex", "Alex likes tea")
    text = page(corpus, "people/alex.md").replace("Hand-written intro about Alex.\n",
                                                  "<<<<<<< ours\nIntro A\n=======\nIntro B\n>>>>>>> theirs\n")
    (corpus / "people/alex.md").write_text(text)
    with pytest.raises(Exception) as exc:
        store.add("alex", "Alex likes cake")
    assert "conflict" in exc.value.message
    assert page(corpus, "people/alex.md") == text


def test_forgotten_stays_reported_until_committed(store: ClaimStore, corpus):
    store.add("alex", "Alex hums loudly")
    store.forget("alex", "hums", reason="r")
    first = run_stage(corpus, commit=False)
    assert first.forgotten and first.forgotten_new == [store.history("alex")[0]["claim_id"]]
    # The build died before the search indexes were purged: the next run must say so again.
    assert run_stage(corpus, commit=False).forgotten
    again = run_stage(corpus, commit=False)
    again.commit()
    assert not run_stage(corpus).forgotten
    assert not (corpus / ".commonplace/claims-forgotten.json").read_text().count("hums")


def test_claims_of_a_deleted_page_can_still_be_forgotten(store: ClaimStore, corpus, tmp_path):
    store.add("sam", "Sam's salary is 100k")
    (corpus / "people/sam.md").unlink()
    r = store.forget("person:sam", "salary", reason="private")
    assert r.page is None and not (corpus / "people/sam.md").exists()  # not resurrected just to be empty
    run_build(corpus, tmp_path / "site")
    assert not (corpus / "people/sam.md").exists()
    assert grep_tree(tmp_path / "site", ["100k"]) == []
    with pytest.raises(Exception):
        store.forget("person:nobody", "x", reason="r")
