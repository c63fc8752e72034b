"""The application services under the :class:`~scholargraph.kb.KnowledgeBase` facade:
:mod:`.workspace` (the composition root), :mod:`.indexing`, :mod:`.curation` and :mod:`.browse`.
Each service depends on the workspace (and curation/browse on indexing's maintenance), never on
the facade; the CLI and the server may reach them through the facade's ``workspace``, ``indexing``,
``curation`` and ``browse`` attributes."""
