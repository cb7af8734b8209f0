"""The server reads its live corpus only through `LiveContract` (issue 27, item 1).

Read with `ast` from the server's source: no `getattr`/`hasattr` probe of a live corpus,
no live corpus annotated `Any`, and every member the server uses is declared on the
Protocol, which `LiveCorpus` implements.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from commonplace.compiler.live.corpus import LiveCorpus
from commonplace.compiler.live.contract import LiveContract

SERVER = Path(__file__).resolve().parents[1] / "server"


def _is_live(node: ast.AST) -> bool:
    """`live`, `ctx.live`, `self._live`, `st.live`, ...: an expression naming a live corpus."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_") == "live"


def _walk() -> typing.Iterator[tuple[str, ast.AST]]:
    for path in sorted(SERVER.rglob("*.py")):
        rel = path.relative_to(SERVER.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text("utf-8"), rel)):
            yield rel, node


def _members() -> set[str]:
    names = set(LiveContract.__annotations__)
    names |= {n for n, v in vars(LiveContract).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    return names


def test_no_probes_of_the_live_corpus() -> None:
    probes = [f"{rel}:{node.lineno}: {ast.unparse(node)}" for rel, node in _walk()
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and node.args and _is_live(node.args[0])]
    assert probes == [], "put what these probe on LiveContract and use it directly:\n" + "\n".join(probes)


def test_no_live_corpus_typed_any() -> None:
    untyped = []
    for rel, node in _walk():
        if isinstance(node, ast.arg) and _is_live(ast.Name(node.arg)) and node.annotation is not None:
            ann = node.annotation
        elif isinstance(node, ast.AnnAssign) and _is_live(node.target):
            ann = node.annotation
        else:
            continue
        if "Any" in ast.unparse(ann):
            untyped.append(f"{rel}:{node.lineno}: {ast.unparse(node) if isinstance(node, ast.arg) else ast.unparse(ann)}")
    assert untyped == [], "type these as LiveContract:\n" + "\n".join(untyped)


def test_the_server_uses_only_declared_members() -> None:
    members = _members()
    used = {}
    for rel, node in _walk():
        if isinstance(node, ast.Attribute) and _is_live(node.value):
            used.setdefault(node.attr, f"{rel}:{node.lineno}")
    undeclared = {name: where for name, where in used.items() if name not in members}
    assert undeclared == {}, f"declare these on LiveContract: {undeclared}"
    assert {"docs", "search", "write", "commit", "ready", "preload", "vectors"} <= set(used)  # the scan sees them


def test_live_corpus_has_every_member(tmp_path: Path) -> None:
    live = LiveCorpus(tmp_path, tmp_path / "site", embed=False)
    missing = [m for m in sorted(_members()) if m not in ("docs", "graph", "resolver") and not hasattr(live, m)]
    assert missing == []
    for prop in ("docs", "graph", "resolver"):  # read the corpus: they need open()
        assert isinstance(vars(LiveCorpus).get(prop), property)
