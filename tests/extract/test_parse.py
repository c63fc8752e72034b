"""The shared model-output parser: repaired JSON, schema coercion, delimiter records, salvage."""

from __future__ import annotations

import json
import re
from typing import Annotated

import pytest
from support.broken_json import EXPECTED, FULL, JSON_CASES, TRICKY

from scholargraph.errors import ModelOutputError
from scholargraph.extract.parse import (
    EXTRACTION_SCHEMA,
    EntityItem,
    ExtractionReply,
    map_entity_type,
    parse_extraction,
    parse_json,
)
from scholargraph.extract.types import PRESETS
from scholargraph.llm.output import Clamp, Flag, Integer, Items, Number, OneOf, Text, coerce, output_schema
from scholargraph.llm.repair import parse_json_result

PAPER = PRESETS["paper"]
BIO = PRESETS["biomedical"]

# --------------------------------------------------------------------------------------------
# parse_json: a table of real-world-ish broken outputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", list(JSON_CASES.values()), ids=list(JSON_CASES))
def test_parse_json_repairs(raw):
    assert parse_json(raw) == EXPECTED


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_table(name):
    raw, expected = TRICKY[name]
    assert parse_json(raw) == expected


def test_truncated_output_keeps_complete_items():
    raw, expected = TRICKY["cut inside an item"]
    result = parse_json_result(raw)
    assert result.truncated and result.value == expected
    assert not parse_json_result(JSON_CASES["plain"]).truncated


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("I cannot help with that", "no JSON found in output"),
        ("Sorry, I can't {help} with that", "unparseable JSON after repair"),
        ("", "empty model output"),
        ("<think>hmm, let me think about {it}", "no JSON found in output"),
    ],
)
def test_hopeless_output_raises_with_raw(raw, reason):
    with pytest.raises(ModelOutputError) as info:
        parse_json(raw)
    assert info.value.reason.startswith(reason)
    assert info.value.raw == raw


def test_deep_nesting_does_not_crash():
    value = parse_json("[" * 5000 + "]" * 5000)
    assert isinstance(value, list)
    parse_json('{"a": ' * 3000)  # truncated and absurdly deep: no RecursionError


# --------------------------------------------------------------------------------------------
# coerce
# --------------------------------------------------------------------------------------------


def test_coerce_repairs_and_reports():
    data = {
        "entities": [{"name": "BERT", "type": "Model"}, {"type": "Dataset"}, "GLUE", {"name": None}],
        "relations": [
            {"source": "BERT", "target": "GLUE", "strength": "8", "keywords": "evaluation, benchmark"},
            {"source": "BERT", "target": "SQuAD", "strength": "0.9", "keywords": ["qa"]},
            {"source": "BERT", "target": "X", "strength": 42},
            {"source": "BERT", "target": "Y", "strength": "high"},
            {"source": "BERT"},
        ],
        "keywords": "language models; benchmarks",
        "extra": 1,
    }
    value, problems = coerce(data, ExtractionReply)
    assert value["entities"] == [{"name": "BERT", "type": "Model"}]
    rels = value["relations"]
    assert rels[0] == {"source": "BERT", "target": "GLUE", "strength": 8.0, "keywords": ["evaluation", "benchmark"]}
    assert rels[1]["strength"] == 0.9
    assert rels[2]["strength"] == 10.0  # clamped to the maximum
    assert "strength" not in rels[3]  # invalid optional field dropped, item kept
    assert len(rels) == 4  # the relation without a target is dropped
    assert value["keywords"] == ["language models", "benchmarks"]
    assert value["extra"] == 1
    text = "\n".join(problems)
    assert "$.entities[1]: dropped: missing required 'name'" in text
    assert "$.entities[2]: dropped" in text and "$.entities[3]: dropped" in text
    assert "$.relations[4]: dropped" in text
    assert "clamped to maximum 10" in text
    assert "$.relations[3].strength: dropped" in text


def test_coerce_scalars_enum_nullable_and_single_object():
    assert coerce("8", Integer) == (8, [])
    assert coerce("0.5", Annotated[Number, Clamp(1)]) == (1.0, ["$: 0.5 clamped to minimum 1"])
    assert coerce("YES", Flag) == (True, [])
    assert coerce(" causal ", Annotated[str, OneOf("Causal", "Risk Factor")]) == ("Causal", [])
    assert coerce(None, Text | None) == (None, [])
    assert coerce(7, Text) == ("7", [])
    assert coerce({"name": "A"}, Items[EntityItem]) == ([{"name": "A"}], [])
    with pytest.raises(ModelOutputError, match="does not match the schema"):
        coerce("text", EntityItem)
    with pytest.raises(ModelOutputError):
        coerce({"type": "x"}, EntityItem)


def test_reply_models_give_the_schema():
    assert output_schema(Annotated[Number, Clamp(0, 1)]) == {"type": "number", "minimum": 0, "maximum": 1}
    assert output_schema(Annotated[str, OneOf("a", "b")]) == {"enum": ["a", "b"]}
    assert EXTRACTION_SCHEMA["properties"]["relations"]["items"]["properties"]["strength"] == {
        "type": "number", "minimum": 0, "maximum": 10}


def test_schema_is_compact_json():
    text = json.dumps(EXTRACTION_SCHEMA, separators=(",", ":"))
    assert len(text) < 700
    assert EXTRACTION_SCHEMA["required"] == ["entities"]


# --------------------------------------------------------------------------------------------
# entity types
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "types", "expected"),
    [
        ("model", PAPER, "Model"),
        ("  DATASET ", PAPER, "Dataset"),
        ("Datasets", PAPER, "Dataset"),
        ("metrics", PAPER, "Metric"),
        ("Research Method", PAPER, "Method"),
        ("organisation", PAPER, "Organization"),
        ("spaceship", PAPER, "Concept"),
        ("", PAPER, "Concept"),
        ("knowledge_concept", PRESETS["syllabus"], "Knowledge Concept"),
        ("learning outcomes", PRESETS["syllabus"], "Learning Outcome"),
        ("gene", BIO, "Gene/Protein"),
        ("Proteins", BIO, "Gene/Protein"),
        ("drug", BIO, "Drug/Compound"),
        ("GENETIC_VARIATION", BIO, "Genetic Variation"),
        ("cell types", BIO, "Cell Type"),
        ("spaceship", BIO, "Method"),  # no "Concept" in the preset: the last type
    ],
)
def test_map_entity_type(raw, types, expected):
    assert map_entity_type(raw, types) == expected


# --------------------------------------------------------------------------------------------
# parse_extraction
# --------------------------------------------------------------------------------------------

LIGHTRAG = """("entity"<|>"BERT"<|>"model"<|>"BERT is a bidirectional transformer encoder.")##
("entity"<|>"GLUE"<|>"dataset"<|>"GLUE is a benchmark of language understanding tasks.")##
("relationship"<|>"BERT"<|>"GLUE"<|>"BERT is evaluated on the GLUE benchmark."<|>"evaluation, benchmark"<|>8)##
("content_keywords"<|>"language models, benchmarks")<|COMPLETE|>"""


def _summary(ex):
    return (
        [(e.name, e.type, e.description) for e in ex.entities],
        [(r.source, r.target, r.description, r.keywords, r.strength) for r in ex.relations],
        [k.text for k in ex.keywords],
    )


def test_lightrag_tuples():
    ex = parse_extraction(LIGHTRAG, "c1", PAPER)
    ents, rels, kws = _summary(ex)
    assert ents == [
        ("BERT", "Model", "BERT is a bidirectional transformer encoder."),
        ("GLUE", "Dataset", "GLUE is a benchmark of language understanding tasks."),
    ]
    assert rels == [("BERT", "GLUE", "BERT is evaluated on the GLUE benchmark.", ["evaluation", "benchmark"], 8.0)]
    assert kws == ["language models", "benchmarks"]
    assert all(r.chunk_id == "c1" for r in ex.entities + ex.relations + ex.keywords)


def test_lightrag_variants():
    new_format = (
        "entity<|#|>BERT<|#|>Model<|#|>A transformer encoder.\n"
        "relation<|#|>BERT<|#|>GLUE<|#|>evaluation, benchmark<|#|>BERT is evaluated on the GLUE benchmark.\n"
        "<|COMPLETE|>"
    )
    ents, rels, _ = _summary(parse_extraction(new_format, "c", PAPER))
    assert ents == [("BERT", "Model", "A transformer encoder.")]
    assert rels == [("BERT", "GLUE", "BERT is evaluated on the GLUE benchmark.", ["evaluation", "benchmark"], 1.0)]

    piped = (
        "Here are the entities:\n"
        "1. entity | **BERT** | Models | A transformer encoder\n"
        "2. (\"entity\" | `SQuAD` | Data set | A reading comprehension dataset)\n"
        "3. relationship | BERT | SQuAD | BERT is fine-tuned on SQuAD | fine-tuning | 7\n"
        "content_keywords | question answering"
    )
    ents, rels, kws = _summary(parse_extraction(piped, "c", PAPER))
    assert ents == [("BERT", "Model", "A transformer encoder"), ("SQuAD", "Dataset", "A reading comprehension dataset")]
    assert rels == [("BERT", "SQuAD", "BERT is fine-tuned on SQuAD", ["fine-tuning"], 7.0)]
    assert kws == ["question answering"]

    tabbed = "entity\tBERT\tModel\tencoder\nrelationship\tBERT\tGLUE\tevaluated on\tevaluation\t9"
    ents, rels, _ = _summary(parse_extraction(tabbed, "c", PAPER))
    assert [e[0] for e in ents] == ["BERT"] and rels[0][:2] == ("BERT", "GLUE") and rels[0][4] == 9.0

    one_line = '("entity"<|>A<|>Method<|>x)("entity"<|>B<|>Task<|>y)("relationship"<|>A<|>B<|>solves<|>z<|>5)'
    ents, rels, _ = _summary(parse_extraction(one_line, "c", PAPER))
    assert [e[:2] for e in ents] == [("A", "Method"), ("B", "Task")] and len(rels) == 1


def test_json_key_variants():
    raw = json.dumps(
        {
            "entities": [{"entity_name": "**BERT**", "entity_type": "MODEL", "entity_description": "An encoder."}],
            "relationships": [
                {
                    "src_id": "BERT",
                    "tgt_id": "GLUE",
                    "relationship_description": "evaluated on",
                    "relationship_keywords": "evaluation; benchmark",
                    "weight": "8",
                }
            ],
            "high_level_keywords": ["language models"],
            "content_keywords": "benchmarks, NLP",
        }
    )
    ents, rels, kws = _summary(parse_extraction(raw, "c", PAPER))
    assert ents == [("BERT", "Model", "An encoder.")]
    assert rels == [("BERT", "GLUE", "evaluated on", ["evaluation", "benchmark"], 8.0)]
    assert kws == ["language models", "benchmarks", "NLP"]

    listed = '[{"name": "BERT", "type": "research method"}, {"head": "BERT", "relation": "uses", "tail": "Attention"}]'
    ents, rels, _ = _summary(parse_extraction(listed, "c", PAPER))
    assert ents == [("BERT", "Method", "")]
    assert rels == [("BERT", "Attention", "BERT uses Attention", ["uses"], 1.0)]

    edges = '{"nodes": [{"name": "A"}], "edges": [{"source": {"name": "A"}, "target": "B"}]}'
    ents, rels, _ = _summary(parse_extraction(edges, "c", PAPER))
    assert ents == [("A", "Concept", "")] and rels[0][:2] == ("A", "B")


def test_cleaning_and_filtering():
    raw = json.dumps(
        {
            "entities": [
                {"name": '  "Large   Language  Models"  ', "type": "concept"},
                {"name": "`GPT-4`", "type": "model"},
                {"name": "", "type": "model"},
                {"name": "x" * 121},
                {"name": "Transformer (Vaswani et al.)"},
            ],
            "relations": [
                {"source": "GPT-4", "target": "gpt-4", "description": "self loop"},
                {"source": "GPT-4", "target": "Unmentioned Entity", "strength": 12},
                {"source": "GPT-4"},
            ],
        }
    )
    problems: list[str] = []
    ex = parse_extraction(raw, "c", PAPER, problems=problems)
    assert [e.name for e in ex.entities] == ["Large Language Models", "GPT-4", "Transformer (Vaswani et al.)"]
    assert [(r.source, r.target, r.strength) for r in ex.relations] == [("GPT-4", "Unmentioned Entity", 10.0)]
    text = "\n".join(problems)
    assert "source equals target" in text and "entities[2]: dropped" in text and "overlong name" in text
    assert "missing required 'target'" in text


def test_mixed_json_and_tuples():
    raw = (
        '{"entities": [{"name": "BERT", "type": "Model"}]}\n'
        '("relationship"<|>"BERT"<|>"GLUE"<|>"BERT is evaluated on GLUE"<|>"evaluation"<|>6)<|COMPLETE|>'
    )
    ents, rels, _ = _summary(parse_extraction(raw, "c", PAPER))
    assert [e[0] for e in ents] == ["BERT"]
    assert rels == [("BERT", "GLUE", "BERT is evaluated on GLUE", ["evaluation"], 6.0)]


def test_broken_json_extraction_table():
    cases = [
        "```json\n{'entities': [{'name': 'Alzheimer's disease', 'type': 'Concept',},],}\n```",
        "<think>Alzheimer's is a disease.</think>\nSure! {entities: [{name: \"Alzheimer's disease\", type: Concept}]}",
        '{"entities": [{"name": "Alzheimer\'s disease", "type": "Concept"}, {"name": "Amyloid beta", "ty',
    ]
    for raw in cases:
        ex = parse_extraction(raw, "c", PAPER)
        assert [(e.name, e.type) for e in ex.entities] == [("Alzheimer's disease", "Concept")], raw


def test_unquoted_values_and_reasoning_only():
    ex = parse_extraction("{entities: [{name: BERT, type: Model}], keywords: [NLP, question answering]}", "c", PAPER)
    assert [(e.name, e.type) for e in ex.entities] == [("BERT", "Model")]
    assert [k.text for k in ex.keywords] == ["NLP", "question answering"]
    with pytest.raises(ModelOutputError, match="only reasoning"):
        parse_extraction("<think>The text mentions BERT and {GLUE}...", "c", PAPER)


def test_explicit_empty_is_valid():
    assert _summary(parse_extraction('{"entities": []}', "c", PAPER)) == ([], [], [])
    assert _summary(parse_extraction('```json\n{"entities": [], "relations": []}\n```', "c", PAPER)) == ([], [], [])


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("I cannot help with that", "no JSON or delimiter-style records found"),
        ("   ", "empty model output"),
        ('{"entities": [', "output truncated before the first complete item"),
        ('{"answer": "I do not know"}', "no usable entities, relations or keywords"),
        ('{"entities": [{"type": "Model"}, {"name": ""}]}', "no usable entities, relations or keywords"),
        ("Sorry, I can't {help} with that", "unparseable JSON after repair"),
    ],
)
def test_hopeless_extraction_raises_with_raw(raw, reason):
    with pytest.raises(ModelOutputError) as info:
        parse_extraction(raw, "c", PAPER)
    assert info.value.reason.startswith(reason), info.value.reason
    assert info.value.raw == raw


# --------------------------------------------------------------------------------------------
# Deterministic fuzz: every truncation of valid output salvages a subset or fails cleanly
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["compact", "pretty", "single-quoted", "fenced", "loose"])
def test_truncation_fuzz_parse_json(style):
    if style == "compact":
        text = json.dumps(FULL)
    elif style == "loose":  # unquoted keys, trailing commas, a comment, a <think> block
        text = re.sub(r'"(\w+)":', r"\1:", json.dumps(FULL, indent=2))
        text = re.sub(r"\n(\s*)([}\]])", r",\n\1\2", text)
        text = "<think>ok</think>\n// result\n" + text
    elif style == "pretty":
        text = json.dumps(FULL, indent=2)
    elif style == "fenced":
        text = "Here you go:\n```json\n" + json.dumps(FULL, indent=1) + "\n```\nDone."
    else:
        text = json.dumps(FULL).replace("'", "\u2019").replace('\\"', "").replace('"', "'")
    for cut in range(len(text) + 1):
        raw = text[:cut]
        try:
            value = parse_json(raw)
        except ModelOutputError as err:
            assert err.raw == raw
            continue
        if style == "single-quoted":
            full = json.loads(json.dumps(FULL).replace("'", "\u2019").replace('\\"', ""))
        else:
            full = FULL
        # Top level: a (possibly partial) dict whose lists hold only complete items, in order.
        assert isinstance(value, dict), (cut, raw, value)
        for key, items in value.items():
            assert key in full and isinstance(items, list), (cut, raw, value)
            assert items == full[key][: len(items)], (cut, raw, value)
    assert parse_json(text) == (full if style == "single-quoted" else FULL)


NEW_FORMAT = (
    "entity<|#|>BERT<|#|>Model<|#|>A bidirectional transformer encoder.\n"
    "entity<|#|>GLUE<|#|>Dataset<|#|>A benchmark.\n"
    "relation<|#|>BERT<|#|>GLUE<|#|>evaluation<|#|>BERT is evaluated on the GLUE benchmark.\n"
    "<|COMPLETE|>"
)


@pytest.mark.parametrize("text", [json.dumps(FULL), json.dumps(FULL, indent=2), LIGHTRAG, NEW_FORMAT],
                         ids=["json", "json-pretty", "lightrag", "lightrag-new"])
def test_truncation_fuzz_parse_extraction(text):
    complete = parse_extraction(text, "c", PAPER)
    names = {(e.name, e.type) for e in complete.entities}
    pairs = {(r.source, r.target) for r in complete.relations}
    full_rels = {(r.source, r.target, r.description, tuple(r.keywords), r.strength) for r in complete.relations}
    keywords = {k.text for k in complete.keywords}
    for cut in range(len(text) + 1):
        raw = text[:cut]
        try:
            ex = parse_extraction(raw, "c", PAPER)
        except ModelOutputError as err:
            assert err.raw == raw
            assert not err.reason.startswith("internal parser error"), err.reason
            continue
        assert {(e.name, e.type) for e in ex.entities} <= names, (cut, raw)
        assert {(r.source, r.target) for r in ex.relations} <= pairs, (cut, raw)
        if text is not NEW_FORMAT:  # unbracketed records: a cut last description cannot be told apart
            rels = {(r.source, r.target, r.description, tuple(r.keywords), r.strength) for r in ex.relations}
            assert rels <= full_rels, (cut, raw)
            assert {k.text for k in ex.keywords} <= keywords, (cut, raw)
