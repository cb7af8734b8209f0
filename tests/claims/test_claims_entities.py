"""The entity registry and subject resolution: exact, case-insensitive, never a guess."""

from __future__ import annotations

import os

import pytest

from commonplace.compiler.claims import AmbiguousSubject, ClaimStore, InvalidClaim, Registry, UnknownSubject
from commonplace.compiler.claims.entities import entity_of_path, entity_path, slugify


def test_registry_reads_canonical_pages(corpus):
    reg = Registry.load(corpus)
    assert sorted(reg.entities) == ["concept:hybrid-search", "core:identity", "person:alex", "person:atlas",
                                    "person:sam", "project:atlas"]
    alex = reg.entities["person:alex"]
    assert alex.title == "Alex Smith" and alex.aliases == ("Alex", "A. Smith") and alex.path == "people/alex.md"
    assert reg.entities["person:atlas"].title == "Atlas Person"  # from the H1
    assert reg.entities["project:atlas"].path == "projects/atlas/state.md"
    assert "projects/atlas/notes.md" not in {e.path for e in reg.entities.values()}


@pytest.mark.parametrize("subject", ["person:alex", "PERSON:ALEX", "alex", "Alex Smith", "alex smith", "A. Smith",
                                     "people/alex.md", "[[people/alex.md]]", "  Alex   Smith ", "people:alex",
                                     "person:Alex Smith"])
def test_resolves_by_id_slug_title_alias_path(corpus, subject):
    assert Registry.load(corpus).resolve(subject).id == "person:alex"


def test_ambiguous_subject_names_all_candidates(corpus):
    with pytest.raises(AmbiguousSubject) as exc:
        Registry.load(corpus).resolve("atlas")  # person slug and project title
    assert exc.value.candidates == ["person:atlas", "project:atlas"]
    assert "person:atlas" in exc.value.message and "project:atlas" in exc.value.message
    assert Registry.load(corpus).resolve("project:atlas").id == "project:atlas"
    assert Registry.load(corpus).resolve("Project Atlas").id == "project:atlas"


def test_unknown_subject_names_near_matches_and_never_guesses(corpus):
    with pytest.raises(UnknownSubject) as exc:
        Registry.load(corpus).resolve("Alex Smyth")
    assert "person:alex" in exc.value.candidates
    with pytest.raises(UnknownSubject) as exc:
        Registry.load(corpus).resolve("nobody at all")
    assert exc.value.candidates == []


@pytest.mark.parametrize("subject", ["", "   ", "\n"])
def test_empty_subject_is_invalid(corpus, subject):
    with pytest.raises(InvalidClaim):
        Registry.load(corpus).resolve(subject)


def test_creating_project_concept_decision_creates_the_canonical_page(store: ClaimStore, corpus):
    r = store.add("project:Moon Base", "Moon Base needs funding", kind="state")
    assert r.created and r.target_path == "projects/moon-base/state.md" and r.page.created
    text = (corpus / "projects/moon-base/state.md").read_text()
    assert text.startswith("---\ntitle: Moon Base\ntype: project\nstatus: active\ncanonical: true\ncreated: 2026-03-01\n---\n# Moon Base\n")
    assert store.add("concept:zero-copy", "Zero copy avoids memcpy").target_path == "concepts/zero-copy.md"
    assert "title: Zero copy" in (corpus / "concepts/zero-copy.md").read_text()
    assert store.add("decision:2026-03-01-use-jsonl", "We use JSONL").target_path == "decisions/2026-03-01-use-jsonl.md"
    # Now they resolve like any other entity.
    assert store.resolve("moon base").id == "project:moon-base"
    again = store.add("project:moon-base", "Moon Base has a logo")
    assert not again.created


def test_people_and_core_must_exist_unless_created_explicitly(store: ClaimStore, corpus):
    with pytest.raises(UnknownSubject) as exc:
        store.add("person:Jordan Doe", "Jordan likes jazz")
    # Neutral words (the message reaches HTTP clients too); the caller says how to create it.
    assert "--create" not in exc.value.message and exc.value.create_path == "people/jordan-doe.md"
    assert not (corpus / "people/jordan-doe.md").exists() and not (corpus / "claims").exists()
    r = store.add("person:Jordan Doe", "Jordan likes jazz", create=True)
    assert r.created and (corpus / "people/jordan-doe.md").exists()
    with pytest.raises(UnknownSubject):
        store.add("core:values", "We value focus")
    assert store.add("core:values", "We value focus", create=True).target_path == "core/values.md"
    with pytest.raises(UnknownSubject):  # no family: we cannot know what to create
        store.add("Brand New Thing", "It is new")


@pytest.mark.parametrize("subject", ["project:../../etc", "project:../x", "concept:a/b/c", "project:.hidden",
                                     "concept:..", "project:a\\b", "decision:/abs/path", "concept:\u202eevil",
                                     "project:" + "x" * 300, "concept:名前", "project:a\x00b"])
def test_subjects_with_path_tricks_stay_inside_their_folder(store: ClaimStore, corpus, subject):
    try:
        r = store.add(subject, "Statement about a tricky subject")
    except InvalidClaim:
        return
    full = (corpus / r.target_path).resolve()
    assert full.is_relative_to(corpus.resolve())
    family = r.entity.family
    top = {"project": "projects", "concept": "concepts", "decision": "decisions"}[family]
    assert r.target_path.startswith(top + "/") and r.target_path.count("/") == (2 if family == "project" else 1)
    assert not any(part.startswith(".") for part in r.target_path.split("/"))


def test_symlinked_folder_leaving_the_corpus_is_refused(store: ClaimStore, corpus, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, corpus / "concepts" / "escape", target_is_directory=True)
    (corpus / "projects" / "evil").symlink_to(outside, target_is_directory=True)
    (outside / "state.md").write_text("# Evil\n")
    with pytest.raises(Exception):
        store.add("project:evil", "should never be written")
    assert (outside / "state.md").read_text() == "# Evil\n"


def test_paths_and_slugs():
    assert entity_path("project", "atlas") == "projects/atlas/state.md"
    assert entity_path("person", "alex") == "people/alex.md"
    assert entity_of_path("projects/atlas/state.md") == ("project", "atlas")
    assert entity_of_path("projects/atlas/notes.md") is None
    assert entity_of_path("people/team/alex.md") is None
    assert slugify("My New Project!") == "my-new-project"
    assert slugify("snake_case name") == "snake-case-name"
    with pytest.raises(InvalidClaim):
        slugify("!!!")


def test_hostile_subjects_actors_and_types_from_json_are_refused_or_made_safe(make_store, corpus):
    s = make_store("../../etc/cron.d/x")
    r = s.add("alex", "Alex likes tea")
    log_file = next((corpus / "claims").rglob("*.jsonl"))
    assert log_file.parent == corpus / "claims/2026/03/01" and log_file.name.startswith("etc-cron.d-x-")
    assert s.history("alex")[0]["actor"] == "../../etc/cron.d/x"  # recorded as given, in JSON
    assert r.action == "add"
    for bad in [dict(subject="x" * 100_000), dict(statement=123), dict(statement=["a"]), dict(kind=None),
                dict(confidence=True), dict(valid_from=20260101), dict(key={"a": 1}), dict(evidence=42)]:
        kwargs = {"subject": "alex", "statement": "ok statement", **bad}
        with pytest.raises(InvalidClaim):
            s.add(kwargs.pop("subject"), kwargs.pop("statement"), **kwargs)
