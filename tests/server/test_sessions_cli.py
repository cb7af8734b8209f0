"""The sessions commands of the console script (issue 31): digest, proposals
create/list/show/apply/reject, compact, `search --originals`, uncompact and `get --uncompact`, run here (then
an incremental build) and, for one of them, sent to a running server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dorylive import Server
from srvkit import CORPUS, write_files

CLI = [sys.executable, "-c", "from commonplace.server.cli import main; main()"]
OLD = "logs/sessions/coder/2025-03-01-a.md"
NEW = "logs/sessions/coder/2026-11-25-b.md"
TEXT = ("---\ntitle: coder session a\ntype: session\ncreated: '{day}'\n---\n\n"
        "user: We decided to keep the heron index in SQLite.\n\n"
        "assistant: Alex owns the heron index and reviews it on {day}.\n\nuser: Ok, pangolins.\n")


def cp(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, COMMONPLACE_ACTOR="cli-test", HF_HUB_OFFLINE="1")
    env.pop("COMMONPLACE_TOKEN", None)
    r = subprocess.run([*CLI, *args, "-C", str(root)], capture_output=True, text=True, timeout=300, env=env,
                       cwd=root.parent)
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    return r


def test_sessions_commands_here_and_through_a_server(tmp_path: Path) -> None:
    root = write_files(tmp_path / "corpus", {**CORPUS, OLD: TEXT.format(day="2025-03-01"),
                                             NEW: TEXT.format(day="2026-11-25")})
    original = (root / OLD).read_bytes()
    out = ["--out", str(tmp_path / "site"), "--no-embed"]
    r = cp(root, "digest", "--session", NEW, *out)
    assert r.stdout.startswith("logs/digests/sessions/coder/2026-11-25-b.md: created") and "2 proposal(s)" in r.stdout
    assert (tmp_path / "site" / "logs/digests/sessions/coder/2026-11-25-b/index.html").is_file()  # built
    page = (root / "logs/digests/sessions/coder/2026-11-25-b.md").read_text("utf-8")
    assert cp(root, "digest", "--session", NEW, "--print", "--no-propose", "--no-build").stdout == page

    listed = json.loads(cp(root, "proposals", "list", "--json", "--no-build").stdout)
    ids = {p["kind"]: p["id"] for p in listed["proposals"]}
    assert set(ids) == {"decision", "fact"}
    shown = cp(root, "proposals", "show", ids["fact"], "--no-build").stdout
    assert "planned: people/alex.md (person:alex)" in shown
    r = cp(root, "proposals", "apply", ids["fact"], *out)
    assert "written -> people/alex.md" in r.stdout
    assert "reviews it on 2026-11-25" in (root / "people/alex.md").read_text("utf-8")
    assert "rejected" in cp(root, "proposals", "reject", ids["decision"], "--reason", "not yet", *out).stdout
    r = cp(root, "proposals", "create", "Sam", "Sam prefers pairing on Fridays.", "--kind", "preference", *out)
    pid = r.stdout.split(":")[0]
    assert "people/sam.md (person:sam)" in r.stdout
    assert cp(root, "proposals", "apply", "p-000000000000", "--no-build", ok=False).stderr.strip().endswith(
        "no proposal p-000000000000")

    r = cp(root, "compact", "--older-than", "30", *out)
    assert r.stdout.startswith("compacted 2 transcript(s); 1 recent kept") and OLD in r.stdout  # CORPUS has one too
    assert (root / OLD).read_bytes() != original
    got = subprocess.run([*CLI, "get", OLD, "--uncompact", "-C", str(root)], capture_output=True, timeout=120)
    assert got.returncode == 0 and got.stdout == original
    found = json.loads(cp(root, "search", "pangolins", "--corpus-kind", "sessions", "--originals", "--json").stdout)
    # NEW is not compacted (the index has its words); OLD is found in its original
    assert sorted((h["path"], h.get("in_original")) for h in found["results"]) == [(OLD, True), (NEW, None)]
    assert OLD not in cp(root, "search", "pangolins", "--corpus-kind", "sessions").stdout  # not in the gist
    assert "(in the original" in cp(root, "search", "pangolins", "--corpus-kind", "sessions", "--originals").stdout
    assert "restored" in cp(root, "uncompact", OLD, *out).stdout
    assert (root / OLD).read_bytes() == original

    # Erasing a claim from the command line: the text leaves every file.
    r = cp(root, "claim", "add", "person:alex", "Alex stores the ocelot cipher in the attic", "-C", str(root))
    cid = next(w for w in r.stdout.replace("`", " ").split() if w.startswith("c_"))
    cp(root, "build", str(root), *out[:2], "--no-embed")
    assert "would go" in cp(root, "purge", f"claim:{cid}", "--no-build").stdout
    r = cp(root, "purge", f"claim:{cid}", "--yes", "--reason", "asked", "--allow-canonical", *out)
    assert "erased (1 claim(s))" in r.stdout
    for base in (root, tmp_path / "site"):
        assert not [p for p in base.rglob("*") if p.is_file() and b"ocelot" in p.read_bytes()]

    # With a server running for the corpus, the command goes to it (and needs its token).
    from commonplace.server.tokens import TokenStore

    token = TokenStore(root).create("cli")
    server = Server(root, tmp_path / "site").start()
    try:
        env = dict(os.environ, COMMONPLACE_TOKEN=token)
        r = subprocess.run([*CLI, "proposals", "list", "--json", "-C", str(root)], capture_output=True, text=True,
                           timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        assert [p["id"] for p in json.loads(r.stdout)["proposals"]] == [pid]
        r = subprocess.run([*CLI, "proposals", "apply", pid, "-C", str(root)], capture_output=True, text=True,
                           timeout=120, env=env)
        assert r.returncode == 0 and "written -> people/sam.md" in r.stdout, r.stderr
        found = server.request("POST", "/v1/search", {"query": "pairing on Fridays", "mode": "bm25"}, token=token)
        assert "people/sam.md" in [h["path"] for h in found.json()["results"]]
    finally:
        server.stop()


def test_serve_compacts_on_a_schedule(tmp_path: Path) -> None:
    import time

    root = write_files(tmp_path / "corpus", {**CORPUS, OLD: TEXT.format(day="2025-03-01"),
                                             NEW: TEXT.format(day="2026-11-25")})
    original = (root / OLD).read_bytes()
    server = Server(root, tmp_path / "site", "--compact-after", "30", "--no-auth",
                    env={"COMMONPLACE_COMPACT_INTERVAL": "0.5"}).start()
    try:
        deadline = time.time() + 60
        while b"commonplace:compacted" not in (root / OLD).read_bytes() and time.time() < deadline:
            time.sleep(0.2)
        assert b"commonplace:compacted" in (root / OLD).read_bytes()
        assert b"commonplace:compacted" not in (root / NEW).read_bytes()  # the recent third stays
        r = server.request("GET", f"/v1/get?path={OLD}&uncompact=true")
        assert r.status == 200 and r.json()["content"].encode() == original
    finally:
        server.stop()


def test_apply_on_the_command_line_refuses_a_changed_route(tmp_path: Path) -> None:
    """A proposal planned for one person is not applied once its subject names another:
    the command says so, exits non-zero, and the proposal waits, nothing written."""
    root = write_files(tmp_path / "corpus", dict(CORPUS))
    r = cp(root, "proposals", "create", "AK", "AK prefers morning standups.", "--kind", "fact", "--no-build")
    pid = r.stdout.split(":")[0]
    assert "people/alex.md (person:alex)" in r.stdout
    # The alias moves from Alex to Sam (an edit on disk, as a person would make it).
    for rel, old, new in (("people/alex.md", "aliases: [Alex, AK]", "aliases: [Alex]"),
                          ("people/sam.md", "canonical: true", "canonical: true\naliases: [AK]")):
        (root / rel).write_text((root / rel).read_text("utf-8").replace(old, new), "utf-8")
    r = cp(root, "proposals", "apply", pid, "--no-build", ok=False)
    assert "no longer routes" in r.stderr and "now person:sam at people/sam.md" in r.stderr, r.stderr
    assert (root / f"inbox/proposed/{pid}.md").is_file()
    assert "morning standups" not in (root / "people/sam.md").read_text("utf-8")
    assert "morning standups" not in (root / "people/alex.md").read_text("utf-8")
