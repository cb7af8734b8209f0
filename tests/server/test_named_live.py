"""The person a prompt names leads its active memory, against a live `commonplace serve`
(real sockets): a product's name in the prompt ("GitHub") is not a person to filter by."""

from __future__ import annotations

from typing import Any

import pytest
from srvkit import post_ok, started

from commonplace.server.ops.people import person_names

FILES = {
    "people/priya-raman.md": "---\ntitle: Priya Raman\ntype: person\n---\n# Priya Raman\n\n"
                             "Priya owns the plugin API.\n\n"
                             "Priya prefers a short call over long review threads for design questions.\n",
    "people/mei-lin.md": "---\ntitle: Mei Lin\ntype: person\n---\n# Mei Lin\n\n"
                         "Mei wants review feedback on her drafts as inline GitHub suggestions, not a summary "
                         "comment.\n\nMei writes the GitHub review comments guide.\n",
    "projects/harbor.md": "---\ntitle: Harbor\ntype: project\n---\n# Harbor\n\n"
                          "Harbor's review comments live on GitHub; calls are for releases.\n",
    "projects/ledgerline.md": "---\ntitle: Ledgerline\ntype: project\n---\n# Ledgerline\n\n"
                              "The public release is planned for 15 January 2027.\n",
    **{f"notes/party-{i}.md": f"---\ntitle: Party {i}\n---\n# Party {i}\n\nAt launch party {i}, Priya said "
       f"what she is allergic to: the caterer {i} was told, and the launch menu changed.\n" for i in range(12)},
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = started(tmp_path_factory.mktemp("named-live"), FILES)
    yield server
    server.stop()


def test_the_person_asked_about_comes_before_another_persons_line(srv: Any) -> None:
    block = post_ok(srv, "/v1/active-memory", {"prompt": "Does Priya prefer GitHub review comments or calls?",
                                               "agent": "a"})["block"]
    lines = [ln for ln in block.split("\n") if ln.startswith("- ")]
    assert "Priya prefers a short call" in lines[0], block
    first_mei = next((i for i, ln in enumerate(lines) if "mei-lin.md" in ln), len(lines))
    assert all("priya-raman.md" not in ln for ln in lines[first_mei:]), block


def test_names_that_are_people_filter_and_other_names_only_without_them() -> None:
    docs = ["people/priya-raman.md", "people/mei-lin.md", "projects/harbor.md"]
    assert person_names(docs, ["Priya", "GitHub"]) == ["Priya"]
    # with the documents, a person's other names (title, aliases) come too; no honorific
    from types import SimpleNamespace as Doc

    pages = {"people/ruth-abernathy.md": Doc(title="Ruth Abernathy", aliases=["Mrs Abernathy", "Ruth"]),
             "people/mei-lin.md": Doc(title="Mei Lin", aliases=[])}
    assert person_names(pages, ["Mrs", "Abernathy"]) == ["Abernathy", "Ruth"]
    assert person_names(docs, ["GitHub", "Harbor"]) == ["GitHub", "Harbor"]  # no person named: all stand


def test_a_prompt_asking_two_things_gets_each_answer_first(srv: Any) -> None:
    """Searched whole, the first question's words (a dozen notes about Priya's allergy at
    launch parties) took a small block; each question is searched on its own and their
    best sources lead in turn."""
    d = post_ok(srv, "/v1/active-memory", {"prompt": "What is Priya allergic to, and when does the Ledgerline "
                                                     "launch?", "agent": "a", "budget_tokens": 120})
    lines = [ln for ln in d["block"].split("\n") if ln.startswith("- ")]
    assert any("15 January 2027" in ln for ln in lines[:2]), d["block"]
    assert any("allergic" in ln for ln in lines[:2]), d["block"]
