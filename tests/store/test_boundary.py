"""Everything outside ``store/`` depends only on the storage protocols: no sqlite3, no SQL text,
no backend module, no private state of a store (the interfaces that are used)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import scholargraph

PACKAGE = Path(scholargraph.__file__).parent
SQL = re.compile(
    r"\b(SELECT\s+.+?\s+FROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)"
    r"|DROP\s+TABLE|ALTER\s+TABLE|PRAGMA\s+\w+|BEGIN\s+(IMMEDIATE|TRANSACTION)|ON\s+CONFLICT)\b",
    re.IGNORECASE | re.DOTALL,
)
BACKEND_MODULES = re.compile(r"(^|\.)store\.(sqlite\w*|schema|vectors)$")


def _store_expr(node: ast.expr) -> bool:
    """``store``, ``self.store``, ``kb.store``... (what consumers call a store)."""
    return (isinstance(node, ast.Name) and node.id == "store") or (isinstance(node, ast.Attribute) and node.attr == "store")


def violations(source: str, module: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{module}: import {a.name}" for a in node.names if a.name.split(".")[0] == "sqlite3"]
        elif isinstance(node, ast.ImportFrom):
            target = ("." * node.level) + (node.module or "")
            if (node.module or "").split(".")[0] == "sqlite3" or BACKEND_MODULES.search(target.lstrip(".")):
                found.append(f"{module}: from {target} import ...")
            elif target.rstrip(".").endswith("store") and any(BACKEND_MODULES.search(f"store.{a.name}") for a in node.names):
                found.append(f"{module}: from {target} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"{module}: SQL text {node.value.strip()[:50]!r}")
        elif isinstance(node, ast.Attribute) and _store_expr(node.value) and (node.attr.startswith("_") or node.attr == "conn"):
            found.append(f"{module}: private store state .{node.attr}")
    return found


def test_no_sql_sqlite_or_store_internals_outside_store():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "store":
            continue
        found += violations(path.read_text(encoding="utf-8"), ".".join(rel.with_suffix("").parts))
    assert found == []


def test_the_check_catches_each_kind_of_violation():
    bad = '''
import sqlite3
from ..store.sqlite import SQLiteStore
from ..store import sqlite_graph
def f(store, kb):
    store.conn.execute("SELECT id FROM entities WHERE x = 1")
    kb.store._lock
    sql = f"UPDATE relations SET weight = {1}"
'''
    found = violations(bad, "example")
    assert len(found) == 7, found
    assert violations("from ..store.base import Store\ndef f(store):\n    store.get_meta('x')\n", "ok") == []
