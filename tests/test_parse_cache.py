"""The parse cache: a `--clean` rebuild, or one after a template change, loads unchanged
documents instead of parsing them; a doubtful entry is parsed again, never trusted; the
output is byte for byte the output of a build without the cache."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from commonplace.compiler.build import manifest, parse_cache, stages
from commonplace.compiler.build.pipeline import BuildOptions, build
from tests.team_corpus import CORPUS, write_files


def site_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def run(corpus: Path, out: Path, **kw):
    return build(BuildOptions(corpus=corpus, out=out, embed=False, index=False, **kw))


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The paths the build really parsed (the cache answers the others)."""
    seen: list[str] = []
    real = stages.parse

    def counting(path, data, titles="heading"):
        seen.append(path)
        return real(path, data, titles)

    monkeypatch.setattr(stages, "parse", counting)
    monkeypatch.setenv("COMMONPLACE_WORKERS", "1")  # in this process, where the count is
    monkeypatch.delenv(parse_cache.ENV, raising=False)
    return seen


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_files(tmp_path / "corpus", CORPUS)


def entries(root: Path) -> list[Path]:
    return [p for p in parse_cache.folder(root).rglob("*") if p.is_file() and not p.name.startswith(".")]


def uncached_site(corpus: Path, out: Path, monkeypatch) -> dict[str, bytes]:
    monkeypatch.setenv(parse_cache.ENV, "0")
    try:
        run(corpus, out, clean=True)
    finally:
        monkeypatch.delenv(parse_cache.ENV)
    return site_files(out)


def test_clean_rebuild_parses_nothing_unchanged_and_writes_the_same_bytes(corpus, tmp_path, parses, monkeypatch):
    run(corpus, tmp_path / "a")
    assert sorted(parses) == sorted(CORPUS) and len(entries(corpus)) == len(CORPUS)
    parses.clear()
    run(corpus, tmp_path / "b", clean=True)
    assert parses == []
    assert site_files(tmp_path / "b") == site_files(tmp_path / "a")
    assert site_files(tmp_path / "b") == uncached_site(corpus, tmp_path / "c", monkeypatch)


def test_an_edited_document_alone_is_parsed_again(corpus, tmp_path, parses):
    run(corpus, tmp_path / "a")
    (corpus / "people/alex.md").write_text("---\ntitle: Alex Kim\n---\n# Alex Kim\n\nNow on [[atlas]] full time.\n")
    parses.clear()
    run(corpus, tmp_path / "b", clean=True)
    assert parses == ["people/alex.md"]
    assert "Now on" in (tmp_path / "b/people/alex/index.html").read_text()


def test_a_template_change_rebuilds_every_page_without_parsing(corpus, tmp_path, parses, monkeypatch):
    run(corpus, tmp_path / "a")
    parses.clear()
    real = manifest.fingerprint
    monkeypatch.setattr("commonplace.compiler.build.pipeline.manifest.fingerprint",
                        lambda *a, **k: real(*a, **k) + "-new-templates")
    result = run(corpus, tmp_path / "a")
    assert result.documents_changed == len(CORPUS) and parses == []  # every page again, no parse


def test_the_titles_setting_is_part_of_the_key(corpus, tmp_path, parses, monkeypatch):
    run(corpus, tmp_path / "a")
    parses.clear()
    (corpus / "commonplace.toml").write_text('[site]\ntitles = "filename"\n')
    run(corpus, tmp_path / "b", clean=True)
    assert sorted(parses) == sorted(CORPUS)
    assert site_files(tmp_path / "b") == uncached_site(corpus, tmp_path / "c", monkeypatch)


def test_other_parsing_code_misses_every_entry(corpus, tmp_path, parses, monkeypatch):
    run(corpus, tmp_path / "a")
    parses.clear()
    monkeypatch.setattr(parse_cache, "_FINGERPRINT", b"\x01" * 16)  # as after an upgrade of the parser
    parse_cache._OPEN.clear()
    try:
        run(corpus, tmp_path / "b", clean=True)
    finally:
        parse_cache._OPEN.clear()
    assert sorted(parses) == sorted(CORPUS)


DAMAGE = ["garbage", "truncated", "flipped", "swapped", "empty", "wrong pickle"]


def test_a_damaged_entry_is_parsed_again_never_trusted(corpus, tmp_path, parses, monkeypatch):
    """Each entry damaged one way (the kinds taken in turn)."""
    run(corpus, tmp_path / "a")
    files = sorted(entries(corpus))
    blobs = [f.read_bytes() for f in files]
    assert len(files) >= len(DAMAGE)
    for i, f in enumerate(files):
        blob, damage = blobs[i], DAMAGE[i % len(DAMAGE)]
        if damage == "garbage":
            new = os.urandom(len(blob))
        elif damage == "truncated":
            new = blob[: len(blob) // 2]
        elif damage == "flipped":  # one byte of the payload: the digest no longer matches
            new = blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:]
        elif damage == "swapped":  # another document's whole entry under this name
            new = blobs[(i + 1) % len(blobs)]
        elif damage == "empty":
            new = b""
        else:  # header and digest right, the payload not a document
            import hashlib
            import pickle
            payload = pickle.dumps(({"path": "x"}, []))
            key = blob[len(parse_cache.MAGIC):len(parse_cache.MAGIC) + 16]
            new = parse_cache.MAGIC + key + hashlib.blake2b(payload, digest_size=16).digest() + payload
        f.write_bytes(new)
    parses.clear()
    run(corpus, tmp_path / "b", clean=True)
    assert sorted(parses) == sorted(CORPUS)
    assert site_files(tmp_path / "b") == uncached_site(corpus, tmp_path / "c", monkeypatch)
    parses.clear()
    run(corpus, tmp_path / "d", clean=True)  # the damaged entries were written again
    assert parses == []


def test_cache_off_writes_nothing(corpus, tmp_path, parses, monkeypatch):
    monkeypatch.setenv(parse_cache.ENV, "0")
    run(corpus, tmp_path / "a")
    assert entries(corpus) == []


def test_prune_keeps_the_cache_under_its_bound_dropping_the_least_recently_used(tmp_path):
    where = parse_cache.folder(tmp_path)
    for i in range(40):
        f = where / f"{i:02x}"[:2] / f"entry{i}"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"x" * 50_000)
        os.utime(f, (1_000_000 + i, 1_000_000 + i))  # entry39 used last
    removed = parse_cache.prune(tmp_path, parsed=1000, limit_mb=1.0)
    left = sorted(p.name for p in entries(tmp_path))
    total = sum(p.stat().st_size for p in entries(tmp_path))
    assert total <= 0.8 * 1024 * 1024 and removed == 40 - len(left)
    assert "entry39" in left and "entry0" not in left
    # A build that parsed little prunes at most once a day.
    for i in range(40, 80):
        f = where / "aa" / f"entry{i}"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"x" * 50_000)
    assert parse_cache.prune(tmp_path, parsed=3, limit_mb=1.0) == 0


def test_concurrent_builds_share_the_cache_safely(corpus, tmp_path, parses, monkeypatch):
    """Two builds (forked processes) fill the cache at once; a third loads it all and
    writes what a build without the cache writes."""
    for i in range(60):  # enough work that the two overlap
        (corpus / f"notes/n{i}.md").parent.mkdir(exist_ok=True)
        (corpus / f"notes/n{i}.md").write_text(f"# Note {i}\n\nSee [[Alex]] and [[n{(i + 1) % 60}]].\n" * 20)
    ctx = multiprocessing.get_context("fork")  # separate processes, without a second start-up
    procs = [ctx.Process(target=run, args=(corpus, tmp_path / f"o{k}")) for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    n = len(CORPUS) + 60
    assert len(entries(corpus)) == n
    parses.clear()
    run(corpus, tmp_path / "third", clean=True)
    assert parses == []
    assert site_files(tmp_path / "third") == uncached_site(corpus, tmp_path / "plain", monkeypatch)
