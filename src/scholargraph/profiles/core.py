"""The core plug-in: profile ``none`` (chunks and vectors only, naive RAG; no graph) and the query
modes of the engine itself, which every profile's graph supports: ``naive``, ``local``, ``subgraph``,
``global``, ``hybrid`` and ``ppr`` (:data:`scholargraph.query.modes.CORE_MODES`), and ``summary``
(community reports; :mod:`scholargraph.query.summary`)."""

from __future__ import annotations

from ..extract.base import NoExtraction
from ..plugins.base import ExtractorContext, Profile
from ..query.modes import CORE_MODES
from ..query.summary import SUMMARY_MODE


def _make(ctx: ExtractorContext) -> NoExtraction:
    return NoExtraction()


PROFILE = Profile("none", "chunks and vectors only (naive RAG); no graph", _make,
                  modes=(*CORE_MODES, SUMMARY_MODE))
