"""Communities, community reports and the citation network in the PostgreSQL store
(``CommunityStore`` and ``CitationStore``), with the same semantics as :mod:`.sqlite_analysis`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from typing import Any

from ...models import Community, CommunityReport, PaperReference, StubPaper

_REFERENCE_COLUMNS = "citing_id, ordinal, raw, target_id, doi, pmid, title, year"
_STUB_COLUMNS = "id, title, doi, pmid, year, raw"


def _report(data: str) -> CommunityReport:
    fields = json.loads(data)
    known = CommunityReport.__dataclass_fields__
    return CommunityReport(**{k: v for k, v in fields.items() if k in known})


class PostgresAnalysis:
    """Mixed into :class:`~scholargraph.store.postgres.PostgresStore`, which provides these."""

    _rows: Callable[..., list]
    _exec: Callable[..., Any]
    _many: Callable[..., None]
    write: Callable[..., Any]

    # -- communities -------------------------------------------------------------------------

    def replace_communities(self, communities: Sequence[Community]) -> None:
        def work() -> None:
            # Workers replace the set when each finishes: one after the other (READ COMMITTED: the
            # DELETE below, run after the lock, sees and removes what the previous one committed).
            self._exec("SELECT pg_advisory_xact_lock(hashtextextended('scholargraph-communities', 0))")
            self._exec("DELETE FROM community_members")
            self._exec("DELETE FROM communities")
            self._many("INSERT INTO communities(id, level, parent_id, signature, size, relations, weight) "
                       "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                       [(c.id, c.level, c.parent_id, c.signature, len(c.members), c.relations, c.weight)
                        for c in communities])
            self._many("INSERT INTO community_members(community_id, level, entity_id) VALUES (%s, %s, %s)",
                       [(c.id, c.level, e) for c in communities for e in c.members])

        self.write(work)

    def list_communities(self, level: int | None = None, members: bool = False) -> list[Community]:
        where, params = ("WHERE level = %s", (level,)) if level is not None else ("", ())
        rows = self._rows("SELECT id, level, signature, parent_id, relations, weight FROM communities "
                          f"{where} ORDER BY level, size DESC, id", params)
        out = [Community(r[0], r[1], r[2], [], r[3], r[4], r[5]) for r in rows]
        if members and out:
            found = self.community_members([c.id for c in out])
            for c in out:
                c.members = found.get(c.id, [])
        return out

    def community_members(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for r in self._rows("SELECT community_id, entity_id FROM community_members WHERE community_id = ANY(%s) "
                            "ORDER BY community_id, entity_id", (list(ids),)):
            out[r[0]].append(r[1])
        return out

    def communities_of(self, entity_ids: Sequence[str], level: int) -> dict[str, str]:
        rows = self._rows("SELECT entity_id, community_id FROM community_members WHERE level = %s AND "
                          "entity_id = ANY(%s)", (level, list(entity_ids)))
        return {r[0]: r[1] for r in rows}

    def put_community_reports(self, reports: Sequence[CommunityReport]) -> None:
        now = time.time()
        rows = sorted((r.signature, json.dumps(asdict(r), ensure_ascii=False), now) for r in reports)
        self.write(lambda: self._many(
            "INSERT INTO community_reports(signature, report, updated_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (signature) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at", rows))

    def community_reports(self, signatures: Sequence[str] | None = None) -> dict[str, CommunityReport]:
        if signatures is None:
            rows = self._rows("SELECT signature, report FROM community_reports")
        else:
            rows = self._rows("SELECT signature, report FROM community_reports WHERE signature = ANY(%s)",
                              (list(dict.fromkeys(signatures)),))
        return {r[0]: _report(r[1]) for r in rows}

    def delete_orphan_reports(self) -> int:
        return int(self.write(lambda: self._exec(
            "DELETE FROM community_reports WHERE signature NOT IN (SELECT signature FROM communities)").rowcount))

    # -- citation network --------------------------------------------------------------------

    def put_references(self, citing_id: str, references: Sequence[PaperReference]) -> None:
        def work() -> None:
            self._exec("DELETE FROM paper_references WHERE citing_id = %s", (citing_id,))
            self._many(f"INSERT INTO paper_references({_REFERENCE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                       [(citing_id, r.ordinal, r.raw, r.target_id, r.doi, r.pmid, r.title, r.year) for r in references])

        self.write(work)

    def references(self, citing_ids: Iterable[str] | None = None) -> list[PaperReference]:
        if citing_ids is None:
            rows = self._rows(f"SELECT {_REFERENCE_COLUMNS} FROM paper_references ORDER BY citing_id, ordinal")
        else:
            rows = self._rows(f"SELECT {_REFERENCE_COLUMNS} FROM paper_references WHERE citing_id = ANY(%s) "
                              "ORDER BY citing_id, ordinal", (sorted(set(citing_ids)),))
        return [PaperReference(*r) for r in rows]

    def retarget_references(self, mapping: dict[str, str]) -> int:
        def work() -> int:
            return sum(int(self._exec("UPDATE paper_references SET target_id = %s WHERE target_id = %s",
                                      (new, old)).rowcount) for old, new in sorted(mapping.items()))

        return int(self.write(work)) if mapping else 0

    def put_stub_papers(self, stubs: Sequence[StubPaper]) -> None:
        rows = sorted({s.id: (s.id, s.title, s.doi, s.pmid, s.year, s.raw) for s in stubs}.values())
        self.write(lambda: self._many(
            f"INSERT INTO stub_papers({_STUB_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
            "title = excluded.title, doi = excluded.doi, pmid = excluded.pmid, year = excluded.year, raw = excluded.raw",
            rows))

    def stub_papers(self, ids: Iterable[str] | None = None) -> list[StubPaper]:
        if ids is None:
            rows = self._rows(f"SELECT {_STUB_COLUMNS} FROM stub_papers ORDER BY id")
        else:
            rows = self._rows(f"SELECT {_STUB_COLUMNS} FROM stub_papers WHERE id = ANY(%s) ORDER BY id",
                              (sorted(set(ids)),))
        return [StubPaper(*r) for r in rows]

    def delete_stub_papers(self, ids: Sequence[str]) -> None:
        if ids:
            self.write(lambda: self._exec("DELETE FROM stub_papers WHERE id = ANY(%s)", (sorted(ids),)))
