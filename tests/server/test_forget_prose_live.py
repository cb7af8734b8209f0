"""/v1/memory-write, day-7 defects: a forget of a sentence only the page's prose says
takes that sentence out (and records the forget), a forget that matches nothing does not
steer to all=true, and a replace rewrites one clause and warns only about old values."""

from __future__ import annotations

from pathlib import Path

from commonplace.compiler.claims import ClaimStore

JONAS = ("---\ntitle: Jonas Weber\ntype: person\naliases: [Jonas]\n---\n\n# Jonas Weber\n\n"
         "Maintainer of the Harbor project. Based in Berlin (CET, UTC+1).\n"
         "Jonas has coeliac disease and eats strictly gluten-free.\n"
         "He likes short, bullet-point messages and answers email within a day.\n"
         "Jonas is organising the maintainers' dinner at FOSDEM in Brussels.\n")
LANTERN = ("---\ntitle: lanternfish\ntype: project\nstatus: active\n---\n\n# lanternfish\n\n"
           "A command-line tool for tailing and filtering structured logs.\n\n## Status\n\n"
           "- Version 0.9 is in beta; the 0.9.0 release is planned for 2026-12-15.\n"
           "- The nightly fuzz job runs at 01:00 UTC on the CI runner Tomás hosts.\n"
           "- Supported Python versions: 3.9 to 3.13.\n")
DECISION = ("---\ntitle: Drop Python 3.8 in lanternfish\ntype: decision\ndate: 2026-11-20\nstatus: active\n---\n\n"
            "# Drop Python 3.8 in lanternfish\n\nDecision: lanternfish 0.9 drops support for Python 3.8.\n")
RELEASE = "The 0.9.0 release moved to 2026-12-18 because #212 needs another review round."


def mw(c, **body):
    body.setdefault("allow_canonical", True)
    r = c.post("/v1/memory-write", json=body)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_forget_of_a_hand_written_clause_takes_it_out_and_records_the_forget(open_client, corpus: Path) -> None:
    (corpus / "people/jonas-weber.md").write_text(JONAS)
    d = mw(open_client, action="forget", kind="fact", subject="Jonas", content="Jonas answers email within two days.",
           reason="no longer true")
    assert d["result"] == "rejected", d
    msg = d["message"]
    # the closest sentence is named; all=true comes last, as the whole-page option with its warning
    assert "answers email within a day" in msg and msg.index("answers email within a day") < msg.index("all=true"), msg
    assert "every" in msg[msg.index("all=true"):] and "coeliac" not in msg, msg
    assert (corpus / "people/jonas-weber.md").read_text() == JONAS

    preview = mw(open_client, action="forget", kind="fact", subject="Jonas", content="Jonas answers email within a day.",
                 reason="no longer true", dry_run=True)
    assert preview["result"] == "preview" and "answers email" not in preview["preview"], preview
    assert (corpus / "people/jonas-weber.md").read_text() == JONAS

    d = mw(open_client, action="forget", kind="fact", subject="Jonas", content="Jonas answers email within a day.",
           reason="no longer true")
    assert d["result"] == "forgotten", d
    assert "answers email within a day" in d["message"] and "people/jonas-weber.md" in d["message"], d
    page = (corpus / "people/jonas-weber.md").read_text()
    assert "answers email" not in page, page
    assert "He likes short, bullet-point messages.\n" in page and "coeliac disease" in page and "FOSDEM" in page, page
    hist = ClaimStore(corpus, actor="t").history("person:jonas-weber")
    assert len(hist) == 1 and hist[0]["forgotten"] is True and hist[0]["tombstone"] == d["evidence_path"], hist
    assert not [c for c in ClaimStore(corpus, actor="t").current("person:jonas-weber")]
    hits = open_client.post("/v1/search", json={"query": "answers email within a day"}).get_json()["results"]
    assert not any("answers email" in (h.get("snippet") or "") for h in hits), hits


def test_a_replace_keeps_the_clause_it_does_not_restate_and_warns_only_of_the_old_date(open_client,
                                                                                        corpus: Path) -> None:
    (corpus / "projects/lanternfish").mkdir(parents=True)
    (corpus / "projects/lanternfish/state.md").write_text(LANTERN)
    (corpus / "decisions").mkdir(exist_ok=True)
    (corpus / "decisions/2026-11-20-drop-python-38.md").write_text(DECISION)
    w = open_client.post("/v1/write", json={"kind": "create", "target": "notes/release-calendar.md",
                                            "content": "# Release calendar\n\n- lanternfish 0.9.0: 2026-12-15\n",
                                            "frontmatter": {"title": "Release calendar", "type": "note"}})
    assert w.status_code == 200, w.get_json()
    d = mw(open_client, action="replace", kind="state", subject="lanternfish", content=RELEASE,
           reason="fix for #212 slipped")
    assert d["result"] == "replaced", d
    page = (corpus / "projects/lanternfish/state.md").read_text()
    assert ("- Version 0.9 is in beta; the 0.9.0 release moved to 2026-12-18 because \\#212 needs another review "
            "round.\n") in page, page
    assert "- The nightly fuzz job runs at 01:00 UTC" in page
    said = [x for x in d.get("warnings", []) if "still says" in x]
    assert not any("drop-python-38" in x for x in said), said
    lines = (corpus / "notes/release-calendar.md").read_text().split("\n")
    at = next(n for n, line in enumerate(lines, start=1) if "2026-12-15" in line)
    assert len(said) == 1 and said[0].startswith(f"notes/release-calendar.md:{at} still says"), said
