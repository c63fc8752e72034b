"""fastbmRAG's Python API (seed 003 §3.2) over a :class:`~scholargraph.kb.KnowledgeBase`: the
fastbio plug-in's front end for Python users (it sits above the facade, so outside the plug-in).

    import scholargraph.fastbmrag as fastbmrag
    rag = fastbmrag.RAG(working_dir="endometriosis", collection_name="endometriosis")
    rag.insert_paper(documents)          # a DataFrame: abstract, main_text, paper_id (+ title, year, ...)
    print(rag.query("Which genes are up- or down-regulated in endometriosis?"))

The constructor takes fastbmRAG's arguments (models, embedding, similarity cutoff, concurrency,
backend) and maps them to settings exactly as ``scholargraph fastbm`` maps its options
(:func:`.profiles.fastbio.cli.fastbm_overrides`). The collection is the workspace ``working_dir/collection_name``;
``insert_paper`` indexes with the fastbio profile (abstract draft, main-text refinement) and skips
papers already in it; ``query`` answers in bio mode and returns the answer text followed by its
references, as fastbmRAG prints it. pandas is not needed: any object with a DataFrame's
``columns`` and ``to_dict(orient="records")`` works, and so does a list of dicts.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .config import Settings, load_settings
from .errors import InputError
from .ingest.csvfile import records_to_documents
from .kb import KnowledgeBase
from .models import Answer
from .profiles.fastbio.cli import FASTBM_TOP_MATCH, fastbm_overrides, merge_overrides
from .profiles.fastbio.query import GivenFilters, bio_answer, format_references
from .query.citations import number_cited_sources
from .query.trace import build_trace

REQUIRED_COLUMNS = ("abstract", "main_text", "paper_id")
SOURCE = "(insert_paper)"


def _records(documents: Any) -> list[Mapping[str, Any]]:
    """Rows of a DataFrame-like object (``columns`` + ``to_dict(orient="records")``) or of a list
    of dicts, checked as fastbmRAG checks them: the required columns present, none missing a value."""
    if hasattr(documents, "to_dict") and hasattr(documents, "columns"):
        columns = [str(c) for c in documents.columns]
        records = list(documents.to_dict(orient="records"))
    elif isinstance(documents, Sequence) and all(isinstance(r, Mapping) for r in documents):
        records = list(documents)
        columns = list(dict.fromkeys(str(k) for r in records for k in r))
    else:
        raise InputError(f"insert_paper expects a DataFrame (or a list of dicts), got {type(documents).__name__}")
    for column in REQUIRED_COLUMNS:
        if column not in columns:
            raise InputError(f"Missing required column: {column} (columns: {', '.join(columns) or 'none'})")
        missing = [i for i, r in enumerate(records) if _missing(r.get(column))]
        if missing:
            raise InputError(f"Column {column} contains null values (rows {', '.join(map(str, missing[:10]))})")
    return records


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


class RAG:
    """A fastbmRAG collection: ``RAG(working_dir, collection_name, ...)``, ``insert_paper(df)``,
    ``query(question, ...)``. Extra keywords: ``llm_url`` (any OpenAI-compatible server, instead of
    ``backend``'s default URL), ``dictionary`` (HGNC/MeSH names file), ``settings`` (a dict of
    scholargraph settings overrides)."""

    def __init__(self, working_dir: str | Path = "./test", collection_name: str = "paper",
                 llm_index_model_name: str | None = None, llm_query_model_name: str | None = None,
                 embed_model_name: str | None = None, embed_size: int | None = None,
                 embedding_similarity: float | None = None, llm_semaphore_limit: int | None = None,
                 embed_semaphore_limit: int | None = None, backend: str | None = None, *,
                 llm_url: str | None = None, dictionary: str | Path | None = None,
                 settings: Mapping[str, Any] | None = None) -> None:
        self.working_dir = Path(working_dir).expanduser()
        self.collection_name = collection_name
        self._options = argparse.Namespace(
            working_dir=str(self.working_dir), collection_name=collection_name, llm_url=llm_url, backend=backend,
            llm_concurrency=llm_semaphore_limit, llm_update_model_name=llm_index_model_name,
            llm_query_model_name=llm_query_model_name, embed_model_name=embed_model_name, embedding_dim=embed_size,
            embedding_similarity=embedding_similarity, dictionary=str(dictionary) if dictionary else None,
            similarity=None, top_match=FASTBM_TOP_MATCH, quiet=True, json=False)
        self._extra = dict(settings or {})
        self.embed_semaphore_limit = embed_semaphore_limit  # accepted; embeddings are batched instead
        self.notes: list[str] = []  # what the last call noted (defaults taken, papers skipped...)

    @property
    def workdir(self) -> Path:
        return self.working_dir / self.collection_name

    def settings(self, job: str) -> Settings:
        """The settings of ``job`` ("update" or "query"), as ``scholargraph fastbm --job JOB`` makes them."""
        self._options.job = job
        overrides = fastbm_overrides(self._options, self.notes)
        overrides["progress"] = False
        return load_settings(self.workdir, merge_overrides(overrides, self._extra))

    def insert_paper(self, documents: Any) -> None:
        """Index the papers of ``documents`` (columns ``abstract``, ``main_text``, ``paper_id``, plus
        any of title/articletitle, year, journal, authors, weight, a ``meta_info`` dict...). Papers
        whose ``paper_id`` is already in the collection are skipped. Raises ``InputError`` (also a
        ``ValueError``, as fastbmRAG raises) when a required column is missing or has null values."""
        self.notes = []
        docs = records_to_documents(_records(documents), SOURCE)
        with KnowledgeBase(settings=self.settings("update")) as kb:
            report = kb.insert(texts=docs)
        self.notes += report.notes
        self.last_report = report
        if not report.added and report.skipped and not report.failed:
            self.notes.append("All paper exists")

    def query(self, question: str, top_results: int = 300, gene: Sequence[str] = (), disease: Sequence[str] = (),
              paper_id: Sequence[int | str] = (), question_analysis: bool = True, filter_importance: float = -1,
              temperature: float | None = None, similarity_score: float | None = None) -> str:
        """The answer to ``question`` with its references (paper id, title, journal, year).

        ``gene``/``disease``: names to filter on, beside those the LLM parses from the question
        (``question_analysis=False``: only these); ``paper_id``: only evidence from these papers;
        ``top_results``: at most this many papers; ``filter_importance`` in (0, 1]: leave out
        relations whose edge weight is below that quantile of the graph's edge weights (-1: none);
        ``similarity_score``: the cosine cutoff between question and relation descriptions
        (default: the setting ``plugins.bio.threshold``, tuned to the embedding model);
        ``temperature``: the answer's sampling temperature (default: ``llm.temperature``)."""
        answer = self.answer(question, top_results, gene, disease, paper_id, question_analysis, filter_importance,
                             temperature, similarity_score)
        references = format_references(answer.sources, answer.cited or None)
        return answer.text + (f"\n\nReferences:\n{references}" if references else "")

    def answer(self, question: str, top_results: int = 300, gene: Sequence[str] = (), disease: Sequence[str] = (),
               paper_id: Sequence[int | str] = (), question_analysis: bool = True, filter_importance: float = -1,
               temperature: float | None = None, similarity_score: float | None = None) -> Answer:
        """As :meth:`query`, the whole :class:`~scholargraph.models.Answer` (sources, usage, notes,
        what the question was parsed into in ``answer.trace``)."""
        if not isinstance(question, str) or not question.strip():
            raise InputError("Question must be a non-empty string")
        if top_results < 1:
            raise InputError("top_results must be a positive integer")
        if filter_importance != -1 and not 0 <= filter_importance <= 1:
            raise InputError("filter_importance must be -1 (no filter) or between 0 and 1")
        self.notes = []
        settings = self.settings("query")
        if temperature is not None:
            settings.llm.temperature = temperature
        given = GivenFilters(genes=[str(g) for g in gene], diseases=[str(d) for d in disease],
                             papers={str(p) for p in paper_id}, parse=question_analysis)
        with KnowledgeBase(settings=settings, create=False) as kb:
            answer = kb.run(self._aanswer(kb, question, given, top_results, filter_importance, similarity_score))
        answer.notes[:0] = self.notes
        return answer

    @staticmethod
    async def _aanswer(kb, question: str, given: GivenFilters, top_results: int, importance: float,
                       similarity: float | None) -> Answer:
        await kb.acheck_models()
        weight = _weight_quantile(kb.store, importance) if importance > 0 else None
        answer = await bio_answer(kb.store, kb.settings, kb.embedder, kb.llm, question, weight_threshold=weight,
                                  threshold=similarity, top_k=top_results, given=given)
        answer.trace = build_trace(kb.store, answer.mode, answer.trace)
        return number_cited_sources(answer)


def _weight_quantile(store, q: float) -> float | None:
    """The edge weight at quantile ``q`` of the graph's edges (fastbmRAG's ``filter_importance``)."""
    from .graph.weights import all_weights

    weights = sorted(all_weights(store)[1].values())
    if not weights:
        return None
    return weights[min(len(weights) - 1, int(q * len(weights)))]


__all__ = ["RAG", "REQUIRED_COLUMNS"]
