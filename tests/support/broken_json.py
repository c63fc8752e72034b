"""Broken model output and what it must parse to: the regression table of the JSON repair
(:mod:`scholargraph.llm.repair`), shared by its tests and by ``benchmarks.eval_json_repair``
(which runs the same table through the ``json-repair`` package). Test data, never used by the
product.
"""

from __future__ import annotations

from typing import Any

EXPECTED = {"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}]}

JSON_CASES = {
    "plain": '{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}]}',
    "fenced": '```json\n{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}]}\n```',
    "unclosed fence": '```json\n{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}]}',
    "prose wrapped": 'Here is the JSON you asked for:\n{"entities": [{"name": "BERT", "type": "Model"}, '
    '{"name": "GLUE", "type": "Dataset"}]}\nHope this helps! Let me know if you\'d like {more}.',
    "trailing commas": '{"entities": [{"name": "BERT", "type": "Model",}, {"name": "GLUE", "type": "Dataset",},],}',
    "single quotes": "{'entities': [{'name': 'BERT', 'type': 'Model'}, {'name': 'GLUE', 'type': 'Dataset'}]}",
    "unquoted keys": '{entities: [{name: "BERT", type: "Model"}, {name: "GLUE", type: "Dataset"}]}',
    "unquoted values": "{entities: [{name: BERT, type: Model}, {name: GLUE, type: Dataset}]}",
    "think block": '<think>The user wants {"entities"}. BERT is a model...</think>\n'
    '{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}]}',
    "dangling </think>": 'so the answer is {x}</think>{"entities": [{"name": "BERT", "type": "Model"}, '
    '{"name": "GLUE", "type": "Dataset"}]}',
    "comments": '{\n  // the entities\n  "entities": [{"name": "BERT", /* encoder */ "type": "Model"},\n'
    '  {"name": "GLUE", "type": "Dataset"} // last\n]}',
    "smart quotes": "{\u201centities\u201d: [{\u201cname\u201d: \u201cBERT\u201d, \u201ctype\u201d: \u201cModel\u201d}, "
    "{\u2018name\u2019: \u2018GLUE\u2019, \u2018type\u2019: \u2018Dataset\u2019}]}",
    "missing commas": '{"entities": [{"name": "BERT" "type": "Model"}\n{"name": "GLUE", "type": "Dataset"}]}',
    "forgotten ]": '{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}}',
}

# (raw, expected): quotes, literals, escapes, truncation, several values.
TRICKY: dict[str, tuple[str, Any]] = {
    "apostrophe": ('{"name": "Alzheimer\'s disease"}', {"name": "Alzheimer's disease"}),
    "apostrophes in single quotes": ("{'name': 'Alzheimer's disease', 'x': 'Crohn's'}",
                                     {"name": "Alzheimer's disease", "x": "Crohn's"}),
    "inner double quotes": ('{"d": "the so-called "best" model", "n": 1}', {"d": 'the so-called "best" model', "n": 1}),
    "brackets and comment markers in text": ('{"d": "see [1] {a} // not a comment /* nor this */",}',
                                             {"d": "see [1] {a} // not a comment /* nor this */"}),
    "Python literals, NaN, Infinity, 007": (
        '{"a": True, "b": False, "c": None, "d": NaN, "e": -Infinity, "f": 1.5e2, "g": 007}',
        {"a": True, "b": False, "c": None, "d": None, "e": None, "f": 150.0, "g": 7}),
    "raw newline and tab": ('{"d": "line one\nline two\ttab"}', {"d": "line one\nline two\ttab"}),
    "LaTeX backslashes": ('{"d": "\\\\beta vs \\beta and \\alpha, caf\\u00e9\\n"}',
                          {"d": "\\beta vs \\beta and \\alpha, café\n"}),
    "cut inside an item": ('{"entities": [{"name": "BERT", "type": "Model"}, {"name": "GLUE", "type": "Dataset"}, '
                           '{"name": "SQuAD", "type": "Data', EXPECTED),
    "cut inside a key": ('{"entities": [{"name": "BERT"}], "relations": [{"source": "BERT", "target": "GLUE"}], "keyw',
                         {"entities": [{"name": "BERT"}], "relations": [{"source": "BERT", "target": "GLUE"}]}),
    "cut inside a string": ('{"a": 1, "b": "unfinish', {"a": 1}),
    "cut inside a number": ('{"a": 1, "b": 12', {"a": 1}),
    "one value per line": ('{"name": "A"}\n{"name": "B"}\n', [{"name": "A"}, {"name": "B"}]),
    "concatenated values": ('{"name": "A"}{"name": "B"}', [{"name": "A"}, {"name": "B"}]),
    "two fenced values": ('```json\n{"a": 1}\n```\nand\n```json\n{"b": 2}\n```', [{"a": 1}, {"b": 2}]),
    "bracketed prose before": ('As shown in [1], the result is:\n{"a": [1, 2]}', {"a": [1, 2]}),
}

# Output that holds no JSON: the repair must refuse it rather than invent a value.
HOPELESS = ["I cannot help with that", "Sorry, I can't {help} with that", "<think>hmm, let me think about {it}"]

FULL = {
    "entities": [
        {"name": "BERT", "type": "Model", "description": "A bidirectional encoder [1], \"pre-trained\"."},
        {"name": "Alzheimer's disease", "type": "Concept", "description": "A neurodegenerative disease."},
        {"name": "GLUE", "type": "Dataset", "description": "Benchmark {tasks}: 9 of them."},
    ],
    "relations": [
        {"source": "BERT", "target": "GLUE", "keywords": ["evaluation", "benchmark"], "description": "d1",
         "strength": 8},
        {"source": "BERT", "target": "Alzheimer's disease", "keywords": ["application"], "description": "d2",
         "strength": 0.5},
    ],
    "keywords": ["language models", "benchmarks"],
}
