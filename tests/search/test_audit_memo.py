"""Default search demotes generated material by each hit's frontmatter, which a search
remembers per index generation: a page that becomes a generated report (or stops being
one) is ranked as it is now at the next search, never by what an earlier search saw."""

from __future__ import annotations

from commonplace.compiler.live.corpus import LiveCorpus

PLAIN = "---\ntitle: Orchard\n---\n# Orchard\n\nThe orchard harvest of apples starts in late September.\n"
REPORT = ("---\ntitle: Orchard report\ngenerated: true\nquestion: When is the apple harvest?\n---\n"
          "# Orchard report\n\nThe orchard harvest of apples starts in late September.\n")
OTHER = "---\ntitle: Cider\n---\n# Cider\n\nThe orchard apple harvest comes before the cider pressing.\n"


def _order(live: LiveCorpus) -> list[str]:
    return [h["path"] for h in live.search({"query": "orchard apple harvest", "mode": "bm25"})["results"]]


def test_a_page_that_becomes_a_report_is_demoted_at_the_next_search(tmp_path, fake_embedder) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "orchard.md").write_text(PLAIN)
    (root / "cider.md").write_text(OTHER)
    live = LiveCorpus(root, tmp_path / "site", embed=False)
    live.open()
    try:
        assert _order(live) == ["orchard.md", "cider.md"]
        assert _order(live) == ["orchard.md", "cider.md"]  # asked again: the remembered kinds
        (root / "orchard.md").write_text(REPORT)
        assert live.refresh(["orchard.md"]).indexed
        assert _order(live) == ["cider.md", "orchard.md"]  # a saved report goes after memory
        (root / "orchard.md").write_text(PLAIN)
        assert live.refresh(["orchard.md"]).indexed
        assert _order(live) == ["orchard.md", "cider.md"]
    finally:
        live.close()
