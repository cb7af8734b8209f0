"""Deterministic generator of realistic synthetic commonplace corpora.

    python -m tests.benchmarks.corpus_gen OUT --n 10000 [--seed 0] [--force]
    python tests/benchmarks/corpus_gen.py OUT --n 2000

`generate(root, n, seed)` writes `n` markdown documents under `root` following the
corpus conventions of the design (core/, people/, projects/<slug>/state.md and other
project notes, concepts/, decisions/, logs/daily/YYYY-MM-DD.md, logs/sessions/,
sources/, references/, inbox/, wiki/, notes/ and a root index.md) and returns their
corpus-relative paths, sorted.

Every document has YAML frontmatter (title, tags, created/updated, status, sometimes
aliases and other fields, rarely a `type` override), `##`/`###` headings, prose built
from per-topic vocabularies (so lexical and vector search have something to separate),
bullet and task lists, fenced code, tables, occasional math, and links to other
generated documents in every supported form: `[[stem]]`, `[[Title]]`,
`[[path/without-ext|label]]`, `[[stem#Heading]]` and relative markdown links. About 1%
of links are deliberately broken (their targets never exist).

Same `seed` and `n` give a byte-identical corpus: only seeded `random.Random`
instances are used (no set iteration order, no clock, no hash randomisation).
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import json
import posixpath
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BASE_DATE = dt.date(2025, 6, 30)  # fixed "today" of every generated corpus
BROKEN_LINK_RATE = 0.01

# --------------------------------------------------------------------------- vocabulary


@dataclass(frozen=True)
class Topic:
    key: str
    label: str
    nouns: tuple[str, ...]
    verbs: tuple[tuple[str, str], ...]  # (base, past)
    adjs: tuple[str, ...]
    idents: tuple[str, ...]
    concepts: tuple[str, ...]
    lang: str
    code: tuple[str, ...]


def _t(key, label, nouns, verbs, adjs, idents, concepts, lang, code) -> Topic:
    return Topic(
        key,
        label,
        tuple(nouns.split(", ")),
        tuple(tuple(v.split("/")) for v in verbs.split(", ")),  # type: ignore[misc]
        tuple(adjs.split(", ")),
        tuple(idents.split(", ")),
        tuple(concepts.split(", ")),
        lang,
        tuple(code),
    )


TOPICS: tuple[Topic, ...] = (
    _t(
        "databases", "Databases",
        "index, replica, query planner, schema, migration, vacuum job, connection pool, "
        "write-ahead log, shard, primary key, foreign key, table scan, transaction, deadlock, "
        "read replica, snapshot, tablespace, materialized view",
        "migrate/migrated, shard/sharded, index/indexed, vacuum/vacuumed, replicate/replicated, "
        "partition/partitioned, backfill/backfilled, denormalize/denormalized",
        "transactional, normalized, slow, bloated, consistent, hot, partitioned, lock-free",
        "pg_stat_statements, orders_v3, foo_bar, user_events, billing_ledger, max_connections, "
        "work_mem, db-primary-01",
        "Write-Ahead Logging, Connection Pooling, Online Schema Migration, Read Replica Lag, "
        "Multi-Version Concurrency Control, Table Partitioning, Query Plan Regression, Logical Replication",
        "sql",
        (
            "SELECT {ident}, count(*)\nFROM {ident2}\nWHERE created_at > now() - interval '7 days'\n"
            "GROUP BY 1\nORDER BY 2 DESC\nLIMIT 20;",
            "CREATE INDEX CONCURRENTLY idx_{ident}_created\n    ON {ident2} (created_at);",
            "ALTER TABLE {ident2} ADD COLUMN archived boolean NOT NULL DEFAULT false;\n"
            "VACUUM (ANALYZE, VERBOSE) {ident2};",
        ),
    ),
    _t(
        "auth", "Auth services",
        "token, session, refresh token, identity provider, login flow, OAuth client, scope, "
        "permission, role, service account, signing key, audit log, password reset, SSO integration, "
        "JWT, consent screen",
        "authenticate/authenticated, authorize/authorized, rotate/rotated, revoke/revoked, "
        "issue/issued, expire/expired, federate/federated, provision/provisioned",
        "short-lived, stateless, federated, scoped, expired, revoked, least-privilege, signed",
        "svc-auth-v2, auth_tokens, OIDC_CLIENT_ID, token_ttl, svc-auth-legacy, jwks.json, "
        "session_store, X-Request-Id",
        "Token Rotation, Single Sign-On, Role-Based Access Control, Refresh Token Reuse Detection, "
        "Service-to-Service Auth, Key Rotation Policy, Session Fixation, Scoped API Keys",
        "python",
        (
            "def issue_token(user_id: str, scopes: list[str]) -> str:\n"
            "    claims = {{\"sub\": user_id, \"scp\": scopes, \"exp\": now() + TTL}}\n"
            "    return jwt.encode(claims, signing_key(), algorithm=\"RS256\")",
            "if token.expired or token.revoked:\n    raise Unauthorized(\"{ident} rejected\")\n"
            "audit.log(\"{ident2}\", user=token.sub)",
        ),
    ),
    _t(
        "deploy", "Deployments",
        "deploy pipeline, canary, rollout, rollback, release train, feature flag, build artifact, "
        "container image, staging cluster, helm chart, blue-green switch, change freeze, "
        "deployment window, health check, runbook",
        "deploy/deployed, roll back/rolled back, promote/promoted, ship/shipped, pin/pinned, "
        "release/released, gate/gated, stage/staged",
        "gradual, automated, flaky, green, blocked, reproducible, immutable, zero-downtime",
        "deploy-bot, release-2025.03, svc-gateway, canary_percent, helm upgrade, main, "
        "deploy.yaml, k8s-prod-eu",
        "Canary Releases, Blue-Green Deployment, Feature Flags, Progressive Delivery, "
        "Release Trains, Immutable Infrastructure, Deployment Freeze, Automated Rollback",
        "yaml",
        (
            "deploy:\n  service: {ident}\n  strategy: canary\n  steps:\n    - weight: 5\n"
            "    - pause: 10m\n    - weight: 50\n    - weight: 100",
            "rollout:\n  image: registry.local/{ident}:{num}\n  healthCheck: /healthz\n"
            "  maxUnavailable: 0",
        ),
    ),
    _t(
        "hiring", "Hiring",
        "candidate, interview loop, job description, offer, recruiter, onboarding plan, "
        "take-home exercise, hiring committee, referral, pipeline review, headcount, debrief, "
        "scorecard, sourcing channel",
        "interview/interviewed, hire/hired, screen/screened, onboard/onboarded, calibrate/calibrated, "
        "decline/declined, extend/extended, source/sourced",
        "senior, strong, borderline, structured, remote, inclusive, calibrated, urgent",
        "req-4821, hiring_plan_q3, loop-backend-senior, scorecard_v2, offer-tracker, ats_export",
        "Structured Interviews, Hiring Bar, Interview Calibration, Onboarding Buddy, "
        "Leveling Guide, Work Sample Tests, Referral Program, Headcount Planning",
        "text",
        (
            "Loop: {ident}\n  1. Recruiter screen (30m)\n  2. Systems design (60m)\n"
            "  3. Pairing exercise (90m)\n  4. Values interview (45m)",
        ),
    ),
    _t(
        "design", "Design reviews",
        "design doc, review meeting, proposal, trade-off, architecture diagram, RFC, reviewer, "
        "open question, non-goal, requirement, alternative, decision record, sign-off, prototype",
        "propose/proposed, review/reviewed, approve/approved, reject/rejected, revise/revised, "
        "prototype/prototyped, scope/scoped, defer/deferred",
        "ambitious, incremental, risky, pragmatic, underspecified, reversible, contested, clear",
        "RFC-0042, design-review, arch_council, proposal_template, review-queue, C4 diagram",
        "Architecture Decision Records, Design Review Process, Two-Way Door Decisions, "
        "Non-Goals, Request for Comments, Technical Debt Register, Reversibility, Trade-off Analysis",
        "markdown",
        ("| Option | Cost | Risk |\n|---|---|---|\n| keep {ident} | low | medium |\n| rewrite | high | high |",),
    ),
    _t(
        "observability", "Observability",
        "dashboard, metric, trace, span, log line, alert, SLO, error budget, histogram, "
        "cardinality, sampling rate, pager, latency percentile, exemplar, on-call rotation",
        "instrument/instrumented, alert/alerted, sample/sampled, trace/traced, page/paged, "
        "aggregate/aggregated, scrape/scraped, correlate/correlated",
        "noisy, high-cardinality, actionable, p99, missing, sampled, correlated, silent",
        "http_request_duration_seconds, otel-collector, slo_burn_rate, trace_id, grafana-main, "
        "alertmanager.yml, span.kind",
        "Service Level Objectives, Error Budgets, Distributed Tracing, Alert Fatigue, "
        "Structured Logging, RED Metrics, Tail Sampling, Burn Rate Alerts",
        "promql",
        (
            "histogram_quantile(0.99,\n  sum by (le, service) (\n"
            "    rate(http_request_duration_seconds_bucket{{service=\"{ident}\"}}[5m])))",
            "sum(rate(errors_total{{job=\"{ident}\"}}[1h])) / sum(rate(requests_total[1h]))",
        ),
    ),
    _t(
        "incidents", "Incident response",
        "incident, outage, postmortem, timeline, mitigation, root cause, status page, "
        "incident commander, severity, action item, customer impact, escalation, war room, blast radius",
        "mitigate/mitigated, escalate/escalated, declare/declared, resolve/resolved, "
        "investigate/investigated, page/paged, communicate/communicated, restore/restored",
        "blameless, customer-facing, sev1, partial, cascading, intermittent, contained, prolonged",
        "INC-2291, sev-2, incident-bot, status.example.com, pagerduty, postmortem_template",
        "Blameless Postmortems, Incident Command, Severity Levels, Blast Radius Reduction, "
        "Runbook Automation, Mean Time to Recovery, Cascading Failures, Game Days",
        "text",
        (
            "14:02 UTC  alert fired: {ident} error rate > 5%\n14:09 UTC  incident declared (sev-2)\n"
            "14:31 UTC  rollback of {ident2} started\n15:05 UTC  error rate back to baseline",
        ),
    ),
    _t(
        "billing", "Billing",
        "invoice, subscription, payment method, ledger entry, refund, proration, tax rate, "
        "dunning email, plan upgrade, usage meter, chargeback, currency conversion, price book",
        "invoice/invoiced, charge/charged, refund/refunded, meter/metered, reconcile/reconciled, "
        "prorate/prorated, settle/settled, bill/billed",
        "monthly, annual, metered, overdue, idempotent, reconciled, disputed, prorated",
        "billing_ledger, svc-billing, invoice_items, stripe_webhook, usage_events, price_id",
        "Idempotent Payments, Usage-Based Pricing, Revenue Recognition, Dunning, Double-Entry Ledger, "
        "Proration Rules, Tax Calculation, Webhook Reconciliation",
        "python",
        (
            "def prorate(amount_cents: int, days_used: int, days_in_period: int) -> int:\n"
            "    return round(amount_cents * days_used / days_in_period)",
            "ledger.post(account=\"{ident}\", debit={num}, credit=0, idempotency_key=key)",
        ),
    ),
    _t(
        "search", "Search",
        "query, ranking function, inverted index, tokenizer, embedding, relevance judgment, "
        "synonym list, reranker, recall, precision, facet, stemmer, vector index, BM25 score",
        "rank/ranked, tokenize/tokenized, embed/embedded, rerank/reranked, boost/boosted, "
        "retrieve/retrieved, evaluate/evaluated, normalize/normalized",
        "lexical, semantic, hybrid, fuzzy, relevant, stale, dense, sparse",
        "search-api, bm25_k1, hnsw_ef, query_log, rrf_k, synonyms.txt, C++ tokenizer",
        "Reciprocal Rank Fusion, Hybrid Search, Query Understanding, Learning to Rank, "
        "Approximate Nearest Neighbours, Relevance Evaluation, Tokenization, Dense Retrieval",
        "python",
        (
            "def rrf(lists, k=60):\n    scores = defaultdict(float)\n    for results in lists:\n"
            "        for rank, doc in enumerate(results, 1):\n            scores[doc] += 1 / (k + rank)\n"
            "    return sorted(scores, key=scores.get, reverse=True)",
        ),
    ),
    _t(
        "ml", "ML pipelines",
        "training run, feature store, model registry, evaluation set, label queue, GPU budget, "
        "checkpoint, inference endpoint, drift monitor, hyperparameter, data loader, baseline model",
        "train/trained, evaluate/evaluated, label/labelled, fine-tune/fine-tuned, serve/served, "
        "retrain/retrained, quantize/quantized, distill/distilled",
        "overfit, calibrated, quantized, biased, reproducible, offline, online, drifting",
        "train.py, feature_store, model-v14, eval_set_2025, torch.compile, batch_size, gpu-pool-a100",
        "Feature Stores, Model Drift, Offline Evaluation, Shadow Deployment, Quantization, "
        "Knowledge Distillation, Label Noise, Experiment Tracking",
        "python",
        (
            "for epoch in range(cfg.epochs):\n    loss = train_one_epoch(model, loader)\n"
            "    metrics = evaluate(model, \"{ident}\")\n    registry.log(epoch=epoch, loss=loss, **metrics)",
        ),
    ),
    _t(
        "frontend", "Frontend",
        "component, bundle, design system, render path, accessibility audit, state store, "
        "route, hydration step, style sheet, form validation, browser cache, layout shift",
        "render/rendered, hydrate/hydrated, bundle/bundled, refactor/refactored, lazy-load/lazy-loaded, "
        "memoize/memoized, style/styled, audit/audited",
        "accessible, responsive, janky, interactive, server-rendered, bloated, themable, keyboard-friendly",
        "web-app, design-tokens, useSession, bundle.js, aria-label, tailwind.config.js",
        "Design Systems, Server-Side Rendering, Core Web Vitals, Accessibility Audits, "
        "Component Libraries, Code Splitting, Optimistic UI, Progressive Enhancement",
        "typescript",
        (
            "export function useSession(): Session | null {{\n  const [s, setS] = useState<Session | null>(null);\n"
            "  useEffect(() => {{ fetch(\"/api/{ident}\").then(r => r.json()).then(setS); }}, []);\n"
            "  return s;\n}}",
        ),
    ),
    _t(
        "networking", "Networking",
        "load balancer, DNS record, TLS certificate, proxy, firewall rule, subnet, VPN tunnel, "
        "ingress controller, packet loss, keepalive, timeout budget, service mesh",
        "route/routed, terminate/terminated, resolve/resolved, proxy/proxied, throttle/throttled, "
        "peer/peered, renew/renewed, drain/drained",
        "encrypted, regional, saturated, flapping, redundant, private, mTLS-only, misconfigured",
        "lb-edge-01, envoy.yaml, 10.2.0.0/16, cert-manager, api.example.com, grpc_timeout",
        "Service Mesh, Mutual TLS, Connection Draining, DNS Failover, Rate Limiting, "
        "Circuit Breakers, Anycast Routing, Retry Budgets",
        "bash",
        (
            "dig +short {ident}\ncurl -sv --resolve api.example.com:443:10.2.3.4 https://api.example.com/healthz\n"
            "openssl s_client -connect {ident2}:443 -servername api.example.com",
        ),
    ),
    _t(
        "security", "Security",
        "vulnerability, threat model, secret, dependency scan, penetration test, CVE, patch, "
        "access review, encryption key, security review, attack surface, bug bounty report",
        "patch/patched, scan/scanned, encrypt/encrypted, harden/hardened, disclose/disclosed, "
        "triage/triaged, exploit/exploited, rotate/rotated",
        "critical, exploitable, hardened, leaked, transitive, encrypted, privileged, sandboxed",
        "CVE-2024-3094, trivy, secrets.enc.yaml, sast-pipeline, kms-key-prod, SECURITY.md",
        "Threat Modeling, Defense in Depth, Secret Management, Supply Chain Security, "
        "Least Privilege, Vulnerability Triage, Zero Trust Networking, Security Champions",
        "bash",
        ("trivy image --severity HIGH,CRITICAL registry.local/{ident}:latest\n"
         "gitleaks detect --source . --report-path leaks.json",),
    ),
    _t(
        "data", "Data pipelines",
        "batch job, stream processor, warehouse table, DAG, backfill, schema registry, "
        "data contract, partition, late event, dedup step, lineage graph, freshness check",
        "ingest/ingested, transform/transformed, backfill/backfilled, dedupe/deduped, "
        "schedule/scheduled, validate/validated, compact/compacted, join/joined",
        "late-arriving, idempotent, stale, columnar, incremental, exactly-once, partitioned, fresh",
        "dag_daily_rollup, events_raw, dbt run, kafka-topic-orders, airflow-prod, foo_bar",
        "Data Contracts, Exactly-Once Processing, Slowly Changing Dimensions, Data Lineage, "
        "Change Data Capture, Lambda Architecture, Backfill Strategy, Schema Evolution",
        "sql",
        (
            "INSERT INTO {ident2}\nSELECT date_trunc('day', ts) AS day, count(DISTINCT user_id)\n"
            "FROM events_raw\nWHERE ts >= '{date}'\nGROUP BY 1;",
        ),
    ),
    _t(
        "caching", "Caching",
        "cache key, eviction policy, TTL, hit ratio, warm-up job, CDN edge, invalidation, "
        "stampede, write-through path, memory limit, hot key, stale read",
        "cache/cached, evict/evicted, invalidate/invalidated, warm/warmed, shard/sharded, "
        "expire/expired, prefetch/prefetched, bypass/bypassed",
        "stale, hot, cold, write-through, lazy, distributed, consistent, bounded",
        "redis-cache-01, cache_ttl_seconds, LRU, memcached, cdn-config.json, X-Cache-Status",
        "Cache Invalidation, Cache Stampede Protection, Write-Through Caching, Consistent Hashing, "
        "CDN Edge Caching, Negative Caching, Request Coalescing, Cache-Aside Pattern",
        "python",
        (
            "@lru_cache(maxsize=4096)\ndef lookup(key: str) -> bytes:\n    value = redis.get(\"{ident}:\" + key)\n"
            "    return value if value is not None else load_and_fill(key)",
        ),
    ),
    _t(
        "messaging", "Messaging",
        "queue, consumer group, dead-letter queue, topic, offset, retry policy, message schema, "
        "backpressure, broker, partition key, ordering guarantee, poison message",
        "publish/published, consume/consumed, retry/retried, ack/acked, replay/replayed, "
        "buffer/buffered, fan out/fanned out, drop/dropped",
        "at-least-once, ordered, backlogged, durable, idempotent, bursty, lagging, poisoned",
        "orders.events.v2, dlq-payments, consumer_lag, kafka-broker-3, max.poll.records, nats-js",
        "Dead-Letter Queues, Backpressure, At-Least-Once Delivery, Outbox Pattern, "
        "Consumer Lag, Event Sourcing, Message Ordering, Idempotent Consumers",
        "go",
        (
            "for msg := range sub.Messages() {{\n    if err := handle(msg); err != nil {{\n"
            "        dlq.Publish(\"{ident}\", msg)\n        continue\n    }}\n    msg.Ack()\n}}",
        ),
    ),
    _t(
        "cost", "Cloud cost",
        "budget, reserved instance, spot fleet, cost report, storage tier, egress bill, "
        "rightsizing review, forecast, commitment, idle resource, tagging policy, chargeback",
        "forecast/forecast, rightsize/rightsized, reserve/reserved, tag/tagged, cut/cut, "
        "archive/archived, consolidate/consolidated, negotiate/negotiated",
        "idle, overprovisioned, reserved, quarterly, expensive, untagged, committed, elastic",
        "cost-explorer, team:platform, s3-glacier, savings_plan_2025, m7g.large, finops-weekly",
        "Reserved Capacity, Rightsizing, Cost Allocation Tags, Storage Tiering, FinOps, "
        "Egress Optimisation, Spot Instances, Unit Economics",
        "text",
        ("service        monthly   delta\n{ident:<14} $12,400   +8%\n{ident2:<14} $3,150    -22%",),
    ),
    _t(
        "testing", "Testing and CI",
        "test suite, flaky test, CI pipeline, fixture, coverage report, integration test, "
        "property test, build cache, merge queue, test matrix, snapshot test, smoke test",
        "test/tested, quarantine/quarantined, parallelize/parallelized, mock/mocked, cache/cached, "
        "bisect/bisected, gate/gated, retry/retried",
        "flaky, hermetic, slow, deterministic, parallel, brittle, green, red",
        "pytest -n auto, ci.yml, test_utils.py, merge-queue, bazel, C++ unit tests, foo_bar_test",
        "Hermetic Builds, Flaky Test Quarantine, Property-Based Testing, Test Pyramid, "
        "Merge Queues, Snapshot Testing, Mutation Testing, Continuous Integration",
        "yaml",
        (
            "jobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        python: [\"3.11\", \"3.12\"]\n"
            "    steps:\n      - run: pytest -n auto tests/{ident}",
        ),
    ),
    _t(
        "privacy", "Privacy and compliance",
        "data retention policy, consent record, audit trail, DPA, subject access request, "
        "deletion job, PII field, compliance review, SOC 2 control, processing register",
        "redact/redacted, retain/retained, delete/deleted, audit/audited, anonymize/anonymized, "
        "classify/classified, certify/certified, export/exported",
        "compliant, personal, anonymized, regulated, retained, sensitive, auditable, overdue",
        "gdpr_delete_job, pii_fields.yaml, soc2-controls, dsar-queue, retention_days, audit_events",
        "Data Minimisation, Right to Erasure, Retention Policies, Pseudonymisation, "
        "Audit Trails, Consent Management, Data Classification, Privacy by Design",
        "yaml",
        ("retention:\n  {ident}: 30d\n  {ident2}: 365d\n  audit_events: 7y\nredact:\n  - email\n  - phone",),
    ),
    _t(
        "perf", "Performance",
        "profile, flame graph, allocation, hot path, benchmark, regression, latency budget, "
        "garbage collector, thread pool, lock contention, cold start, memory leak",
        "profile/profiled, optimize/optimized, benchmark/benchmarked, inline/inlined, "
        "vectorize/vectorized, batch/batched, tune/tuned, regress/regressed",
        "hot, allocation-heavy, CPU-bound, IO-bound, tail-heavy, contended, vectorized, cold",
        "perf record, pprof, C++ allocator, jemalloc, bench_parse, GOMAXPROCS, foo_bar_hot",
        "Flame Graphs, Tail Latency, Amdahl's Law, Lock Contention, Memory Pooling, "
        "Load Testing, Benchmark Methodology, Cold Start Optimisation",
        "cpp",
        (
            "std::vector<Record> out;\nout.reserve(n);  // avoid rehashing in the hot path\n"
            "for (const auto& r : input) {{\n    if (r.valid()) out.push_back(r);\n}}",
        ),
    ),
    _t(
        "api", "API design",
        "endpoint, pagination cursor, versioning scheme, error envelope, rate limit, SDK, "
        "deprecation notice, webhook, schema, idempotency key, breaking change, OpenAPI spec",
        "version/versioned, deprecate/deprecated, paginate/paginated, document/documented, "
        "validate/validated, expose/exposed, sunset/sunset, generate/generated",
        "backwards-compatible, RESTful, paginated, breaking, public, internal, typed, idempotent",
        "GET /v1/orders, openapi.yaml, api-gateway, Idempotency-Key, sdk-python, x-rate-limit",
        "API Versioning, Cursor Pagination, Idempotency Keys, Error Envelopes, "
        "Deprecation Policy, Contract Testing, Webhook Delivery, Schema-First Design",
        "json",
        (
            "{{\n  \"error\": {{\n    \"code\": \"rate_limited\",\n    \"message\": \"retry after 30s\",\n"
            "    \"type\": \"{ident}\"\n  }}\n}}",
        ),
    ),
)

COMMON_NOUNS = (
    "team, plan, milestone, meeting, decision, customer, roadmap, quarter, estimate, risk, "
    "owner, deadline, budget, retro, stakeholder, backlog, priority, goal, experiment, ticket, "
    "sprint, handover, checklist, dependency, follow-up, summary, baseline, draft, note, question"
).split(", ")
COMMON_ADJS = (
    "important, unclear, urgent, small, large, recent, obvious, surprising, careful, rough, "
    "useful, expensive, simple, tricky, late, early, critical, minor, stable, new"
).split(", ")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
TIMEWORDS = ("this week", "last sprint", "next quarter", "by Friday", "before the freeze",
             "after the offsite", "in Q3", "yesterday", "this morning", "over the weekend")

FIRST_NAMES = (
    "Ada Alan Amara Anika Ben Bea Carlos Chen Chloe Dana Dmitri Elena Emeka Eva Farah Felix "
    "Grace Hana Hugo Ines Ivan Jamal Jana Joon Kai Kenji Lara Leo Lina Maya Mateo Mei Nadia "
    "Noah Olu Omar Pia Priya Quinn Rafael Rosa Sam Sara Tariq Tess Uma Victor Wen Yara Yusuf Zoe"
).split()
LAST_NAMES = (
    "Abara Alvarez Andersen Bakker Banerjee Brooks Castillo Chowdhury Costa Dubois Eriksen "
    "Fischer Fujita Garcia Haddad Hoffmann Ibrahim Ivanova Jensen Kaur Kim Kowalski Laine "
    "Lindqvist Mbeki Moreau Nakamura Nguyen Novak Okafor Olsen Park Patel Petrov Quispe Reyes "
    "Rossi Sato Schmidt Silva Singh Sokolov Tanaka Torres Varga Wagner Wong Yilmaz Zhang"
).split()
ROLES = ("staff engineer", "engineering manager", "product manager", "SRE", "designer",
         "data scientist", "security engineer", "tech lead", "recruiter", "support lead",
         "backend engineer", "frontend engineer", "principal engineer", "director of platform")
PROJECT_WORDS = ("atlas orion borealis kestrel nimbus quartz harbor lumen falcon sierra juniper "
                 "cobalt tundra meridian beacon cedar delta echo ember fjord granite helix iris "
                 "jasper keel lattice mosaic nova onyx prism quill ridge summit tide umbra vertex").split()
PROJECT_SUFFIX = ("migration", "rewrite", "v2", "rollout", "cleanup", "launch", "pilot", "platform",
                  "consolidation", "upgrade", "redesign", "audit")
AGENTS = ("claude", "codex", "gemini", "cursor", "local-llm")
CORE_FILES = (
    ("user", "User profile"), ("identity", "Agent identity"), ("soul", "Soul"), ("env", "Environment"),
    ("active", "Active context"), ("preferences", "Working preferences"), ("principles", "Principles"),
    ("tooling", "Tooling"), ("glossary-core", "Core glossary"), ("contacts", "Key contacts"),
)
SOURCE_KINDS = ("article", "paper", "talk", "book", "podcast", "thread")
REF_KINDS = ("Runbook", "Cheat sheet", "API reference", "Checklist", "Playbook", "How-to")
NOTE_KINDS = ("Thoughts on", "Meeting notes:", "Notes on", "Sketch:", "Questions about", "Reading notes:")
WIKI_KINDS = ("Overview", "Guide", "FAQ", "Handbook", "Primer")

MATH_INLINE = (
    r"$p_{99} < 250\,\mathrm{ms}$", r"$O(n \log n)$", r"$\lambda = 0.7$", r"$e^{-t/\tau}$",
    r"$\sum_i w_i = 1$", r"$k_1 = 1.2$", r"$\frac{1}{k + r}$", r"$\sqrt{n}$",
)
MATH_BLOCK = (
    r"\mathrm{RRF}(d) = \sum_{r \in R} \frac{1}{k + r(d)}",
    r"\text{availability} = 1 - \frac{\text{downtime}}{\text{period}}",
    r"\mathrm{cost} = \sum_{s} \mathrm{hours}_s \cdot \mathrm{rate}_s",
    r"\mathrm{idf}(t) = \ln\left(1 + \frac{N - n_t + 0.5}{n_t + 0.5}\right)",
)

# Sentence templates. Slots: {N} {N2} topic nouns, {C} common noun, {A} adjective,
# {V} verb base, {VD} verb past, {I} identifier (code span), {P} person name,
# {L} a link to another document, {X} number, {T} time phrase, {D} date, {M} inline math.
SENTENCES = (
    "We {VD} the {N} {T} and the {N2} looks {A} now.",
    "The {A} {N} is blocking the {C}, so {P} will {V} it first.",
    "{P} pointed out that the {N} and the {N2} share a {A} {C}.",
    "Before we {V} anything, the {N} needs a clear {C} and an owner.",
    "Our current {N} handles about {X} requests per second at peak.",
    "The {C} for {I} slipped because the {N} was more {A} than expected.",
    "See {L} for the background on this {N}.",
    "This overlaps with {L}, which covers the {N2} in more depth.",
    "If the {N} stays {A}, we should {V} the {N2} instead.",
    "Nobody has measured the {N} since {D}; the last number was {X}.",
    "{P} and {P2} disagree about whether to {V} the {N} {T}.",
    "The main {C} is that the {N} is {A} under load.",
    "As noted in {L}, the {N} was {VD} once already.",
    "We agreed to {V} the {N} behind a flag and revisit the {C} {T}.",
    "The {N2} depends on {I}, which makes the {N} harder to {V}.",
    "A {A} {N} is fine for now, but it will not survive the next {C}.",
    "The numbers suggest {M} is a reasonable target for the {N}.",
    "Open question: who owns the {N} once {I} is {VD}?",
    "I expect the {N} to be {A} until the {N2} is {VD}.",
    "{P} wrote a short {C} on the {N}; it is linked from {L}.",
    "The {C} review found {X} issues with the {N}, most of them {A}.",
    "We {VD} {I} on {D} and nothing {A} happened.",
    "Keep the {N} small: a {A} {N2} is easier to {V} later.",
    "The team would rather {V} the {N} than maintain two {N2}s.",
    "It is not obvious why the {N} got {A} after we {VD} the {N2}.",
    "Next step: {V} the {N} and write down what we learn in {L}.",
    "The {N} costs roughly {X} hours a week of toil.",
    "On {W} we walked through the {N} with {P}.",
    "{I} is still the source of truth for the {N}.",
    "There is a {A} risk that the {N2} will {V} the {N} by accident.",
    "The {N} improved by {PCT} after we {VD} {I}.",
    "Latency on the {N} went up {PCT} when the {N2} was {VD}.",
)
BULLETS = (
    "{V} the {N} and confirm with {P}",
    "check whether {I} still needs the {N2}",
    "the {N} is {A} on weekends",
    "{P} owns the {C}",
    "follow up on {L}",
    "measure the {N} before and after",
    "{A} {N}: {X} open items",
    "{N} throughput up {PCT} since {D}",
    "document the {N2} in {L}",
    "ask {P} about the {C} for {I}",
    "compare the {N} against the {A} {N2}",
)
TASKS = (
    "{V} the {N}", "write up the {C} for {P}", "review {L}", "update {I} config",
    "schedule {C} with {P}", "close out the {A} {N2}", "{V} {I} in staging",
)
QUOTES = (
    "The {N} is the product; everything else is a {C}.",
    "If you cannot {V} it, you do not own it.",
    "Prefer a {A} {N} you understand over a clever one you do not.",
)

# --------------------------------------------------------------------------- planning


@dataclass
class Doc:
    idx: int
    kind: str  # core, person, project, project-note, concept, decision, daily, session,
    #            source, reference, capture, wiki, note, index
    path: str
    title: str
    topic: int
    stem_unique: bool = True
    aliases: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    date: dt.date | None = None
    extra: dict = field(default_factory=dict)

    @property
    def stem(self) -> str:
        return posixpath.splitext(posixpath.basename(self.path))[0]

    @property
    def noext(self) -> str:
        return self.path[:-3]


def slugify(text: str) -> str:
    text = text.lower().replace("c++", "cpp").replace("&", "and")
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


# Share of documents per kind (the rest go to notes/).
_SHARES = (
    ("person", 0.08), ("project", 0.11), ("concept", 0.10), ("decision", 0.07),
    ("daily", 0.14), ("session", 0.08), ("source", 0.06), ("reference", 0.05),
    ("capture", 0.05), ("wiki", 0.05),
)

# Kind-specific section headings (first entries are the most typical).
HEADINGS = {
    "core": ("Summary", "Preferences", "Constraints", "Current focus", "Conventions", "Notes"),
    "person": ("Role", "Working style", "Current focus", "Notes from 1:1s", "Expertise", "History"),
    "project": ("Summary", "Current status", "Open questions", "Next steps", "Risks", "Timeline", "People"),
    "project-note": ("Context", "Findings", "Plan", "Risks", "Action items", "Notes"),
    "concept": ("Definition", "Why it matters", "How we use it", "Pitfalls", "Examples", "Related ideas"),
    "decision": ("Context", "Decision", "Consequences", "Alternatives considered", "Follow-ups"),
    "daily": ("Done", "Notes", "Meetings", "Blockers", "Tomorrow"),
    "session": ("Goal", "Transcript", "Outcome", "Follow-ups"),
    "source": ("Summary", "Key points", "Quotes", "Takeaways", "Critique"),
    "reference": ("Overview", "Commands", "Configuration", "Troubleshooting", "Checklist"),
    "capture": ("Raw notes", "Why it caught my eye", "To file"),
    "wiki": ("Overview", "Background", "Components", "Common questions", "History", "See also"),
    "note": ("Context", "Observations", "Ideas", "Open questions", "Details", "Next steps"),
    "index": ("Start here", "Areas", "Recent work"),
}
SUBHEADINGS = ("Details", "Example", "Numbers", "Caveats", "Background", "Options", "Notes",
               "Evidence", "Steps", "Status")


class _Namer:
    """Hands out globally unique stems and case-insensitively unique titles/aliases."""

    def __init__(self) -> None:
        self.stems: set[str] = set()
        self.names: set[str] = set()

    def stem(self, base: str) -> str:
        stem, i = base, 2
        while stem in self.stems:
            stem = f"{base}-{i}"
            i += 1
        self.stems.add(stem)
        return stem

    def title(self, base: str) -> str:
        title, i = base, 2
        while title.lower() in self.names or title.lower() in self.stems:
            title = f"{base} ({i})"
            i += 1
        self.names.add(title.lower())
        return title

    def alias(self, alias: str) -> bool:
        key = alias.lower()
        if key in self.names or key in self.stems:
            return False
        self.names.add(key)
        return True


def _counts(n: int) -> dict[str, int]:
    counts: dict[str, int] = {"index": 1 if n >= 1 else 0}
    counts["core"] = min(len(CORE_FILES), max(0, n // 200) or (3 if n >= 20 else 0))
    rest = n - counts["index"] - counts["core"]
    used = 0
    for kind, share in _SHARES:
        c = int(rest * share)
        counts[kind] = c
        used += c
    counts["note"] = rest - used
    return counts


def _plan(n: int, rng: random.Random) -> tuple[list[Doc], set[str]]:
    """Names, paths and headings of every document; also the set of taken names."""
    namer = _Namer()
    docs: list[Doc] = []
    counts = _counts(n)
    ntop = len(TOPICS)

    def add(kind: str, path: str, title: str, topic: int, **kw) -> Doc:
        d = Doc(len(docs), kind, path, title, topic, **kw)
        docs.append(d)
        return d

    if counts["index"]:
        namer.stems.add("index")
        add("index", "index.md", namer.title("Home"), 0)
    for stem, title in CORE_FILES[: counts["core"]]:
        namer.stems.add(stem)
        add("core", f"core/{stem}.md", namer.title(title), rng.randrange(ntop))

    # people
    for _ in range(counts["person"]):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        full = f"{first} {last}"
        stem = namer.stem(slugify(full))
        title = namer.title(full if stem == slugify(full) else f"{full} ({stem.rsplit('-', 1)[-1]})")
        d = add("person", f"people/{stem}.md", title, rng.randrange(ntop))
        for alias in (f"{first} {last[0]}.", f"@{first[0].lower()}{last.lower()}"):
            if rng.random() < 0.35 and namer.alias(alias):
                d.aliases.append(alias)
        d.extra["role"] = rng.choice(ROLES)

    # projects: state.md plus a few project notes per project
    nproj = counts["project"]
    nstates = max(1, nproj // 4) if nproj else 0
    projects: list[Doc] = []
    for _ in range(nstates):
        topic = rng.randrange(ntop)
        if rng.random() < 0.3:
            base = rng.choice(TOPICS[topic].idents)
            slug = slugify(base) if rng.random() < 0.5 else slugify(f"{rng.choice(PROJECT_WORDS)} {rng.choice(PROJECT_SUFFIX)}")
        else:
            slug = slugify(f"{rng.choice(PROJECT_WORDS)} {rng.choice(PROJECT_SUFFIX)}")
        slug = namer.stem(slug)  # reserve the slug as a name, state.md itself shares stem "state"
        title = namer.title(" ".join(w.capitalize() if w not in ("v2",) else w for w in slug.split("-")))
        d = add("project", f"projects/{slug}/state.md", title, topic, stem_unique=False)
        if rng.random() < 0.3 and namer.alias(slug.replace("-", " ") + " project"):
            d.aliases.append(slug.replace("-", " ") + " project")
        projects.append(d)
    for _ in range(nproj - nstates):
        p = rng.choice(projects)
        t = TOPICS[p.topic]
        what = rng.choice(("retro", "runbook", "kickoff", "design", "metrics", "risks", "plan",
                           "status-update", "notes", "rollout-plan", "test-plan", "budget"))
        stem = namer.stem(f"{p.path.split('/')[1]}-{what}")
        title = namer.title(f"{p.title}: {what.replace('-', ' ')} ({rng.choice(t.nouns)})")
        add("project-note", f"projects/{p.path.split('/')[1]}/{stem}.md", title, p.topic,
            extra={"project": p.idx})

    # concepts
    for _ in range(counts["concept"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        r = rng.random()
        if r < 0.45:
            base = rng.choice(t.concepts)
        elif r < 0.8:
            base = f"{rng.choice(t.adjs).capitalize()} {rng.choice(t.nouns).title()}"
        else:
            base = f"{rng.choice(t.concepts)} for {rng.choice(t.nouns).title()}s"
        stem = namer.stem(slugify(base))
        title = namer.title(base)
        d = add("concept", f"concepts/{stem}.md", title, topic)
        words = base.split()
        if len(words) >= 2 and rng.random() < 0.3:
            acr = "".join(w[0] for w in words if w[0].isalpha()).upper()
            if len(acr) >= 2 and namer.alias(acr):
                d.aliases.append(acr)

    # decisions
    for i in range(counts["decision"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        verb = rng.choice(t.verbs)[0]
        base = f"{verb.capitalize()} the {rng.choice(t.nouns)} {rng.choice(('with', 'via', 'before', 'for', 'without'))} {rng.choice(t.nouns + tuple(COMMON_NOUNS))}"
        stem = namer.stem(f"adr-{i + 1:04d}-{slugify(base)}"[:70].rstrip("-"))
        title = namer.title(f"ADR-{i + 1:04d}: {base}")
        add("decision", f"decisions/{stem}.md", title, topic)

    # daily logs: one per day going back from BASE_DATE, skipping some weekends
    day = BASE_DATE
    for _ in range(counts["daily"]):
        while day.weekday() >= 5 and rng.random() < 0.7:
            day -= dt.timedelta(days=1)
        iso = day.isoformat()
        namer.stems.add(iso)
        add("daily", f"logs/daily/{iso}.md", namer.title(f"Daily log {iso}"), rng.randrange(ntop), date=day)
        day -= dt.timedelta(days=1)

    # sessions
    for _ in range(counts["session"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        when = BASE_DATE - dt.timedelta(days=rng.randrange(720))
        agent = rng.choice(AGENTS)
        what = slugify(f"{rng.choice(t.verbs)[0]} {rng.choice(t.nouns)}")
        stem = namer.stem(f"{when.isoformat()}-{agent}-{what}")
        title = namer.title(f"Session {when.isoformat()}: {what.replace('-', ' ')} ({agent})")
        add("session", f"logs/sessions/{when:%Y}/{when:%m}/{stem}.md", title, topic, date=when,
            extra={"agent": agent})

    # sources, references, captures, wiki, notes
    for _ in range(counts["source"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        sk = rng.choice(SOURCE_KINDS)
        base = rng.choice((
            f"{rng.choice(t.concepts)} in Practice", f"Lessons from {_a(rng.choice(t.adjs))} {rng.choice(t.nouns)}",
            f"Scaling the {rng.choice(t.nouns)}", f"What We Learned About {rng.choice(t.concepts)}",
            f"A Field Guide to {rng.choice(t.nouns).title()}s"))
        stem = namer.stem(slugify(f"{sk} {base}")[:64].rstrip("-"))
        title = namer.title(f"{sk.capitalize()}: {base}")
        add("source", f"sources/{stem}.md", title, topic, extra={"source_kind": sk})
    for _ in range(counts["reference"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        rk = rng.choice(REF_KINDS)
        base = f"{rk}: {rng.choice(t.idents)} {rng.choice(t.nouns)}"
        stem = namer.stem(slugify(base)[:64].rstrip("-"))
        add("reference", f"references/{stem}.md", namer.title(base), topic)
    for _ in range(counts["capture"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        when = BASE_DATE - dt.timedelta(days=rng.randrange(60))
        base = f"{rng.choice(t.adjs)} {rng.choice(t.nouns)} idea"
        stem = namer.stem(f"{when.isoformat()}-{slugify(base)}")
        add("capture", f"inbox/{stem}.md", namer.title(f"Capture: {base}"), topic, date=when)
    for _ in range(counts["wiki"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        wk = rng.choice(WIKI_KINDS)
        base = rng.choice((f"{t.label} {wk}", f"{rng.choice(t.nouns).title()} {wk}",
                           f"{rng.choice(t.concepts)} {wk}"))
        stem = namer.stem(slugify(base))
        add("wiki", f"wiki/{stem}.md", namer.title(base), topic)
    for _ in range(counts["note"]):
        topic = rng.randrange(ntop)
        t = TOPICS[topic]
        nk = rng.choice(NOTE_KINDS)
        base = f"{nk} {rng.choice(t.adjs)} {rng.choice(t.nouns + tuple(COMMON_NOUNS))}"
        stem = namer.stem(slugify(base)[:64].rstrip("-"))
        sub = rng.choice(("", "", "", f"{t.key}/"))
        add("note", f"notes/{sub}{stem}.md", namer.title(base), topic)

    # headings of every document are fixed here so `[[stem#Heading]]` links can target them
    for d in docs:
        pool = list(HEADINGS[d.kind])
        k = min(len(pool), rng.randint(3, 4))
        if d.kind in ("daily", "session", "capture", "index"):
            chosen = pool[:k]
        else:
            chosen = [pool[0]] + rng.sample(pool[1:], k - 1)
        if rng.random() < 0.35:
            chosen.append(f"{rng.choice(TOPICS[d.topic].concepts)} notes")
        d.headings = chosen
    return docs, namer.names | namer.stems


# --------------------------------------------------------------------------- rendering

_LINK_WEIGHT = {
    "index": 3.0, "core": 2.0, "person": 3.0, "project": 4.0, "project-note": 1.2, "concept": 3.0,
    "decision": 2.0, "daily": 0.3, "session": 0.1, "source": 1.0, "reference": 1.5, "capture": 0.2,
    "wiki": 2.0, "note": 0.8,
}


class _Linker:
    """Chooses link targets with a skewed popularity (some pages attract many backlinks)."""

    def __init__(self, docs: list[Doc], taken: set[str]) -> None:
        self.docs = docs
        self.guard = taken  # broken targets must never hit a real stem, title or alias
        rank_in_kind: dict[str, int] = {}
        weights = []
        for d in docs:
            r = rank_in_kind.get(d.kind, 0)
            rank_in_kind[d.kind] = r + 1
            weights.append(_LINK_WEIGHT[d.kind] / (1 + r) ** 0.6)
        self.all = self._cum(range(len(docs)), weights)
        by_topic: dict[int, list[int]] = {}
        for d in docs:
            by_topic.setdefault(d.topic, []).append(d.idx)
        self.topic = {t: self._cum(ids, [weights[i] for i in ids]) for t, ids in by_topic.items()}
        self.people = [d.idx for d in docs if d.kind == "person"]
        self.project_notes: dict[int, list[Doc]] = {}
        for d in docs:
            if d.kind == "project-note":
                self.project_notes.setdefault(d.extra["project"], []).append(d)

    @staticmethod
    def _cum(ids, weights):
        ids = list(ids)
        cum, total = [], 0.0
        for w in weights:
            total += w
            cum.append(total)
        return ids, cum, total

    def pick(self, rng: random.Random, src: Doc) -> Doc:
        ids, cum, total = self.topic[src.topic] if rng.random() < 0.55 else self.all
        for _ in range(4):
            i = ids[min(bisect.bisect_left(cum, rng.random() * total), len(ids) - 1)]
            if i != src.idx:
                return self.docs[i]
        return self.docs[(src.idx + 1) % len(self.docs)]

    def link(self, rng: random.Random, src: Doc, target: Doc | None = None) -> str:
        if rng.random() < BROKEN_LINK_RATE:
            return self._broken(rng, src)
        t = target or self.pick(rng, src)
        if t.idx == src.idx:
            return f"[[#{t.headings[0]}]]"
        r = rng.random()
        if r < 0.15:  # ordinary markdown link, relative to the source
            rel = posixpath.relpath(t.path, posixpath.dirname(src.path) or ".")
            return f"[{t.title}]({rel})"
        if r < 0.40 and t.stem_unique:
            return f"[[{t.stem}]]"
        if r < 0.60:
            title = t.title if rng.random() < 0.85 else t.title.lower()
            return f"[[{title}]]"
        if r < 0.72 and t.aliases:
            return f"[[{rng.choice(t.aliases)}]]"
        if r < 0.85:
            label = rng.choice((t.title, t.title.split(":")[0], "this page", "here", t.stem.replace("-", " ")))
            return f"[[{t.noext}|{label}]]"
        heading = rng.choice(t.headings)
        base = t.stem if t.stem_unique else t.noext
        if rng.random() < 0.3:
            return f"[[{base}#{heading}|{t.title} ({heading.lower()})]]"
        return f"[[{base}#{heading}]]"

    def _broken(self, rng: random.Random, src: Doc) -> str:
        t = TOPICS[src.topic]
        for _ in range(10):
            noun = slugify(rng.choice(t.nouns))
            name = f"missing-{noun}-{rng.randrange(10000):04d}"
            if name not in self.guard and f"draft {name.replace('-', ' ')}" not in self.guard:
                break
        r = rng.random()
        if r < 0.5:
            return f"[[{name}]]"
        if r < 0.8:
            return f"[[Draft {name.replace('-', ' ').title()}]]"
        return f"[{name}](../missing/{name}.md)"


_SLOT = re.compile(r"\{(\w+)\}")
_VOWELS = frozenset("aeiouAEIOU")


def _a(word: str) -> str:
    return ("an " if word[:1] in _VOWELS else "a ") + word


def _compile(templates):
    out = []
    for tpl in templates:
        parts = _SLOT.split(tpl)  # literal, slot, literal, slot, ...
        out.append(tuple(parts))
    return tuple(out)


_C_SENTENCES = _compile(SENTENCES)
_C_BULLETS = _compile(BULLETS)
_C_TASKS = _compile(TASKS)
_C_QUOTES = _compile(QUOTES)


class _Writer:
    """Renders one document's body with its own RNG."""

    def __init__(self, doc: Doc, docs: list[Doc], linker: _Linker, rng: random.Random) -> None:
        self.d = doc
        self.docs = docs
        self.linker = linker
        self.rng = rng
        self.t = TOPICS[doc.topic]
        # a second topic adds vocabulary variety inside one document
        self.t2 = TOPICS[rng.randrange(len(TOPICS))]
        self.words = 0
        self.links = 0

    def person(self) -> str:
        d = self.linker.people and self.docs[self.rng.choice(self.linker.people)]
        rng = self.rng
        if d and rng.random() < 0.25 and d.idx != self.d.idx:
            return self.linker.link(rng, self.d, d)
        if d and rng.random() < 0.6:
            return d.title.split(" (")[0]
        return f"{rng.choice(FIRST_NAMES)}"

    def slot(self, name: str) -> str:
        rng = self.rng
        t = self.t if rng.random() < 0.8 else self.t2
        if name == "N" or name == "N2":
            return rng.choice(t.nouns)
        if name == "C":
            return rng.choice(COMMON_NOUNS)
        if name == "A":
            return rng.choice(t.adjs) if rng.random() < 0.6 else rng.choice(COMMON_ADJS)
        if name == "V":
            return rng.choice(t.verbs)[0]
        if name == "VD":
            return rng.choice(t.verbs)[1]
        if name == "I":
            ident = rng.choice(t.idents)
            return ident if ident.endswith("++") or rng.random() < 0.2 else f"`{ident}`"
        if name in ("P", "P2"):
            return self.person()
        if name == "L":
            self.links += 1
            return self.linker.link(rng, self.d)
        if name == "X":
            return str(rng.randint(2, 99)) if rng.random() < 0.6 else str(rng.randint(100, 9999))
        if name == "PCT":
            return rng.choice((f"{rng.randint(1, 99)}%", f"{rng.randint(1, 20)}.{rng.randint(0, 9)}x"))
        if name == "T":
            return rng.choice(TIMEWORDS)
        if name == "D":
            return (BASE_DATE - dt.timedelta(days=rng.randrange(900))).isoformat()
        if name == "M":
            return rng.choice(MATH_INLINE)
        if name == "W":
            return rng.choice(WEEKDAYS)
        return name

    def fill(self, parts: tuple[str, ...]) -> str:
        out: list[str] = []
        for i, p in enumerate(parts):
            if i % 2:
                v = self.slot(p)
                # "a accessible" -> "an accessible" (only at a literal/slot boundary,
                # never inside a generated link or title)
                if v[:1] in _VOWELS and out and (out[-1].endswith(" a ") or out[-1] in ("a ", "A ")):
                    out[-1] = out[-1][:-1] + "n "
                out.append(v)
            else:
                out.append(p)
        s = "".join(out)
        return s[0].upper() + s[1:] if s and s[0].islower() else s

    def paragraph(self, lo: int = 3, hi: int = 6) -> str:
        rng = self.rng
        sents = [self.fill(rng.choice(_C_SENTENCES)) for _ in range(rng.randint(lo, hi))]
        text = " ".join(sents)
        self.words += text.count(" ") + 1
        return text

    def bullets(self) -> str:
        rng = self.rng
        items = [f"- {self.fill(rng.choice(_C_BULLETS))}" for _ in range(rng.randint(3, 6))]
        if rng.random() < 0.3:
            items.insert(rng.randint(1, len(items)), f"  - {self.fill(rng.choice(_C_BULLETS))}")
        text = "\n".join(items)
        self.words += text.count(" ")
        return text

    def numbered(self) -> str:
        rng = self.rng
        items = [f"{i}. {self.fill(rng.choice(_C_BULLETS))}" for i in range(1, rng.randint(3, 5) + 1)]
        text = "\n".join(items)
        self.words += text.count(" ")
        return text

    def tasks(self) -> str:
        rng = self.rng
        items = [f"- [{'x' if rng.random() < 0.4 else ' '}] {self.fill(rng.choice(_C_TASKS))}"
                 for _ in range(rng.randint(2, 5))]
        text = "\n".join(items)
        self.words += text.count(" ")
        return text

    def code(self) -> str:
        rng = self.rng
        t = self.t
        tpl = rng.choice(t.code)
        body = tpl.format(ident=slugify(rng.choice(t.idents)).replace("-", "_"),
                          ident2=slugify(rng.choice(t.idents)).replace("-", "_"),
                          num=rng.randint(100, 999),
                          date=(BASE_DATE - dt.timedelta(days=rng.randrange(365))).isoformat())
        self.words += body.count(" ") // 2
        return f"```{t.lang}\n{body}\n```"

    def table(self) -> str:
        rng = self.rng
        t = self.t
        cols = rng.choice((("Item", "Owner", "Status"), ("Metric", "Before", "After"),
                           ("Option", "Cost", "Risk"), ("Service", "p50", "p99")))
        rows = [f"| {' | '.join(cols)} |", "|" + "---|" * len(cols)]
        for _ in range(rng.randint(2, 5)):
            if cols[0] == "Item":
                cells = (rng.choice(t.nouns), self.person(), rng.choice(("done", "in progress", "blocked", "todo")))
            elif cols[0] == "Metric":
                a = rng.randint(10, 900)
                cells = (rng.choice(t.nouns) + " latency", f"{a} ms", f"{max(1, a - rng.randint(-50, a // 2))} ms")
            elif cols[0] == "Option":
                cells = (f"{rng.choice(t.verbs)[0]} the {rng.choice(t.nouns)}", rng.choice(("low", "medium", "high")),
                         rng.choice(("low", "medium", "high")))
            else:
                a = rng.randint(5, 80)
                cells = (f"`{rng.choice(t.idents)}`", f"{a} ms", f"{a * rng.randint(3, 12)} ms")
            rows.append(f"| {' | '.join(cells)} |")
        text = "\n".join(rows)
        self.words += text.count(" ") // 3
        return text

    def blocks_for_section(self, budget: int) -> list[str]:
        rng = self.rng
        start = self.words
        blocks = [self.paragraph(2, 5)]
        while self.words - start < budget:
            r = rng.random()
            if r < 0.12:
                blocks.append(self.bullets())
            elif r < 0.18:
                blocks.append(self.tasks())
            elif r < 0.22:
                blocks.append(self.numbered())
            elif r < 0.27:
                blocks.append(self.code())
            elif r < 0.31:
                blocks.append(self.table())
            elif r < 0.32:
                blocks.append(f"$$\n{rng.choice(MATH_BLOCK)}\n$$")
            elif r < 0.34:
                blocks.append("> " + self.fill(rng.choice(_C_QUOTES)))
            else:
                blocks.append(self.paragraph())
        return blocks

    # --- kind-specific openers -------------------------------------------------------

    def session_transcript(self) -> list[str]:
        rng = self.rng
        agent = self.d.extra.get("agent", "assistant")
        turns = []
        for _ in range(rng.randint(4, 8)):
            who = "user" if len(turns) % 2 == 0 else agent
            turns.append(f"**{who}:** {self.paragraph(1, 3)}")
        return turns

    def body(self) -> str:
        rng = self.rng
        d = self.d
        out: list[str] = []
        if rng.random() < 0.2:
            out.append(f"# {d.title}")
        out.append(self.paragraph(2, 4))
        target = rng.randint(350, 850)
        nsec = len(d.headings)
        per = max(40, (target - self.words) // nsec - 30)
        for hi, heading in enumerate(d.headings):
            out.append(f"## {heading}")
            if d.kind == "session" and heading == "Transcript":
                out.extend(self.session_transcript())
                continue
            if d.kind == "daily" and heading in ("Done", "Tomorrow"):
                out.append(self.tasks() if heading == "Tomorrow" else self.bullets())
                continue
            if heading in ("Related ideas", "See also", "People", "Follow-ups") or (
                hi == nsec - 1 and rng.random() < 0.3
            ):
                items = [f"- {self.linker.link(rng, d)}" for _ in range(rng.randint(2, 5))]
                self.links += len(items)
                out.append("\n".join(items))
                continue
            blocks = self.blocks_for_section(per)
            if len(blocks) > 2 and rng.random() < 0.35:
                cut = rng.randint(1, len(blocks) - 1)
                blocks.insert(cut, f"### {rng.choice(SUBHEADINGS)}")
            out.extend(blocks)
        if d.kind == "project" and rng.random() < 0.7:
            notes = self.linker.project_notes.get(d.idx, [])[:8]
            if notes:
                out.append("## Project notes")
                out.append("\n".join(f"- {self.linker.link(rng, d, x)}" for x in notes))
        if self.links == 0 and len(self.docs) > 1:
            out.append(f"Related: {self.linker.link(rng, d)}.")
        return "\n\n".join(out) + "\n"


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def _frontmatter(d: Doc, rng: random.Random, docs: list[Doc]) -> str:
    t = TOPICS[d.topic]
    lines = ["---", f"title: {_q(d.title)}"]
    if d.kind == "note" and rng.random() < 0.02:
        lines.append(f"type: {rng.choice(('concept', 'reference', 'wiki'))}")
    elif d.kind == "capture" and rng.random() < 0.02:
        lines.append("type: note")
    tags = [t.key]
    if rng.random() < 0.5:
        tags.append(slugify(rng.choice(t.nouns)))
    if rng.random() < 0.2:
        tags.append(f"area/{t.key}")
    if rng.random() < 0.2:
        tags.append(rng.choice(("todo", "review", "q3", "important", "draft", "c++")))
    if len(tags) > 2 and rng.random() < 0.3:
        lines.append("tags: [" + ", ".join(_q(x) for x in tags) + "]")
    else:
        lines.append("tags:")
        lines.extend(f"  - {_q(x)}" for x in tags)
    if d.date is not None:
        created = d.date
    else:
        created = BASE_DATE - dt.timedelta(days=rng.randrange(1000))
    updated = min(BASE_DATE, created + dt.timedelta(days=rng.randrange(120)))
    lines.append(f"created: {created.isoformat()}")
    lines.append(f"updated: {updated.isoformat()}")
    if d.kind in ("daily", "session"):
        lines.append(f"date: {created.isoformat()}")
    status = {
        "project": lambda: rng.choice(("active", "active", "active", "paused", "done")),
        "decision": lambda: "superseded" if rng.random() < 0.1 else rng.choice(("active", "done")),
        "capture": lambda: rng.choice(("raw", "raw", "pending")),
        "session": lambda: "done",
        "daily": lambda: "done",
    }.get(d.kind, lambda: rng.choice(("active", "active", "active", "done", "paused", "pending")))()
    lines.append(f"status: {status}")
    if d.aliases:
        lines.append("aliases: [" + ", ".join(_q(a) for a in d.aliases) + "]")
    if d.kind in ("person", "project", "core") and rng.random() < 0.5:
        lines.append("canonical: true")
    if d.kind == "person":
        lines.append(f"role: {_q(d.extra['role'])}")
    if d.kind == "decision":
        if status == "superseded":
            later = [x for x in docs[d.idx + 1 : d.idx + 40] if x.kind == "decision"]
            if later:
                lines.append(f"superseded_by: {_q(rng.choice(later).noext)}")
        if rng.random() < 0.1:
            lines.append("pinned: true")
        if rng.random() < 0.3:
            lines.append("reviewers: [" + ", ".join(_q(rng.choice(FIRST_NAMES)) for _ in range(2)) + "]")
    if d.kind == "core" and rng.random() < 0.5:
        lines.append("pinned: true")
    if d.kind == "source":
        lines.append(f"source_kind: {d.extra['source_kind']}")
        lines.append(f"url: {_q('https://example.com/' + d.stem)}")
    if d.kind == "session":
        lines.append(f"agent: {d.extra['agent']}")
    if rng.random() < 0.1:
        lines.append(f"confidence: {rng.choice(('high', 'medium', 'low'))}")
    if rng.random() < 0.08:
        lines.append(f"visibility: {rng.choice(('private', 'internal', 'public'))}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _doc_rng(seed: int, idx: int) -> random.Random:
    return random.Random(seed * 1_000_003 + idx * 7919 + 17)


def render(docs: list[Doc], taken: set[str], seed: int) -> dict[str, str]:
    linker = _Linker(docs, taken)
    out: dict[str, str] = {}
    for d in docs:
        rng = _doc_rng(seed, d.idx)
        fm = _frontmatter(d, rng, docs)
        out[d.path] = fm + "\n" + _Writer(d, docs, linker, rng).body()
    return out


def generate(root: Path, n: int, seed: int = 0) -> list[str]:
    """Write `n` documents under `root`; return their corpus-relative paths, sorted."""
    if n < 0:
        raise ValueError("n must be >= 0")
    root = Path(root)
    docs, taken = _plan(n, random.Random(seed))
    files = render(docs, taken, seed)
    made: set[Path] = set()
    for rel in sorted(files):
        p = root / rel
        if p.parent not in made:
            p.parent.mkdir(parents=True, exist_ok=True)
            made.add(p.parent)
        with open(p, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(files[rel])
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="corpus_gen", description="Generate a synthetic commonplace corpus.")
    ap.add_argument("out", type=Path, help="output directory (created)")
    ap.add_argument("--n", type=int, default=10_000, help="number of documents (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--force", action="store_true", help="delete OUT first if it exists")
    args = ap.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        if not args.force:
            print(f"error: {args.out} exists and is not empty (use --force to replace it)", file=sys.stderr)
            return 2
        shutil.rmtree(args.out)
    t0 = time.perf_counter()
    paths = generate(args.out, args.n, args.seed)
    secs = time.perf_counter() - t0
    size = sum((args.out / p).stat().st_size for p in paths)
    print(f"wrote {len(paths)} documents ({size / 1e6:.1f} MB) to {args.out} in {secs:.2f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
