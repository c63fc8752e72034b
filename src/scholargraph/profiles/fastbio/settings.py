"""The fastbio plug-in's settings: the profile's ``[plugins.fastbio]`` and the bio query mode's
``[plugins.bio]``. Older spellings still work: ``extraction.bio_dictionary`` / ``refine_threshold`` /
``refine_paragraphs`` and ``query.bio_threshold`` / ``bio_min_edge_weight`` / ``bio_edge_weight``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class FastBioSettings(BaseModel):
    """Extraction (seed 003 §2.4, §3.1)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    dictionary: str | None = Field(None, description="CSV/TSV of HGNC symbols / MeSH headings with aliases")
    refine_threshold: float = Field(0.6, ge=-1, le=1, description="paragraph similarity for stage-2 refinement")
    refine_paragraphs: int = Field(3, ge=1, le=20)


class BioModeSettings(BaseModel):
    """The bio query mode."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    threshold: float = Field(0.3, ge=-1, le=1, description="min similarity of relation descriptions")
    max_relations: int = Field(1000, ge=1, le=100_000, description="at most this many relations above the "
                               "threshold, the most similar (an exact search for every one reads every relation "
                               "vector of the graph)")
    min_edge_weight: float | None = Field(None, ge=0)
    edge_weight: Literal["min", "mean", "max"] = "min"
