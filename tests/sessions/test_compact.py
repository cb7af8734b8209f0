"""Compaction with recovery: byte-for-byte uncompaction of any text, idempotence, the most
recent third never compacted, and kill -9 at every step leaving the old or the new state."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonplace.compiler.sessions import blobs
from commonplace.compiler.sessions import compact as cp

REL = "logs/sessions/a/2026-01-02-s1.md"


def _write(root: Path, rel: str, data: bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.text(), meta=st.booleans(), gist=st.text(max_size=200))
def test_uncompact_gives_back_every_byte(tmp_path: Path, body: str, meta: bool, gist: str) -> None:
    root = tmp_path / f"c{abs(hash((body, meta, gist)))}"
    original = (("---\ntitle: s\ntype: session\n---\n" if meta else "") + body).encode("utf-8", "surrogatepass")
    p = _write(root, REL, original)
    assert cp.compact_file(root, REL, gist) is True
    assert cp.is_compacted(p.read_bytes())
    assert cp.original_bytes(root, REL) == original  # read without changing anything
    assert cp.compact_file(root, REL, gist) is False  # idempotent
    assert cp.uncompact_file(root, REL) is True
    assert p.read_bytes() == original
    assert cp.uncompact_file(root, REL) is False


_LINE = st.text(alphabet=st.characters(blacklist_characters="\x00\r\n", blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, max_size=12), sep=st.sampled_from(["\n", "\r\n", "\r"]), trailing=st.booleans(),
       meta=st.booleans())
def test_uncompact_keeps_line_endings_and_a_missing_last_newline(tmp_path: Path, lines: list[str], sep: str,
                                                                trailing: bool, meta: bool) -> None:
    body = sep.join(lines) + (sep if trailing and lines else "")
    original = ((f"---{sep}title: s{sep}type: session{sep}---{sep}" if meta else "") + body).encode("utf-8")
    root = tmp_path / f"e{abs(hash((original,)))}"
    p = _write(root, REL, original)
    assert cp.compact_file(root, REL, "gist")
    assert cp.original_bytes(root, REL) == original
    assert cp.uncompact_file(root, REL) and p.read_bytes() == original


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400).filter(lambda b: b"\x00" not in b))
def test_uncompact_gives_back_bytes_that_are_not_utf8(tmp_path: Path, data: bytes) -> None:
    root = tmp_path / f"b{abs(hash(data))}"
    p = _write(root, REL, data)
    assert cp.compact_file(root, REL, "gist")
    assert cp.original_bytes(root, REL) == data
    assert cp.uncompact_file(root, REL) and p.read_bytes() == data


def test_a_compacted_transcript_keeps_frontmatter_gist_and_blob_reference(tmp_path: Path) -> None:
    original = b"---\ntitle: Billing chat\ntype: session\nagent: coder\ncreated: '2026-01-02'\n---\n\nuser: hi\n"
    p = _write(tmp_path, REL, original)
    cp.compact_file(tmp_path, REL, "## Facts\n\n- The billing gist. (L7)\n", at="2026-02-01T00:00:00Z")
    text = p.read_text()
    assert "title: Billing chat" in text and "agent: coder" in text and "The billing gist." in text
    sha = cp.MARK.search(text).group(1)
    blob = (tmp_path / blobs.blob_rel(sha)).read_bytes()
    meta, back = blobs.decode(blob)
    assert back == original and meta["parent"] == REL and meta["gist"].startswith("## Facts")
    assert blobs.blob_rel(sha) == f"logs/blobs/{sha[:16]}.blob"


def test_a_tampered_blob_is_refused(tmp_path: Path) -> None:
    p = _write(tmp_path, REL, b"user: the original\n")
    cp.compact_file(tmp_path, REL, "gist")
    sha = cp.MARK.search(p.read_text()).group(1)
    blob = tmp_path / blobs.blob_rel(sha)
    blob.write_bytes(blob.read_bytes().replace(b"original", b"forgery!"))
    with pytest.raises(blobs.BlobError):
        cp.uncompact_file(tmp_path, REL)
    assert cp.is_compacted(p.read_bytes())  # nothing changed


def test_the_most_recent_third_is_never_compacted(tmp_path: Path) -> None:
    for day in range(1, 10):
        _write(tmp_path, f"logs/sessions/a/s{day}.md", f"---\ntitle: s{day}\ncreated: '2026-01-0{day}'\n---\nx\n".encode())
    todo, kept = cp.plan(tmp_path, older_than_days=0, now=dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc))
    assert kept == ["logs/sessions/a/s7.md", "logs/sessions/a/s8.md", "logs/sessions/a/s9.md"]
    assert todo == [f"logs/sessions/a/s{d}.md" for d in range(1, 7)]
    todo, _ = cp.plan(tmp_path, older_than_days=360, now=dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc))
    assert todo == [f"logs/sessions/a/s{d}.md" for d in range(1, 6)]  # before 2026-01-06 only


# --------------------------------------------------------------------------- kill -9

CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from commonplace.compiler import fsutil
    from commonplace.compiler.sessions import blobs, compact

    root, rel, point = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if point == "before-blob":
        real = blobs.put
        blobs.put = lambda *a, **k: die()
    elif point == "inside-blob":  # the blob's temp file written, not yet renamed into place
        real_create = blobs.atomic_create
        def create(path, data):
            fsutil.write_tmp(path, data)
            die()
        blobs.atomic_create = create
    elif point == "after-blob":
        real_replace = compact.atomic_replace
        compact.atomic_replace = lambda *a, **k: die()
    elif point == "inside-replace":  # the new transcript's temp file written, not renamed
        def replace(path, data):
            fsutil.write_tmp(path, data)
            die()
        compact.atomic_replace = replace
    elif point == "after-replace":
        real_replace = compact.atomic_replace
        def replace(path, data):
            real_replace(path, data)
            die()
        compact.atomic_replace = replace
    compact.compact_file(root, rel, "the gist")
""")


@pytest.mark.parametrize("point", ["before-blob", "inside-blob", "after-blob", "inside-replace", "after-replace"])
def test_kill_9_during_compaction_leaves_the_old_or_the_new_state(tmp_path: Path, point: str) -> None:
    original = b"---\ntitle: s\ntype: session\n---\n\nuser: we keep every byte\n"
    p = _write(tmp_path, REL, original)
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), REL, point], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    now = p.read_bytes()
    if now == original:  # the old state; running again finishes the job
        assert point in ("before-blob", "inside-blob", "after-blob", "inside-replace")
        assert cp.compact_file(tmp_path, REL, "the gist") is True
    else:  # the new state, whole, and its blob is there
        assert point == "after-replace" and cp.is_compacted(now)
    assert cp.original_bytes(tmp_path, REL) == original
    assert cp.uncompact_file(tmp_path, REL) and p.read_bytes() == original
    leftovers = [q.name for q in p.parent.iterdir() if q.name != p.name]
    assert all(name.startswith(".") for name in leftovers)  # at most a hidden temp file, never a second transcript
