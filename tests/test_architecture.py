"""The package's large-scale shape (docs/architecture.md, "Layers"): no import cycles, no private names
imported across modules, every module on a layer that imports only its own layer and those below,
nothing below the facade importing the CLI or the server, plug-ins reached only through the registry,
and no function-level or type-only import hiding a loop.

The import graph is built from the source: every ``import``/``from ... import`` of a scholargraph
module, each marked as made at module level, inside a function, or in an ``if TYPE_CHECKING:``
block (types only: no import at run time). Function bodies in a package ``__init__`` are its lazy
public API (``scholargraph.KnowledgeBase``), not imports of the package. ruff's PLC2701 checks
private names too; this test keeps the rule when ruff is not run.

The few imports that break a rule today are listed below by name, each with why; an entry that no
longer exists fails the test, so the lists only shrink.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "scholargraph"
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"

# Bottom to top: a module may import its own layer and the layers below it (at run time). A module
# belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("scholargraph", "scholargraph.text", "scholargraph.errors", "scholargraph.models",
                    "scholargraph.prompts", "scholargraph.progress", "scholargraph.report", "scholargraph.sync")),
    ("settings", ("scholargraph.config",)),
    ("storage and input", ("scholargraph.store", "scholargraph.ingest")),
    ("model clients", ("scholargraph.llm",)),
    ("plug-in contract", ("scholargraph.plugins", "scholargraph.extract.base",
                          "scholargraph.profiles.base", "scholargraph.profiles.registry")),  # the last two: old paths
    ("knowledge", ("scholargraph.extract", "scholargraph.graph", "scholargraph.export", "scholargraph.analysis",
                   "scholargraph.evaluation")),
    ("retrieval", ("scholargraph.query",)),
    ("plug-ins", ("scholargraph.profiles",)),
    ("application", ("scholargraph.app", "scholargraph.demo")),
    ("facade", ("scholargraph.kb",)),
    ("interfaces", ("scholargraph.cli", "scholargraph.__main__", "scholargraph.server", "scholargraph.testing",
                    "scholargraph.fastbmrag")),
)
INTERFACES = ("scholargraph.cli", "scholargraph.__main__", "scholargraph.server")
PLUGINS = ("scholargraph.profiles.core", "scholargraph.profiles.offline", "scholargraph.profiles.academic",
           "scholargraph.profiles.fastbio", "scholargraph.profiles.localkg")

# Run-time imports of a higher layer, with why they remain.
UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {
}
# Type-only imports (``if TYPE_CHECKING:``) that close a loop with the run-time imports, with why.
TYPE_LOOP_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("scholargraph", "scholargraph.kb"):
        "the lazy public API names KnowledgeBase for type checkers; llm.http_pools reads __version__",
    ("scholargraph.testing._llm_http", "scholargraph.testing.llm_server"):
        "the HTTP handler's type of the scripted server it serves",
}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    where: str  # "module", "function" or "typing"

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.imported} ({self.where})"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _statements(tree: ast.AST, package_init: bool):
    """(import statement, where) of a module; a package ``__init__``'s function bodies are skipped."""
    todo: list[tuple[ast.AST, str]] = [(tree, "module")]
    while todo:
        node, where = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, where
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo += [(c, "typing") for c in child.body] + [(c, where) for c in child.orelse]
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if not package_init:
                    todo.append((child, "typing" if where == "typing" else "function"))
            else:
                todo.append((child, where))


@cache
def _scan() -> tuple[tuple[Import, ...], tuple[str, ...], frozenset[str]]:
    modules = _modules()
    imports, private = [], []
    for module, path in modules.items():
        for node, where in _statements(ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py"):
            if isinstance(node, ast.Import):
                imports += [Import(module, a.name, node.lineno, where) for a in node.names
                            if a.name in modules and a.name != module]
                continue
            target = _target(module, path, node)
            if not target.startswith("scholargraph"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                dst = sub if sub in modules else target
                if dst in modules and dst != module:
                    imports.append(Import(module, dst, node.lineno, where))
                if alias.name.startswith("_") and not alias.name.startswith("__") and sub not in modules:
                    private.append(f"{module} imports {target}.{alias.name}")
    return tuple(imports), tuple(private), frozenset(modules)


def _graph(*wheres: str, skip: frozenset[tuple[str, str]] = frozenset()) -> nx.DiGraph:
    imports, _, modules = _scan()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    graph.add_edges_from((i.importer, i.imported) for i in imports
                         if i.where in wheres and (i.importer, i.imported) not in skip)
    return graph


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _under(module, (prefix,)) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    return best[0] if best else None


def _run_time() -> list[Import]:
    return [i for i in _scan()[0] if i.where != "typing"]


def test_the_package_has_no_import_cycle():
    """Imports inside functions count: moving one to the top of its module must not make a loop."""
    graph = _graph("module", "function")
    assert graph.number_of_edges() > 100  # the graph was really built
    assert _cycles(graph) == [], "import cycles (move the shared part down a layer)"


def test_no_function_level_or_type_only_import_hides_a_loop():
    loops = _cycles(_graph("module", "function", "typing", skip=frozenset(TYPE_LOOP_EXCEPTIONS)))
    assert loops == [], "a loop that only TYPE_CHECKING or a function-level import keeps from running"
    typing = {(i.importer, i.imported) for i in _scan()[0] if i.where == "typing"}
    assert sorted(set(TYPE_LOOP_EXCEPTIONS) - typing) == [], "listed exceptions that are gone: drop them"
    for edge in TYPE_LOOP_EXCEPTIONS:  # each entry is still needed
        rest = frozenset(TYPE_LOOP_EXCEPTIONS) - {edge}
        assert _cycles(_graph("module", "function", "typing", skip=rest)), f"{edge} closes no loop any more: drop it"


def test_no_private_name_is_imported_from_another_module():
    assert list(_scan()[1]) == []


def test_every_module_is_on_a_layer():
    assert sorted(m for m in _scan()[2] if layer_of(m) is None) == []


def test_modules_import_only_their_layer_and_those_below():
    upward = {(i.importer, i.imported): i for i in _run_time() if layer_of(i.imported) > layer_of(i.importer)}
    unexpected = [str(i) for edge, i in sorted(upward.items()) if edge not in UPWARD_EXCEPTIONS]
    assert unexpected == [], "imports of a higher layer (docs/architecture.md, Layers)"
    assert sorted(set(UPWARD_EXCEPTIONS) - set(upward)) == [], "listed exceptions that are gone: drop them"


def test_nothing_below_the_interfaces_imports_the_cli_or_the_server():
    found = sorted({(i.importer, i.imported) for i in _run_time()
                    if _under(i.imported, INTERFACES) and not _under(i.importer, INTERFACES)})
    assert [edge for edge in found if edge not in UPWARD_EXCEPTIONS] == []


# Public import paths that name one plug-in's API on purpose, with why.
PLUGIN_ALIASES = {
    "scholargraph.fastbmrag": "the import path fastbmRAG users call (`import scholargraph.fastbmrag`, docs/fastbmrag.md)",
}


def test_plugins_are_reached_through_the_registry_only():
    """Core code looks a profile or mode up by name (profiles.registry); it never imports one."""
    by_name = sorted(str(i) for i in _scan()[0] if _under(i.imported, PLUGINS) and not _under(i.importer, PLUGINS)
                     and i.importer not in PLUGIN_ALIASES)
    assert by_name == []


def test_the_package_never_imports_its_test_kit():
    users = sorted(str(i) for i in _scan()[0]
                   if _under(i.imported, ("scholargraph.testing",)) and not _under(i.importer, ("scholargraph.testing",)))
    assert users == []


def test_the_architecture_page_lists_the_layers_in_order():
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|", section, re.M)
    assert [name for _, name in rows] == [name for name, _ in LAYERS]


def _facade_methods() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse((PACKAGE / "kb.py").read_text(encoding="utf-8"))
    facade = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "KnowledgeBase")
    return {f.name: f for f in facade.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            and not f.name.startswith("_") and not any(ast.unparse(d).endswith(("property", "setter")) for d in f.decorator_list)}


def test_the_facade_is_thin_and_its_sync_twins_keep_their_types():
    """KnowledgeBase delegates to the application services (app/): at most 25 public methods, an
    async method and its sync twin counted once; a twin spells out its parameters (no **kwargs)."""
    methods = _facade_methods()
    operations = {name.removeprefix("a") if name.startswith("a") and name.removeprefix("a") in methods else name
                  for name in methods}
    assert len(operations) <= 25, sorted(operations)
    untyped = [name for name, f in methods.items() if f.args.kwarg is not None]
    assert untyped == []


def test_application_services_never_use_the_facade():
    users = sorted(str(i) for i in _scan()[0] if _under(i.importer, ("scholargraph.app",))
                   and _under(i.imported, ("scholargraph.kb", "scholargraph.cli", "scholargraph.server")))
    assert users == []


# Outside store/, only the facade and the composition root hold the aggregate Store; every other
# consumer is typed against the roles it uses or the protocol joining them (store/base.py).
STORE_COMPOSITION = frozenset({"scholargraph.kb", "scholargraph.app.workspace"})


def test_consumers_name_the_storage_roles_they_use():
    users = set()
    for module, path in _modules().items():
        if _under(module, ("scholargraph.store",)) or module in STORE_COMPOSITION:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(("store", "store.base")) \
                    and any(a.name == "Store" for a in node.names):
                users.add(module)
    assert sorted(users) == [], "type against the roles (store/base.py), not the aggregate Store"


def test_backends_are_composed_of_role_objects_not_mixins_that_declare_their_host():
    """A backend's part gets what it needs of the store in its constructor; a class that only declares
    callables its host provides (``_rows: Callable[...]``) is a mixin reaching into its host."""
    found = []
    for module, path in _modules().items():
        if not _under(module, ("scholargraph.store.sqlite", "scholargraph.store.postgres")):
            continue
        for cls in (n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef)):
            found += [f"{module}.{cls.name}.{node.target.id}" for node in cls.body
                      if isinstance(node, ast.AnnAssign) and node.value is None and isinstance(node.target, ast.Name)
                      and ast.unparse(node.annotation).startswith("Callable")]
    assert found == []
