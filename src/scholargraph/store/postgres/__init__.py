"""The PostgreSQL + pgvector backend: the store (:mod:`.store`) composed of role objects (the
graph :mod:`.graph`, the records :mod:`.records`; the communities, citations and mentions objects
both backends share: ``store/analysis_role.py``, ``store/mentions_role.py``) and its parts
(:mod:`.lexical`, :mod:`.vectors`), connections and units of work (:mod:`.conn`), the schema (:mod:`.schema`) and
the workers' leases (:mod:`.leases`)."""

from .store import PostgresStore

__all__ = ["PostgresStore"]
