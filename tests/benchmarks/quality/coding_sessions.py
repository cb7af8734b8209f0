"""Agent-coding transcripts: a user and a coding assistant working through a task.

    from tests.benchmarks.quality.coding_sessions import session
    text, evidence = session(seed=3, index=0, turns=20)

A second dialogue shape for the digest benchmark, unlike the chat generator in
`dialogue.py`: turns are `user:` / `assistant:` lines, assistant turns run over several
lines (tool output in fenced blocks, diffs, tracebacks whose `Error: ...` lines look like
speaker lines), and most of the words are paths, commands and identifiers. A few turns
carry what a later question would need (a root cause, a decision, a fact about the
system, a preference, a follow-up); `evidence` is that sentence as said, sometimes inside
a longer assistant turn. Everything else is work in progress: "let me look", test runs,
acknowledgements, and distractors that name the same files without the point.

Deterministic: the same arguments give the same text (a seeded `random.Random` only).
"""

from __future__ import annotations

import random

MODULES = ["billing", "auth", "uploads", "search", "scheduler", "invoices", "webhooks", "exports", "sessions",
           "metrics", "mailer", "ledger", "catalog", "payments", "reports", "inventory"]
CAUSES = ["the retry loop reuses a closed connection", "the cache key ignores the tenant id",
          "a naive datetime is compared with an aware one", "the temp directory is shared between workers",
          "the pagination cursor skips the last row", "the lock is released before the flush",
          "the config loader reads the staging file first", "the float rounding drops a cent on refunds",
          "the queue consumer acknowledges before it commits", "the regex does not escape the dot in domains"]
CHOICES = [("SQLite", "the local cache"), ("exponential backoff", "the HTTP client"), ("a feature flag", "the rollout"),
           ("pydantic models", "request validation"), ("a nightly cron job", "the cleanup"),
           ("structured JSON logs", "the worker output"), ("Redis streams", "the event fan-out"),
           ("a materialized view", "the monthly report"), ("argon2", "password hashing"),
           ("a bounded thread pool", "the exporter")]
FACTS = ["the {svc} API allows {n} requests per minute per token", "the {svc} staging database is wiped every {d}",
         "the {svc} service runs on port {p} behind the gateway", "deploys of {svc} need approval from {who}",
         "the {svc} nightly job takes about {m} minutes", "the {svc} bucket keeps objects for {n} days"]
PEOPLE = ["Priya", "Tomas", "Aiko", "Omar", "Grace", "Diego", "Nadia", "Felix"]
PREFS = ["keep functions under forty lines in {mod}", "write tests before the fix in {mod}",
         "avoid new dependencies in {mod}", "name branches after the ticket for {mod}",
         "squash commits before merging {mod} changes"]
FOLLOWUPS = ["bump the timeout in the {mod} CI job to ten minutes", "add a regression test for the {mod} fix",
             "ask {who} to review the {mod} migration", "remove the {mod} debug flag before the release",
             "update the {mod} runbook with the new alert"]
ACKS = ["Okay, thanks.", "Sounds good.", "Sure, go ahead.", "Great, that works.", "Makes sense.", "Nice.",
        "Let me know when it's done.", "Can you check the logs first?", "Hmm, odd. Keep going.", "Yes please."]


def _file(r: random.Random, mod: str) -> str:
    return f"src/{mod}/{r.choice(['client', 'models', 'views', 'tasks', 'store', 'config'])}.py"


def _noise(r: random.Random, mod: str) -> str:
    f = _file(r, mod)
    test = f"tests/test_{mod}.py"
    kind = r.randrange(6)
    if kind == 0:
        return f"assistant: Let me look at `{f}` first."
    if kind == 1:
        return (f"assistant: Running the tests.\n```\n$ pytest -q {test}\n..F.\nFAILED {test}::test_{mod}_roundtrip"
                f"\nAssertionError: expected {r.randint(2, 9)} rows, got {r.randint(0, 1)}\n"
                f"{r.randint(10, 40)} passed, 1 failed in {r.randint(1, 9)}.{r.randint(0, 9)}s\n```")
    if kind == 2:
        return (f"assistant: I've updated `{f}` (+{r.randint(2, 30)} -{r.randint(1, 20)}).\n```diff\n"
                f"-    return fetch(url)\n+    return fetch(url, timeout=TIMEOUT)\n```")
    if kind == 3:
        return f"assistant: The {mod} module also has a README section on {r.choice(['setup', 'layout', 'naming'])}."
    if kind == 4:
        return (f"assistant: Traceback (most recent call last):\n  File \"{f}\", line {r.randint(10, 300)}, in run\n"
                f"KeyError: '{mod}_id'\nI'll dig into where that key is set.")
    return f"user: {r.choice(ACKS)}"


def _points(r: random.Random, mod: str) -> list[tuple[str, str]]:
    """(turn, evidence sentence) for each point a question could ask about."""
    who = r.choice(PEOPLE)
    cause = r.choice(CAUSES)
    choice, comp = r.choice(CHOICES)
    fact = r.choice(FACTS).format(svc=mod, n=r.choice([60, 120, 300, 600]), d=r.choice(["Sunday", "night"]),
                                  p=r.choice([8080, 8443, 9000, 7000]), who=who, m=r.choice([12, 25, 40, 90]))
    fact = fact[0].upper() + fact[1:] + "."
    pref = "Please " + r.choice(PREFS).format(mod=mod) + ", I prefer it that way."
    follow = "Next step: " + r.choice(FOLLOWUPS).format(mod=mod, who=who) + " by Friday."
    root = f"The {mod} failure comes from {cause} in `{_file(r, mod)}`."
    decided = f"We decided to use {choice} for {comp} in {mod}."
    return [
        (f"assistant: I found it. {root} I'll patch it now.", root),
        (f"user: {decided}", decided),
        (f"user: For context, {fact[0].lower() + fact[1:]}", f"For context, {fact[0].lower() + fact[1:]}"),
        (f"user: {pref}", pref),
        (f"assistant: Done with the patch. {follow}", follow),
    ]


def session(seed: int, index: int, turns: int = 20) -> tuple[str, list[str]]:
    """One transcript (markdown with frontmatter) and its evidence sentences."""
    r = random.Random(seed * 1000 + index)
    mod = r.choice(MODULES)
    points = r.sample(_points(r, mod), k=r.choice([2, 3, 3, 4]))
    body = [f"user: The {mod} tests are failing on main again, can you take a look?"]
    slots = sorted(r.sample(range(1, turns), k=len(points)))
    for i in range(1, turns):
        body.append(points[slots.index(i)][0] if i in slots else _noise(r, mod))
    day = f"2025-{1 + (seed + index) % 12:02d}-{1 + index % 28:02d}"
    head = f"---\ntitle: coding session {seed}-{index} ({mod})\ntype: session\ncreated: '{day}'\n---\n\n"
    return head + "\n\n".join(body) + "\n", [p[1] for p in points]
