"""The citation network (thesis 000 §5.3: citation networks): papers' reference lists resolved to
the papers they cite.

Each entry of a document's reference list is matched to a workspace document by DOI, then PMID,
then normalised title (the document's title found in the entry, or the entry's parsed title equal
to it); a document never cites itself. An entry that matches none cites a stub paper (``ref:...``,
one per DOI / PMID / title / text), so a later insert of that paper takes the stub's place and
every paper that cited it now cites the document: the stubs it is looked for among are those
sharing a key with it (``stub_keys``: DOI, PMID, title, three words of the reference text), never
every stub of the knowledge base. Deleting a document turns it back into a stub
for the papers that cite it.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..ingest.references import normalise_doi, normalise_title, parse_reference
from ..models import DocStatus, Document, PaperReference, StubPaper
from ..store.base import CitationStore, CitationUpkeep, DocumentRow

MIN_TITLE_WORDS = 4  # shorter titles ("Introduction", "Working memory") are matched only exactly


@dataclass
class CitationRun:
    references: int = 0
    matched: int = 0  # entries resolved to a workspace document
    stubs: int = 0  # stub papers created
    connected: int = 0  # stub papers replaced by a document of this run
    entries_connected: int = 0

    def note(self) -> str:
        text = f"citations: {self.references} reference(s), {self.matched} to papers in the workspace"
        if self.connected:
            text += f"; {self.connected} earlier stub paper(s) now indexed ({self.entries_connected} citation(s) joined)"
        return text


@dataclass
class _Paper:
    id: str
    doi: str | None
    pmid: str | None
    title: str  # normalised


class TitleIndex:
    """Finds which known titles occur, word for word, inside a reference's text."""

    def __init__(self, papers: Iterable[_Paper]):
        self.exact: dict[str, list[str]] = defaultdict(list)
        self.by_start: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = defaultdict(list)
        for p in papers:
            if not p.title:
                continue
            self.exact[p.title].append(p.id)
            words = tuple(p.title.split())
            if len(words) >= MIN_TITLE_WORDS:
                self.by_start[words[:3]].append((words, p.id))

    def find(self, text: str, title: str | None) -> list[str]:
        if title and (hit := self.exact.get(normalise_title(title))):
            return hit
        words = normalise_title(text).split()
        found = []
        for i in range(len(words) - 2):
            for full, pid in self.by_start.get((words[i], words[i + 1], words[i + 2]), ()):
                if tuple(words[i:i + len(full)]) == full:
                    found.append(pid)
        return found


@dataclass
class _Matcher:
    papers: list[_Paper]
    by_doi: dict[str, str] = field(default_factory=dict)
    by_pmid: dict[str, str] = field(default_factory=dict)
    titles: TitleIndex | None = None

    def __post_init__(self) -> None:
        for p in self.papers:
            if p.doi:
                self.by_doi.setdefault(p.doi, p.id)
            if p.pmid:
                self.by_pmid.setdefault(p.pmid, p.id)
        self.titles = TitleIndex(self.papers)

    def match(self, raw: str, doi: str | None, pmid: str | None, title: str | None, citing: str) -> str | None:
        for hit in (self.by_doi.get(doi or ""), self.by_pmid.get(pmid or "")):
            if hit and hit != citing:
                return hit
        assert self.titles is not None
        return next((h for h in self.titles.find(raw, title) if h != citing), None)


def _paper(row: DocumentRow) -> _Paper:
    return _Paper(row.id, normalise_doi(row.doi), (row.pmid or "").strip() or None, normalise_title(row.title))


def stub_id(doi: str | None, pmid: str | None, title: str | None, raw: str) -> str:
    key = (f"doi:{doi}" if doi else f"pmid:{pmid}" if pmid else
           f"title:{normalise_title(title)}" if title and len(normalise_title(title).split()) >= 3 else
           f"text:{normalise_title(raw)}")
    return "ref:" + hashlib.sha1(key.encode()).hexdigest()[:16]


def reference_entries(doc: Document) -> list[str]:
    """The reference list as the loader kept it (or, when references were indexed as a section,
    that section's lines)."""
    if doc.references:
        return [r for r in doc.references if r.strip()]
    return [line.strip() for s in doc.sections if s.kind == "references" for line in s.text.splitlines()
            if len(line.strip()) > 20]


def resolve(doc_id: str, entries: Sequence[str], matcher: _Matcher) -> tuple[list[PaperReference], list[StubPaper]]:
    refs: list[PaperReference] = []
    stubs: dict[str, StubPaper] = {}
    for n, raw in enumerate(entries):
        parsed = parse_reference(raw)
        target = matcher.match(parsed.raw, parsed.doi, parsed.pmid, parsed.title, doc_id)
        if target is None:
            target = stub_id(parsed.doi, parsed.pmid, parsed.title, parsed.raw)
            stubs.setdefault(target, StubPaper(target, parsed.title, parsed.doi, parsed.pmid, parsed.year, parsed.raw[:1000]))
        refs.append(PaperReference(doc_id, n, parsed.raw[:2000], target, parsed.doi, parsed.pmid, parsed.title,
                                   parsed.year))
    return refs, list(stubs.values())


NEW_PAPERS_BLOCK = 5000  # papers of a run matched against the stub papers at a time
STUB_KEYS_MISSING = "stub_keys_missing"  # meta: stubs an older version wrote, without keys


def stub_keys(stub: StubPaper) -> list[str]:
    """What a paper must share with the stub for ``_Matcher.match`` to find it: the stub's DOI,
    PMID, normalised title, and each three consecutive words of its normalised reference text (a
    paper's title is found inside the text from its first three words)."""
    keys = [f"doi:{stub.doi}" if stub.doi else "", f"pmid:{stub.pmid}" if stub.pmid else "",
            f"title:{normalise_title(stub.title)}" if normalise_title(stub.title) else ""]
    words = normalise_title(stub.raw).split()
    keys += [f"start:{' '.join(words[i:i + 3])}" for i in range(len(words) - 2)]
    return list(dict.fromkeys(k for k in keys if k))


def paper_keys(paper: _Paper) -> list[str]:
    """The keys of ``stub_keys`` a paper matches a stub by."""
    keys = [f"doi:{paper.doi}" if paper.doi else "", f"pmid:{paper.pmid}" if paper.pmid else "",
            f"title:{paper.title}" if paper.title else ""]
    words = paper.title.split()
    if len(words) >= MIN_TITLE_WORDS:
        keys.append(f"start:{' '.join(words[:3])}")
    return [k for k in keys if k]


def _key_stubs(store: CitationUpkeep) -> None:
    """Stubs written before stubs had keys (an older knowledge base): keyed once, all of them."""
    if not store.get_meta(STUB_KEYS_MISSING):
        return
    stubs = store.stub_papers()

    def work() -> None:
        store.put_stub_papers(stubs, {s.id: stub_keys(s) for s in stubs})
        store.set_meta(STUB_KEYS_MISSING, "")

    store.write(work)


def _stubs_now_indexed(store: CitationUpkeep, doc_ids: Sequence[str]) -> dict[str, str]:
    """Stub id -> the new document that is that paper. Only the stubs sharing a key with one of the
    new papers are read (``stub_keys``): the others cannot match them."""
    if not store.has_stub_papers():  # abstracts, or papers no one cited yet: nothing to read
        return {}
    _key_stubs(store)
    mapping: dict[str, str] = {}
    for start in range(0, len(doc_ids), NEW_PAPERS_BLOCK):
        rows = sorted(store.documents_by_id(doc_ids[start:start + NEW_PAPERS_BLOCK]).values(),
                      key=lambda r: (r.created_at, r.id))  # the workspace's order: the first of two papers matching wins
        papers = [_paper(r) for r in rows if r.status == DocStatus.PROCESSED]
        matcher = _Matcher(papers)
        for stub in store.stubs_by_keys(k for p in papers for k in paper_keys(p)):
            if stub.id not in mapping and (hit := matcher.match(stub.raw, stub.doi, stub.pmid, stub.title, "")):
                mapping[stub.id] = hit
    return mapping


def _workspace_matcher(store: CitationUpkeep) -> _Matcher:
    return _Matcher([_paper(r) for r in store.list_documents(DocStatus.PROCESSED)])


def _update(store: CitationUpkeep, doc_ids: Sequence[str]) -> CitationRun:
    """The run's documents' reference lists resolved; the workspace's papers are indexed for it only
    when one of them has a reference list (a CSV of 1M abstracts has none: nothing is held per row)."""
    run = CitationRun()
    doc_ids = list(dict.fromkeys(doc_ids))
    mapping = _stubs_now_indexed(store, doc_ids)
    matcher: _Matcher | None = None
    for doc_id in doc_ids:
        doc = store.load_document(doc_id)
        entries = reference_entries(doc) if doc is not None else []
        if not entries:
            continue
        matcher = matcher or _workspace_matcher(store)
        refs, stubs = resolve(doc_id, entries, matcher)
        run.references += len(refs)
        run.matched += sum(1 for r in refs if not r.target_id.startswith("ref:"))
        known = {s.id for s in store.stub_papers([s.id for s in stubs])}
        fresh = [s for s in stubs if s.id not in known and s.id not in mapping]
        run.stubs += len(fresh)

        def save(refs=refs, fresh=fresh, doc_id=doc_id) -> None:
            store.put_stub_papers(fresh, {s.id: stub_keys(s) for s in fresh})
            store.put_references(doc_id, refs)

        store.write(save)

    def connect() -> int:
        changed = store.retarget_references(mapping)
        store.delete_stub_papers(list(mapping))
        return changed

    run.entries_connected = store.write(connect) if mapping else 0
    run.connected = len(mapping)
    return run


async def update_citations(store: CitationUpkeep, doc_ids: Sequence[str]) -> CitationRun:
    """Resolve the reference lists of ``doc_ids`` (just indexed) and connect the stubs they are."""
    return await asyncio.to_thread(_update, store, list(doc_ids))


OWED_BLOCK = NEW_PAPERS_BLOCK  # documents owed a citation update, read (claimed) from the store at a time


async def update_owed_citations(store: CitationUpkeep) -> CitationRun:
    """``update_citations`` for every document committed since its last run (each commit queues its
    document: maintenance "citations"), a block at a time, so that a run of a million CSV rows needs
    no list of them in memory and a run killed before this step leaves it to the next. Workers
    sharing a PostgreSQL database each claim blocks: every document is resolved once, by the first
    worker to get there after its commit."""
    return await asyncio.to_thread(_update_owed, store)


def _update_owed(store: CitationUpkeep) -> CitationRun:
    total = CitationRun()
    while block := store.claim_maintenance("citations", OWED_BLOCK):
        run = _update(store, block)
        store.finish_maintenance("citations", block)
        for name in ("references", "matched", "stubs", "connected", "entries_connected"):
            setattr(total, name, getattr(total, name) + getattr(run, name))
    return total


def document_deleted(store: CitationStore, row: DocumentRow) -> None:
    """Before ``row``'s document is deleted: the papers citing it cite a stub of it instead; stubs
    only it cited go. Call inside the deletion's unit of work."""
    stub = StubPaper(stub_id(normalise_doi(row.doi), row.pmid, row.title, row.title), row.title or None,
                     normalise_doi(row.doi), row.pmid, row.year, row.title)
    if store.retarget_references({row.id: stub.id}):
        store.put_stub_papers([stub], {stub.id: stub_keys(stub)})
    own = {r.target_id for r in store.references([row.id]) if r.target_id.startswith("ref:")}
    if own:
        still = {r.target_id for r in store.references() if r.citing_id != row.id and r.target_id in own}
        store.delete_stub_papers(sorted(own - still))


def citation_counts(refs: Sequence[PaperReference]) -> tuple[Counter[str], Counter[str]]:
    """(cited-by counts, cites counts) per paper id, counting each citing-cited pair once."""
    pairs = {(r.citing_id, r.target_id) for r in refs}
    return Counter(t for _, t in pairs), Counter(c for c, _ in pairs)
