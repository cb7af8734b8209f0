"""The product's import graph, read with `ast`, holds the architecture in place.

Modules are the .py files under compiler/, server/ and templates/, named as installed
(`commonplace.compiler...`, `commonplace.server...`, `commonplace.templates...`). Every
import statement counts, at module level or inside a function (a function-level import
is a dependency too, only a later one), relative imports resolved against the module's
package. Imports under `if TYPE_CHECKING:` never run and are left out. `import a.b.c`
counts as an edge to `a.b.c` only: the parent packages it also loads are not edges, or
every package whose submodule reads a constant from its `__init__` would be a cycle.

Checked, each test listing every offence with file and line:

- no import cycle among product modules;
- the compiler (the library) never imports the server built on it;
- a blueprint under server/routes/ never imports the app factory (`commonplace.server.app`);
- no product module is longer than 600 lines;
- every product package is listed in pyproject.toml (else `pip install .` leaves it out);
- every compiler module is in one room, and imports only the rooms its room may (the
  rooms section below, drawn in docs/core/package-map.md); only `server/cli/` imports the
  compiler's commands.

One kind of edge is left out of the cycle check, on purpose: a package's `__init__`
importing one of its own submodules inside a function (the lazy exports of
`compiler/search/__init__.py`). Python has finished importing the package before any
submodule of it starts, and the function runs only after both exist, so such an edge can
never observe a half-initialised module. The same import at module level is counted.
Imports made by name at run time count too, as edges made inside a function:
`importlib.import_module("a.b")` (or `".b"`, relative to the module's package); with a
computed name, `import_module(f"a.b.{x}")`, every module `a.b.<s>` for which the same
module holds a string `s` or `"s:function"` (the registry's handler names); and a package's
`lazy_exports(__name__, {...})` table (`compiler/lazy.py`), an edge to each submodule named.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRODUCT = {"compiler": "commonplace.compiler", "server": "commonplace.server", "templates": "commonplace.templates"}
MAX_LINES = 600


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # file:line
    lazy: bool  # inside a function (runs when called, not on import)


@dataclass
class Graph:
    modules: dict[str, Path] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    @classmethod
    def read(cls, base: Path, roots: dict[str, str]) -> "Graph":
        """The graph of the .py files under `base/<folder>`, named `<package>.<...>`."""
        g = cls()
        for folder, package in roots.items():
            for path in sorted((base / folder).rglob("*.py")):
                rel = path.relative_to(base / folder).with_suffix("")
                parts = [p for p in rel.parts if p != "__init__"]
                g.modules[".".join([package, *parts])] = path
        for name, path in g.modules.items():
            g._read_module(base, name, path)
        return g

    def is_package(self, name: str) -> bool:
        return self.modules[name].name == "__init__.py"

    def _known(self, name: str) -> str | None:
        """The module `name` loads: itself, else its longest known prefix."""
        parts = name.split(".")
        while parts:
            cand = ".".join(parts)
            if cand in self.modules:
                return cand
            parts.pop()
        return None

    def _read_module(self, base: Path, name: str, path: Path) -> None:
        package = name if self.is_package(name) else name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for stmt, lazy in _imports(tree):
            where = f"{path.relative_to(base)}:{stmt.lineno}"
            targets: list[str] = []
            if isinstance(stmt, ast.Import):
                targets = [alias.name for alias in stmt.names]
            else:
                assert isinstance(stmt, ast.ImportFrom)
                if stmt.level:
                    up = package.split(".")
                    up = up[: len(up) - (stmt.level - 1)]
                    origin = ".".join(up + ([stmt.module] if stmt.module else []))
                else:
                    origin = stmt.module or ""
                for alias in stmt.names:  # `from pkg import sub` imports the submodule
                    sub = f"{origin}.{alias.name}"
                    targets.append(sub if sub in self.modules else origin)
            for t in targets:
                target = self._known(t)
                if target is not None and target != name:
                    self.edges.append(Edge(name, target, where, lazy))
        for line, t in _dynamic_imports(tree, package):
            target = self._known(t)
            if target is not None and target != name and t in self.modules:
                self.edges.append(Edge(name, target, f"{path.relative_to(base)}:{line}", True))

    def cycle_edges(self) -> list[Edge]:
        """The edges that can take part in an import cycle (see the module docstring)."""
        return [e for e in self.edges
                if not (e.lazy and self.is_package(e.source) and e.target.startswith(e.source + "."))]

    def cycles(self) -> list[str]:
        """Each import cycle, with the edges that make it."""
        edges = self.cycle_edges()
        out = []
        for comp in _strongly_connected(self.modules, edges):
            members = set(comp)
            inside = sorted({f"  {e.source} -> {e.target} ({e.where}{', in a function' if e.lazy else ''})"
                             for e in edges if e.source in members and e.target in members})
            out.append(f"cycle among {', '.join(comp)}:\n" + "\n".join(inside))
        return out

    def imports_of(self, source_prefix: str, target: str) -> list[str]:
        """`file:line: a imports b` for every edge from modules under `source_prefix` to
        `target` or anything under it."""
        return sorted({f"{e.where}: {e.source} imports {e.target}" for e in self.edges
                       if (e.source == source_prefix or e.source.startswith(source_prefix + "."))
                       and (e.target == target or e.target.startswith(target + "."))})


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


_NAME = re.compile(r"[A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?")


def _dynamic_imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, module name) for every import made by name at run time (module docstring)."""
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    names = {s.partition(":")[0] for s in strings if _NAME.fullmatch(s)}
    tables = {t.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Dict)}

    def absolute(name: str) -> str:
        return f"{package}{name}" if name.startswith(".") else name

    out: list[tuple[int, str]] = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        func = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if func == "lazy_exports" and len(call.args) == 2:
            table = call.args[1]
            table = tables.get(table.id, table) if isinstance(table, ast.Name) else table
            if isinstance(table, ast.Dict):
                out += [(call.lineno, f"{package}.{v.value}") for v in table.values
                        if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        elif func == "import_module" and call.args:
            arg = call.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((call.lineno, absolute(arg.value)))
            elif (isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant)
                  and len(arg.values) == 2):  # f"prefix{name}"
                prefix = absolute(str(arg.values[0].value))
                out += [(call.lineno, prefix + n) for n in sorted(names)]
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _strongly_connected(modules: dict[str, Path], edges: list[Edge]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; the components of more than one module."""
    graph: dict[str, list[str]] = {m: [] for m in modules}
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
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(set(graph[root]))))]
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


GRAPH = Graph.read(REPO, PRODUCT)


def _fail_if(problems: list[str], title: str) -> None:
    if problems:
        pytest.fail(f"{title}:\n" + "\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------- the product


def test_the_graph_sees_the_product() -> None:
    """Guards the checks below against passing on an empty or misread graph."""
    assert "commonplace.compiler.build.pipeline" in GRAPH.modules and "commonplace.server.app" in GRAPH.modules
    edges = {(e.source, e.target, e.lazy) for e in GRAPH.edges}
    assert ("commonplace.compiler.build.pipeline", "commonplace.compiler.corpus.scan", False) in edges
    # a function-level, relative import is seen and resolved (build imports the claims stage lazily)
    assert ("commonplace.compiler.build.pipeline", "commonplace.compiler.claims.stage", True) in edges
    # imports by name: the registry's "module:function" handlers, a package's lazy exports
    assert ("commonplace.server.registry", "commonplace.server.ops.documents", True) in edges
    assert ("commonplace.compiler.claims", "commonplace.compiler.claims.service", True) in edges


def test_no_import_cycles() -> None:
    _fail_if(GRAPH.cycles(), "import cycles")


def test_compiler_never_imports_server() -> None:
    _fail_if(GRAPH.imports_of("commonplace.compiler", "commonplace.server"), "the compiler imports the server")


def test_routes_never_import_the_app_factory() -> None:
    _fail_if(GRAPH.imports_of("commonplace.server.routes", "commonplace.server.app"),
             "blueprints import the app factory")


def test_no_module_over_600_lines() -> None:
    long = []
    for path in GRAPH.modules.values():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            long.append(f"{path.relative_to(REPO)}: {n} lines")
    _fail_if(long, f"modules over {MAX_LINES} lines")


def test_every_package_is_installed() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {name for name in GRAPH.modules if GRAPH.is_package(name)}
    _fail_if(sorted(f"{p} is not in pyproject.toml's [tool.setuptools] packages" for p in packages - listed),
             "packages a wheel would leave out")


# --------------------------------------------------------------------------- the rooms
#
# The compiler is a set of rooms (docs/core/package-map.md). Each room is a package, or
# for the base a few root modules; a room may import only the rooms listed for it. The
# list is also the order: a room imports only rooms above it, so the rooms form layers
# with one declared exception. A name ending in "." is a package and everything under it.

C = "commonplace.compiler"
ROOMS: dict[str, tuple[str, ...]] = {
    # the base every room may import: the document model, durable writes, the lock,
    # lazy exports, terminal progress, the package itself (`__version__`)
    "base": (C, f"{C}.model", f"{C}.fsutil", f"{C}.locks", f"{C}.lazy", f"{C}.progress"),
    "corpus": (f"{C}.corpus.",),
    "markdown": (f"{C}.markdown.",),
    "search.text": (f"{C}.search.text", f"{C}.search.plaintext"),
    "writes": (f"{C}.writes.",),
    "claims": (f"{C}.claims.",),
    "site": (f"{C}.site.",),
    "search.store": (f"{C}.search.store.",),
    "search.embedding": (f"{C}.search.embedding.",),
    "search.index": (f"{C}.search.index.",),
    "search.read": (f"{C}.search.read.",),
    "search": (f"{C}.search", f"{C}.search.status"),  # the facade and `status`
    "sessions": (f"{C}.sessions.",),
    "context": (f"{C}.context.",),
    "build": (f"{C}.build.",),
    "engines": (f"{C}.engines.",),
    "live": (f"{C}.live.",),
    "commands": (f"{C}.commands.",),
}
MAY_IMPORT: dict[str, set[str]] = {
    "base": set(),
    "corpus": {"base"},
    "markdown": {"base", "corpus"},
    "search.text": {"base"},
    "writes": {"base", "markdown"},
    "claims": {"base", "corpus", "markdown", "writes"},
    "site": {"base", "corpus", "markdown", "templates"},
    "search.store": {"base", "search.text"},
    "search.embedding": {"base", "search.store"},
    "search.index": {"base", "corpus", "markdown", "search.text", "search.store", "search.embedding"},
    "search.read": {"base", "search.text", "search.store", "search.embedding"},
    "search": {"base", "corpus", "search.text", "search.store", "search.embedding", "search.index", "search.read"},
    "sessions": {"base", "markdown", "writes", "claims", "search"},
    "context": {"base", "corpus", "markdown", "search", "sessions"},
    "build": {"base", "corpus", "markdown", "site", "claims", "search", "engines", "templates"},
    "engines": {"base", "corpus", "build", "site", "search.store", "search.embedding", "search.index", "templates"},
    "live": {"base", "corpus", "writes", "claims", "site", "search", "build"},
    "commands": set(ROOMS) - {"commands"} | {"templates"},
}
# The one way back up: the build picks an engine by name at run time (`engines.open_engine`,
# imported in a function), and the engines run the build's stages on other processes.
LAZY_ONLY = {("build", "engines")}


def room_of(module: str, rooms: dict[str, tuple[str, ...]] = ROOMS) -> str | None:
    if module == "commonplace.templates" or module.startswith("commonplace.templates."):
        return "templates"
    for room, names in rooms.items():
        for n in names:
            if module == n or (n.endswith(".") and (module == n[:-1] or module.startswith(n))):
                return room
    return None


def room_problems(graph: Graph, rooms: dict[str, tuple[str, ...]], may: dict[str, set[str]],
                  lazy_only: set[tuple[str, str]], package: str) -> list[str]:
    """Every compiler module in one room, every import between rooms allowed, the rooms
    in layers (apart from `lazy_only`, whose imports must run in a function)."""
    problems = [f"{m} is in no room" for m in sorted(graph.modules)
                if m.startswith(package) and room_of(m, rooms) is None]
    for e in graph.edges:
        a, b = room_of(e.source, rooms), room_of(e.target, rooms)
        if not e.source.startswith(package) or a is None or b is None or a == b:
            continue
        if b not in may[a]:
            problems.append(f"{e.where}: {e.source} ({a}) imports {e.target} ({b}), not in {a}'s list")
        elif (a, b) in lazy_only and not e.lazy:
            problems.append(f"{e.where}: {e.source} imports {e.target} at module level; {a} -> {b} must be lazy")
    order = {r: i for i, r in enumerate(rooms)}
    for a, targets in may.items():
        for b in sorted(targets):
            if b in order and order[b] >= order[a] and (a, b) not in lazy_only:
                problems.append(f"{a} may import {b}, which is not above it in ROOMS")
    return sorted(set(problems))


def test_the_compiler_is_in_rooms() -> None:
    """Each compiler module belongs to a room and imports only the rooms its room may."""
    _fail_if(room_problems(GRAPH, ROOMS, MAY_IMPORT, LAZY_ONLY, C), "room rules broken")


# Search is reached through its facade, `compiler/search/__init__.py`: from outside
# `compiler/search/`, an import of `commonplace.compiler.search.<anything>` is an error,
# apart from these (room or server package importing, the search room it reaches, why).
S = f"{C}.search"
FACADE_EXCEPTIONS: dict[tuple[str, str], str] = {
    # The Ray engine is the index stage spread over processes: each node runs the stage's
    # own steps (chunking, embedding into the cache, writing a generation's tables), the
    # parts the facade's whole-index functions are made of.
    ("engines", "search.index"): "runs the index stage's steps on Ray nodes",
    ("engines", "search.embedding"): "embeds on Ray nodes with the stage's embedder and cache",
    ("engines", "search.store"): "writes the generation the nodes' chunks go into",
}


def facade_problems(graph: Graph, search: str, rooms: dict[str, tuple[str, ...]],
                    allowed: dict[tuple[str, str], str]) -> list[str]:
    """Every import into a module under `search` from a module outside it that is not
    the package itself (the facade) and not in `allowed`."""
    problems = []
    for e in graph.edges:
        if e.source == search or e.source.startswith(search + ".") or not e.target.startswith(search + "."):
            continue
        pair = (room_of(e.source, rooms) or e.source, room_of(e.target, rooms) or e.target)
        if pair not in allowed:
            problems.append(f"{e.where}: {e.source} imports {e.target}; import it from {search}")
    return sorted(set(problems))


def test_search_is_reached_through_its_facade() -> None:
    _fail_if(facade_problems(GRAPH, S, ROOMS, FACADE_EXCEPTIONS), "imports past the search facade")
    # each exception is still needed (an unused one would let a new import in unseen)
    used = {(room_of(e.source), room_of(e.target)) for e in GRAPH.edges
            if e.target.startswith(S + ".") and not e.source.startswith(S)}
    assert set(FACADE_EXCEPTIONS) <= used, set(FACADE_EXCEPTIONS) - used


def test_the_facade_exports_what_it_says() -> None:
    """Each lazily exported name resolves, and the facade's names are the ones its
    type-checking imports declare (what a type checker sees is what runs)."""
    import importlib

    facade = importlib.import_module(S)
    tree = ast.parse(GRAPH.modules[S].read_text(encoding="utf-8"))
    declared = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                for stmt in node.body if isinstance(stmt, ast.ImportFrom) for a in stmt.names}
    assert declared == set(facade.__all__), declared ^ set(facade.__all__)
    for name in facade.__all__:
        assert getattr(facade, name) is not None, name


def test_server_reaches_the_command_line_only_from_its_own() -> None:
    """The compiler's commands are composed by `server/cli/` alone; routes and operations
    use the library rooms."""
    _fail_if([p for p in GRAPH.imports_of("commonplace.server", f"{C}.commands")
              if ": commonplace.server.cli" not in p], "the server imports the compiler's commands")


# --------------------------------------------------------------------------- the checks themselves


def _tree(tmp_path: Path, files: dict[str, str]) -> Graph:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return Graph.read(tmp_path, {"lib": "top.lib", "srv": "top.srv"})


def test_the_checks_catch_what_they_should(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "lib/__init__.py": "def lazy():\n    from . import a\n",  # lazy self-import: not a cycle
        "lib/a.py": "from . import b\nfrom .. import lib\n",  # a -> lib (package) at module level
        "lib/b.py": "def f():\n    from .a import x\n",  # b -> a in a function: still a cycle
        "lib/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "lib/d.py": "from .c import C\n",  # c -> d only under TYPE_CHECKING: no cycle
        "lib/e.py": "import top.srv.routes.r\n",
        "srv/__init__.py": "",
        "srv/app.py": "from .routes import r\n",
        "srv/routes/__init__.py": "",
        "srv/routes/r.py": "def f():\n    from ..app import make\n",
    })
    cycles = g.cycles()
    assert len(cycles) == 2, cycles
    assert cycles[0].startswith("cycle among top.lib.a, top.lib.b:")
    assert "top.lib.b -> top.lib.a (lib/b.py:2, in a function)" in cycles[0]
    assert cycles[1].startswith("cycle among top.srv.app, top.srv.routes.r:")
    assert g.imports_of("top.lib", "top.srv") == ["lib/e.py:1: top.lib.e imports top.srv.routes.r"]
    assert g.imports_of("top.srv.routes", "top.srv.app") == ["srv/routes/r.py:2: top.srv.routes.r imports top.srv.app"]
    # the module-level `from .. import lib` in a.py is an edge to the package; with a
    # module-level import of `a` in lib/__init__.py, that would be a cycle too
    (tmp_path / "lib/__init__.py").write_text("from . import a\n", encoding="utf-8")
    g = Graph.read(tmp_path, {"lib": "top.lib", "srv": "top.srv"})
    assert any(c.startswith("cycle among top.lib, top.lib.a, top.lib.b:") for c in g.cycles())


def test_imports_by_name_are_edges(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "lib/__init__.py": "from .lazy import lazy_exports\n__getattr__ = lazy_exports(__name__, {'A': 'a'})\n",
        "lib/lazy.py": "def lazy_exports(p, t):\n    return None\n",
        "lib/a.py": "import importlib\ndef f():\n    return importlib.import_module('.b', __package__)\n",
        "lib/b.py": "from . import a\n",  # b -> a, a -> b by name: a cycle
        "srv/__init__.py": "",
        "srv/reg.py": "import importlib\nH = 'h:run'\ndef go(m):\n    return importlib.import_module(f'top.srv.ops.{m}')\n",
        "srv/ops/__init__.py": "",
        "srv/ops/h.py": "from .. import reg\n",  # the handler imports the registry: a cycle
    })
    edges = {(e.source, e.target) for e in g.edges}
    assert ("top.lib", "top.lib.a") in edges and ("top.lib.a", "top.lib.b") in edges
    assert ("top.srv.reg", "top.srv.ops.h") in edges
    cycles = g.cycles()
    assert [c.split(":")[0] for c in cycles] == ["cycle among top.lib.a, top.lib.b",
                                                "cycle among top.srv.ops.h, top.srv.reg"], cycles


def test_the_room_rules_catch_what_they_should(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/low/__init__.py": "",
        "lib/low/a.py": "from ..high import b\n",  # up a layer: not allowed
        "lib/high/__init__.py": "",
        "lib/high/b.py": "from ..low import a\nfrom ..tool import t\n",  # tool at module level: must be lazy
        "lib/tool/__init__.py": "",
        "lib/tool/t.py": "def f():\n    from ..high import b\n",
        "lib/stray.py": "",  # in no room
        "srv/__init__.py": "",
    })
    rooms = {"low": ("top.lib.low.",), "high": ("top.lib.high.",), "tool": ("top.lib.tool.",)}
    may = {"low": set(), "high": {"low", "tool"}, "tool": {"high"}}
    problems = room_problems(g, rooms, may, {("high", "tool")}, "top.lib")
    assert problems == [
        "lib/high/b.py:2: top.lib.high.b imports top.lib.tool.t at module level; high -> tool must be lazy",
        "lib/low/a.py:1: top.lib.low.a (low) imports top.lib.high.b (high), not in low's list",
        "top.lib is in no room",
        "top.lib.stray is in no room",
    ], problems
    # a room allowed to import one listed below it breaks the layers
    assert "low may import high, which is not above it in ROOMS" in room_problems(
        g, rooms, {**may, "low": {"high"}}, {("high", "tool")}, "top.lib")


def test_the_facade_rule_catches_what_it_should(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/search/__init__.py": "def f():\n    from .inner import a\n",  # the facade itself: fine
        "lib/search/inner/__init__.py": "",
        "lib/search/inner/a.py": "",
        "lib/user.py": "from .search import f\nfrom .search.inner import a\n",  # the second: past it
        "lib/ray.py": "from .search.inner.a import x\n",  # allowed below
        "srv/__init__.py": "",
        "srv/op.py": "import top.lib.search.inner.a\n",
    })
    rooms = {"search": ("top.lib.search",), "inner": ("top.lib.search.inner.",),
             "user": ("top.lib.user",), "ray": ("top.lib.ray",)}
    assert facade_problems(g, "top.lib.search", rooms, {("ray", "inner"): "why"}) == [
        "lib/user.py:2: top.lib.user imports top.lib.search.inner.a; import it from top.lib.search",
        "srv/op.py:1: top.srv.op imports top.lib.search.inner.a; import it from top.lib.search",
    ]
