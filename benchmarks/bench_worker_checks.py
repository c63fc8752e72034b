"""What a long-lived worker asks the database after each batch, on PostgreSQL, as the knowledge
base grows (issue 28: the end-of-run work in proportion to the batch, not to the knowledge base).

    .venv/bin/python -m benchmarks.bench_worker_checks [--documents 200000] [--relations 200000]

One throwaway PostgreSQL 18 + pgvector (``scholargraph.testing.postgres``): ``--documents`` rows
in ``documents`` (all PROCESSED but 4 PENDING and 3 PROCESSING), ``--relations`` relations among
``--relations / 2`` entities, every connected entity a member of a level-0 community (100 each).
Median of 5 calls, in ms, through the store:

* which documents other workers index: ``document_ids(PROCESSING)`` and ``document_ids(PENDING, 1)``
  (the claim index) against ``status_counts()`` (the GROUP BY every batch ran before);
* whether the communities follow the graph: ``community_growth(seq)`` (the relations that arrived
  after an arrival number, here the last 100, and their ends in no community) and ``graph_edits()``
  (what the update decides from now), ``community_drift()`` (one pass over the entities and members,
  counted in the database: what it decided from before) and reading every edge and member into
  Python and comparing them (before that).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from benchmarks.common import machine, write_result
from scholargraph.models import DocStatus
from scholargraph.store import open_store
from scholargraph.testing.postgres import TempPostgres


def fill(dsn: str, documents: int, relations: int) -> None:
    entities = max(2, relations // 2)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("INSERT INTO documents(id, title, status, size, created_at, updated_at) "
                  "SELECT 'd' || g, 't', CASE WHEN g <= 4 THEN 'PENDING' WHEN g <= 7 THEN 'PROCESSING' "
                  "ELSE 'PROCESSED' END, g %% 1000, 0, 0 FROM generate_series(1, %s) g", (documents,))
        c.execute("INSERT INTO entities(id, name, type, updated_at, dirty) "
                  "SELECT 'e' || g, 'n' || g, 'T', 0, false FROM generate_series(1, %s) g", (entities,))
        c.execute("INSERT INTO relations(id, source_id, target_id, updated_at, dirty) SELECT 'r' || g, "
                  "'e' || (1 + g %% %s), 'e' || (1 + (g * 7919) %% %s), 0, false FROM generate_series(1, %s) g",
                  (entities, entities, relations))
        c.execute("INSERT INTO communities(id, level, signature, size) "
                  "SELECT 'c' || g, 0, 's' || g, 100 FROM generate_series(0, %s) g", (entities // 100,))
        c.execute("INSERT INTO community_members(community_id, level, entity_id) "
                  "SELECT 'c' || (substr(e, 2)::int / 100), 0, e FROM "
                  "(SELECT source_id AS e FROM relations UNION SELECT target_id FROM relations) n")
        c.execute("VACUUM ANALYZE")


def median_ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def share_read_whole(store) -> float:
    """The check every batch ran before: every edge and every member read into Python."""
    edges, stored = store.all_edges(), store.list_communities(None, True)
    nodes = {x for _, s, t, _ in edges for x in (s, t)}
    assigned = {m for c in stored if c.level == 0 for m in c.members}
    return len(nodes ^ assigned) / max(1, len(nodes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--relations", type=int, default=200_000)
    args = parser.parse_args()
    info = machine()
    with TempPostgres() as pg, tempfile.TemporaryDirectory() as tmp:
        dsn = pg.create_database("checks")
        store = open_store(Path(tmp) / "ws", "postgres", dsn=dsn)
        try:
            fill(dsn, args.documents, args.relations)
            drift = store.community_drift()
            top = store.community_growth(1 << 62).seq  # the last arrival number
            result = {
                "documents": args.documents, "relations": args.relations, "machine": info,
                "ms": {"status_counts": median_ms(store.status_counts),
                       "document_ids_processing": median_ms(lambda: store.document_ids(DocStatus.PROCESSING)),
                       "document_ids_pending_1": median_ms(lambda: store.document_ids(DocStatus.PENDING, 1)),
                       "interrupted_ids": median_ms(store.interrupted_ids),
                       "community_drift": median_ms(store.community_drift, 3),
                       "community_growth_after_100_new": median_ms(lambda: store.community_growth(top - 100)),
                       "graph_edits": median_ms(store.graph_edits),
                       "edges_and_members_read_whole": median_ms(lambda: share_read_whole(store), 3)},
                "drift": {"connected": drift.connected, "unassigned": drift.unassigned, "gone": drift.gone},
            }
        finally:
            store.close()
    write_result(f"worker_checks_{args.documents}_{args.relations}", result)


if __name__ == "__main__":
    main()
