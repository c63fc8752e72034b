"""The PostgreSQL + pgvector backend: the store (:mod:`.store`) composed of its role parts
(:mod:`.graph`, :mod:`.analysis`, :mod:`.mentions`, :mod:`.records`, :mod:`.lexical`,
:mod:`.vectors`), connections and units of work (:mod:`.conn`), the schema (:mod:`.schema`) and
the workers' leases (:mod:`.leases`)."""

from .store import PostgresStore

__all__ = ["PostgresStore"]
