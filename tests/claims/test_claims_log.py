"""The append-only event log: layout, atomic appends under concurrency, tolerant reading."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from commonplace.compiler.claims.log import ClaimLog, actor_file_stem, encode_event, log_relpath
from commonplace.compiler.claims import times

UTC = dt.timezone.utc
AT = "2026-03-01T09:00:00.000000Z"


def event(i: int, actor: str = "agent", writer: str = "w", size: int = 0, at: str = AT) -> dict:
    return {
        "id": f"e_{writer}_{i}", "claim_id": f"c_{writer}_{i}", "entity": "person:alex", "kind": "fact",
        "statement": f"{writer}:{i}:" + "x" * size, "event": "added", "valid_from": None, "valid_to": None,
        "confidence": None, "evidence": None, "reason": None, "actor": actor, "at": at,
    }


def test_one_file_per_actor_per_utc_day(tmp_path: Path):
    log = ClaimLog(tmp_path, fsync=False)
    log.append(event(1, actor="alex"))
    log.append(event(2, actor="agent-7"))
    log.append(event(3, actor="alex", at="2026-03-02T00:00:00Z"))
    files = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "claims").rglob("*.jsonl"))
    assert files == ["claims/2026/03/01/agent-7.jsonl", "claims/2026/03/01/alex.jsonl", "claims/2026/03/02/alex.jsonl"]
    # A timestamp with an offset lands on its UTC day.
    assert log_relpath(times.parse_at("2026-03-01T23:30:00-05:00"), "x") == "claims/2026/03/02/x.jsonl"


def test_two_actors_same_day_write_separate_files(store, make_store, corpus):
    make_store("alex").add("alex", "Alex likes tea")
    make_store("agent-7").add("alex", "Alex likes coffee")
    files = sorted(p.name for p in (corpus / "claims").rglob("*.jsonl"))
    assert files == ["agent-7.jsonl", "alex.jsonl"]
    for f in (corpus / "claims").rglob("*.jsonl"):
        lines = f.read_text().splitlines()
        assert len(lines) == 1 and json.loads(lines[0])["actor"] == f.stem


@pytest.mark.parametrize("actor", ["../x", "../../etc/passwd", "", "   ", "a/b", "a\\b", ".hidden", "con",
                                   "x" * 500, "Jos\u00e9", "名前", "a\nb", "\u202eevil", "-", "..", "a b"])
def test_weird_actor_names_make_safe_distinct_file_names(tmp_path: Path, actor: str):
    stem = actor_file_stem(actor)
    assert stem and "/" not in stem and "\\" not in stem and not stem.startswith(".")
    assert len(stem) <= 80 and stem.lower() != "con"
    log = ClaimLog(tmp_path, fsync=False)
    rel = log.append(event(1, actor=actor))
    full = (tmp_path / rel).resolve()
    assert full.is_relative_to((tmp_path / "claims").resolve())
    assert full.parent == (tmp_path / "claims/2026/03/01").resolve()


def test_distinct_actors_never_share_a_file():
    names = ["a/b", "a-b", "a b", "a_b", "A-B", "../a-b", "a--b"]
    stems = [actor_file_stem(n) for n in names]
    assert len(set(stems)) == len(names)
    assert actor_file_stem("alex") == "alex" and actor_file_stem("José") == "José"


def test_line_format_and_unknown_fields_preserved(tmp_path: Path):
    log = ClaimLog(tmp_path, fsync=False)
    ev = event(1) | {"future_field": {"x": [1, 2]}, "statement": "line1\nline2 \u2028 sep"}
    rel = log.append(ev)
    raw = (tmp_path / rel).read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    assert list(json.loads(raw)) [:13] == ["id", "claim_id", "entity", "kind", "statement", "event", "valid_from",
                                          "valid_to", "confidence", "evidence", "reason", "actor", "at"]
    # A line another tool wrote, with fields we do not know, survives a round trip untouched.
    foreign = json.dumps({**event(2), "x_tool": "other", "nested": {"a": 1}}) + "\n"
    with open(tmp_path / rel, "a") as fh:
        fh.write(foreign)
    log.append(event(3))
    read = log.read()
    assert [e.id for e in read.events] == ["e_w_1", "e_w_2", "e_w_3"]
    assert read.events[1].extra == {"x_tool": "other", "nested": {"a": 1}}
    assert read.events[0].statement == "line1\nline2 \u2028 sep"
    assert (tmp_path / rel).read_text().split("\n")[1] == foreign.rstrip("\n")  # never rewritten


def test_corrupt_lines_are_reported_with_file_and_line_and_skipped(tmp_path: Path):
    log = ClaimLog(tmp_path, fsync=False)
    rel = log.append(event(1))
    with open(tmp_path / rel, "ab") as fh:
        fh.write(b"{not json\n")
        fh.write(b"[1, 2]\n")
        fh.write(b'{"id": "e_x"}\n')
        fh.write(b"\xff\xfe garbage\n")
        fh.write((json.dumps(event(5) | {"event": "exploded"}) + "\n").encode())
        fh.write((json.dumps(event(6) | {"entity": "person:../../etc"}) + "\n").encode())
        fh.write((json.dumps(event(7) | {"at": "yesterday"}) + "\n").encode())
        fh.write((json.dumps(event(8) | {"valid_from": "someday"}) + "\n").encode())
        fh.write(b"\n   \n")
        fh.write((json.dumps(event(9)) + "\n").encode())
        fh.write(b'{"id": "e_trunc", "claim_')  # a crash mid-write
    read = log.read()
    assert [e.id for e in read.events] == ["e_w_1", "e_w_9"]
    where = [(w.path, w.line) for w in read.warnings]
    assert where == [(rel, n) for n in (2, 3, 4, 5, 6, 7, 8, 9, 13)]
    assert "interrupted write" in read.warnings[-1].message
    assert all(w.code == "claims-corrupt" for w in read.warnings)
    # The next append starts on a fresh line instead of gluing onto the broken one.
    log.append(event(10))
    read = log.read()
    assert [e.id for e in read.events] == ["e_w_1", "e_w_9", "e_w_10"]


def test_duplicate_event_ids_are_reported_once(tmp_path: Path):
    log = ClaimLog(tmp_path, fsync=False)
    log.append(event(1))
    log.append(event(1) | {"actor": "other"})  # e.g. a file copied twice by a bad merge
    read = log.read()
    assert len(read.events) == 1 and read.warnings[0].code == "claims-duplicate"


def test_events_are_read_in_time_order_across_files(tmp_path: Path):
    log = ClaimLog(tmp_path, fsync=False)
    log.append(event(2, actor="b", at="2026-03-01T10:00:00Z"))
    log.append(event(1, actor="a", at="2026-03-01T11:00:00Z"))
    log.append(event(3, actor="a", at="2026-03-01T09:00:00Z"))
    assert [e.id for e in log.read().events] == ["e_w_3", "e_w_2", "e_w_1"]


def test_encode_event_is_one_line():
    data = encode_event(event(1) | {"statement": "a\nb\r\nc\u2028d\u0085e"})
    assert data.count(b"\n") == 1 and data.endswith(b"\n")


# -- concurrency --------------------------------------------------------------------------

N = 500
SIZE = 6000  # bigger than PIPE_BUF: without the lock, writes this size can interleave

WRITER = r"""
import sys
from pathlib import Path
from commonplace.compiler.claims.log import ClaimLog
root, writer, n, size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = ClaimLog(root, fsync=False)
for i in range(n):
    log.append({"id": f"e_{writer}_{i}", "claim_id": f"c_{writer}_{i}", "entity": "person:alex",
                "kind": "fact", "statement": f"{writer}:{i}:" + "x" * size, "event": "added",
                "actor": "shared", "at": "2026-03-01T09:00:00.000000Z"})
"""


def _thread_writer(root: Path, writer: str) -> None:
    log = ClaimLog(root, fsync=False)
    for i in range(N):
        log.append(event(i, actor="shared", writer=writer, size=SIZE))


def _check(root: Path, writers: list[str]) -> None:
    files = list((root / "claims").rglob("*.jsonl"))
    assert [f.name for f in files] == ["shared.jsonl"]
    raw = files[0].read_bytes()
    lines = raw.split(b"\n")
    assert lines[-1] == b""
    lines = lines[:-1]
    assert len(lines) == N * len(writers)
    seen = set()
    for line in lines:
        data = json.loads(line)  # every line is whole: none interleaved
        w, i, pad = data["statement"].split(":")
        assert pad == "x" * SIZE and data["id"] == f"e_{w}_{i}"
        seen.add((w, int(i)))
    assert seen == {(w, i) for w in writers for i in range(N)}  # none lost
    read = ClaimLog(root).read()
    assert len(read.events) == N * len(writers) and not read.warnings


def _spawn(root: Path, writer: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(root), writer, str(N), str(SIZE)])


def test_two_threads_append_500_each_without_loss_or_interleaving(tmp_path: Path):
    threads = [threading.Thread(target=_thread_writer, args=(tmp_path, w)) for w in ("t1", "t2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check(tmp_path, ["t1", "t2"])


def test_two_processes_append_500_each_without_loss_or_interleaving(tmp_path: Path):
    procs = [_spawn(tmp_path, w) for w in ("p1", "p2")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    _check(tmp_path, ["p1", "p2"])


def test_two_threads_and_two_processes_at_once(tmp_path: Path):
    procs = [_spawn(tmp_path, w) for w in ("p1", "p2")]
    threads = [threading.Thread(target=_thread_writer, args=(tmp_path, w)) for w in ("t1", "t2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    _check(tmp_path, ["p1", "p2", "t1", "t2"])


STORE_WRITER = r"""
import sys
from commonplace.compiler.claims import ClaimStore
root, writer, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = ClaimStore(root, actor=writer, fsync=False)
for i in range(n):
    store.add("person:alex", f"{writer} fact {i}")
"""


def test_two_processes_recording_claims_about_one_entity_lose_nothing(corpus):
    n = 40
    procs = [subprocess.Popen([sys.executable, "-c", STORE_WRITER, str(corpus), w, str(n)]) for w in ("p1", "p2")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    read = ClaimLog(corpus).read()
    assert len(read.events) == 2 * n and not read.warnings
    text = (corpus / "people/alex.md").read_text()
    for w in ("p1", "p2"):
        for i in range(n):
            assert f"- {w} fact {i} — " in text  # the page saw every claim: no lost update
    assert len(list((corpus / "sources/semantic").rglob("*.md"))) == 2 * n


LOCKER = r"""
import sys, time
from commonplace.compiler.locks import claims_lock
from pathlib import Path
t0 = time.monotonic()
with claims_lock(Path(sys.argv[1])):
    print(round(time.monotonic() - t0, 2))
"""


def test_a_forked_child_does_not_keep_the_locks(tmp_path: Path):
    """Build workers and servers fork; a child must not go on holding a claims lock."""
    import os
    import time

    from commonplace.compiler.locks import claims_lock

    with claims_lock(tmp_path):
        pid = os.fork()
        if pid == 0:  # child: outlive the parent's lock by a while, then vanish
            time.sleep(5)
            os._exit(0)
    try:
        out = subprocess.run([sys.executable, "-c", LOCKER, str(tmp_path)], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert float(out.stdout) < 2.0  # did not wait for the child to exit
        log = ClaimLog(tmp_path, fsync=False)
        log.append(event(1))  # the log's own locks work in this process too
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
