"""Offline extraction profile: a draft knowledge graph without any language model.

Deterministic and pure Python (regexes + small word lists from :mod:`scholargraph.text`):

* **Candidate terms** -- noun-phrase chunks found without a POS tagger: maximal runs of content
  words between boundaries (punctuation, numbers, stopwords, a closed list of common verbs,
  ``-ly`` adverbs), with evaluative modifiers ("novel", "proposed") trimmed from the front and
  participles trimmed from the end. Internal hyphens, slashes and digits stay inside a word
  ("BERT-base", "GPT-4", "F1 score", "sodium/iodide symporter"). Technical tokens inside longer
  phrases (acronyms such as "LLMs", mixed case "RoBERTa", letters+digits "word2vec", gene-like
  symbols "TP53") are also emitted on their own. Citations ("Smith et al. (2020)") and
  all-caps section labels ("RESULTS:") are skipped.
* **Filter** -- 1-6 words, not only stopwords/generic academic words ("result", "table", "paper",
  "approach"...), not numbers. An ordinary single word needs at least two standalone mentions in
  the document unless the type heuristic recognises it ("accuracy", "glucose", "hepatitis");
  single adjectives ("positive", "cross-lingual") never qualify. Technical tokens and multi-word
  terms need no repetition. Verbs are recognised from a closed list plus context ("which
  subsumes", "has dominated", "significantly outperforms", "the gene plays a role").
* **Acronyms** -- "Retrieval-Augmented Generation (RAG)" gives one entity named by the long form
  with alias "RAG"; any later "RAG" in the same document is a mention of that entity.
* **Types** -- a documented heuristic into the configured type list (see :func:`guess_type`);
  "Concept" (or the last configured type) when nothing matches. This is a draft, not a classifier.
* **Description** -- the first sentence of the chunk that mentions the entity (<= 300 chars).
* **Relations** -- undirected co-occurrence of two entities in one sentence. Source/target in
  order of first appearance in the chunk, description = the sentence, strength = number of
  sentences of the chunk where they co-occur, keywords = up to three content words between
  them (verbs first). At most ``max_relations_per_chunk`` pairs, preferring frequent pairs,
  technical terms and short distances.
* **Content keywords** -- per chunk, a TF-IDF style keyphrase score over the candidate phrases
  (term frequency in the chunk x inverse chunk frequency in the document x word-frequency support
  x length/position/technicality boosts); top ``keywords_per_chunk`` (fewer for short chunks: one
  per 12 words, at least two), sub-phrases of a chosen phrase skipped.

Output order never depends on set iteration or hashing: everything is ordered by position in the
text, then by explicit sort keys.

Modules: :mod:`.words` (word lists), :mod:`.terms` (candidate terms),
:mod:`.type_guess` (:func:`guess_type`), :mod:`.relations`, :mod:`.keywords`;
this one merges mentions over a document and emits the records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ...models import EntityRecord, Extraction
from ...text.names import normalise_name
from ...text.stopwords import STOPWORDS
from .keywords import keywords
from .relations import relations
from .terms import ChunkAnalysis, Mention, TermFinder, clean_ws, shorten
from .type_guess import DEFAULT_ENTITY_TYPES, GENE_CUES, fallback_type, guess_type, name_categories, resolve_type
from .words import GENERIC_ADJECTIVES, GENERIC_WORDS, HAS_ALPHA_RE, LEADING_MODIFIERS, looks_adjective

__all__ = ["DEFAULT_ENTITY_TYPES", "OfflineExtractor", "guess_type"]

MAX_WORDS = 6
DESCRIPTION_CHARS = 300
SHORT_DOCUMENT_CHARS = 6000


def _acronyms(analyses: list[ChunkAnalysis]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(acronym key -> long-form key, long-form key -> acronyms) from the document's definitions."""
    acr_map: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    for a in analyses:
        for long_key, _long, acronym in a.definitions:
            short_key = normalise_name(acronym)
            if short_key in acr_map or short_key == long_key:
                continue
            acr_map[short_key] = long_key
            lst = aliases.setdefault(long_key, [])
            if acronym not in lst:
                lst.append(acronym)
    return acr_map, aliases


def _resolve_mention(m: Mention, acr_map: dict[str, str], mid_caps: set[str]) -> None:
    """An acronym mention becomes an alias of its long form; a sentence-initial capital is lower-cased."""
    if m.key in acr_map:
        m.key = acr_map[m.key]
        m.alias = True
    # Sentence-initial capital: lower-case it unless the word is capitalised
    # mid-sentence somewhere in the document or the phrase is title-cased.
    if m.initial_title and m.surface.split(" ", 1)[0] not in mid_caps and m.surface[1:].lower() == m.surface[1:]:
        m.surface = m.surface[0].lower() + m.surface[1:]


class OfflineExtractor:
    """Rule-based entity/relation/keyword extraction (the ``offline`` profile).

    ``entity_types`` is the configured type list; types are guessed heuristically into it
    (:func:`guess_type`). ``min_single_word_freq`` is how many standalone mentions in the document
    an ordinary single word needs to become an entity.
    """

    name = "offline"

    def __init__(
        self,
        entity_types: Sequence[str] | None = None,
        *,
        max_relations_per_chunk: int = 30,
        keywords_per_chunk: int = 8,
        min_single_word_freq: int = 2,
        min_phrase_freq: int = 2,
        max_words: int = MAX_WORDS,
    ) -> None:
        self.entity_types = list(entity_types) if entity_types else list(DEFAULT_ENTITY_TYPES)
        self.max_relations_per_chunk = max_relations_per_chunk
        self.keywords_per_chunk = keywords_per_chunk
        self.min_single_word_freq = min_single_word_freq
        self.min_phrase_freq = min_phrase_freq
        self.max_words = max_words
        self._terms = TermFinder(max_words, organisms=resolve_type("organism", self.entity_types) is not None)
        self._resolved: dict[str, str | None] = {}
        self._fallback = fallback_type(self.entity_types)

    def _guess_type(self, name: str, gene_cue: bool) -> str:
        """:func:`guess_type` with the category -> type resolution cached."""
        for category in name_categories(name, gene_cue):
            if category not in self._resolved:
                self._resolved[category] = resolve_type(category, self.entity_types)
            if resolved := self._resolved[category]:
                return resolved
        return self._fallback

    # ---------------------------------------------------------------- public API

    def extract_chunk(self, chunk_id: str, text: str) -> Extraction:
        """Entities, relations and keywords of one chunk, treated as a one-chunk document."""
        return self.extract_document([(chunk_id, text)])

    def extract_document(self, chunks: list[tuple[str, str]]) -> Extraction:
        """Extraction for all ``(chunk_id, text)`` chunks of one document.

        Acronym definitions, entity names, single-word frequencies and keyword IDF are computed
        over the whole document; every record is attributed to the chunk it was found in.
        """
        analyses = [self._terms.analyse(cid, text) for cid, text in chunks]
        doc = self._document_stats(analyses)
        result = Extraction()
        for analysis in analyses:
            result.extend(self._emit(analysis, doc))
        return result

    # ---------------------------------------------------------------- document statistics

    def _document_stats(self, analyses: list[ChunkAnalysis]) -> dict:
        acr_map, aliases = _acronyms(analyses)
        mid_caps = {w for a in analyses for w in a.mid_caps}
        surfaces: dict[str, Counter] = {}
        first_seen: dict[tuple[str, str], int] = {}
        freq: Counter = Counter()
        df: Counter = Counter()
        technical: dict[str, bool] = {}
        next_words: dict[str, Counter] = {}
        order = 0
        for a in analyses:
            seen_here: dict[str, None] = {}
            for m in a.mentions:
                _resolve_mention(m, acr_map, mid_caps)
                if not m.alias:
                    counter = surfaces.setdefault(m.key, Counter())
                    counter[m.surface] += 1
                    first_seen.setdefault((m.key, m.surface), order)
                    order += 1
                if m.standalone:
                    freq[m.key] += 1
                technical[m.key] = technical.get(m.key, False) or m.technical or m.alias
                sent = a.sentences[m.sent]
                if m.tok_end < len(sent.tokens):
                    next_words.setdefault(m.key, Counter())[sent.tokens[m.tok_end].text.lower()] += 1
                seen_here.setdefault(m.key, None)
            for key in seen_here:
                df[key] += 1
        names: dict[str, str] = {}
        for key, counter in surfaces.items():
            names[key] = min(counter, key=lambda s: (-counter[s], first_seen[(key, s)]))
        types: dict[str, str] = {}
        for key, name in names.items():
            cue = any(w in GENE_CUES for w in next_words.get(key, ()))
            types[key] = self._guess_type(name, cue)
        return {
            "acr_map": acr_map,
            "aliases": aliases,
            "names": names,
            "freq": freq,
            "df": df,
            "n_chunks": max(1, len(analyses)),
            "technical": technical,
            "types": types,
            "fallback_type": fallback_type(self.entity_types),
            # in a short text (an abstract) every phrase counts; in a paper one-off phrases are noise
            "phrase_freq": 1 if sum(len(a.text) for a in analyses) < SHORT_DOCUMENT_CHARS else self.min_phrase_freq,
        }

    def _keep(self, key: str, doc: dict) -> bool:
        if key not in doc["names"]:
            return False
        words = key.split()
        if not words or len(words) > self.max_words:
            return False
        if all(
            w in STOPWORDS
            or w in GENERIC_WORDS
            or w in GENERIC_ADJECTIVES
            or w in LEADING_MODIFIERS
            or not HAS_ALPHA_RE.search(w)
            for w in words
        ):
            return False
        if " " not in doc["names"][key]:  # one token ("task-oriented" is one word here)
            if doc["technical"].get(key) or key in doc["aliases"]:
                return len(key) >= 2
            if len(key) < 3 or not key.replace("'", "").replace(" ", "").isalpha():
                return False
            if looks_adjective(key):
                return False
            # Ordinary single words need repeated mentions unless their type is recognised
            # ("accuracy" -> Metric, "classification" -> Task, "glucose" -> Drug/Compound).
            return doc["freq"][key] >= self.min_single_word_freq or doc["types"][key] != doc["fallback_type"]
        # Plain phrases seen once ("time spent", "direct effects") make a graph noisy and slow to
        # embed; technical, typed or repeated phrases are kept.
        return (doc["freq"][key] >= doc["phrase_freq"] or doc["technical"].get(key) or key in doc["aliases"]
                or doc["types"][key] != doc["fallback_type"])

    # ---------------------------------------------------------------- records

    def _emit(self, a: ChunkAnalysis, doc: dict) -> Extraction:
        out = Extraction()
        kept_mentions = [m for m in a.mentions if self._keep(m.key, doc)]
        sentence_text = [clean_ws(a.text[s.start : s.end]) for s in a.sentences]
        # Entities, in order of first appearance.
        first_sentence: dict[str, int] = {}
        for m in kept_mentions:
            first_sentence.setdefault(m.key, m.sent)
        for key, s_idx in first_sentence.items():
            out.entities.append(
                EntityRecord(
                    name=doc["names"][key],
                    type=doc["types"][key],
                    description=shorten(sentence_text[s_idx], DESCRIPTION_CHARS),
                    chunk_id=a.chunk_id,
                    aliases=list(doc["aliases"].get(key, [])),
                )
            )
        out.relations = relations(a, kept_mentions, doc, sentence_text, self.max_relations_per_chunk)
        out.keywords = keywords(a, kept_mentions, doc, self.keywords_per_chunk)
        return out
