"""The project's JSON repair against the ``json-repair`` package, on the repair's regression table.

    .venv/bin/python -m benchmarks.eval_json_repair [--json-out benchmarks/results/json_repair.json]

JSON repair could go through the maintained ``json-repair`` package where it covers the
cases. This measures which cases it covers. Inputs (``tests.support.broken_json``, the
table ``tests/extract/test_parse.py`` checks):

* ``table``: the broken outputs of the regression table (fences, prose, quotes, comments,
  literals, escapes, cut-off output, several values) and the value each must give.
* ``hopeless``: replies with no JSON in them; correct = refused (an error), not an invented value.
* ``truncation``: every prefix of a complete extraction reply (compact and pretty JSON), as a
  reply cut off at ``max_tokens`` would be. Counted: prefixes giving a value that holds an item
  which is not one of the reply's complete items (a half-read entity such as
  ``{"name": "SQuAD", "type": "Data"}``: wrong data entering the graph).

Each parser gets the reply as the product gets it: ``<think>`` blocks removed first
(``strip_reasoning``), then the parse. Correctness only; no timings.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import json_repair

from benchmarks.common import machine, write_result
from scholargraph.errors import ModelOutputError
from scholargraph.llm.repair import parse_json, strip_reasoning
from tests.support.broken_json import EXPECTED, FULL, HOPELESS, JSON_CASES, TRICKY


def _ours(raw: str) -> Any:
    return parse_json(raw)


def _package(raw: str) -> Any:
    value = json_repair.loads(strip_reasoning(raw))
    if value in ("", None, [], {}):  # what json-repair returns when it finds nothing
        raise ValueError("nothing found")
    return value


def _attempt(parse: Callable[[str], Any], raw: str) -> tuple[bool, Any]:
    try:
        return True, parse(raw)
    except (ModelOutputError, ValueError, RecursionError) as err:
        return False, repr(err)[:80]


def _partial_items(value: Any) -> int:
    """Items of ``value``'s lists that are not complete items of :data:`FULL`."""
    if not isinstance(value, dict):
        return 1
    return sum(1 for key, items in value.items() for item in (items if isinstance(items, list) else [items])
               if key not in FULL or item not in FULL[key])


def _table(parse: Callable[[str], Any]) -> dict[str, Any]:
    cases = {name: (raw, EXPECTED) for name, raw in JSON_CASES.items()} | TRICKY
    wrong = {}
    for name, (raw, expected) in cases.items():
        ok, value = _attempt(parse, raw)
        if not ok or value != expected:
            wrong[name] = value if ok else f"error: {value}"
    refused = sum(1 for raw in HOPELESS if not _attempt(parse, raw)[0])
    return {"table_cases": len(cases), "table_correct": len(cases) - len(wrong), "table_wrong": wrong,
            "hopeless": len(HOPELESS), "hopeless_refused": refused}


def _truncation(parse: Callable[[str], Any]) -> dict[str, Any]:
    out = {}
    for style, text in (("compact", json.dumps(FULL)), ("pretty", json.dumps(FULL, indent=2))):
        with_partial = usable = 0
        for cut in range(1, len(text) + 1):
            ok, value = _attempt(parse, text[:cut])
            if not ok:
                continue
            usable += 1
            with_partial += _partial_items(value) > 0
        out[style] = {"prefixes": len(text), "parsed": usable, "with_partial_items": with_partial}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json-out")
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": machine(), "json_repair_version": version("json-repair")}
    for name, parse in (("scholargraph", _ours), ("json_repair", _package)):
        result[name] = _table(parse) | {"truncation": _truncation(parse)}
    write_result("json_repair", result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
