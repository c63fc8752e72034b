"""The package's large-scale shape: no import cycles, no private names imported across modules.

The import graph is built from the source (every ``import``/``from ... import`` of a scholargraph
module, including imports inside functions; ``if TYPE_CHECKING:`` blocks are not imports at run
time and are skipped, and so are function bodies in a package ``__init__``: its lazy public-API
imports are not import-time edges). ruff's PLC2701 checks private names too; this test keeps the rule when ruff
is not run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "scholargraph"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _runtime_nodes(tree: ast.AST, package_init: bool):
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
            elif not (package_init and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))):
                todo.append(child)


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports() -> tuple[nx.DiGraph, list[str]]:
    modules = _modules()
    graph, private = nx.DiGraph(), []
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py"):
            if isinstance(node, ast.Import):
                graph.add_edges_from((module, a.name) for a in node.names if a.name in modules and a.name != module)
            elif isinstance(node, ast.ImportFrom):
                target = _target(module, path, node)
                if not target.startswith("scholargraph"):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    dst = sub if sub in modules else target
                    if dst in modules and dst != module:
                        graph.add_edge(module, dst)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and sub not in modules:
                        private.append(f"{module} imports {target}.{alias.name}")
    return graph, private


def test_the_package_has_no_import_cycle():
    graph, _ = _imports()
    assert graph.number_of_edges() > 100  # the graph was really built
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == [], f"import cycles (move the shared part down a layer): {cycles}"


def test_no_private_name_is_imported_from_another_module():
    _, private = _imports()
    assert private == []
