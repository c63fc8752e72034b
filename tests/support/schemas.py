"""Walking the JSON schemas the product sends as ``response_format``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def subschemas(node: Any) -> Iterator[dict]:
    """Every object inside a JSON schema (the schema itself first)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from subschemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from subschemas(value)
