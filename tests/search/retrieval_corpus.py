"""A small hand-written memory corpus with labelled questions, for retrieval tests.

`write(root)` writes the corpus. `QUESTIONS` are (kind, question, relevant paths):

- `keyword`: ordinary questions sharing words with the answer;
- `ident`: exact identifiers (`svc-auth-v2`, `C++`, `foo_bar`, error codes, hosts);
- `paraphrase`: no content word in common with the answer document (checked by a test
  with the same analyzer as the index), so only semantic search can find them.
"""

from __future__ import annotations

from pathlib import Path

DOCS: dict[str, str] = {
    "core/overview.md": """---
title: Team memory overview
canonical: true
tags: [core]
---

# Team memory overview

This wiki is the long-term memory of the platform team: people, projects, decisions and
runbooks. Canonical pages are compiled from claims; everything else is written by hand.

## How to use it

Search first, then follow links. Decisions live under `decisions/`, runbooks under
`references/`.
""",
    "people/alex-rivera.md": """---
title: Alex Rivera
type: person
canonical: true
tags: [people, platform]
---

# Alex Rivera

Staff engineer on the platform team. Owns the authentication service and the
svc-auth-v2 migration.

## Preferences

- Prefers short design docs with an explicit list of non-goals.
- Reviews pull requests in the morning; do not expect answers after 6 pm.
- Likes tea, dislikes meetings without an agenda.

## Contact

Based in Lisbon. Pager handle `arivera`.
""",
    "people/priya-natarajan.md": """---
title: Priya Natarajan
type: person
canonical: true
tags: [people, data]
---

# Priya Natarajan

Data engineer. Runs the billing pipeline and the nightly warehouse loads.

## Background

Joined from a fintech startup where she built ledger reconciliation. Speaks Tamil,
English and some Portuguese.

## Working style

Writes everything down in the daily log before standup.
""",
    "people/sam-okafor.md": """---
title: Sam Okafor
type: person
tags: [people, frontend]
---

# Sam Okafor

Frontend lead. Maintains the design system and the admin console written in
TypeScript.

## Notes

Sam is the person to ask about accessibility audits and keyboard navigation.
""",
    "projects/svc-auth-v2/state.md": """---
title: svc-auth-v2 migration
type: project
status: active
canonical: true
tags: [auth, migration]
---

# svc-auth-v2 migration

Move every client from the legacy session-cookie auth service to svc-auth-v2, which
issues short-lived JWT access tokens and rotating refresh tokens.

## Status

About 70% of traffic is on svc-auth-v2. The mobile apps are the last big client.

## Risks

Token rotation bugs log out users. The rollback plan is to flip the `auth_v2_enabled`
feature flag off per client.
""",
    "projects/billing-pipeline/state.md": """---
title: Billing pipeline
type: project
status: active
canonical: true
tags: [billing, data]
---

# Billing pipeline

Nightly job that turns usage events into invoices. Owned by Priya Natarajan.

## Architecture

Usage events land in Kafka, a Spark job aggregates them per customer per day, and the
invoice service renders PDFs. Idempotency keys make reruns safe.

## Known issues

Late-arriving events after midnight UTC end up on the next day's invoice.
""",
    "projects/search-revamp/state.md": """---
title: Search revamp
type: project
status: paused
tags: [search]
---

# Search revamp

Replace the old grep-based wiki search with hybrid search: BM25 over chunks plus
embedding vectors, fused with reciprocal rank fusion.

## Why paused

Waiting for the embedding model evaluation. Restart planned next quarter.
""",
    "projects/cpp-engine/state.md": """---
title: Rendering engine rewrite
type: project
status: active
tags: [cpp, graphics]
---

# Rendering engine rewrite

The tile renderer is being rewritten in C++ 20 from the old C# prototype. Build with
CMake and clang; the hot loop uses SIMD intrinsics.

## Build notes

Run `cmake --preset release` then `ninja`. The `foo_bar` target is the benchmark
harness; `foo_bar --frames 500` prints frame times.
""",
    "decisions/2024-03-use-postgres.md": """---
title: Use PostgreSQL as the primary datastore
type: decision
status: active
date: 2024-03-12
tags: [database, decision]
---

# Use PostgreSQL as the primary datastore

## Context

We ran MongoDB for the user store and MySQL for billing. Two engines meant two sets of
backups, two on-call playbooks and no cross-store transactions.

## Decision

Consolidate on PostgreSQL 16 with logical replication to the warehouse.

## Consequences

Migrations are scheduled per table; the user store moves first.
""",
    "decisions/2023-09-use-mongodb.md": """---
title: Use MongoDB for the user store
type: decision
status: superseded
superseded_by: decisions/2024-03-use-postgres.md
date: 2023-09-01
tags: [database, decision]
---

# Use MongoDB for the user store

## Decision

Keep user profiles in MongoDB because the schema changes weekly.

Superseded by the PostgreSQL consolidation.
""",
    "decisions/2024-06-feature-flags.md": """---
title: Every risky rollout goes behind a feature flag
type: decision
status: active
date: 2024-06-20
tags: [release, decision]
---

# Every risky rollout goes behind a feature flag

## Decision

Any change that touches authentication, billing or data deletion ships dark behind a
flag in the flag service and is enabled per customer cohort.

## Consequences

Flags older than 90 days are reviewed in the monthly cleanup.
""",
    "decisions/2024-08-rrf.md": """---
title: Reciprocal rank fusion for hybrid search
type: decision
status: active
date: 2024-08-02
tags: [search, decision]
---

# Reciprocal rank fusion for hybrid search

## Decision

Fuse the BM25 and vector result lists with reciprocal rank fusion, k = 60, instead of
blending raw scores.

## Why

Scores from the two engines are not comparable; ranks are.
""",
    "concepts/circuit-breaker.md": """---
title: Circuit breaker
type: concept
tags: [resilience]
---

# Circuit breaker

After a number of consecutive errors, callers stop sending requests to the failing
dependency and fail fast. After a cool-down, a single probe request decides whether to
close the breaker again.

## Settings we use

Five failures open the breaker; the probe waits 30 seconds.
""",
    "concepts/idempotency-keys.md": """---
title: Idempotency keys
type: concept
tags: [api, billing]
---

# Idempotency keys

Clients send a unique key with each mutating request. The server stores the first
response under that key and replays it for retries, so a retried charge is never applied
twice.

## Storage

Keys expire after 24 hours and live in a Redis hash per tenant.
""",
    "concepts/backpressure.md": """---
title: Backpressure
type: concept
tags: [resilience, queues]
---

# Backpressure

When consumers cannot keep up, producers must slow down instead of letting queues grow
without bound. Bounded queues and rejecting new work are the usual tools.

## In our stack

The ingest gateway returns HTTP 429 when the Kafka lag exceeds two minutes.
""",
    "concepts/blue-green-deploys.md": """---
title: Blue-green deployment
type: concept
tags: [release]
---

# Blue-green deployment

Two identical production environments; traffic switches from blue to green in one step
at the load balancer, and switching back is the rollback.
""",
    "concepts/vector-clocks.md": """---
title: Vector clocks
type: concept
tags: [distributed-systems]
---

# Vector clocks

Each replica keeps a counter per replica; comparing two clocks tells whether one event
happened before another or whether they are concurrent.
""",
    "references/runbook-db-failover.md": """---
title: "Runbook: PostgreSQL failover"
type: reference
tags: [runbook, database]
---

# Runbook: PostgreSQL failover

## When

The primary on `db-primary-01` is unreachable for more than two minutes.

## Steps

1. Confirm with `pg_isready -h db-primary-01`.
2. Promote the replica `db-replica-02` with `patronictl failover`.
3. Repoint PgBouncer and announce in #incidents.
""",
    "references/runbook-certs.md": """---
title: "Runbook: TLS certificate renewal"
type: reference
tags: [runbook, security]
---

# Runbook: TLS certificate renewal

Certificates come from the internal ACME issuer and renew 30 days before expiry.

## If renewal fails

Check the issuer logs for `ERR_ACME_RATE_LIMIT`, wait an hour, then run
`certctl renew --force api.internal.example`.
""",
    "references/error-codes.md": """---
title: API error codes
type: reference
tags: [api]
---

# API error codes

| code | meaning |
|---|---|
| `E1042` | the idempotency key was reused with a different body |
| `E2001` | the refresh token has been rotated already |
| `ERR_CONN_RESET` | the upstream closed the connection mid-request |
""",
    "references/oncall.md": """---
title: On-call handbook
type: reference
tags: [oncall]
---

# On-call handbook

## Rotation

One primary and one secondary per week, handing over on Monday at 10:00 Lisbon time.

## Paging

Only customer-facing outages page at night. Everything else waits for business hours.
""",
    "references/style-guide.md": """---
title: Writing style guide
type: reference
tags: [docs]
---

# Writing style guide

Use sentence case for headings, active voice, and short paragraphs. Write dates as
YYYY-MM-DD.
""",
    "sources/paper-raft.md": """---
title: "Paper: In Search of an Understandable Consensus Algorithm"
type: source
tags: [distributed-systems, consensus]
---

# Paper: In Search of an Understandable Consensus Algorithm

Raft elects a leader with randomized election timeouts; the leader appends entries to
followers' logs and commits once a majority has them.

## Takeaways

Leader election and log replication are separable; membership changes use joint
consensus.
""",
    "sources/talk-observability.md": """---
title: "Talk: Observability beyond dashboards"
type: source
tags: [observability]
---

# Talk: Observability beyond dashboards

High-cardinality events beat pre-aggregated metrics for debugging unknown unknowns.
Sample traces by tail latency, not at random.
""",
    "wiki/glossary.md": """---
title: Glossary
type: wiki
tags: [docs]
---

# Glossary

- **SLO**: service level objective, a target for a service level indicator.
- **Error budget**: the allowed unreliability, 100% minus the SLO.
- **Toil**: manual, repetitive operational work that scales with traffic.
""",
    "wiki/slo-policy.md": """---
title: SLO policy
type: wiki
tags: [reliability]
---

# SLO policy

Every customer-facing service has an availability objective of 99.9% over 28 days.

## When the budget is spent

Feature launches freeze until the service is back within its objective; reliability work
takes priority.
""",
    "notes/coffee-machine.md": """---
title: Office coffee machine
tags: [office]
---

# Office coffee machine

The espresso machine on the third floor needs descaling every second Friday. Beans are
ordered from the roaster on Rua Augusta.
""",
    "notes/hiring-loop.md": """---
title: Hiring loop
tags: [hiring]
---

# Hiring loop

Four interviews: a coding exercise, a system design session, a debugging session with
a real incident, and a values conversation. Debrief within 48 hours.
""",
    "notes/kubernetes-upgrade.md": """---
title: Kubernetes 1.29 upgrade notes
tags: [kubernetes, infra]
---

# Kubernetes 1.29 upgrade notes

Node pools upgrade one zone at a time. PodDisruptionBudgets on the ingest gateway
blocked the drain twice; raise `maxUnavailable` to 1 before the upgrade.
""",
    "notes/laptop-setup.md": """---
title: Laptop setup
tags: [onboarding]
---

# Laptop setup

Install Homebrew, then `brew bundle` with the team Brewfile. Ask IT for the VPN profile
and the YubiKey.
""",
    "logs/daily/2024-11-04.md": """---
title: 2024-11-04
tags: [daily]
---

# 2024-11-04

- Billing rerun for October finished after the idempotency fix.
- Alex paired with Sam on the login screen for svc-auth-v2.
""",
    "logs/daily/2024-11-05.md": """---
title: 2024-11-05
tags: [daily]
---

# 2024-11-05

- Certificate renewal failed on the staging issuer; fixed by hand.
- Kubernetes upgrade of zone b done.
""",
    "inbox/idea-dark-mode.md": """---
title: "Idea: dark mode for the admin console"
tags: [idea, frontend]
---

# Idea: dark mode for the admin console

Several customers asked for a dark theme. The design system already has color tokens,
so it might be a small change.
""",
    "inbox/capture-redis-eviction.md": """---
title: "Capture: Redis eviction surprise"
tags: [capture]
---

# Capture: Redis eviction surprise

Saw keys vanish under memory pressure; the maxmemory-policy was allkeys-lru, which also
evicts idempotency keys. Needs a proper note.
""",
    "logs/sessions/2024/11/2024-11-06-claude-debug-billing.md": """---
title: "Session: debugging the billing rerun"
tags: [session]
---

# Session: debugging the billing rerun

User: the October invoices are duplicated for three customers.
Assistant: the rerun skipped idempotency keys for events replayed from the dead letter
queue; adding the key fixed it.
""",
    "logs/sessions/2024/11/2024-11-07-codex-zebra-migration.md": """---
title: "Session: zebra migration dry run"
tags: [session]
---

# Session: zebra migration dry run

We tried the zebra-sync tool against a copy of the user store. Zebra-sync copied 2.1
million rows in 14 minutes.
""",
}

# (kind, question, relevant paths)
QUESTIONS: list[tuple[str, str, list[str]]] = [
    # keyword / natural-language questions sharing words with the answer
    ("keyword", "who runs the billing pipeline?", ["projects/billing-pipeline/state.md", "people/priya-natarajan.md"]),
    ("keyword", "how do we fail over the PostgreSQL primary", ["references/runbook-db-failover.md"]),
    ("keyword", "why did we choose reciprocal rank fusion", ["decisions/2024-08-rrf.md"]),
    ("keyword", "feature flag policy for risky rollouts", ["decisions/2024-06-feature-flags.md"]),
    ("keyword", "what happens when the error budget is spent", ["wiki/slo-policy.md"]),
    ("keyword", "TLS certificate renewal failed", ["references/runbook-certs.md"]),
    ("keyword", "on-call rotation handover", ["references/oncall.md"]),
    ("keyword", "Raft leader election", ["sources/paper-raft.md"]),
    ("keyword", "late arriving usage events on invoices", ["projects/billing-pipeline/state.md"]),
    ("keyword", "Kubernetes node pool upgrade drain blocked", ["notes/kubernetes-upgrade.md"]),
    ("keyword", "descaling the espresso machine", ["notes/coffee-machine.md"]),
    ("keyword", "hiring loop interviews", ["notes/hiring-loop.md"]),
    ("keyword", "Alex Rivera preferences for design docs", ["people/alex-rivera.md"]),
    ("keyword", "dark mode admin console", ["inbox/idea-dark-mode.md"]),
    # exact identifiers
    ("ident", "svc-auth-v2", ["projects/svc-auth-v2/state.md"]),
    ("ident", "C++", ["projects/cpp-engine/state.md"]),
    ("ident", "foo_bar", ["projects/cpp-engine/state.md"]),
    ("ident", "ERR_CONN_RESET", ["references/error-codes.md"]),
    ("ident", "E1042", ["references/error-codes.md"]),
    ("ident", "db-replica-02", ["references/runbook-db-failover.md"]),
    ("ident", "ERR_ACME_RATE_LIMIT", ["references/runbook-certs.md"]),
    ("ident", "auth_v2_enabled", ["projects/svc-auth-v2/state.md"]),
    ("ident", "maxUnavailable", ["notes/kubernetes-upgrade.md"]),
    # paraphrases: no content word shared with the answer
    ("paraphrase", "quit hammering a flaky downstream once it keeps misbehaving", ["concepts/circuit-breaker.md"]),
    ("paraphrase", "guarantee a duplicated payment attempt debits the buyer only one time", ["concepts/idempotency-keys.md"]),
    ("paraphrase", "senders flooding slower processors with more items than they handle", ["concepts/backpressure.md"]),
    ("paraphrase", "cut over users between a pair of mirrored stacks at once", ["concepts/blue-green-deploys.md"]),
    ("paraphrase", "ordering occurrences across machines without synchronized wall time", ["concepts/vector-clocks.md"]),
    ("paraphrase", "which colleague is fluent in South Indian languages", ["people/priya-natarajan.md"]),
    ("paraphrase", "who knows about screen readers", ["people/sam-okafor.md"]),
    ("paraphrase", "getting a fresh employee's machine ready on day one", ["notes/laptop-setup.md"]),
    ("paraphrase", "conference presentation on understanding production systems through rich telemetry", ["sources/talk-observability.md"]),
    ("paraphrase", "why did we pick a single relational system for everything", ["decisions/2024-03-use-postgres.md"]),
    ("paraphrase", "house rules for prose tone and capitalization", ["references/style-guide.md"]),
]


def write(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in DOCS.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root
