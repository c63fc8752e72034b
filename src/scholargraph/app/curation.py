"""Curation: deleting papers, merging and splitting entities. Each first finishes the graph
maintenance an earlier run left owed, and refreshes the graph after. Works on the
:class:`~.workspace.Workspace` (and the indexing service's maintenance), never on the facade."""

from __future__ import annotations

from pathlib import Path

from ..errors import NotFoundError, ScholarGraphError
from ..extract.base import NoExtraction
from ..llm.embeddings import DeferredEmbedder
from .indexing import Indexing
from .views import Deletion, EntityMerge
from .workspace import Workspace


class Curation:
    def __init__(self, workspace: Workspace, indexing: Indexing):
        self.ws = workspace
        self.indexing = indexing

    def find_document(self, ref: str) -> str:
        """The id of the one paper ``ref`` names: its id, its file name or path, or its title (case
        and spacing ignored). ``NotFoundError`` when none, ``ScholarGraphError`` listing them when several."""
        if self.ws.store.get_document(ref) is not None:
            return ref
        wanted = " ".join(ref.split()).casefold()
        matches = [r for r in self.ws.store.list_documents()
                   if wanted in {" ".join((r.title or "").split()).casefold(), (r.source_path or "").casefold(),
                                 Path(r.source_path or "").name.casefold()}]
        if not matches:
            raise NotFoundError(f"no document with id {ref!r}, and no paper with that file name or title "
                                "(see `scholargraph status`)")
        if len(matches) > 1:
            listed = "; ".join(f"{r.id} ({r.title or '?'}, {Path(r.source_path or '').name})" for r in matches)
            raise ScholarGraphError(f"{ref!r} matches {len(matches)} papers: {listed}; give one of these ids")
        return matches[0].id

    async def adelete(self, ref: str) -> Deletion:
        """Delete a paper named by id, file name or title (:meth:`find_document`). Graph maintenance
        an earlier run left owed is finished first (even when ``ref`` names no paper)."""
        await self.indexing.finish_maintenance()
        doc_id = self.find_document(ref)
        row = self.ws.store.get_document(doc_id)
        if row is not None:  # papers citing it now cite a stub of it (graph.citations)
            from ..graph.citations import document_deleted

            await self.ws.store.awrite(lambda: document_deleted(self.ws.store, row))
        # the model is loaded only if a description left behind must be re-embedded
        return await self.ws.pipeline(NoExtraction(), DeferredEmbedder(lambda: self.ws.embedder)).delete(doc_id)

    def documents_from(self, source: str | Path) -> list[str]:
        """Ids of the papers read from the file ``source`` (its path as indexed, or as given)."""
        given = {str(source), str(Path(source).absolute()), str(Path(source).resolve())}
        return [r.id for r in self.ws.store.list_documents() if r.source_path in given
                or (r.source_path and str(Path(r.source_path).absolute()) in given)]

    async def adelete_source(self, source: str | Path) -> list[Deletion]:
        """Delete every paper read from the file ``source`` (a JSON or CSV file may hold many)."""
        ids = self.documents_from(source)
        if not ids:
            raise NotFoundError(f"no paper was read from {str(source)!r} (see `scholargraph status`)")
        return [await self.adelete(doc_id) for doc_id in ids]

    async def amerge_entities(self, keep: str, *others: str) -> EntityMerge:
        from ..graph.edit import merge_entities

        await self.indexing.finish_maintenance()
        keep_id = self.ws.one_entity(keep)
        other_ids = [self.ws.one_entity(o) for o in others]
        gone = merge_entities(self.ws.store, keep_id, other_ids)
        await self.indexing.refresh_graph()
        return EntityMerge(kept=keep_id, merged=gone["entity"], relations_merged=len(gone["relation"]))

    async def asplit_entity(self, ref: str) -> list[str]:
        from ..graph.edit import split_entity

        await self.indexing.finish_maintenance()
        ids = split_entity(self.ws.store, self.ws.one_entity(ref))
        await self.indexing.refresh_graph()
        return ids
