"""Which claim a replace with no claim id changes (`restate.restated_by`, Dory's replace
through `ClaimStore.replace(every=True)`): the one its statement restates, never every
claim of the kind nor the oldest."""

from __future__ import annotations

import pytest

from commonplace.compiler.claims import AmbiguousClaim, ClaimNotFound
from commonplace.compiler.markdown.restate import restate_score, restated_by, restates

DEADLINE = "The Ledgerline launch deadline is 2026-12-15."
NIGHTLY = "The Ledgerline reconciliation job runs nightly at 02:00 UTC."
MOVED = "The Ledgerline reconciliation job now runs nightly at 03:30 UTC, moved from 02:00 to avoid the backups."


def test_a_changed_time_is_one_token_and_change_words_do_not_count() -> None:
    assert restates(NIGHTLY, "The Ledgerline reconciliation job now runs nightly at 03:30 UTC.")
    assert restates(NIGHTLY, MOVED)
    assert not restates(DEADLINE, MOVED)
    assert restate_score(NIGHTLY, "The Ledgerline reconciliation job runs nightly at 03:30 UTC.") == 1.0
    assert restate_score(DEADLINE, MOVED, frozenset({"ledgerline"})) == 0.0


@pytest.mark.parametrize("statement, lines, want", [
    (MOVED, [DEADLINE, NIGHTLY], (1, [])),
    ("The Ledgerline launch deadline moved to 2027-01-20.", [DEADLINE, NIGHTLY], (0, [])),
    # clearly the best below the old threshold
    ("Alex likes coffee.", ["Alex likes tea.", "Alex speaks Portuguese."], (0, [])),
    ("Deploys now happen on Thursdays instead.", ["Deploys happen on Fridays.", "CI runs on Buildkite."], (0, [])),
    # restates none
    ("The mascot is a blue heron.", ["The API is written in Go.", "It deploys every Tuesday."], (None, [])),
    # fits two equally
    ("The proxy listens on port 8005.", ["The staging proxy listens on port 8001.",
                                         "The production proxy listens on port 8002."], (None, [0, 1])),
    ("The staging proxy listens on port 8005.", ["The staging proxy listens on port 8001.",
                                                 "The production proxy listens on port 8002."], (0, [])),
])
def test_restated_by_picks_the_claim_about_the_same_thing(statement, lines, want) -> None:
    assert restated_by(statement, lines, frozenset({"ledgerline", "alex"})) == want


def fact_texts(store, subject: str) -> list[str]:
    return [c["statement"] for c in store.current(subject) if c["kind"] == "fact"]


def test_replace_changes_the_restated_claim_and_keeps_the_others(store) -> None:
    deadline = store.add("project:atlas", DEADLINE.replace("Ledgerline", "Atlas"), kind="fact").claim_ids[0]
    nightly = store.add("project:atlas", NIGHTLY.replace("Ledgerline", "Atlas"), kind="fact").claim_ids[0]
    r = store.replace("project:atlas", MOVED.replace("Ledgerline", "Atlas"), kind="fact", every=True)
    assert r.claim_ids == [nightly]
    texts = fact_texts(store, "project:atlas")
    assert DEADLINE.replace("Ledgerline", "Atlas") in texts and MOVED.replace("Ledgerline", "Atlas") in texts
    assert len(texts) == 2
    hist = {h["claim_id"]: h for h in store.history("project:atlas")}
    assert hist[deadline]["status"] == "active"


def test_replace_that_restates_nothing_or_fits_two_changes_nothing(store) -> None:
    store.add("alex", "Alex's API key rotates every 90 days.", kind="fact")
    store.add("alex", "Alex deploys on Tuesdays.", kind="fact")
    before = fact_texts(store, "alex")
    with pytest.raises(ClaimNotFound):
        store.replace("alex", "Alex's mascot is a blue heron.", kind="fact", every=True)
    store.add("alex", "Alex's staging proxy listens on port 8001.", kind="fact")
    store.add("alex", "Alex's production proxy listens on port 8002.", kind="fact")
    with pytest.raises(AmbiguousClaim) as exc:
        store.replace("alex", "Alex's proxy listens on port 8005.", kind="fact", every=True)
    assert len(exc.value.candidates) == 2
    assert fact_texts(store, "alex") == before + ["Alex's staging proxy listens on port 8001.",
                                                  "Alex's production proxy listens on port 8002."]


def test_a_single_preference_is_replaced_only_by_a_statement_about_it(store) -> None:
    """A person has many preferences: one about feedback deadlines does not replace the
    only other one, about figure palettes; it is added, and the answer says none was."""
    cid = store.add("alex", "Alex prefers figures with colour-blind-safe palettes.", kind="preference").claim_ids[0]
    with pytest.raises(ClaimNotFound):
        store.replace("alex", "Alex wants feedback requests by Monday now.", kind="preference", every=True)
    assert [c["claim_id"] for c in store.current("alex")] == [cid]
    r = store.replace("alex", "Alex prefers figures with greyscale palettes.", kind="preference", every=True)
    assert r.claim_ids == [cid]


def test_a_single_state_is_replaced_whatever_it_says(store) -> None:
    cid = store.add("alex", "Alex is on leave.", kind="state").claim_ids[0]
    r = store.replace("alex", "Alex is back at work.", kind="state", every=True)
    assert r.claim_ids == [cid]
    with pytest.raises(ClaimNotFound):  # unless the page's prose holds the fact it changes
        store.replace("alex", "The office moved to Porto.", kind="state", every=True, only_restated=True)


def test_a_new_state_replaces_the_states_about_the_same_thing_only(store) -> None:
    active = store.add("project:atlas", "Atlas is active.", kind="state").claim_ids[0]
    ci = store.add("project:atlas", "Atlas CI runs on GitHub Actions.", kind="state").claim_ids[0]
    r = store.replace("project:atlas", "Atlas is paused.", kind="state", every=True)
    assert r.claim_ids == [active]
    states = {c["claim_id"]: c["statement"] for c in store.current("project:atlas") if c["kind"] == "state"}
    assert states == {active: "Atlas is paused.", ci: "Atlas CI runs on GitHub Actions."}
    r = store.replace("project:atlas", "Atlas CI now runs on Buildkite.", kind="state", every=True)
    assert r.claim_ids == [ci]
