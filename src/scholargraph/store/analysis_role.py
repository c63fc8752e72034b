"""Communities, community reports and the citation network (``CommunityStore`` and
``CitationStore`` of :mod:`.base`), one role object each for both backends.

:class:`Communities` and :class:`Citations` work through the backend's :class:`~.units.SqlSeam`;
a store holds them as ``communities`` and ``citations`` and :class:`KeepsAnalysis` answers the
store's part of the contract from them, once for both. Write methods run inside a unit of work;
called alone they are one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict

from ..models import Community, CommunityReport, PaperReference, StubPaper
from .base import CommunityDrift, CommunityGrowth
from .units import SqlSeam

_COMMUNITY_COLUMNS = "id, level, signature, parent_id, relations, weight"
_REFERENCE_COLUMNS = "citing_id, ordinal, raw, target_id, doi, pmid, title, year"
_STUB_COLUMNS = "id, title, doi, pmid, year, raw"
# relations, communities, connected entities (every relation end is an entity), level-0 members,
# and those of them no longer connected; each EXISTS one probe of a relations end index, each
# member one row of community_members' key (level, entity_id)
_DRIFT = """SELECT (SELECT COUNT(*) FROM relations), (SELECT COUNT(*) FROM communities),
       (SELECT COUNT(*) FROM entities e WHERE EXISTS (SELECT 1 FROM relations r WHERE r.source_id = e.id)
            OR EXISTS (SELECT 1 FROM relations r WHERE r.target_id = e.id)),
       (SELECT COUNT(*) FROM community_members WHERE level = 0),
       (SELECT COUNT(*) FROM community_members m WHERE m.level = 0
            AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.source_id = m.entity_id)
            AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.target_id = m.entity_id))"""
# the relations that arrived after an arrival number ({seq}: the backend's column), their ends in no
# level-0 community (one probe of community_members' key each), the arrival number now (the top of
# its index) and whether any community is stored
_GROWTH = """SELECT (SELECT COUNT(*) FROM relations WHERE {seq} > {m}),
       (SELECT COUNT(*) FROM (SELECT source_id AS e FROM relations WHERE {seq} > {m}
                              UNION SELECT target_id FROM relations WHERE {seq} > {m}) n
            WHERE NOT EXISTS (SELECT 1 FROM community_members c WHERE c.level = 0 AND c.entity_id = n.e)),
       (SELECT COALESCE(MAX({seq}), 0) FROM relations),
       (SELECT COUNT(*) FROM (SELECT 1 FROM communities LIMIT 1) c)"""
_EDITS = ("graph_edits_entities", "graph_edits_relations")  # meta keys of the running counts
# a report as put_community_reports stores it (json.dumps' separators) says how it was written
_EXTRACTIVE = '%"method": "extractive"%'


def _report(data: str) -> CommunityReport:
    fields = json.loads(data)
    known = CommunityReport.__dataclass_fields__
    return CommunityReport(**{k: v for k, v in fields.items() if k in known})


class Communities:
    """``CommunityStore`` over a backend's SQL; ``relation_seq`` is the backend's column of the
    relations' arrival numbers."""

    def __init__(self, sql: SqlSeam, relation_seq: str = "seq"):
        self.sql = sql
        self.relation_seq = relation_seq

    def replace_communities(self, communities: Sequence[Community]) -> None:
        sql = self.sql

        def work() -> None:
            # Workers replace the set when each finishes: one after the other (PostgreSQL, READ
            # COMMITTED: the DELETE below, run after the turn is taken, removes what the previous one committed).
            sql.take_turns("communities")
            sql.execute("DELETE FROM community_members", ())
            sql.execute("DELETE FROM communities", ())
            sql.execute_many(f"INSERT INTO communities(id, level, parent_id, signature, size, relations, weight) "
                             f"VALUES ({sql.marks(7)})",
                             [(c.id, c.level, c.parent_id, c.signature, len(c.members), c.relations, c.weight)
                              for c in communities])
            sql.execute_many(f"INSERT INTO community_members(community_id, level, entity_id) VALUES ({sql.marks(3)})",
                             [(c.id, c.level, e) for c in communities for e in c.members])

        sql.write(work)

    def list_communities(self, level: int | None = None, members: bool = False) -> list[Community]:
        where, params = (f"WHERE level = {self.sql.mark}", (level,)) if level is not None else ("", ())
        rows = self.sql.rows(f"SELECT {_COMMUNITY_COLUMNS} FROM communities {where} ORDER BY level, size DESC, id",
                             params)
        out = [Community(r[0], r[1], r[2], [], r[3], r[4], r[5]) for r in rows]
        if members and out:
            found = self.community_members([c.id for c in out]) if level is not None else self._all_members()
            for c in out:
                c.members = found.get(c.id, [])
        return out

    def _all_members(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for r in self.sql.rows("SELECT community_id, entity_id FROM community_members "
                               "ORDER BY community_id, entity_id", ()):
            out.setdefault(r[0], []).append(r[1])
        return out

    def community_members(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for part in self.sql.parts(ids):
            of_ids, params = self.sql.one_of("community_id", part)
            for r in self.sql.rows(f"SELECT community_id, entity_id FROM community_members WHERE {of_ids} "
                                   "ORDER BY community_id, entity_id", params):
                out[r[0]].append(r[1])
        return out

    def communities_of(self, entity_ids: Sequence[str], level: int) -> dict[str, str]:
        out: dict[str, str] = {}
        for part in self.sql.parts(entity_ids):
            of_ids, params = self.sql.one_of("entity_id", part)
            rows = self.sql.rows(f"SELECT entity_id, community_id FROM community_members "
                                 f"WHERE level = {self.sql.mark} AND {of_ids}", (level, *params))
            out.update({r[0]: r[1] for r in rows})
        return out

    def put_community_reports(self, reports: Sequence[CommunityReport]) -> None:
        now = time.time()
        rows = self.sql.in_order((r.signature, json.dumps(asdict(r), ensure_ascii=False), now) for r in reports)
        self.sql.write(lambda: self.sql.execute_many(
            f"INSERT INTO community_reports(signature, report, updated_at) VALUES ({self.sql.marks(3)}) "
            "ON CONFLICT (signature) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at", rows))

    def community_reports(self, signatures: Sequence[str] | None = None) -> dict[str, CommunityReport]:
        if signatures is None:
            return {r[0]: _report(r[1]) for r in self.sql.rows("SELECT signature, report FROM community_reports", ())}
        out: dict[str, CommunityReport] = {}
        for part in self.sql.parts(dict.fromkeys(signatures)):
            of_signatures, params = self.sql.one_of("signature", part)
            rows = self.sql.rows(f"SELECT signature, report FROM community_reports WHERE {of_signatures}", params)
            out.update({r[0]: _report(r[1]) for r in rows})
        return out

    def delete_orphan_reports(self) -> int:
        return int(self.sql.write(lambda: self.sql.execute(
            "DELETE FROM community_reports WHERE signature NOT IN (SELECT signature FROM communities)", ()).rowcount))

    def community_drift(self) -> CommunityDrift:
        relations, communities, connected, members, gone = (int(x) for x in self.sql.rows(_DRIFT, ())[0])
        # connected entities in no level-0 community: the connected ones less the members still connected
        return CommunityDrift(relations, communities, connected, connected - (members - gone), gone)

    def community_growth(self, since: int) -> CommunityGrowth:
        query = _GROWTH.format(seq=self.relation_seq, m=self.sql.mark)
        relations, unassigned, seq, communities = (int(x) for x in self.sql.rows(query, (since, since, since))[0])
        return CommunityGrowth(relations, unassigned, seq, bool(communities))

    def count_graph_edits(self, entities: int, relations: int) -> None:
        sql = self.sql
        rows = [(key, str(n)) for key, n in zip(_EDITS, (entities, relations), strict=True) if n]
        if rows:
            sql.write(lambda: sql.execute_many(
                f"INSERT INTO meta(key, value) VALUES ({sql.marks(2)}) ON CONFLICT (key) DO UPDATE SET "
                "value = CAST(CAST(meta.value AS BIGINT) + CAST(excluded.value AS BIGINT) AS TEXT)", rows))

    def graph_edits(self) -> tuple[int, int]:
        of_keys, params = self.sql.one_of("key", list(_EDITS))
        found = {r[0]: int(r[1]) for r in self.sql.rows(f"SELECT key, value FROM meta WHERE {of_keys}", params)}
        return found.get(_EDITS[0], 0), found.get(_EDITS[1], 0)

    def missing_reports(self, extractive_too: bool = False) -> int:
        also = f" OR r.report LIKE {self.sql.mark}" if extractive_too else ""
        rows = self.sql.rows("SELECT COUNT(DISTINCT c.signature) FROM communities c LEFT JOIN community_reports r "
                             f"ON r.signature = c.signature WHERE r.signature IS NULL{also}",
                             (_EXTRACTIVE,) if extractive_too else ())
        return int(rows[0][0])


class Citations:
    """``CitationStore`` over a backend's SQL."""

    def __init__(self, sql: SqlSeam):
        self.sql = sql

    def put_references(self, citing_id: str, references: Sequence[PaperReference]) -> None:
        sql = self.sql

        def work() -> None:
            sql.execute(f"DELETE FROM paper_references WHERE citing_id = {sql.mark}", (citing_id,))
            sql.execute_many(f"INSERT INTO paper_references({_REFERENCE_COLUMNS}) VALUES ({sql.marks(8)})",
                             [(citing_id, r.ordinal, r.raw, r.target_id, r.doi, r.pmid, r.title, r.year)
                              for r in references])

        sql.write(work)

    def references(self, citing_ids: Iterable[str] | None = None) -> list[PaperReference]:
        select = f"SELECT {_REFERENCE_COLUMNS} FROM paper_references"
        if citing_ids is None:
            return [PaperReference(*r) for r in self.sql.rows(f"{select} ORDER BY citing_id, ordinal", ())]
        out: list[PaperReference] = []
        for part in self.sql.parts(sorted(set(citing_ids))):
            of_citing, params = self.sql.one_of("citing_id", part)
            out += [PaperReference(*r) for r in self.sql.rows(f"{select} WHERE {of_citing} ORDER BY citing_id, ordinal",
                                                              params)]
        return out

    def retarget_references(self, mapping: dict[str, str]) -> int:
        sql = self.sql

        def work() -> int:
            return sum(int(sql.execute(f"UPDATE paper_references SET target_id = {sql.mark} WHERE target_id = {sql.mark}",
                                       (new, old)).rowcount) for old, new in sql.in_order(mapping.items()))

        return int(sql.write(work)) if mapping else 0

    def put_stub_papers(self, stubs: Sequence[StubPaper], keys: Mapping[str, Iterable[str]] | None = None) -> None:
        sql = self.sql
        rows = sql.in_order({s.id: (s.id, s.title, s.doi, s.pmid, s.year, s.raw) for s in stubs}.values())
        keyed = {stub_id: sorted(set(found)) for stub_id, found in (keys or {}).items()}

        def work() -> None:
            sql.execute_many(
                f"INSERT INTO stub_papers({_STUB_COLUMNS}) VALUES ({sql.marks(6)}) ON CONFLICT (id) DO UPDATE SET "
                "title = excluded.title, doi = excluded.doi, pmid = excluded.pmid, year = excluded.year, "
                "raw = excluded.raw", rows)
            for part in sql.parts(sorted(keyed)):
                of_ids, params = sql.one_of("stub_id", part)
                sql.execute(f"DELETE FROM stub_keys WHERE {of_ids}", params)
            sql.execute_many(f"INSERT INTO stub_keys(key, stub_id) VALUES ({sql.marks(2)})",
                             sql.in_order((key, stub_id) for stub_id, found in keyed.items() for key in found))

        sql.write(work)

    def stubs_by_keys(self, keys: Iterable[str]) -> list[StubPaper]:
        ids: set[str] = set()
        for part in self.sql.parts(sorted(set(keys))):
            of_keys, params = self.sql.one_of("key", part)
            ids.update(r[0] for r in self.sql.rows(f"SELECT stub_id FROM stub_keys WHERE {of_keys}", params))
        return self.stub_papers(ids) if ids else []

    def has_stub_papers(self) -> bool:
        return bool(self.sql.rows("SELECT 1 FROM stub_papers LIMIT 1", ()))

    def stub_papers(self, ids: Iterable[str] | None = None) -> list[StubPaper]:
        select = f"SELECT {_STUB_COLUMNS} FROM stub_papers"
        if ids is None:
            return [StubPaper(*r) for r in self.sql.rows(f"{select} ORDER BY id", ())]
        out: list[StubPaper] = []
        for part in self.sql.parts(sorted(set(ids))):
            of_ids, params = self.sql.one_of("id", part)
            out += [StubPaper(*r) for r in self.sql.rows(f"{select} WHERE {of_ids} ORDER BY id", params)]
        return out

    def delete_stub_papers(self, ids: Sequence[str]) -> None:
        sql = self.sql

        def work() -> None:
            for part in sql.parts(sorted(ids)):
                of_ids, params = sql.one_of("id", part)
                sql.execute(f"DELETE FROM stub_papers WHERE {of_ids}", params)

        if ids:
            sql.write(work)


class KeepsAnalysis:
    """A store whose communities and citation network are its ``communities`` and ``citations``
    role objects."""

    communities: Communities
    citations: Citations

    def replace_communities(self, communities: Sequence[Community]) -> None:
        self.communities.replace_communities(communities)

    def list_communities(self, level: int | None = None, members: bool = False) -> list[Community]:
        return self.communities.list_communities(level, members)

    def community_members(self, ids: Sequence[str]) -> dict[str, list[str]]:
        return self.communities.community_members(ids)

    def communities_of(self, entity_ids: Sequence[str], level: int) -> dict[str, str]:
        return self.communities.communities_of(entity_ids, level)

    def put_community_reports(self, reports: Sequence[CommunityReport]) -> None:
        self.communities.put_community_reports(reports)

    def community_reports(self, signatures: Sequence[str] | None = None) -> dict[str, CommunityReport]:
        return self.communities.community_reports(signatures)

    def delete_orphan_reports(self) -> int:
        return self.communities.delete_orphan_reports()

    def community_drift(self) -> CommunityDrift:
        return self.communities.community_drift()

    def community_growth(self, since: int) -> CommunityGrowth:
        return self.communities.community_growth(since)

    def count_graph_edits(self, entities: int, relations: int) -> None:
        self.communities.count_graph_edits(entities, relations)

    def graph_edits(self) -> tuple[int, int]:
        return self.communities.graph_edits()

    def missing_reports(self, extractive_too: bool = False) -> int:
        return self.communities.missing_reports(extractive_too)

    def put_references(self, citing_id: str, references: Sequence[PaperReference]) -> None:
        self.citations.put_references(citing_id, references)

    def references(self, citing_ids: Iterable[str] | None = None) -> list[PaperReference]:
        return self.citations.references(citing_ids)

    def retarget_references(self, mapping: dict[str, str]) -> int:
        return self.citations.retarget_references(mapping)

    def put_stub_papers(self, stubs: Sequence[StubPaper], keys: Mapping[str, Iterable[str]] | None = None) -> None:
        self.citations.put_stub_papers(stubs, keys)

    def stub_papers(self, ids: Iterable[str] | None = None) -> list[StubPaper]:
        return self.citations.stub_papers(ids)

    def stubs_by_keys(self, keys: Iterable[str]) -> list[StubPaper]:
        return self.citations.stubs_by_keys(keys)

    def has_stub_papers(self) -> bool:
        return self.citations.has_stub_papers()

    def delete_stub_papers(self, ids: Sequence[str]) -> None:
        self.citations.delete_stub_papers(ids)
