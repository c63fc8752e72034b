"""The workspace as RDF (Turtle, JSON-LD), modelled after paper2lkg's output (seed 004 §4, Figure 1):
the paper's document model (paper, sections, sentences) plus its knowledge graph (entities,
mentions, relations), on public vocabularies -- ``dcterms`` for paper metadata and structure,
``skos`` for entities (concepts with labels, definitions and ``skos:broader``), ``prov`` for where
every mention and every triple comes from -- and one namespace for our own terms,
``https://w3id.org/scholargraph/ns#`` (prefix ``sg``; documented in docs/export.md).

Every relation is written twice: as the triple itself (``entity predicate entity``) and as an
``rdf:Statement`` that names it and carries its provenance (``prov:wasDerivedFrom`` the sentence
-- or, for profiles without sentences, the passage -- it was extracted from), its level and its
predicate as written. Mentions are ``prov:wasQuotedFrom`` their sentence, with the character span.

Graphs are built a paper or a page at a time and serialised one after the other, so memory stays
bounded: :class:`TurtleWriter` keeps a prefix declaration only when it differs from the one in force
(Turtle allows redeclaring prefixes), :class:`JsonLdWriter` writes one ``@graph`` array with one
shared ``@context`` (node objects with the same ``@id`` in two pages merge, per JSON-LD).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TextIO
from urllib.parse import quote

from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, SKOS

from ..models import Chunk, Entity, LocalGraph, MentionRecord, SentenceRecord
from ..store.base import DocumentRow
from .source import BROADER, PaperPart, RelationPart, predicate_of

SG = Namespace("https://w3id.org/scholargraph/ns#")
DEFAULT_BASE = "https://w3id.org/scholargraph/kg/"
CLASSES = {"Named Entity": SG.NamedEntity, "General Concept": SG.GeneralConcept, "Other Entity": SG.OtherEntity}
CATEGORY_TYPES = {"named": "Named Entity", "general": "General Concept", "other": "Other Entity"}
PREFIXES = {"sg": SG, "skos": SKOS, "prov": PROV, "dcterms": DCTERMS, "rdf": RDF, "rdfs": RDFS, "xsd": XSD}


_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-") or "related-to"


class Terms:
    """IRIs of the exported things, under ``base``."""

    def __init__(self, base: str = DEFAULT_BASE):
        self.base = base if base.endswith(("/", "#")) else base + "/"
        self.kg = Namespace(self.base)
        # (document, ordinal) -> the sentence's own IRI (inputs that carried one), filled by paper_graph
        self.sentence_iris: dict[tuple[str, int], URIRef] = {}

    def paper(self, doc_id: str) -> URIRef:
        return self.kg[f"paper/{quote(doc_id, safe='')}"]

    def section(self, doc_id: str, number: int) -> URIRef:
        return URIRef(f"{self.paper(doc_id)}/section/{number}")

    def sentence(self, doc_id: str, ordinal: int) -> URIRef:
        own = self.sentence_iris.get((doc_id, ordinal))
        return own if own is not None else URIRef(f"{self.paper(doc_id)}/sentence/{ordinal}")

    def own_sentence(self, doc_id: str, ordinal: int, iri: str) -> URIRef:
        """Use the input's own IRI for a sentence: as it is when absolute, else under the paper."""
        node = URIRef(iri) if _ABSOLUTE.match(iri) else URIRef(f"{self.paper(doc_id)}/{quote(iri, safe='')}")
        self.sentence_iris[(doc_id, ordinal)] = node
        return node

    def mention(self, doc_id: str, sentence: int, start: int, end: int) -> URIRef:
        return URIRef(f"{self.paper(doc_id)}/mention/{sentence}-{start}-{end}")

    def local_entity(self, doc_id: str, local_id: int) -> URIRef:
        return URIRef(f"{self.paper(doc_id)}/entity/{local_id}")

    def local_statement(self, doc_id: str, n: int) -> URIRef:
        return URIRef(f"{self.paper(doc_id)}/statement/{n}")

    def passage(self, chunk_id: str) -> URIRef:
        return self.kg[f"passage/{quote(chunk_id, safe='')}"]

    def entity(self, entity_id: str) -> URIRef:
        return self.kg[f"entity/{quote(entity_id, safe='')}"]

    def predicate(self, label: str) -> URIRef:
        return SKOS.broader if label == BROADER else self.kg[f"predicate/{slug(label)}"]

    def statement(self, relation_id: str, n: int) -> URIRef:
        return self.kg[f"statement/{quote(relation_id, safe='')}/{n}"]


def new_graph(terms: Terms) -> Graph:
    g = Graph(bind_namespaces="none")
    for prefix, ns in PREFIXES.items():
        g.bind(prefix, ns)
    g.bind("kg", terms.kg)
    return g


def paper_graph(part: PaperPart, terms: Terms, local: bool = False) -> Graph:
    """A paper's metadata, sections, sentences, passages and mentions; with ``local`` (and a local
    KG) the mentions refer to the paper's own local entities instead of the workspace's."""
    g = new_graph(terms)
    paper = _add_paper(g, terms, part.row)
    _add_passages(g, terms, paper, part.chunks)
    _add_sentences(g, terms, part.row.id, paper, part.sentences)
    owner = _mention_owners(part.local) if local and part.local else None
    _add_mentions(g, terms, part.row.id, part.mentions, owner)
    return g


def _add_paper(g: Graph, terms: Terms, row: DocumentRow) -> URIRef:
    """The paper's node: identifier, title, authors, year, venue, DOI, PMID, source file."""
    doc = row.id
    paper = terms.paper(doc)
    g.add((paper, RDF.type, SG.Paper))
    g.add((paper, RDF.type, DCTERMS.BibliographicResource))
    g.add((paper, DCTERMS.identifier, Literal(doc)))
    g.add((paper, DCTERMS.title, Literal(row.title)))
    for author in row.authors:
        g.add((paper, DCTERMS.creator, Literal(author)))
    if row.year:
        g.add((paper, DCTERMS.issued, Literal(str(row.year), datatype=XSD.gYear)))
    if row.venue:
        g.add((paper, SG.venue, Literal(row.venue)))
    if row.doi:
        g.add((paper, DCTERMS.identifier, Literal(f"https://doi.org/{row.doi}", datatype=XSD.anyURI)))
    if row.pmid:
        g.add((paper, SG.pmid, Literal(row.pmid)))
    if row.source_path:
        g.add((paper, DCTERMS.source, Literal(row.source_path)))
    return paper


def _add_passages(g: Graph, terms: Terms, paper: URIRef, chunks: Sequence[Chunk]) -> None:
    """The paper's passages (chunks): text, order, section and pages."""
    for c in chunks:
        p = terms.passage(c.id)
        g.add((p, RDF.type, SG.Passage))
        g.add((p, DCTERMS.isPartOf, paper))
        g.add((p, RDF.value, Literal(c.text)))
        g.add((p, SG.order, Literal(c.ordinal)))
        if c.section:
            g.add((p, SG.sectionTitle, Literal(c.section)))
        for prop, page in ((SG.pageStart, c.page_start), (SG.pageEnd, c.page_end)):
            if page is not None:
                g.add((p, prop, Literal(page)))


def _add_sentences(g: Graph, terms: Terms, doc: str, paper: URIRef, sentences: Sequence[SentenceRecord]) -> None:
    """Sections and their sentences, each with its passage and page."""
    sections_done: set[int] = set()
    for s in sentences:
        section = terms.section(doc, s.section_no)
        if s.section_no not in sections_done:
            sections_done.add(s.section_no)
            g.add((section, RDF.type, SG.Section))
            g.add((section, DCTERMS.isPartOf, paper))
            g.add((section, SG.order, Literal(s.section_no)))
            if s.section:
                g.add((section, DCTERMS.title, Literal(s.section)))
        node = terms.own_sentence(doc, s.ordinal, s.iri) if s.iri else terms.sentence(doc, s.ordinal)
        g.add((node, RDF.type, SG.Sentence))
        if s.iri:
            g.add((node, DCTERMS.identifier, Literal(s.iri)))
        g.add((node, DCTERMS.isPartOf, section))
        g.add((node, RDF.value, Literal(s.text)))
        g.add((node, SG.order, Literal(s.ordinal)))
        g.add((node, SG.paragraph, Literal(s.paragraph_no)))
        g.add((node, SG.passage, terms.passage(s.chunk_id)))
        if s.page is not None:
            g.add((node, SG.page, Literal(s.page)))


def _add_mentions(g: Graph, terms: Terms, doc: str, mentions: Sequence[MentionRecord],
                  owner: dict[tuple[int, int, int], int] | None) -> None:
    """Mentions, each referring to the workspace entity, or (``owner``) to the paper's local one."""
    for m in mentions:
        node = terms.mention(doc, m.sentence_no, m.char_start, m.char_end)
        g.add((node, RDF.type, SG.Mention))
        g.add((node, RDFS.label, Literal(m.surface)))
        if owner is None:
            g.add((node, SG.refersTo, terms.entity(m.entity_id)))
        elif (m.sentence_no, m.char_start, m.char_end) in owner:
            g.add((node, SG.refersTo, terms.local_entity(doc, owner[(m.sentence_no, m.char_start, m.char_end)])))
        g.add((node, PROV.wasQuotedFrom, terms.sentence(doc, m.sentence_no)))
        g.add((node, SG.charStart, Literal(m.char_start)))
        g.add((node, SG.charEnd, Literal(m.char_end)))
        if m.category:
            g.add((node, SG.category, Literal(m.category)))
        if m.level:
            g.add((node, SG.level, Literal(m.level)))
        if m.description:
            g.add((node, DCTERMS.description, Literal(m.description)))
        for t in m.types:
            g.add((node, SG.potentialType, Literal(t)))



def _mention_owners(graph: LocalGraph) -> dict[tuple[int, int, int], int]:
    return {span: e.local_id for e in graph.entities for span in e.mentions}


def local_kg_graph(graph: LocalGraph, terms: Terms, predicates_seen: set[str], links: set[str] | None = None) -> Graph:
    """A paper's own local KG (seed 004 Figure 1): its entities (label, aliases, description,
    potential types, relevance) and its triples, each with a statement citing its sentence. With
    ``links`` (the workspace entities that exist), every local entity is ``skos:exactMatch`` the
    workspace entity it joined."""
    g = new_graph(terms)
    doc = graph.document_id
    paper = terms.paper(doc)
    for e in graph.entities:
        node = terms.local_entity(doc, e.local_id)
        g.add((node, RDF.type, SKOS.Concept))
        g.add((node, RDF.type, SG.LocalEntity))
        g.add((node, RDF.type, CLASSES.get(CATEGORY_TYPES.get(e.category, ""), SG.Entity)))
        g.add((node, SKOS.prefLabel, Literal(e.label)))
        g.add((node, DCTERMS.isPartOf, paper))
        for alias in e.aliases:
            g.add((node, SKOS.altLabel, Literal(alias)))
        if e.description:
            g.add((node, SKOS.definition, Literal(e.description)))
        for t in e.types:
            g.add((node, SG.potentialType, Literal(t)))
        if e.relevance is not None:
            g.add((node, SG.relevance, Literal(round(float(e.relevance), 6))))
        if links is not None and e.entity_id in links:
            g.add((node, SKOS.exactMatch, terms.entity(e.entity_id)))
    for n, r in enumerate(graph.relations):
        s, o = terms.local_entity(doc, r.subject), terms.local_entity(doc, r.object)
        label = r.canonical or r.predicate
        pred = terms.predicate(label)
        g.add((s, pred, o))
        st = terms.local_statement(doc, n)
        g.add((st, RDF.type, RDF.Statement))
        g.add((st, RDF.subject, s))
        g.add((st, RDF.predicate, pred))
        g.add((st, RDF.object, o))
        g.add((st, SG.paper, paper))
        if r.sentence is not None:
            g.add((st, PROV.wasDerivedFrom, terms.sentence(doc, r.sentence)))
        if r.level:
            g.add((st, SG.level, Literal(r.level)))
        if r.predicate and r.predicate != label:
            g.add((st, SG.predicateAsWritten if label != BROADER else SG.potentialType, Literal(r.predicate)))
        if label != BROADER and label not in predicates_seen:
            predicates_seen.add(label)
            g.add((pred, RDF.type, RDF.Property))
            g.add((pred, RDFS.label, Literal(label)))
    return g


def entity_graph(entities: Iterable[Entity], terms: Terms) -> Graph:
    g = new_graph(terms)
    for e in entities:
        node = terms.entity(e.id)
        g.add((node, RDF.type, SKOS.Concept))
        g.add((node, RDF.type, CLASSES.get(e.type, SG.Entity)))
        g.add((node, SKOS.prefLabel, Literal(e.name)))
        for alias in e.aliases:
            g.add((node, SKOS.altLabel, Literal(alias)))
        if e.description:
            g.add((node, SKOS.definition, Literal(e.description)))
        if e.type:
            g.add((node, SG.entityType, Literal(e.type)))
        g.add((node, SG.weight, Literal(float(e.weight))))
        for chunk in e.chunk_ids:
            g.add((node, PROV.wasDerivedFrom, terms.passage(chunk)))
        for doc in e.document_ids:
            g.add((node, SG.mentionedIn, terms.paper(doc)))
    return g


def relation_graph(parts: Iterable[RelationPart], terms: Terms, predicates_seen: set[str]) -> Graph:
    """Relation triples, their statements with provenance, and each new predicate's definition."""
    g = new_graph(terms)
    for part in parts:
        r = part.relation
        s, o = terms.entity(r.source_id), terms.entity(r.target_id)
        for n, rec in enumerate(part.records):
            label = predicate_of(rec)
            pred = terms.predicate(label)
            g.add((s, pred, o))
            st = terms.statement(r.id, n)
            g.add((st, RDF.type, RDF.Statement))
            g.add((st, RDF.subject, s))
            g.add((st, RDF.predicate, pred))
            g.add((st, RDF.object, o))
            source = terms.sentence(rec.document_id, rec.sentence) if rec.sentence is not None \
                else terms.passage(rec.chunk_id)
            g.add((st, PROV.wasDerivedFrom, source))
            g.add((st, SG.paper, terms.paper(rec.document_id)))
            if rec.level:
                g.add((st, SG.level, Literal(rec.level)))
            if not rec.directed:
                g.add((st, SG.directed, Literal(False)))
            if rec.description:
                g.add((st, DCTERMS.description, Literal(rec.description)))
            written = rec.keywords[0] if rec.keywords else ""
            if written and written != label and label != BROADER:
                g.add((st, SG.predicateAsWritten, Literal(written)))
            if label != BROADER and label not in predicates_seen:
                predicates_seen.add(label)
                g.add((pred, RDF.type, RDF.Property))
                g.add((pred, RDFS.label, Literal(label)))
    return g


class TurtleWriter:
    """Turtle, one graph after another; a prefix is declared again only when its IRI changes."""

    def __init__(self, out: TextIO):
        self.out = out
        self.prefixes: dict[str, str] = {}
        self.triples = 0

    def write(self, g: Graph) -> None:
        if not len(g):
            return
        self.triples += len(g)
        text = g.serialize(format="turtle")
        lines = []
        for line in text.splitlines():
            found = re.match(r"@prefix\s+([^:\s]*):\s*<([^>]*)>\s*\.\s*$", line)
            if found:
                if self.prefixes.get(found.group(1)) == found.group(2):
                    continue
                self.prefixes[found.group(1)] = found.group(2)
            lines.append(line)
        self.out.write("\n".join(lines).strip("\n") + "\n\n")

    def close(self) -> None:
        pass


class JsonLdWriter:
    """One JSON-LD document: a shared ``@context`` and one ``@graph`` array, written node by node."""

    def __init__(self, out: TextIO, terms: Terms):
        self.out = out
        self.context = {**{p: str(ns) for p, ns in PREFIXES.items()}, "kg": str(terms.kg)}
        self.first = True
        self.triples = 0
        out.write('{"@context": ' + json.dumps(self.context) + ',\n "@graph": [\n')

    def write(self, g: Graph) -> None:
        if not len(g):
            return
        self.triples += len(g)
        data = json.loads(g.serialize(format="json-ld", context=self.context, auto_compact=True))
        nodes = data.get("@graph", [data]) if isinstance(data, dict) else data
        for node in nodes:
            if isinstance(node, dict):
                node.pop("@context", None)
            self.out.write(("" if self.first else ",\n") + "  " + json.dumps(node, ensure_ascii=False))
            self.first = False

    def close(self) -> None:
        self.out.write("\n ]\n}\n")
