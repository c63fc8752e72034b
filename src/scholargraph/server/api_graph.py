"""Graph routes: entities (search, merge, split), neighbourhoods, subgraphs, relation evidence,
communities, statistics with cost per paper, and export."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ..models import usage_to_json
from .state import Admin, ServerState, job_response, state_of

router = APIRouter(prefix="/api", tags=["graph"])


@router.get("/entities")
async def entities(request: Request, search: str | None = Query(None, max_length=200),
                   type: str | None = Query(None, max_length=100), limit: int = Query(50, ge=1, le=1000)) -> dict:
    """Entities by degree; ``search`` matches names and aliases."""
    state = state_of(request)
    found = await state.runner.call(state.kb.entities, type, search, limit)
    return {"entities": [e.to_json() for e in found]}


class MergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keep: str = Field(min_length=1, description="entity name or id that stays")
    others: list[str] = Field(min_length=1, max_length=100, description="entities folded into it")


@router.post("/entities/merge", dependencies=[Admin])
async def merge(request: Request, body: MergeRequest, wait: float = Query(30.0)) -> JSONResponse:
    """Fold entities the resolver kept apart into one (a job; the result is in ``job.result``)."""
    state = state_of(request)
    return await job_response(state, state.jobs.submit("merge", keep=body.keep, others=body.others), wait)


class SplitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: str = Field(min_length=1, description="entity name or id")


@router.post("/entities/split", dependencies=[Admin])
async def split(request: Request, body: SplitRequest, wait: float = Query(30.0)) -> JSONResponse:
    """Split an entity into one per name it was merged from (a job)."""
    state = state_of(request)
    return await job_response(state, state.jobs.submit("split", entity=body.entity), wait)


@router.get("/graph/neighbourhood")
async def neighbourhood(request: Request, entity: str = Query(min_length=1), depth: int = Query(1, ge=1, le=3),
                        limit: int = Query(60, ge=1, le=500)) -> dict:
    """An entity (name or id) and its neighbours: ``{"nodes", "edges", "center", "truncated"}``."""
    state = state_of(request)
    return (await state.runner.call(state.kb.browse.neighbourhood, entity, depth, limit)).to_json()


class SubgraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entities: list[str] = Field(min_length=1, max_length=50)
    max_length: int = Field(4, ge=1, le=8, description="longest path (edges) joining two of them")


@router.post("/graph/subgraph")
async def subgraph(request: Request, body: SubgraphRequest) -> dict:
    """The entities and the shortest paths joining them: ``{"nodes", "edges", "paths"}``."""
    state = state_of(request)
    return (await state.runner.call(state.kb.browse.subgraph, body.entities, body.max_length)).to_json()


@router.get("/graph/relations/{relation_id}")
async def relation(request: Request, relation_id: str) -> dict:
    """A relation with its evidence sentences, each with paper, section and pages."""
    state = state_of(request)
    return (await state.runner.call(state.kb.browse.relation, relation_id)).to_json()


@router.get("/graph/communities")
async def communities(request: Request, level: int | None = Query(None, ge=0),
                      reports: bool = Query(True, description="write the missing reports first (LLM calls)")) -> dict:
    """Entity communities (``{"levels", "communities": [{"id", "level", "members", ...}]}``) with
    their reports, the missing ones written now (``reports=false``: without them, e.g. to colour
    the graph)."""
    state = state_of(request)
    return (await state.runner.run(state.kb.acommunities(level, members=True, reports=reports))).to_json()


@router.get("/graph/overview")
async def overview(request: Request, limit: int = Query(1500, ge=10, le=5000),
                   type: str | None = Query(None, max_length=100), document: str | None = Query(None, max_length=200)) -> dict:
    """The whole graph for the overview: up to ``limit`` entities (of ``type``, of paper ``document``),
    the most connected first (``sampled``: more match, ``total_nodes`` of them), each with its
    level-0 ``community`` and a position (``x``, ``y``) that keeps communities together."""
    state = state_of(request)
    return (await state.runner.call(state.kb.browse.overview, limit, type or None, document or None)).to_json()


def _reports_state(state: ServerState) -> dict:
    found = state.kb.browse.reports_status()
    pending, llm = found.pending, found.llm
    if not found.communities:
        message = "No communities yet: they are computed when papers are indexed."
    elif pending == 0:
        message = "Every community has its report."
    elif llm:
        message = f"{pending} report(s) not written yet: writing them calls the LLM once per community."
    else:
        message = (f"{pending} report(s) not written yet. No LLM is configured, so reports are extractive "
                   "(key entities, papers and passages, no written summary); configure [llm] for written ones.")
    return {"pending": pending, "llm": llm, "message": message}


@router.get("/graph/communities/reports")
async def reports_state(request: Request) -> dict:
    """Whether community reports are still to be written (``pending``), whether an LLM would write
    them (``llm``) and a sentence saying so (``message``)."""
    state = state_of(request)
    return await state.runner.call(_reports_state, state)


@router.post("/graph/communities/reports", dependencies=[Admin])
async def write_reports(request: Request, wait: float = Query(0.0)) -> JSONResponse:
    """Write the missing community reports now (a job: LLM calls when one is configured, else
    extractive reports); its result says how many were written."""
    state = state_of(request)
    return await job_response(state, state.jobs.submit("reports"), wait)


@router.get("/stats")
async def stats(request: Request) -> dict:
    """Counts, LLM usage by purpose, entity types, and calls and tokens per paper."""
    state = state_of(request)
    kb = state.kb

    def gather() -> dict:
        titles = {row.id: row.title for row in kb.status()}
        cost = kb.cost_by_document()
        return {**kb.stats().to_json(), "entity_types": kb.browse.entity_types(),
                "cost_by_document": [{"id": doc, "title": titles.get(doc), **usage_to_json(usage)}
                                     for doc, usage in cost.items()]}

    data = await state.runner.call(gather)
    data.pop("workspace", None)  # a server path
    return data


@router.get("/export")
async def export(request: Request, format: Literal["json", "graphml"] = Query("json")) -> Response:
    """The whole graph as node-link JSON or GraphML (Gephi, Cytoscape, yEd)."""
    state = state_of(request)
    text = await state.runner.call(state.kb.browse.export_graph, format)
    media = "application/json" if format == "json" else "application/graphml+xml"
    return Response(text, media_type=media,
                    headers={"Content-Disposition": f'attachment; filename="scholargraph-graph.{format}"'})
