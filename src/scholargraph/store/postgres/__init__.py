"""The PostgreSQL + pgvector backend: the store (:mod:`.store`) composed of its role parts
(:mod:`.graph`, :mod:`.records`, :mod:`.lexical`, :mod:`.vectors`; the communities, citations and
mentions roles are the objects both backends share: ``store/analysis_role.py``,
``store/mentions_role.py``), connections and units of work (:mod:`.conn`), the schema (:mod:`.schema`) and
the workers' leases (:mod:`.leases`)."""

from .store import PostgresStore

__all__ = ["PostgresStore"]
