"""fastbmRAG-compatible Python API: ``import scholargraph.fastbmrag as fastbmrag``, then
``rag = fastbmrag.RAG(working_dir=..., collection_name=...)``, ``rag.insert_paper(dataframe)``,
``rag.query(question)`` (seed 003 §3.2; see docs/fastbmrag.md and :mod:`.profiles.fastbio.api`)."""

from .profiles.fastbio.api import RAG, REQUIRED_COLUMNS

__all__ = ["RAG", "REQUIRED_COLUMNS"]
