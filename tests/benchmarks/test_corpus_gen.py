"""Fast checks of the synthetic corpus generator used by the build benchmark."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from .corpus_gen import generate

N = 50
_WIKI = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")


def _read_all(root: Path, paths: list[str]) -> dict[str, bytes]:
    return {p: (root / p).read_bytes() for p in paths}


def _split(text: str) -> tuple[dict, str]:
    assert text.startswith("---\n"), "every generated document starts with frontmatter"
    raw, body = text[4:].split("\n---\n", 1)
    meta = yaml.safe_load(raw)
    assert isinstance(meta, dict)
    return meta, body


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", N, seed=7)
    b = generate(tmp_path / "b", N, seed=7)
    assert a == b and len(a) == N
    assert _read_all(tmp_path / "a", a) == _read_all(tmp_path / "b", b)
    c = generate(tmp_path / "c", N, seed=8)
    assert _read_all(tmp_path / "a", a) != _read_all(tmp_path / "c", c)


def test_folder_spread_and_frontmatter(tmp_path: Path) -> None:
    paths = generate(tmp_path, N)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md")) == paths
    tops = {p.split("/")[0] for p in paths}
    for folder in ("core", "people", "projects", "concepts", "decisions", "logs", "sources",
                   "references", "inbox", "wiki", "notes"):
        assert folder in tops, folder
    assert any(re.fullmatch(r"projects/[^/]+/state\.md", p) for p in paths)
    assert any(re.fullmatch(r"logs/daily/\d{4}-\d{2}-\d{2}\.md", p) for p in paths)
    assert any(p.startswith("logs/sessions/") for p in paths)
    words = 0
    for p in paths:
        meta, body = _split((tmp_path / p).read_text(encoding="utf-8"))
        assert isinstance(meta["title"], str) and meta["title"]
        assert isinstance(meta["tags"], list) and meta["tags"]
        assert meta["status"] in {"active", "done", "paused", "pending", "raw", "superseded"}
        assert str(meta["created"]) <= str(meta["updated"])
        assert "\n## " in body
        words += len(body.split())
    assert 300 < words / len(paths) < 900


def test_links_mostly_resolve(tmp_path: Path) -> None:
    paths = generate(tmp_path, N)
    stems: dict[str, int] = {}
    names: set[str] = set()
    noext = {p[:-3] for p in paths}
    texts = {}
    for p in paths:
        text = (tmp_path / p).read_text(encoding="utf-8")
        texts[p] = text
        meta, _ = _split(text)
        stem = p.rsplit("/", 1)[-1][:-3]
        stems[stem] = stems.get(stem, 0) + 1
        names.add(meta["title"].lower())
        names.update(a.lower() for a in meta.get("aliases") or [])
    ok = total = 0
    for p, text in texts.items():
        for inner in _WIKI.findall(text):
            target = inner.split("|", 1)[0].split("#", 1)[0].strip()
            total += 1
            if not target or target in noext or stems.get(target) == 1 or target.lower() in names:
                ok += 1
        for href in _MDLINK.findall(text):
            total += 1
            resolved = (Path(p).parent / href).as_posix()
            parts: list[str] = []
            for part in resolved.split("/"):
                if part == "..":
                    if parts:
                        parts.pop()
                elif part != ".":
                    parts.append(part)
            if "/".join(parts) in paths:
                ok += 1
    assert total > 5 * N  # documents are well linked
    assert ok / total > 0.95
