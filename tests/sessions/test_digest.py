"""Digests: turns with their lines, the four kinds of item, same input -> same bytes, and
the optional LLM stage (a real HTTP endpoint on 127.0.0.1) with its fallbacks."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from commonplace.compiler.sessions import digest as dg
from commonplace.compiler.sessions.llm import LLMConfig, rewrite
from commonplace.compiler.sessions.transcript import turns

SESSION = """---
title: coder session s1
type: session
created: '2026-04-12'
---

user: We decided to use SQLite for the Atlas cache.

assistant: Noted. Alex owns the Atlas migration and ships it on Friday.
It replaces the legacy queue.

user: What retention policy should old invoices follow after the migration?

assistant: I'll draft the invoice retention policy by Monday.
"""
PATH = "logs/sessions/coder/2026-04-12-s1.md"


def test_turns_keep_speakers_and_line_ranges() -> None:
    ts = turns(SESSION)
    assert [(t.speaker, t.start, t.end) for t in ts] == [("user", 7, 7), ("assistant", 9, 10), ("user", 12, 12),
                                                          ("assistant", 14, 14)]
    assert ts[1].text == "Noted. Alex owns the Atlas migration and ships it on Friday. It replaces the legacy queue."
    lines = SESSION.split("\n")
    assert "Alex owns" in lines[ts[1].start - 1]  # 1-based, counting the frontmatter


def test_headings_and_plain_paragraphs_are_turns_too() -> None:
    assert [(t.speaker, t.text) for t in turns("## User\nShip it Friday.\n\n## Assistant\nDone.\n")] == \
        [("User", "Ship it Friday."), ("Assistant", "Done.")]
    assert [(t.speaker, t.start) for t in turns("First paragraph here.\n\nSecond one\ncontinues.\n")] == \
        [(None, 1), (None, 3)]


def test_a_digest_sorts_items_and_names_their_source_lines() -> None:
    d = dg.build(dg.digest_path(PATH), "Digest", [(PATH, SESSION.encode())], "2026-04-12", budget_ratio=2.0)
    by = {i.section: i for i in d.items}
    assert by["decision"].text == "We decided to use SQLite for the Atlas cache." and by["decision"].start == 7
    assert by["fact"].source == f"{PATH}:9-10" and "Alex owns the Atlas migration" in by["fact"].text
    assert by["question"].text.startswith("What retention policy")
    assert by["followup"].text == "I'll draft the invoice retention policy by Monday."
    text = d.text()
    assert "## Decisions" in text and "## Facts" in text and "## Open questions" in text and "## Follow-ups" in text
    assert "(L9-10)" in text and f"Session: `{PATH}`" in text and "# Digest" not in text
    assert d.target == "logs/digests/sessions/coder/2026-04-12-s1.md"


def test_same_input_same_bytes() -> None:
    a = dg.build("logs/digests/daily/2026-04-12.md", "Digest of 2026-04-12", [(PATH, SESSION.encode())], "2026-04-12")
    b = dg.build("logs/digests/daily/2026-04-12.md", "Digest of 2026-04-12", [(PATH, SESSION.encode())], "2026-04-12")
    assert a.text().encode() == b.text().encode()
    assert "created: '2026-04-12'" in a.text()  # the session's day, never today's


def test_small_talk_is_left_out() -> None:
    chat = "a: Haha, that sounds like a lot of fun!\nb: Thanks for asking! Things have been pretty busy lately.\n"
    assert dg.build("x.md", "x", [("logs/sessions/x.md", chat.encode())], None).items == []


# --------------------------------------------------------------------------- the LLM stage


class _Endpoint:
    """An OpenAI-compatible chat completions endpoint on 127.0.0.1 answering `reply`."""

    def __init__(self, reply: Any, delay: float = 0.0) -> None:
        outer = self
        self.seen: list[dict] = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                time.sleep(delay)
                if reply is None:
                    self.send_response(500)
                    self.end_headers()
                    return
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the slow-endpoint test's client gave up waiting, as it should

            def log_message(self, *a: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _sections() -> str:
    return dg.build("x.md", "x", [(PATH, SESSION.encode())], None, budget_ratio=2.0).sections_markdown()


def test_llm_config_comes_from_the_environment() -> None:
    assert LLMConfig.from_env({}) is None
    assert LLMConfig.from_env({"COMMONPLACE_DIGEST_LLM_URL": "http://h/v1"}) is None  # no model: off
    cfg = LLMConfig.from_env({"COMMONPLACE_DIGEST_LLM_URL": "http://h/v1/", "COMMONPLACE_DIGEST_LLM_MODEL": "m",
                              "COMMONPLACE_DIGEST_LLM_KEY": "k", "COMMONPLACE_DIGEST_LLM_TIMEOUT": "3"})
    assert cfg == LLMConfig("http://h/v1", "m", "k", 3.0)


def test_llm_rewrite_is_used_when_it_keeps_every_reference() -> None:
    sections = _sections()
    good = "## Decisions\n\n- SQLite caches Atlas. (L7)\n\n## Facts\n\n- Alex owns the migration. (L9-10)\n\n" \
           "## Open questions\n\n- Invoice retention? (L12)\n\n## Follow-ups\n\n- Draft the policy by Monday. (L14)\n"
    ep = _Endpoint(good)
    try:
        out = rewrite(sections, LLMConfig(ep.url, "tiny", "secret", 5))
    finally:
        ep.close()
    assert out == good
    assert ep.seen[0]["path"] == "/v1/chat/completions" and ep.seen[0]["auth"] == "Bearer secret"
    assert ep.seen[0]["body"]["model"] == "tiny" and sections in ep.seen[0]["body"]["messages"][1]["content"]


@pytest.mark.parametrize("reply,delay", [(None, 0.0), ("## Facts\n\n- Alex owns it.\n", 0.0), ("late", 3.0)])
def test_llm_failure_a_lost_reference_or_a_timeout_falls_back(reply: Any, delay: float) -> None:
    ep = _Endpoint(reply, delay)
    try:
        assert rewrite(_sections(), LLMConfig(ep.url, "tiny", None, 1.0)) is None
    finally:
        ep.close()
    assert rewrite(_sections(), LLMConfig("http://127.0.0.1:9/v1", "tiny", None, 1.0)) is None  # nothing listening


# --------------------------------------------------------------------------- page budget and coding transcripts

CODING = """---
title: fix the exporter
type: session
---

user: The exporter tests fail on main.

assistant: Running them.
```
FAILED tests/test_exporter.py::test_rows
AssertionError: expected 3 rows, got 0
```

assistant: Traceback (most recent call last):
  File "src/exporter/store.py", line 88, in run
KeyError: 'tenant_id'

assistant: I found it. The exporter failure comes from the cache key ignoring the tenant id in `src/exporter/store.py`.

user: We decided to key the exporter cache by tenant and day.
"""


def test_tool_output_is_part_of_its_turn_and_never_an_item() -> None:
    ts = turns(CODING)
    assert [t.speaker for t in ts] == ["user", "assistant", "assistant", "assistant", "user"]  # no "AssertionError"
    assert "AssertionError" in ts[1].text and ts[1].prose == "Running them."  # searchable, not digested
    assert (ts[1].start, ts[1].end) == (8, 12)
    d = dg.build("x.md", "x", [("logs/sessions/c.md", CODING.encode())], None, budget_ratio=2.0)
    text = d.sections_markdown()
    assert "cache key ignoring the tenant id" in text and "We decided to key the exporter cache" in text
    assert "AssertionError" not in text and "KeyError" not in text and "Traceback" not in text


def test_the_whole_page_fits_a_quarter_of_the_session() -> None:
    from tests.benchmarks.quality.coding_sessions import session

    for i in range(8):
        text, _ = session(7, i, 20)
        d = dg.build("x.md", "Digest", [(f"logs/sessions/s{i}.md", text.encode())], None)
        assert d.items and dg.estimate_tokens(d.body()) <= 0.25 * d.session_tokens


def test_a_statement_is_proposed_to_the_entity_it_is_about() -> None:
    import re

    names = [(re.compile(r"\b" + n + r"\b"), eid) for n, eid in
             (("Mira", "person:mira"), ("Sam", "person:sam"), ("Alex", "person:alex"),
              ("Ledgerline", "project:ledgerline"), ("Atlas", "project:atlas"))]
    for text, want in [
        ("Mira says Ledgerline's reconciliation job now runs at 03:30 UTC.", "project:ledgerline"),
        ("Thanks Mira, the Ledgerline reconciliation job now runs at 03:30 UTC.", "project:ledgerline"),
        ("Mira: Ledgerline's cutover moved to March.", "project:ledgerline"),
        ("I told Mira that Atlas ships on Friday.", "project:atlas"),
        ("Alex owns the Atlas migration and ships it on Friday.", "person:alex"),
        ("Alex, Sam and I reviewed the Atlas plan.", "person:alex"),
        ("Mira is moving to the Porto office in January.", "person:mira"),
        ("Mira says she is moving to Porto.", "person:mira"),
        ("Nobody known is named here.", None),
    ]:
        assert dg.subject_of(text, names) == want, text
