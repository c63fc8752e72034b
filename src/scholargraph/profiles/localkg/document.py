"""The paper as the localkg stages read it: seed 004's Deep Document Model (§4, Figure 1), a
hierarchy paper -> sections -> paragraphs -> sentences, built from a parsed ``Document`` and the
chunks the pipeline made of it (each sentence knows its chunk, so every fact extracted from it
cites the paper, section and page like any other).

Only sections that some chunk covers are read (the pipeline leaves references out unless asked).
Paragraphs are the section text's blank-line blocks. Sentences are the input's own when it carried
them (ASKG / DDM JSON: ``Section.sentences``, with their IRIs), else they come from
:mod:`scholargraph.text`.
A *unit* is the text one extraction call reads at one level: a section (long ones in windows of
whole paragraphs), a paragraph, or a sentence. A level whose text is the same as the level above
(a one-paragraph section, a one-sentence paragraph) is not read twice.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ...ingest.chunking import layout
from ...llm.wire import estimate_tokens
from ...models import Chunk, Document, Section, SentenceRecord
from ...text.sentences import paragraph_spans, sentence_spans

LEVELS = ("section", "paragraph", "sentence")  # widest context first (seed 004 §4.1)


@dataclass
class Sentence:
    ordinal: int  # in the document
    text: str
    section_no: int
    paragraph_no: int  # in the section
    chunk_id: str
    page: int | None
    start: int  # offset in the laid-out text (ingest.chunking.layout), which chunk spans index
    iri: str = ""  # the sentence's own IRI when the input carried one

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass
class Paragraph:
    section_no: int
    number: int  # in the section
    sentences: list[Sentence]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


@dataclass
class PaperSection:
    number: int
    heading: str
    kind: str
    paragraphs: list[Paragraph]

    @property
    def sentences(self) -> list[Sentence]:
        return [s for p in self.paragraphs for s in p.sentences]

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.paragraphs)


@dataclass
class Unit:
    """The text of one extraction call: ``level`` section | paragraph | sentence."""

    level: str
    label: str  # where it is, for messages: "§2", "§2 ¶1", "§2 ¶1 s3"
    sentences: list[Sentence]
    section: PaperSection

    @property
    def text(self) -> str:
        if self.level == "sentence":
            return self.sentences[0].text
        paras: dict[int, list[str]] = {}
        for s in self.sentences:
            paras.setdefault(s.paragraph_no, []).append(s.text)
        return "\n\n".join(" ".join(p) for p in paras.values())

    @property
    def chunk_id(self) -> str:
        return self.sentences[0].chunk_id

    @property
    def ordinals(self) -> list[int]:
        return [s.ordinal for s in self.sentences]


@dataclass
class Paper:
    doc: Document
    sections: list[PaperSection]
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.doc.title

    @property
    def abstract(self) -> str:
        """The abstract (or the first section read) as the paper-level context of descriptions."""
        if self.doc.abstract.strip():
            return self.doc.abstract.strip()
        found = next((s for s in self.sections if s.kind == "abstract" or s.heading.lower() == "abstract"), None)
        return (found or self.sections[0]).text if self.sections else ""

    def section_of(self, sentence: Sentence) -> PaperSection:
        return next(s for s in self.sections if s.number == sentence.section_no)

    def records(self) -> list[SentenceRecord]:
        out = []
        for s in self.sentences:
            sec = self.section_of(s)
            out.append(SentenceRecord(self.doc.id, s.ordinal, s.text, s.chunk_id, sec.heading or None, s.section_no,
                                      s.paragraph_no, s.page, s.start, s.start + len(s.text), s.iri))
        return out

    def units(self, level: str, max_tokens: int) -> list[Unit]:
        """The units of one level; a level that repeats the level above is empty there."""
        out: list[Unit] = []
        for sec in self.sections:
            if level == "section":
                out += _section_windows(sec, max_tokens)
                continue
            # a paragraph that is a whole section unit by itself was read at the section level already
            read = {id(w.sentences[0]) for w in _section_windows(sec, max_tokens) if _paragraphs(w) == 1}
            for para in sec.paragraphs:
                if level == "paragraph" and id(para.sentences[0]) in read:
                    continue
                label = f"§{sec.number + 1} ¶{para.number + 1}"
                if level == "paragraph":
                    out.append(Unit("paragraph", label, para.sentences, sec))
                elif len(para.sentences) > 1:
                    out += [Unit("sentence", f"{label} s{i + 1}", [s], sec) for i, s in enumerate(para.sentences)]
        return out

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sentences)


def by_paragraph(units: list[Unit]) -> list[list[Unit]]:
    """Sentence units grouped by their paragraph (one call reads a paragraph's sentences), in order."""
    groups: dict[tuple[int, int], list[Unit]] = {}
    for u in units:
        groups.setdefault((u.sentences[0].section_no, u.sentences[0].paragraph_no), []).append(u)
    return list(groups.values())


def _paragraphs(unit: Unit) -> int:
    return len({s.paragraph_no for s in unit.sentences})


def _section_windows(sec: PaperSection, max_tokens: int) -> list[Unit]:
    """A section as one unit, or as windows of whole paragraphs of at most ``max_tokens`` each (a
    paragraph longer than that is a window of its own)."""
    windows: list[list[Sentence]] = [[]]
    size = 0
    for para in sec.paragraphs:
        tokens = sum(s.tokens for s in para.sentences)
        if windows[-1] and size + tokens > max_tokens:
            windows.append([])
            size = 0
        windows[-1] += para.sentences
        size += tokens
    label = f"§{sec.number + 1}"
    if len(windows) == 1:
        return [Unit("section", label, windows[0], sec)]
    return [Unit("section", f"{label} part {i + 1}", w, sec) for i, w in enumerate(windows) if w]


def _page_at(marks: list[tuple[int, int]], first: int | None, offset: int) -> int | None:
    if not marks:
        return first
    i = bisect.bisect_right([m[0] for m in marks], offset)
    return marks[i - 1][1] if i else first


def _chunk_at(chunks: list[Chunk], position: int) -> str | None:
    """The first chunk whose span holds ``position`` (of Document.full_text)."""
    for c in chunks:
        if c.char_start is not None and c.char_end is not None and c.char_start <= position < c.char_end:
            return c.id
    return None


def _sentences_in(sec: Section, start: int, end: int) -> list[tuple[int, int, str]]:
    """The sentences of ``sec.text[start:end]``: the input's own (with their IRIs) when it gave
    them, else split here."""
    if sec.sentences:
        return [(int(a), int(b), str(iri)) for a, b, iri in sec.sentences if start <= int(a) < end]
    return [(a, b, "") for a, b in sentence_spans(sec.text, start, end)]


def read_paper(doc: Document, chunks: list[Chunk]) -> Paper:
    """The Deep Document Model of ``doc``: sections with paragraphs and sentences, each sentence
    tied to the chunk that holds it (sentences no chunk holds are not read)."""
    _, placed = layout(doc)
    ordered = sorted(chunks, key=lambda c: c.ordinal)
    sections: list[PaperSection] = []
    sentences: list[Sentence] = []
    for p in placed:
        sec = p.section
        number = len(sections)
        paragraphs: list[Paragraph] = []
        for a, b in paragraph_spans(sec.text):
            para = Paragraph(number, len(paragraphs), [])
            for sa, sb, iri in _sentences_in(sec, a, b):
                chunk = _chunk_at(ordered, p.text_start + sa)
                if chunk is None:
                    continue
                sent = Sentence(len(sentences), sec.text[sa:sb], number, para.number, chunk,
                                _page_at(sec.page_marks, sec.page_start, sa), p.text_start + sa, iri)
                sentences.append(sent)
                para.sentences.append(sent)
            if para.sentences:
                paragraphs.append(para)
        if paragraphs:
            sections.append(PaperSection(number, sec.heading, sec.kind, paragraphs))
    return Paper(doc, sections, sentences)
