"""A person named by one word of their page's title (a first name, or a last name) is that
person, the way someone in the household would mean it; a name two people share is
theirs to pick from, and nobody else's. Near-match suggestions rank a whole-word match
above a name that is merely spelled alike (the agent's-day probe: "Tom" was offered
Ingrid, alias "Oma", first).

The pages are the household's own: no frontmatter, only an H1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commonplace.compiler.claims import AmbiguousSubject, ClaimStore, Registry, UnknownSubject

HOUSEHOLD = {
    "people/tom-berg.md": "# Tom Berg\n\nTom lives upstairs and fixes the bikes.\n",
    "people/ingrid-nilsson.md": "---\naliases: [Oma]\n---\n# Ingrid Nilsson\n\nEveryone calls her Oma.\n",
    "people/priya-shah.md": "# Priya Shah\n\nPriya teaches piano on Thursdays.\n",
    "people/zoe-muller.md": "# Zoë Müller\n\nZoë is the neighbour's daughter.\n",
    "people/jose-garcia.md": "# Jose Garcia\n",
    "people/soren-lovborg.md": "# Søren Løvborg\n",
    "concepts/hybrid-search.md": "---\ntitle: Hybrid search\n---\n# Hybrid search\n",
    "projects/garden/state.md": "# Garden Shed\n",
}


def household(root: Path, extra: dict[str, str] | None = None) -> Path:
    for rel, text in {**HOUSEHOLD, **(extra or {})}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def reg(tmp_path: Path) -> Registry:
    return Registry.load(household(tmp_path / "home"))


@pytest.mark.parametrize("subject, eid", [
    ("Tom", "person:tom-berg"), ("tom", "person:tom-berg"), ("TOM", "person:tom-berg"),
    ("Berg", "person:tom-berg"), ("person:Tom", "person:tom-berg"), ("people:tom", "person:tom-berg"),
    ("  Tom ", "person:tom-berg"), ("[[Tom]]", "person:tom-berg"),
    ("Priya", "person:priya-shah"), ("Shah", "person:priya-shah"),
    ("Ingrid", "person:ingrid-nilsson"), ("Nilsson", "person:ingrid-nilsson"),
])
def test_one_word_of_one_persons_title_is_that_person(reg: Registry, subject: str, eid: str) -> None:
    assert reg.resolve(subject).id == eid


@pytest.mark.parametrize("subject, eid", [
    ("Zoë", "person:zoe-muller"), ("Zoe", "person:zoe-muller"), ("zoe", "person:zoe-muller"),
    ("Müller", "person:zoe-muller"), ("muller", "person:zoe-muller"), ("MÜLLER", "person:zoe-muller"),
    ("José", "person:jose-garcia"), ("García", "person:jose-garcia"),
    ("Soren", "person:soren-lovborg"), ("søren", "person:soren-lovborg"), ("Lovborg", "person:soren-lovborg"),
    ("Zoe\u0308", "person:zoe-muller"),  # the same name, typed with a combining diaeresis
])
def test_title_words_match_without_case_or_accents(reg: Registry, subject: str, eid: str) -> None:
    assert reg.resolve(subject).id == eid


def test_a_first_name_two_people_share_names_exactly_those_two(tmp_path: Path) -> None:
    reg = Registry.load(household(tmp_path / "home", {"people/tom-lund.md": "# Tom Lund\n"}))
    for subject in ("Tom", "tom", "person:Tom"):
        with pytest.raises(AmbiguousSubject) as exc:
            reg.resolve(subject)
        assert exc.value.candidates == ["person:tom-berg", "person:tom-lund"], exc.value.candidates
        msg = exc.value.message
        assert "person:tom-berg (Tom Berg)" in msg and "person:tom-lund (Tom Lund)" in msg, msg
        assert "ingrid" not in msg.casefold() and "pick" in msg, msg
        assert "send subject=" not in msg, msg
    # Each still has a word of their own.
    assert reg.resolve("Berg").id == "person:tom-berg" and reg.resolve("Lund").id == "person:tom-lund"


def test_a_last_name_two_people_share_is_ambiguous_too(tmp_path: Path) -> None:
    reg = Registry.load(household(tmp_path / "home", {"people/anna-berg.md": "# Anna Berg\n"}))
    with pytest.raises(AmbiguousSubject) as exc:
        reg.resolve("Berg")
    assert exc.value.candidates == ["person:anna-berg", "person:tom-berg"]
    assert reg.resolve("Tom").id == "person:tom-berg" and reg.resolve("Anna").id == "person:anna-berg"


def test_an_exact_slug_title_or_alias_comes_before_a_title_word(tmp_path: Path) -> None:
    extra = {"people/tom.md": "# Tom\n", "people/oma-lind.md": "# Oma Lind\n"}
    reg = Registry.load(household(tmp_path / "home", extra))
    assert reg.resolve("Tom").id == "person:tom"  # the page that is exactly "Tom"
    assert reg.resolve("Oma").id == "person:ingrid-nilsson"  # an alias, exactly
    assert reg.resolve("Lind").id == "person:oma-lind"


def test_only_whole_words_of_person_titles_count(reg: Registry) -> None:
    for subject in ("To", "Tomas", "Tom Be", "Bergs", "T", "Hybrid", "Shed", "project:Tom", "concept:Tom"):
        with pytest.raises(UnknownSubject):
            reg.resolve(subject)


def test_a_title_word_write_lands_on_that_persons_page_and_persons_are_never_created(tmp_path: Path) -> None:
    root = household(tmp_path / "home")
    store = ClaimStore(root, actor="tester", fsync=False)
    before = (root / "people/ingrid-nilsson.md").read_bytes()
    r = store.add("Tom", "Tom is allergic to cats.")
    assert r.entity.id == "person:tom-berg" and r.target_path == "people/tom-berg.md"
    assert "Tom is allergic to cats." in (root / "people/tom-berg.md").read_text("utf-8")
    assert (root / "people/ingrid-nilsson.md").read_bytes() == before
    assert store.add("Priya", "Priya moved the lesson to Fridays.").target_path == "people/priya-shah.md"
    with pytest.raises(UnknownSubject):
        store.add("Tomas", "Tomas likes jazz.")
    with pytest.raises(UnknownSubject):
        store.add("person:Tomas", "Tomas likes jazz.")
    assert not (root / "people/tomas.md").exists()


def test_a_whole_word_match_ranks_above_a_name_spelled_alike(reg: Registry) -> None:
    pool = list(reg.entities.values())
    near = reg.near("Tom", pool)
    assert near[0] == "person:tom-berg", near
    with pytest.raises(UnknownSubject) as exc:
        reg.resolve("Tom Bergqvist")
    assert exc.value.candidates[0] == "person:tom-berg", exc.value.candidates
    assert exc.value.best == "person:tom-berg"
    assert exc.value.message.index("person:tom-berg") < exc.value.message.find("ingrid") or \
        "ingrid" not in exc.value.message


def test_a_short_name_spelled_alike_is_not_a_suggestion(reg: Registry) -> None:
    # "Tomas" shares no word with anyone; "Oma" shares letters with it, not a name.
    with pytest.raises(UnknownSubject) as exc:
        reg.resolve("Tomas")
    assert "person:ingrid-nilsson" not in exc.value.candidates and exc.value.best is None, exc.value.candidates
    assert reg.near("Tom", list(reg.entities.values())) == ["person:tom-berg"]


def test_no_clear_best_when_two_candidates_match_alike(tmp_path: Path) -> None:
    reg = Registry.load(household(tmp_path / "home", {"people/tom-lund.md": "# Tom Lund\n"}))
    with pytest.raises(UnknownSubject) as exc:
        reg.resolve("Tom Xu")
    assert set(exc.value.candidates[:2]) == {"person:tom-berg", "person:tom-lund"}, exc.value.candidates
    assert exc.value.best is None
    assert "send subject=" not in exc.value.message


def test_a_clear_near_match_is_the_best_one(tmp_path: Path) -> None:
    reg = Registry.load(household(tmp_path / "home"))
    with pytest.raises(UnknownSubject) as exc:
        reg.resolve("Priya Sha")  # a typo of the whole name
    assert exc.value.candidates[0] == "person:priya-shah" and exc.value.best == "person:priya-shah"
    with pytest.raises(UnknownSubject) as exc:
        reg.resolve("nobody at all")
    assert exc.value.candidates == [] and exc.value.best is None
