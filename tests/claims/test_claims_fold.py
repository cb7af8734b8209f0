"""Folding events into claims: replace/retire/invalidate semantics, as_of, known_at,
history, contradictions, and a fold that survives a hand-edited log."""

from __future__ import annotations

import json

import pytest

from commonplace.compiler.claims import ClaimStore, InvalidClaim
from commonplace.compiler.claims.fold import fold
from commonplace.compiler.claims.log import ClaimLog


def statements(rows: list[dict]) -> list[str]:
    return [r["statement"] for r in rows]


def test_add_then_current_and_history(store: ClaimStore):
    r = store.add("alex", "Alex prefers async reviews", kind="preference", confidence=0.9)
    assert r.action == "add" and len(r.claim_ids) == 1
    cur = store.current("alex")
    assert statements(cur) == ["Alex prefers async reviews"]
    c = cur[0]
    assert c["entity"] == "person:alex" and c["kind"] == "preference" and c["confidence"] == 0.9
    assert c["state"] == "current" and c["actor"] == "tester" and c["source"].startswith("sources/semantic/")
    hist = store.history("alex")
    assert len(hist) == 1 and [e["event"] for e in hist[0]["events"]] == ["added"]


def test_repeating_a_current_claim_is_a_noop(store: ClaimStore, corpus):
    first = store.add("alex", "Alex likes tea")
    again = store.add("Alex Smith", "  alex LIKES tea. ")
    assert again.action == "noop" and again.claim_ids == first.claim_ids
    assert len(ClaimLog(corpus).read().events) == 1
    # Same text under another kind is a different claim.
    assert store.add("alex", "Alex likes tea", kind="preference").action == "add"


def test_replace_keeps_lineage_and_moves_old_text_to_history(store: ClaimStore, clock):
    clock.set("2026-03-01T09:00:00")
    cid = store.add("project:atlas", "Atlas is blocked on the vendor API", kind="state").claim_ids[0]
    clock.set("2026-03-10T12:00:00")
    r = store.replace("project:atlas", "Atlas is unblocked", kind="state")
    assert r.action == "replace" and r.claim_ids == [cid]
    assert statements(store.current("project:atlas")) == ["Atlas is unblocked"]
    assert statements(store.as_of("project:atlas", "2026-03-05")) == ["Atlas is blocked on the vendor API"]
    assert statements(store.as_of("project:atlas", "2026-03-10T11:59:59")) == ["Atlas is blocked on the vendor API"]
    assert statements(store.as_of("project:atlas", "2026-03-10")) == ["Atlas is unblocked"]  # end of that day
    (h,) = store.history("Project Atlas")
    assert [v["statement"] for v in h["versions"]] == ["Atlas is blocked on the vendor API", "Atlas is unblocked"]
    assert h["versions"][0]["effective_to"] == r.events[0]["at"]  # old text held until the replacement
    assert h["versions"][1]["effective_from"] == r.events[0]["at"]


def test_replace_by_text_or_id_and_refusals(store: ClaimStore):
    a = store.add("alex", "Alex lives in Berlin").claim_ids[0]
    store.add("alex", "Alex lives near the park")
    assert store.replace("alex", "Alex lives in Munich", claim="in Berlin").claim_ids == [a]
    assert store.replace("alex", "Alex lives in Hamburg", claim=a).claim_ids == [a]
    with pytest.raises(Exception) as exc:
        store.replace("alex", "x", claim="lives")  # matches two claims
    assert exc.value.code == "ambiguous_claim" and len(exc.value.candidates) == 2
    with pytest.raises(Exception) as exc:
        store.replace("alex", "x", claim="Paris")
    assert exc.value.code == "claim_not_found"
    with pytest.raises(InvalidClaim):
        store.replace("alex", "x")  # neither a claim nor a kind
    same = store.replace("alex", "Alex lives in Hamburg.", claim=a)
    assert same.action == "noop"


def test_replace_by_kind_needs_exactly_one_current_claim(store: ClaimStore):
    store.add("project:atlas", "Atlas is green", kind="state")
    store.add("project:atlas", "Atlas is red", kind="state")
    with pytest.raises(Exception) as exc:
        store.replace("project:atlas", "Atlas is amber", kind="state")
    assert exc.value.code == "ambiguous_claim"
    with pytest.raises(Exception) as exc:
        store.replace("project:atlas", "Atlas ships", kind="decision")
    assert exc.value.code == "claim_not_found"


def test_retire_ends_a_claim_but_keeps_the_past(store: ClaimStore, clock):
    clock.set("2026-03-01T09:00:00")
    store.add("sam", "Sam leads the search team")
    clock.set("2026-04-01T09:00:00")
    r = store.retire("sam", "leads the search", reason="moved teams")
    assert r.action == "retire"
    assert store.current("sam") == []
    assert statements(store.as_of("sam", "2026-03-15")) == ["Sam leads the search team"]
    assert store.as_of("sam", "2026-04-02") == []
    (h,) = store.history("sam")
    assert h["status"] == "retired" and h["closed"]["reason"] == "moved teams"
    with pytest.raises(Exception):
        store.retire("sam", "leads the search", reason="again")  # nothing active matches


def test_retire_with_future_end_keeps_it_current_until_then(store: ClaimStore, clock):
    clock.set("2026-03-01T09:00:00")
    store.add("sam", "Sam is on call")
    store.retire("sam", "on call", reason="rotation ends", valid_to="2026-03-07")
    clock.set("2026-03-05T00:00:00")
    assert statements(store.current("sam")) == ["Sam is on call"]
    assert statements(store.as_of("sam", "2026-03-07")) == ["Sam is on call"]  # inclusive date
    assert store.as_of("sam", "2026-03-08") == []


def test_invalidate_removes_it_from_every_view_unless_known_at_is_earlier(store: ClaimStore, clock):
    clock.set("2026-03-01T09:00:00")
    store.add("alex", "Alex speaks Klingon")
    clock.set("2026-03-20T09:00:00")
    store.invalidate("alex", "Klingon", reason="was a joke")
    assert store.current("alex") == []
    assert store.as_of("alex", "2026-03-10") == []  # never true
    # What did we believe on March 10th about March 10th?
    assert statements(store.as_of("alex", "2026-03-10", known_at="2026-03-10")) == ["Alex speaks Klingon"]
    (h,) = store.history("alex")
    assert h["status"] == "invalidated" and h["state"] == "invalidated"


def test_as_of_across_validity_windows(store: ClaimStore, clock):
    clock.set("2026-01-01T00:00:00")
    store.add("alex", "Alex works at Initech", valid_from="2020-02-01", valid_to="2023-06-30", key="employer")
    store.add("alex", "Alex works at Globex", valid_from="2023-07-01", key="employer")
    store.add("alex", "Alex is on sabbatical", valid_from="2026-06-01T00:00Z", valid_to="2026-09-01T00:00Z")
    assert store.as_of("alex", "2020-01-31") == []
    assert statements(store.as_of("alex", "2020-02-01")) == ["Alex works at Initech"]
    assert statements(store.as_of("alex", "2023-06-30")) == ["Alex works at Initech"]  # valid_to date inclusive
    assert statements(store.as_of("alex", "2023-07-01")) == ["Alex works at Globex"]
    assert statements(store.as_of("alex", "2026-07-01")) == ["Alex works at Globex", "Alex is on sabbatical"]
    assert statements(store.as_of("alex", "2026-09-01T00:00:00Z")) == ["Alex works at Globex"]  # datetime exclusive
    assert statements(store.as_of("alex", "2026-08-31T23:59:59Z")) == ["Alex works at Globex", "Alex is on sabbatical"]
    states = {r["statement"]: r["state"] for r in store.history("alex")}
    assert states == {"Alex works at Initech": "ended", "Alex works at Globex": "current",
                      "Alex is on sabbatical": "upcoming"}
    # No contradiction: the two employer claims never hold at the same time.
    assert store.contradictions("alex") == []


def test_claim_without_valid_from_starts_when_recorded(store: ClaimStore, clock):
    clock.set("2026-03-05T14:00:00")
    store.add("alex", "Alex has a cat")
    assert store.as_of("alex", "2026-03-04") == []
    assert statements(store.as_of("alex", "2026-03-05")) == ["Alex has a cat"]  # same day, end of day
    assert store.as_of("alex", "2026-03-05T13:00:00Z") == []


def test_backdated_replacement_wins_overlaps(store: ClaimStore, clock):
    clock.set("2026-03-01T09:00:00")
    cid = store.add("alex", "Alex joined in 2024", valid_from="2024-01-01").claim_ids[0]
    store.replace("alex", "Alex joined in 2023", claim=cid, valid_from="2023-01-01")
    assert statements(store.as_of("alex", "2024-06-01")) == ["Alex joined in 2023"]
    assert statements(store.as_of("alex", "2023-06-01")) == ["Alex joined in 2023"]


def test_bad_inputs_are_refused_before_anything_is_written(store: ClaimStore, corpus):
    for kwargs in [dict(statement=""), dict(statement="   "), dict(statement="x" * 2001),
                   dict(statement="bad \x00 nul"), dict(statement="bidi \u202e trick"),
                   dict(statement="ok", kind="opinion"), dict(statement="ok", confidence=1.5),
                   dict(statement="ok", confidence="very"), dict(statement="ok", valid_from="soon"),
                   dict(statement="ok", valid_from="2026-05-01", valid_to="2026-04-01"),
                   dict(statement="lone \ud800 surrogate"), dict(statement="ok", evidence="../../etc/passwd"),
                   dict(statement="ok", evidence="/etc/passwd"), dict(statement="ok", evidence=".commonplace/tokens.json"),
                   dict(statement="ok", evidence="notes/meeting.md:5-2")]:
        with pytest.raises(InvalidClaim):
            store.add("alex", **kwargs)
    assert not (corpus / "claims").exists() and not (corpus / "sources").exists()


def test_contradictions_same_state_or_same_key(store: ClaimStore):
    store.add("project:atlas", "Atlas is on track", kind="state")
    r = store.add("project:atlas", "Atlas is blocked", kind="state")
    assert r.contradictions and r.contradictions[0]["rule"] == "kind" and any("contradicts" in w for w in r.warnings)
    store.add("alex", "Alex lives in Berlin", key="location")
    r2 = store.add("alex", "Alex lives in Munich", key="Location")
    assert r2.contradictions and r2.contradictions[0]["rule"] == "key"
    store.add("alex", "Alex likes tea")  # different facts: no contradiction
    store.add("alex", "Alex likes coffee")
    groups = store.contradictions()
    assert sorted((g["entity"], g["rule"]) for g in groups) == [("person:alex", "key"), ("project:atlas", "kind")]


def test_state_claims_about_different_things_do_not_contradict(store: ClaimStore):
    store.add("project:tidepool", "CI runs on GitHub Actions with a macOS and a Linux runner.", kind="state")
    r = store.add("project:tidepool", "PR #212 (streaming mode) is waiting for Maya's review.", kind="state")
    assert r.contradictions == [] and not any("contradicts" in w for w in r.warnings), r.warnings
    # the same thing with a value changed still does
    r2 = store.add("project:tidepool", "CI runs on Buildkite now.", kind="state")
    assert [c["rule"] for c in r2.contradictions] == ["kind"]
    assert len(r2.contradictions[0]["claim_ids"]) == 2  # the CI claims, not the PR one
    r3 = store.add("project:tidepool", "The v0.9.0 milestone is due 2026-12-12.", kind="state")
    assert r3.contradictions == []
    r4 = store.add("project:tidepool", "The v0.9.0 milestone is due 2026-12-19.", kind="state")
    assert [len(c["claim_ids"]) for c in r4.contradictions] == [2]


def test_forgotten_claims_leave_every_view_and_history_is_redacted(store: ClaimStore):
    store.add("alex", "Alex's secret phone is 555-0100")
    store.add("alex", "Alex likes tea")
    store.forget("alex", "secret phone", reason="personal data")
    assert statements(store.current("alex")) == ["Alex likes tea"]
    hist = {h["claim_id"]: h for h in store.history("alex")}
    forgotten = [h for h in hist.values() if h["forgotten"]]
    assert len(forgotten) == 1 and forgotten[0]["statement"] is None
    assert all(v["statement"] is None for v in forgotten[0]["versions"])
    assert all(e.get("statement") is None for e in forgotten[0]["events"])
    full = [h for h in store.history("alex", include_forgotten=True) if h["forgotten"]]
    assert full[0]["statement"] == "Alex's secret phone is 555-0100"  # the log keeps it for audits


def test_fold_tolerates_a_hand_edited_log(corpus, store: ClaimStore):
    store.add("alex", "Alex likes tea")
    f = next((corpus / "claims").rglob("*.jsonl"))
    lines = [
        {"id": "e_h1", "claim_id": "c_ghost", "entity": "person:alex", "event": "retired", "at": "2026-03-02T00:00:00Z"},
        {"id": "e_h2", "claim_id": "c_new", "entity": "person:alex", "event": "replaced", "statement": "Alex likes cocoa",
         "at": "2026-03-02T00:00:01Z"},
        {"id": "e_h3", "claim_id": "c_new", "entity": "person:sam", "event": "retired", "at": "2026-03-02T00:00:02Z"},
    ]
    with open(f, "a") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    read = ClaimLog(corpus).read()
    state = fold(read.events)
    codes = sorted(w.code for w in state.warnings)
    assert codes == ["claims-conflict", "claims-order", "claims-order"]
    assert {c.statement for c in state.claims.values()} == {"Alex likes tea", "Alex likes cocoa"}
    assert state.claims["c_new"].status == "active"


def test_events_from_a_skewed_clock_still_apply_in_order(corpus, make_store, clock):
    clock.set("2026-03-10T00:00:00")
    s = make_store()
    cid = s.add("alex", "Alex likes tea").claim_ids[0]
    clock.set("2026-03-01T00:00:00")  # this machine's clock is behind
    s.replace("alex", "Alex likes green tea", claim=cid)
    assert statements(s.history("alex")) == ["Alex likes green tea"]
    ats = [e["at"] for e in s.history("alex")[0]["events"]]
    assert ats == sorted(ats)
