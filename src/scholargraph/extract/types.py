"""Entity-type presets (thesis 000 §4.4.2, seed 001 §III.B, seed 003 §2.4)."""

from __future__ import annotations

from ..errors import ConfigError

PRESETS: dict[str, list[str]] = {
    "paper": ["Method", "Model", "Concept", "Task", "Dataset", "Metric", "Paper", "Author", "Organization", "Tool"],
    # seed 001 §III.B: "concepts, topics, persons, papers, models, methods, equations, and variables"
    "kgrag": ["Concept", "Topic", "Person", "Paper", "Model", "Method", "Equation", "Variable", "Dataset",
              "Organization", "Tool"],
    "syllabus": ["Course", "Knowledge Concept", "Skill", "Assessment", "Learning Outcome", "Prerequisite", "Topic",
                 "Literature", "Teacher"],
    "biomedical": ["Gene/Protein", "Genetic Variation", "Disease", "Drug/Compound", "Pathway", "Cell Type",
                   "Organism", "Anatomy", "Phenotype", "Method"],
}

# seed 001 §III.B.2: "Co-author, Affiliation, Citation, Result, Methodology, Funding, Research Area,
# Tool/Resource"; used when the entity types are the preset of the same name and no relation types are set
RELATION_PRESETS: dict[str, list[str]] = {
    "kgrag": ["Co-author", "Affiliation", "Citation", "Result", "Methodology", "Funding", "Research Area",
              "Tool/Resource", "Author", "Uses", "Part of"],
}

BIO_RELATION_TYPES = ["Causal", "Risk Factor", "Protective Factor", "Biomarker", "Target", "Modifier", "Regulation",
                      "Expression"]


def entity_types(spec: str | list[str]) -> list[str]:
    """A preset name, a comma-separated list, or a list of type names."""
    if isinstance(spec, list):
        types = [t.strip() for t in spec if t.strip()]
    elif spec in PRESETS:
        types = PRESETS[spec]
    else:
        types = [t.strip() for t in spec.split(",") if t.strip()]
        if len(types) == 1 and types[0] not in PRESETS and " " not in types[0] and types[0].islower():
            raise ConfigError(f"extraction.entity_types: unknown preset {spec!r}; presets: {', '.join(PRESETS)} "
                              "(or give a comma-separated list of types)")
    if not types:
        raise ConfigError("extraction.entity_types is empty")
    return list(dict.fromkeys(types))


def relation_types(entity_spec: str | list[str], configured: list[str] | None) -> list[str]:
    """The relation types to ask for: the configured ones, else the preset's (kgrag), else none."""
    if configured:
        return [t.strip() for t in configured if t.strip()]
    return list(RELATION_PRESETS.get(entity_spec, [])) if isinstance(entity_spec, str) else []
