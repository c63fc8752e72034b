"""The localkg profile's settings: ``[plugins.localkg]`` (``SCHOLARGRAPH_PLUGINS__LOCALKG__*``; the
older section ``[localkg]`` and ``SCHOLARGRAPH_LOCALKG__*`` still work)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class LocalKGSettings(BaseModel):
    """The localkg profile (paper2lkg, seed 004 §4): per-paper local knowledge graphs."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    levels: list[Literal["section", "paragraph", "sentence"]] = Field(
        default_factory=lambda: ["section", "paragraph", "sentence"],  # type: ignore[arg-type]
        description="contexts mentions and local relations are extracted at (§4.1, §4.3)")
    unit_tokens: int = Field(2500, ge=200, description="a longer section is read in windows of whole paragraphs")
    batch_sentences: bool = Field(True, description="one call per paragraph for its sentences (answers stay per "
                                                    "sentence) instead of one call per sentence")
    batch_size: int = Field(20, ge=1, le=200, description="mentions, types or predicates per description call")
    link_threshold: float = Field(0.9, ge=-1, le=1, description="cosine of two mention descriptions that links "
                                                                 "them (§4.2; the seed's 0.95 was for bge-base)")
    context_tokens: int = Field(6000, ge=50, description="the paper is shrunk to this for paper-level "
                                                          "relations (Algorithm 4)")
    global_entities: int = Field(20, ge=2, le=200, description="most relevant entities paired at paper level ...")
    global_fraction: float = Field(0.1, gt=0, le=1, description="... or this share of the entities, if fewer")
    pairs_per_call: int = Field(10, ge=1, le=100, description="entity pairs asked about in one call (Prompt 4.2)")
    taxonomy: bool = Field(True, description="skos:broader from potential parent types (§4.5)")
    taxonomy_threshold: float = Field(0.85, ge=-1, le=1, description="cosine of a type's and an entity's description")
    new_concepts: bool = Field(True, description="a parent type no entity matches becomes a general concept")
    predicate_threshold: float = Field(0.9, ge=-1, le=1, description="cosine of two predicate descriptions that "
                                                                      "groups them (§4.5)")
    repair: bool = Field(True, description="ask once more when an answer is not valid JSON")
