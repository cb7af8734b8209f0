"""The product's import graph, read with `ast`, holds the architecture in place.

Modules are the .py files under compiler/, server/ and templates/, named as installed
(`commonplace.compiler...`, `commonplace.server...`, `commonplace.templates...`). Every
import statement counts, at module level or inside a function (a function-level import
is a dependency too, only a later one), relative imports resolved against the module's
package. Imports under `if TYPE_CHECKING:` never run and are left out.

Checked, each test listing every offence with file and line:

- no import cycle among product modules;
- the compiler (the library) never imports the server built on it;
- a blueprint under server/routes/ never imports the app factory (`commonplace.server.app`);
- no product module is longer than 600 lines.

One kind of edge is left out of the cycle check, on purpose: a package's `__init__`
importing one of its own submodules inside a function (the lazy exports of
`compiler/search/__init__.py`). Python has finished importing the package before any
submodule of it starts, and the function runs only after both exist, so such an edge can
never observe a half-initialised module; counting it would flag every package whose
submodule reads a constant from its `__init__`. The same import at module level is counted.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"compiler": "commonplace.compiler", "server": "commonplace.server", "templates": "commonplace.templates"}
MAX_LINES = 600


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # file:line
    lazy: bool  # inside a function (runs when called, not on import)


def _module_files() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            mods[".".join([package, *parts])] = path
    return mods


MODULES = _module_files()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, bool]]:
    """(import statement, inside a function) for every import that can run."""
    found: list[tuple[ast.stmt, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, in_function)
                continue
            visit_stmt(child, in_function)

    def visit_stmt(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append((child, in_function))
        visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _product(name: str) -> str | None:
    """The product module `name` loads: itself, else its longest importable prefix."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in MODULES:
            return cand
        parts.pop()
    return None


def _edges() -> list[Edge]:
    edges: list[Edge] = []
    for name, path in MODULES.items():
        package = name if _is_package(name) else name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for stmt, lazy in _imports(tree):
            where = f"{path.relative_to(REPO)}:{stmt.lineno}"
            targets: list[str] = []
            if isinstance(stmt, ast.Import):
                targets = [alias.name for alias in stmt.names]
            else:
                assert isinstance(stmt, ast.ImportFrom)
                if stmt.level:
                    base = package.split(".")
                    base = base[: len(base) - (stmt.level - 1)]
                    origin = ".".join(base + ([stmt.module] if stmt.module else []))
                else:
                    origin = stmt.module or ""
                for alias in stmt.names:
                    sub = f"{origin}.{alias.name}"
                    targets.append(sub if sub in MODULES else origin)
            for t in targets:
                target = _product(t)
                if target is not None and target != name:
                    edges.append(Edge(name, target, where, lazy))
    return edges


EDGES = _edges()


def _cycle_edges() -> list[Edge]:
    """The edges that can take part in an import cycle (see the module docstring)."""
    return [e for e in EDGES
            if not (e.lazy and _is_package(e.source) and e.target.startswith(e.source + "."))]


def _strongly_connected(edges: list[Edge]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module."""
    graph: dict[str, list[str]] = {m: [] for m in MODULES}
    for e in edges:
        graph[e.source].append(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(set(graph[root]))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(set(graph[nxt])))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_graph_sees_the_product() -> None:
    """Guards the checks below against passing on an empty or misread graph."""
    assert "commonplace.compiler.build" in MODULES and "commonplace.server.app" in MODULES
    assert any(e.source == "commonplace.compiler.build" and e.target == "commonplace.compiler.scan" for e in EDGES)
    # a function-level, relative import is seen and resolved (build imports the claims stage lazily)
    assert any(e.source == "commonplace.compiler.build" and e.target == "commonplace.compiler.claims.stage"
               and e.lazy for e in EDGES)


def test_no_import_cycles() -> None:
    edges = _cycle_edges()
    problems = []
    for comp in _strongly_connected(edges):
        members = set(comp)
        inside = sorted({f"  {e.source} -> {e.target} ({e.where}{', in a function' if e.lazy else ''})"
                         for e in edges if e.source in members and e.target in members})
        problems.append(f"cycle among {', '.join(comp)}:\n" + "\n".join(inside))
    if problems:
        pytest.fail("import cycles:\n" + "\n".join(problems), pytrace=False)


def test_compiler_never_imports_server() -> None:
    bad = sorted({f"{e.where}: {e.source} imports {e.target}" for e in EDGES
                  if e.source.startswith("commonplace.compiler") and e.target.startswith("commonplace.server")})
    if bad:
        pytest.fail("the compiler imports the server:\n" + "\n".join(bad), pytrace=False)


def test_routes_never_import_the_app_factory() -> None:
    bad = sorted({f"{e.where}: {e.source} imports {e.target}" for e in EDGES
                  if e.source.startswith("commonplace.server.routes") and e.target == "commonplace.server.app"})
    if bad:
        pytest.fail("blueprints import the app factory:\n" + "\n".join(bad), pytrace=False)


def test_no_module_over_600_lines() -> None:
    long = []
    for name, path in MODULES.items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            long.append(f"{path.relative_to(REPO)}: {n} lines")
    if long:
        pytest.fail(f"modules over {MAX_LINES} lines:\n" + "\n".join(long), pytrace=False)
