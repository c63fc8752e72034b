"""The ppr query mode's settings (HippoRAG 2-style personalised PageRank over entity and passage
nodes): ``[plugins.ppr]``, registered with the mode by the core plug-in. The older spelling
``query.ppr_<key>`` still works."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PPRSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    damping: float = Field(0.5, gt=0, lt=1, description="probability of following an edge at each step")
    seed_passages: int = Field(3, ge=1, le=100, description="the question's best passages (dense + lexical) "
                                                               "that seed the walk")
    graph_weight: float = Field(0.0, ge=0, description="RRF weight of ppr's ranking fused with the question's "
                                                           "passages; 0 = ppr's ranking as is (not fused)")
    entity_weight: float = Field(1.0, ge=0, description="seed mass of the entities the question matches, "
                                                            "relative to its best passage; 0 = passages only")
    entity_min_score: float = Field(1.0, ge=-1, le=1, description="match score an entity needs to seed the walk: "
                                                                      "1 = named exactly in the question; lower also "
                                                                      "seeds nearest-vector matches and facts' ends")
    name_links: float = Field(1.0, ge=0, description="weight of the edges joining an entity name to the longer "
                                                         "names containing it ('Nicki Minaj' / 'singer Nicki "
                                                         "Minaj'), times the shorter name's specificity; 0 = none")
    facts: int = Field(5, ge=0, le=100, description="relations most similar to the question whose ends seed the walk")
    local_hops: int = Field(2, ge=1, le=4, description="above query.max_graph_relations: ppr walks the entities this "
                            "many hops from its seeds, with the passages stating them")
    local_entities: int = Field(2_000, ge=100, description="above query.max_graph_relations: at most this many "
                                "entities in ppr's neighbourhood (the hops stop when the next would pass it)")
    local_passages: int = Field(100, ge=1, description="above query.max_graph_relations: at most this many passages "
                                "per entity join ppr's neighbourhood, the question's own passages first (a hub "
                                "keeps its weight: its specificity counts every passage stating it)")
