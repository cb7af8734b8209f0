"""Issue 28, items 4 and 5: what an agent gets back from search and from its writes,
against a live `commonplace serve` (waitress, real sockets, BM25 only), restarted once over
its own build.

- default search leaves out per-write evidence artifacts and ranks audit material (inbox,
  generated reports) below ordinary pages; a scope brings them back;
- snippets are plain text: no marks, markers, claim ids, escapes or repeated lines;
- score_normalized tells results apart, so min_score (and min_relevance_score) cut;
- warnings say what happened (no matches, no searchable words, no sessions yet);
- research saves nothing without evidence and never cites an earlier report;
- a decision about a project is linked from the project's page; a rejected write says
  how to succeed; the write's evidence artifact is written but neither in default search
  nor counted in `files_indexed` (Dory does not index it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dorylive import Server  # noqa: E402

FILES = {
    "people/dana.md": "---\ntitle: Dana Whitfield\ntype: person\n---\n# Dana Whitfield\n\n## Summary\n\n"
                      "Tech lead, Billing team.\n",
    "projects/ledgerline/state.md": "---\ntitle: Ledgerline\ntype: project\n---\n# Ledgerline\n\n"
                                    "## Current State\n\nLedgerline reconciles invoices every night.\n",
    "notes/lunch.md": "---\ntitle: Lunch spots\n---\n# Lunch spots\n\nThe billing team likes the Thai place "
                      "near the office; ask about allergies before ordering.\n",
    "notes/chat.md": "---\ntitle: Chat\n---\n# Maya — 1:56 pm\n\n**Maya** — 1:56 pm: I adopted a greyhound "
                     "called Pepper \\*last week\\*.\n",
    "notes/orchard.md": "---\ntitle: Orchard\n---\n# Orchard\n\nThe orchard has apple trees. Apple apple apple "
                        "harvest in autumn.\n",
    "notes/cider.md": "---\ntitle: Cider\n---\n# Cider\n\nCider is pressed from one apple variety, and the "
                      "harvest of many other fruits is slower.\n",
    "notes/pie.md": "---\ntitle: Pie\n---\n# Pie\n\nA recipe that needs an apple and a long list of other "
                    "things, flour, butter, sugar, cinnamon, eggs and patience for the harvest.\n",
}


class Api:
    def __init__(self, server: Server, token: str) -> None:
        self.server, self.token = server, token

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.server.request("POST", path, body, token=self.token)
        assert r.status == 200, (path, body, r.text)
        return r.json()

    def get(self, path: str) -> dict[str, Any]:
        r = self.server.request("GET", path, token=self.token)
        assert r.status == 200, (path, r.text)
        return r.json()

    def search(self, query: str, **kw: Any) -> dict[str, Any]:
        return self.post("/v1/search", {"query": query, **kw})

    def write(self, **kw: Any) -> dict[str, Any]:
        return self.post("/v1/memory-write", {"action": "write", "kind": "fact", "allow_canonical": True, **kw})


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Path, Path]]:
    from commonplace.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("agent-ranking")
    root = base / "corpus"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    token = TokenStore(root).create("agent")
    server = Server(root, base / "site").start()
    api = Api(server, token)
    try:
        yield api, root, base
    finally:
        if api.server.proc and api.server.proc.poll() is None:  # the restarted one, at the end
            api.server.stop()


def _paths(answer: dict[str, Any]) -> list[str]:
    return [r["path"] for r in answer["results"]]


def test_writes_land_where_an_agent_finds_them(live: tuple[Api, Path, Path]) -> None:
    api, root, _ = live
    before = api.get("/v1/status")
    d = api.write(subject="dana", scope="person", content="Dana is allergic to peanuts.")
    assert d["result"] == "written" and d["evidence_path"].startswith("sources/semantic/")
    assert (root / d["evidence_path"]).is_file()  # written...
    after = api.get("/v1/status")
    assert after["files_indexed"] == before["files_indexed"]  # ...but not counted (Dory does not index it)
    assert after["files_indexed"] == after["corpus_files"] and after["index_missing_files"] == 0
    scoped = api.search("peanuts", scope={"path_glob": "sources/semantic/**"})  # a scope finds it
    assert _paths(scoped) == [d["evidence_path"]]
    found = api.search("Dana peanuts allergic")
    assert _paths(found)[0] == "people/dana.md" and not any(p.startswith("sources/") for p in _paths(found))
    snippet = found["results"][0]["snippet"]
    assert "Dana is allergic to peanuts." in snippet
    for junk in ("**", "<!--", "c_", "recorded", "[[", "Timeline", "Evidence", "#"):
        assert junk not in snippet, (junk, snippet)

    # a decision about a project: Dory's route, and the project page links it
    d = api.write(kind="decision", subject="ledgerline", scope="project",
                  content="Ledgerline moves its nightly job to 03:30 UTC.")
    assert d["result"] == "written" and d["target_path"] == "decisions/ledgerline.md", d
    assert d["linked_from"] == "projects/ledgerline/state.md"
    page = (root / "projects/ledgerline/state.md").read_text()
    assert "## Key Decisions" in page and "[[decisions/ledgerline.md|" in page
    assert "Ledgerline reconciles invoices every night." in page  # hand-written text kept
    links = api.post("/v1/link", {"op": "neighbors", "path": "projects/ledgerline/state.md"})
    assert "decisions/ledgerline.md" in str(links)
    again = api.write(kind="decision", subject="ledgerline", scope="project", content="Ledgerline keeps Postgres.")
    assert again["result"] == "written"
    assert (root / "projects/ledgerline/state.md").read_text().count("[[decisions/ledgerline.md") == 1

    # a rejection says how to succeed
    d = api.write(subject="nobody-known", scope="person", content="Likes tea.")
    assert d["result"] == "rejected"
    for hint in ("people/nobody-known.md", "POST /v1/write", "force_inbox=true", "allow_canonical=true", "soft=true"):
        assert hint in d["message"], (hint, d["message"])
    assert not (root / "people/nobody-known.md").exists()


def test_audit_material_is_demoted_and_a_scope_brings_it_back(live: tuple[Api, Path, Path]) -> None:
    api, root, _ = live
    d = api.post("/v1/memory-write", {"action": "write", "kind": "note", "subject": "thai lunch",
                                      "content": "Thai place near the office: the billing team likes it a lot; "
                                                 "Thai place, Thai place.", "force_inbox": True})
    assert d["result"] == "written" and d["target_path"].startswith("inbox/semantic/")
    default = _paths(api.search("Thai place billing team", mode="bm25"))
    assert d["target_path"] in default and default.index("notes/lunch.md") < default.index(d["target_path"])
    scoped = _paths(api.search("Thai place billing team", mode="bm25", scope={"path_glob": "inbox/**"}))
    assert scoped == [d["target_path"]]


def test_snippets_hold_no_markup_and_no_repeats(live: tuple[Api, Path, Path]) -> None:
    api, _, _ = live
    r = api.search("greyhound Pepper", mode="bm25")["results"][0]
    assert r["path"] == "notes/chat.md"
    assert r["snippet"].count("1:56 pm") == 1 and "**" not in r["snippet"] and "\\" not in r["snippet"]
    assert "*last week*" in r["snippet"]  # an escaped character is that character
    marked = api.search("greyhound", mode="bm25", snippet_marks="markdown")["results"][0]["snippet"]
    assert "**greyhound**" in marked  # marks only when asked


def test_scores_separate_results_and_thresholds_cut(live: tuple[Api, Path, Path]) -> None:
    api, _, _ = live
    res = api.search("apple harvest", mode="bm25", debug=True)["results"]
    assert len(res) >= 3
    scores = [r["score"] for r in res]
    norms = [r["score_normalized"] for r in res]
    assert len(set(scores)) == len(scores) and len(set(norms)) == len(norms), res
    assert norms == sorted(norms, reverse=True) and norms[0] <= 1.0
    top = api.search("apple harvest", mode="bm25", min_score=norms[0] - 0.001)["results"]
    assert [r["path"] for r in top] == [res[0]["path"]]
    newer = api.search("apple harvest", mode="bm25", min_relevance_score=norms[0] - 0.001)["results"]
    assert [r["path"] for r in newer] == [res[0]["path"]]
    none = api.search("apple harvest", mode="bm25", min_score=1.5 if norms[0] < 1.5 else 2)
    assert none["count"] == 0 and any("below min_score" in w for w in none["warnings"])


def test_warnings_say_what_happened(live: tuple[Api, Path, Path]) -> None:
    api, _, _ = live
    w = api.search("florbish gazunk", mode="bm25")["warnings"]
    assert any(x.startswith("no matches") for x in w) and not any("searchable" in x for x in w)
    w = api.search("zzzz qqqq florbish")["warnings"]
    assert any(x.startswith("no matches") for x in w), w
    weak = api.search("zzzz qqqq apple")  # one real word among nonsense: weak hits, said so
    assert weak["count"] >= 1 and any(x.startswith("nothing matched the query well") for x in weak["warnings"])
    w = api.search("the of and", mode="bm25")["warnings"]
    assert any("no searchable words" in x for x in w)
    w = api.search("what did we say", mode="recall")["warnings"]
    assert any("no sessions have been ingested" in x and "POST /v1/session-ingest" in x for x in w), w
    # A mistyped scope is named, not taken for words that are nowhere.
    typo = api.search("apple", scope={"type": "peson"})
    assert typo["count"] == 0 and any("no document has type 'peson'" in x and "types in this corpus" in x
                                      for x in typo["warnings"]), typo["warnings"]


def test_research_saves_only_with_evidence_and_never_cites_reports(live: tuple[Api, Path, Path]) -> None:
    api, root, _ = live
    nothing = api.post("/v1/research", {"question": "florbish gazunk wibblequark", "save": True})
    assert nothing["artifact"] is None and any("nothing was saved" in w for w in nothing["warnings"])
    assert not (root / "references").exists()
    first = api.post("/v1/research", {"question": "Who likes the Thai place near the office?", "save": True})
    assert first["artifact"] and first["artifact"]["path"].startswith("references/reports/")
    assert "notes/lunch.md" in first["research"]["sources"]
    second = api.post("/v1/research", {"question": "Who likes the Thai place near the office?", "save": False})
    assert second["research"]["sources"] and not any(p.startswith("references/") for p in
                                                     second["research"]["sources"])
    # and plain search ranks the saved report below the page it quotes
    found = _paths(api.search("Thai place near the office", mode="bm25"))
    assert found.index("notes/lunch.md") < found.index(first["artifact"]["path"])


def test_a_replaced_fact_shows_only_the_current_one(live: tuple[Api, Path, Path]) -> None:
    api, root, _ = live
    api.write(kind="state", subject="ledgerline", scope="project", content="The nightly job runs at 02:00 UTC.")
    d = api.post("/v1/memory-write", {"action": "replace", "kind": "state", "subject": "ledgerline",
                                      "scope": "project", "content": "The nightly job runs at 03:30 UTC.",
                                      "allow_canonical": True})
    assert d["result"] == "replaced", d
    page = (root / "projects/ledgerline/state.md").read_text()
    claims = page.split("<!-- commonplace:claims:start -->")[1].split("<!-- commonplace:details:start")[0]
    assert "03:30 UTC" in claims and "02:00" not in claims
    for r in api.search("nightly job UTC", mode="bm25")["results"]:
        assert "02:00" not in r["snippet"], r
    top = api.search("nightly job UTC", mode="bm25")["results"][0]
    assert top["path"] == "projects/ledgerline/state.md" and "03:30 UTC" in top["snippet"]


def test_after_a_restart_evidence_stays_out_of_default_search(live: tuple[Api, Path, Path]) -> None:
    api, root, base = live
    api.server.stop()
    server = Server(root, base / "site").start()  # over the existing build
    api.server = server
    st = api.get("/v1/status")
    assert st["files_indexed"] == st["corpus_files"] and st["index_healthy"] is True
    default = _paths(api.search("Dana peanuts allergic"))
    assert default[0] == "people/dana.md" and not any(p.startswith("sources/semantic/") for p in default)
    scoped = api.search("Dana peanuts", scope={"path_glob": "sources/semantic/**"})
    assert scoped["count"] >= 1 and all(p.startswith("sources/semantic/") for p in _paths(scoped))
    for r in scoped["results"]:
        assert not re.search(r"\bc_[0-9a-f]{6,}|#\d+\)", r["snippet"]), r["snippet"]
    page = (root / "projects/ledgerline/state.md").read_text()
    assert page.count("[[decisions/ledgerline.md") == 1  # the link is the page's, kept by rebuilds



def test_an_empty_privacy_answer_says_why(live: tuple[Api, Path, Path]) -> None:
    """"Is Dana's leave private? what can I share?" picks the privacy profile, which reads
    only the privacy boundaries; with none written it answered an empty block and nothing
    else, which an agent cannot tell from a failure."""
    api, _, _ = live
    d = api.post("/v1/active-memory", {"prompt": "Is Dana's leave private? what can I share?", "agent": "a",
                                       "debug": True})
    assert d["profile"] == "privacy" and d["block"] == "", d
    assert any("privacy profile reads only privacy boundaries" in w and "core/user.md" in w
               for w in d.get("warnings", [])), d
