"""Entity-type presets (thesis 000 §4.4.2, seed 001 §III.B, seed 003 §2.4)."""

from __future__ import annotations

from ..errors import ConfigError

PRESETS: dict[str, list[str]] = {
    "paper": ["Method", "Model", "Concept", "Task", "Dataset", "Metric", "Paper", "Author", "Organization", "Tool"],
    "syllabus": ["Course", "Knowledge Concept", "Skill", "Assessment", "Learning Outcome", "Prerequisite", "Topic",
                 "Literature", "Teacher"],
    "biomedical": ["Gene/Protein", "Genetic Variation", "Disease", "Drug/Compound", "Pathway", "Cell Type",
                   "Organism", "Anatomy", "Phenotype", "Method"],
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
