"""Communities, community reports and the citation network in the SQLite store
(``CommunityStore`` and ``CitationStore`` of :mod:`.base`).

Write methods run inside a unit of work (``SQLiteStore.write``); called alone they are one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from typing import Any

from ...models import Community, CommunityReport, PaperReference, StubPaper
from ..base import batches


def _in(ids: Sequence) -> str:
    return ",".join("?" * len(ids))


def _report(data: str) -> CommunityReport:
    fields = json.loads(data)
    known = CommunityReport.__dataclass_fields__
    return CommunityReport(**{k: v for k, v in fields.items() if k in known})


def _reference(r: sqlite3.Row) -> PaperReference:
    return PaperReference(r["citing_id"], r["ordinal"], r["raw"], r["target_id"], r["doi"], r["pmid"], r["title"],
                          r["year"])


class SQLiteAnalysis:
    """Mixed into :class:`~scholargraph.store.sqlite.SQLiteStore`, which provides these."""

    _rows: Callable[..., list[sqlite3.Row]]
    _wconn: Callable[[], sqlite3.Connection]
    write: Callable[..., Any]

    # -- communities -------------------------------------------------------------------------

    def replace_communities(self, communities: Sequence[Community]) -> None:
        def work() -> None:
            c = self._wconn()
            c.execute("DELETE FROM community_members")
            c.execute("DELETE FROM communities")
            c.executemany(
                "INSERT INTO communities(id, level, parent_id, signature, size, relations, weight) VALUES (?,?,?,?,?,?,?)",
                [(m.id, m.level, m.parent_id, m.signature, len(m.members), m.relations, m.weight) for m in communities])
            c.executemany("INSERT INTO community_members(community_id, level, entity_id) VALUES (?,?,?)",
                          [(m.id, m.level, e) for m in communities for e in m.members])

        self.write(work)

    def list_communities(self, level: int | None = None, members: bool = False) -> list[Community]:
        where, params = ("WHERE level = ?", (level,)) if level is not None else ("", ())
        rows = self._rows(f"SELECT * FROM communities {where} ORDER BY level, size DESC, id", params)
        out = [Community(r["id"], r["level"], r["signature"], [], r["parent_id"], r["relations"], r["weight"])
               for r in rows]
        if members and out:
            found = self.community_members([c.id for c in out]) if level is not None else self._all_members()
            for c in out:
                c.members = found.get(c.id, [])
        return out

    def _all_members(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for r in self._rows("SELECT community_id, entity_id FROM community_members ORDER BY community_id, entity_id"):
            out.setdefault(r[0], []).append(r[1])
        return out

    def community_members(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for part in batches(list(ids)):
            for r in self._rows(f"""SELECT community_id, entity_id FROM community_members
                                    WHERE community_id IN ({_in(part)}) ORDER BY community_id, entity_id""", part):
                out[r[0]].append(r[1])
        return out

    def communities_of(self, entity_ids: Sequence[str], level: int) -> dict[str, str]:
        out: dict[str, str] = {}
        for part in batches(list(entity_ids)):
            rows = self._rows(f"""SELECT entity_id, community_id FROM community_members
                                  WHERE level = ? AND entity_id IN ({_in(part)})""", [level, *part])
            out.update({r[0]: r[1] for r in rows})
        return out

    def put_community_reports(self, reports: Sequence[CommunityReport]) -> None:
        now = time.time()
        self.write(lambda: self._wconn().executemany(
            """INSERT INTO community_reports(signature, report, updated_at) VALUES (?, ?, ?)
               ON CONFLICT(signature) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at""",
            [(r.signature, json.dumps(asdict(r), ensure_ascii=False), now) for r in reports]))

    def community_reports(self, signatures: Sequence[str] | None = None) -> dict[str, CommunityReport]:
        if signatures is None:
            return {r[0]: _report(r[1]) for r in self._rows("SELECT signature, report FROM community_reports")}
        out: dict[str, CommunityReport] = {}
        for part in batches(list(dict.fromkeys(signatures))):
            rows = self._rows(f"SELECT signature, report FROM community_reports WHERE signature IN ({_in(part)})", part)
            out.update({r[0]: _report(r[1]) for r in rows})
        return out

    def delete_orphan_reports(self) -> int:
        return self.write(lambda: self._wconn().execute(
            "DELETE FROM community_reports WHERE signature NOT IN (SELECT signature FROM communities)").rowcount)

    # -- citation network --------------------------------------------------------------------

    def put_references(self, citing_id: str, references: Sequence[PaperReference]) -> None:
        def work() -> None:
            c = self._wconn()
            c.execute("DELETE FROM paper_references WHERE citing_id = ?", (citing_id,))
            c.executemany(
                """INSERT INTO paper_references(citing_id, ordinal, raw, target_id, doi, pmid, title, year)
                   VALUES (?,?,?,?,?,?,?,?)""",
                [(citing_id, r.ordinal, r.raw, r.target_id, r.doi, r.pmid, r.title, r.year) for r in references])

        self.write(work)

    def references(self, citing_ids: Iterable[str] | None = None) -> list[PaperReference]:
        if citing_ids is None:
            return [_reference(r) for r in self._rows("SELECT * FROM paper_references ORDER BY citing_id, ordinal")]
        out: list[PaperReference] = []
        for part in batches(sorted(set(citing_ids))):
            out += [_reference(r) for r in self._rows(
                f"SELECT * FROM paper_references WHERE citing_id IN ({_in(part)}) ORDER BY citing_id, ordinal", part)]
        return out

    def retarget_references(self, mapping: dict[str, str]) -> int:
        def work() -> int:
            c = self._wconn()
            return sum(c.execute("UPDATE paper_references SET target_id = ? WHERE target_id = ?", (new, old)).rowcount
                       for old, new in mapping.items())

        return self.write(work) if mapping else 0

    def put_stub_papers(self, stubs: Sequence[StubPaper]) -> None:
        self.write(lambda: self._wconn().executemany(
            "INSERT OR REPLACE INTO stub_papers(id, title, doi, pmid, year, raw) VALUES (?,?,?,?,?,?)",
            [(s.id, s.title, s.doi, s.pmid, s.year, s.raw) for s in stubs]))

    def stub_papers(self, ids: Iterable[str] | None = None) -> list[StubPaper]:
        def stub(r: sqlite3.Row) -> StubPaper:
            return StubPaper(r["id"], r["title"], r["doi"], r["pmid"], r["year"], r["raw"])

        if ids is None:
            return [stub(r) for r in self._rows("SELECT * FROM stub_papers ORDER BY id")]
        out: list[StubPaper] = []
        for part in batches(sorted(set(ids))):
            out += [stub(r) for r in self._rows(f"SELECT * FROM stub_papers WHERE id IN ({_in(part)}) ORDER BY id", part)]
        return out

    def delete_stub_papers(self, ids: Sequence[str]) -> None:
        def work() -> None:
            for part in batches(list(ids)):
                self._wconn().execute(f"DELETE FROM stub_papers WHERE id IN ({_in(part)})", part)

        self.write(work)
