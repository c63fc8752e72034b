"""The compact extraction schema (extract/schema.py) as a real llama.cpp server takes it."""

from __future__ import annotations

import json

from support.schemas import subschemas

from scholargraph.extract.parse import parse_extraction
from scholargraph.extract.schema import MAX_ENTITIES, compact_extraction_schema, items_for


def test_no_boolean_subschema_llama_cpp_refuses():
    """llama.cpp answered 400 "JSON schema error at #/properties/entities/items/items: schema must be an
    object" to ``"items": false``."""
    schema = compact_extraction_schema(["Task", "Method"], 300)
    assert all(v is not False and v is not True for node in subschemas(schema) for k, v in node.items()
               if k in ("items", "additionalItems"))
    json.dumps(schema)  # plain JSON


def test_list_bounds_follow_the_chunk_length():
    small, large = items_for(250), items_for(1200)
    assert 12 <= small[0] < large[0] <= MAX_ENTITIES
    schema = compact_extraction_schema(["Task"], 250)
    assert schema["properties"]["entities"]["maxItems"] == small[0]
    assert schema["properties"]["entities"]["items"]["prefixItems"][1] == {"enum": ["Task"]}


def test_a_real_reply_in_the_compact_format_parses():
    """Shaped as Qwen2.5-Coder-1.5B writes it under the schema (llama.cpp): pretty-printed tuples."""
    reply = ('{\n  "entities": [\n    ["Kikuchi approximation", "Method", "approximates the log partition function"],\n'
             '    ["log partition function", "OtherScientificTerm", "quantity approximated"]\n  ],\n'
             '  "relations": [\n    ["Kikuchi approximation", "approximates", "log partition function", '
             '"The Kikuchi approximation approximates the log partition function"]\n  ],\n'
             '  "keywords": ["Bethe approximation", "region graph"]\n}')
    found = parse_extraction(reply, "c1", ["Task", "Method", "OtherScientificTerm"])
    assert [(e.name, e.type) for e in found.entities] == [("Kikuchi approximation", "Method"),
                                                          ("log partition function", "OtherScientificTerm")]
    relation = found.relations[0]
    assert (relation.source, relation.target, relation.keywords) == ("Kikuchi approximation", "log partition function",
                                                                     ["approximates"])
    assert not found.cut_off
