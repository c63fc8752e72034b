"""The JSON schema of the compact extraction reply (``profiles/academic/prompts/extract_json.txt``).

Each entity is ``[name, type, description]`` and each relation ``[source, relation, target,
description]`` (``prefixItems`` tuples), so no key is repeated per item: about the completion tokens
of the record format, with decoding constrained by the server (llama.cpp, vLLM, Ollama turn the
schema into a grammar). The relation is a subject-predicate-object triple, the order small models
know: with ``[source, target, keywords, description, strength]`` Qwen2.5-Coder 1.5B put the
description under keywords and "10" under description. Every list and string is bounded: a small
model that starts repeating itself stops at the bound instead of writing until the context is full.
:mod:`.collector` reads the tuples back into the same entity/relation dicts as every other format.
"""

from __future__ import annotations

from typing import Any

# Bounds per chunk (1,200 tokens by default). Measured with Qwen2.5-Coder 0.5B/1.5B on SciERC: a sound
# reply has 8-20 entities and fewer relations; a degenerate one repeats one item until a bound.
MAX_ENTITIES = 30
MAX_RELATIONS = 30
MAX_KEYWORDS = 8
NAME_CHARS = 80
DESCRIPTION_CHARS = 200
KEYWORD_CHARS = 60


def string_schema(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    """A JSON-schema string of at most ``max_chars`` (and at least ``min_chars``) characters."""
    schema: dict[str, Any] = {"type": "string", "maxLength": max_chars}
    if min_chars:
        schema["minLength"] = min_chars
    return schema


def _tuple(*items: dict[str, Any]) -> dict[str, Any]:
    # no "items": false: llama.cpp refuses a boolean schema there (the length bounds say the same)
    return {"type": "array", "prefixItems": list(items), "minItems": len(items), "maxItems": len(items)}


def items_for(chunk_tokens: int) -> tuple[int, int]:
    """(entities, relations) bounds for a chunk of ``chunk_tokens``: about one entity per 40 tokens
    (SciERC abstracts of ~250 tokens annotate 15-20), within 12 and :data:`MAX_ENTITIES`. A
    degenerate reply repeats items up to the bound, so the bound is what such a reply costs."""
    bound = max(12, min(MAX_ENTITIES, 8 + chunk_tokens // 40))
    return bound, min(MAX_RELATIONS, bound)


def reply_tokens_bound(chunk_tokens: int, type_chars: int = NAME_CHARS) -> int:
    """The most completion tokens a reply under :func:`compact_extraction_schema` can take: every list
    full and every string at its bound (~4 characters per token, plus the JSON punctuation of each
    item). A budget below it cuts sound replies: on BioRED abstracts (more names per sentence than
    SciERC) Qwen2.5-Coder 1.5B used more than 1,024 tokens in every reply, each then asked again."""
    entities, relations = items_for(chunk_tokens)
    entity = (NAME_CHARS + type_chars + DESCRIPTION_CHARS) // 4 + 12
    relation = (2 * NAME_CHARS + KEYWORD_CHARS + DESCRIPTION_CHARS) // 4 + 16
    return entities * entity + relations * relation + MAX_KEYWORDS * (KEYWORD_CHARS // 4 + 4) + 16


def compact_extraction_schema(entity_types: list[str], chunk_tokens: int | None = None) -> dict[str, Any]:
    """The schema sent as ``response_format`` with the compact extraction prompt; types are an enum
    when the profile names them; list bounds follow the chunk's length when it is given."""
    max_entities, max_relations = items_for(chunk_tokens) if chunk_tokens else (MAX_ENTITIES, MAX_RELATIONS)
    name = string_schema(NAME_CHARS, 1)
    entity_type: dict[str, Any] = {"enum": list(entity_types)} if entity_types else string_schema(NAME_CHARS, 1)
    return {
        "type": "object",
        "properties": {
            "entities": {"type": "array", "maxItems": max_entities,
                         "items": _tuple(name, entity_type, string_schema(DESCRIPTION_CHARS))},
            "relations": {"type": "array", "maxItems": max_relations,
                          "items": _tuple(name, string_schema(KEYWORD_CHARS, 1), name, string_schema(DESCRIPTION_CHARS))},
            "keywords": {"type": "array", "maxItems": MAX_KEYWORDS, "items": string_schema(KEYWORD_CHARS, 1)},
        },
        "required": ["entities", "relations", "keywords"],
        "additionalProperties": False,
    }
