"""The embedded SQLite backend: one workspace folder, WAL, one writer thread (:mod:`.writer`), the
store itself (:mod:`.store`) composed of role objects (the graph :mod:`.graph`, the records
:mod:`.records`; the communities, citations and mentions objects both backends share:
``store/analysis_role.py``, ``store/mentions_role.py``) and its full-text part (:mod:`.lexical`),
the schema and its migrations (:mod:`.schema`)
and the file lock of an indexing run (:mod:`.lock`)."""

from .store import DB_NAME, SQLiteStore

__all__ = ["DB_NAME", "SQLiteStore"]
