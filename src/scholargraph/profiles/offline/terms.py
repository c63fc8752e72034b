"""Candidate term detection of the offline extractor (see :mod:`.offline`).

Each token gets a word class (punctuation, number, stopword, verb, adverb, content word,
ignored) and a technical kind (acronym, mixed case, letters+digits, capitalised); maximal runs of
content words are trimmed into candidate phrases (:class:`Mention`), and "long form (ACR)"
definitions replace the phrases they overlap.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...text.acronyms import find_acronym_definition_spans, is_acronym
from ...text.names import fold_plural, normalise_name
from ...text.sentences import sentence_spans
from ...text.stopwords import STOPWORDS
from ...text.tokens import Token, tokenize_with_offsets
from .type_guess import ORGANISM_WORDS
from .words import (
    ADVERB_STOPWORDS,
    AUXILIARIES,
    DETERMINERS,
    GENERIC_WORDS,
    GERUND_PREPS,
    HAS_ALPHA_RE,
    HAS_DIGIT_RE,
    IGNORED_RES,
    LEADING_MODIFIERS,
    LY_NOUNS,
    MIXED_RE,
    MODIFIER_HEADS,
    NOMINAL_ING_LEADING,
    NUMBER_RE,
    PLACEHOLDER_RE,
    ROMAN_RE,
    SECTION_LABELS,
    SUBJECT_WORDS,
    TECH_GENERIC_HEADS,
    VERBS,
    is_gerund,
    is_participle,
    is_possessive,
    is_verb_s,
    verb_like_ing,
)

# Token classes
PUNCT, NUMBER, STOP, VERB, ADVERB, WORD, IGNORED = "P", "N", "S", "V", "R", "W", "X"
_TECH_KINDS = ("acr", "mixed", "alnum")


@dataclass
class Mention:
    key: str
    surface: str
    sent: int
    tok_start: int
    tok_end: int
    technical: bool
    standalone: bool = True  # False for technical tokens nested in a longer phrase
    alias: bool = False  # an acronym mention (its surface never names the entity)
    initial_title: bool = False  # phrase starts the sentence with a Title-case word


@dataclass
class Sentence:
    start: int
    end: int
    tokens: list[Token]
    classes: list[str]
    kinds: list[str]


@dataclass
class ChunkAnalysis:
    chunk_id: str
    text: str
    sentences: list[Sentence]
    mentions: list[Mention] = field(default_factory=list)
    definitions: list[tuple[str, str, str]] = field(default_factory=list)  # (long key, long surface, acronym)
    mid_caps: list[str] = field(default_factory=list)
    word_tf: Counter = field(default_factory=Counter)


def clean_ws(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    text = clean_ws(text)
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(" ,;:") + "\u2026"


def _ignored_mask(text: str) -> bytearray:
    """Non-zero at the characters of inline LaTeX and of citations ("Smith et al. (2020)")."""
    ignore = bytearray(len(text))
    for rx in IGNORED_RES:
        for m in rx.finditer(text):
            ignore[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    return ignore


def _is_section_label(tokens: list[Token], i: int) -> bool:
    """ "RESULTS:" in a structured abstract."""
    text = tokens[i].text
    return (
        text.isupper()
        and text.isalpha()
        and len(text) > 2
        and (text.lower() in SECTION_LABELS or (i + 1 < len(tokens) and tokens[i + 1].text == ":"))
    )


def _verb_in_context(tokens: list[Token], classes: list[str], i: int) -> bool:
    """A lower-case "-s"/"-ed" word that the word before makes a verb: "which subsumes", "the former
    constrains", "it facilitates", "has dominated", "significantly outperforms", "further hinders"."""
    word = tokens[i].text
    if i == 0 or not word.islower():
        return False
    prev = tokens[i - 1].text.lower()
    verb_s = word.endswith("s") and not word.endswith(("ss", "us", "is"))
    if len(word) > 3 and prev in SUBJECT_WORDS and (word.endswith("ed") or verb_s):
        return True
    return len(word) > 4 and (
        (word.endswith("ed") and prev in AUXILIARIES)
        or (verb_s and (classes[i - 1] == ADVERB or prev in ADVERB_STOPWORDS))
    )


def _unshout(tokens: list[Token], classes: list[str], kinds: list[str]) -> list[str]:
    """Shouting (all-caps titles): capitals carry no information there, acronyms are plain capitals."""
    n_words = sum(1 for c in classes if c in (WORD, STOP, VERB, ADVERB))
    n_caps = sum(
        1
        for t, c in zip(tokens, classes, strict=True)
        if c in (WORD, STOP, VERB) and t.text.isupper() and len(t.text) > 2
    )
    if n_words >= 4 and n_caps * 10 >= n_words * 6:
        return ["cap" if k == "acr" else k for k in kinds]
    return kinds


def _count_words(analysis: ChunkAnalysis, sent: Sentence, first_word: int, mid_caps: dict[str, None]) -> None:
    """Content-word frequencies of the chunk, and the capitalised words seen mid-sentence."""
    for i, (tok, cls, kind) in enumerate(zip(sent.tokens, sent.classes, sent.kinds, strict=True)):
        if cls == WORD:
            analysis.word_tf[fold_plural(tok.text).lower()] += 1
            if kind == "cap" and i > first_word and tok.text[1:].islower():
                mid_caps.setdefault(tok.text, None)


class TermFinder:
    """Candidate terms of one chunk (:meth:`analyse`); token classes are cached across chunks.

    ``max_words``: the longest phrase kept; ``organisms``: the type list has an organism type, so
    organism words inside longer phrases ("human" in "human TSH") stand alone too.
    """

    def __init__(self, max_words: int, organisms: bool) -> None:
        self.max_words = max_words
        self._organisms = organisms
        self._class_cache: dict[str, tuple[str, str]] = {}

    def _classify(self, word: str) -> tuple[str, str]:
        """(class, technical kind) of a token; kinds: acr, mixed, alnum, cap, '' (cached)."""
        cached = self._class_cache.get(word)
        if cached is not None:
            return cached
        cls = _word_class(word)
        kind = _technical_kind(word) if cls == WORD else ""
        if len(self._class_cache) < 200_000:
            self._class_cache[word] = (cls, kind)
        return cls, kind

    def analyse(self, chunk_id: str, text: str) -> ChunkAnalysis:
        """Sentences, token classes, candidate mentions and acronym definitions of one chunk."""
        ignore = _ignored_mask(text)
        sentences: list[Sentence] = []
        analysis = ChunkAnalysis(chunk_id, text, sentences)
        mid_caps: dict[str, None] = {}
        for s_start, s_end in sentence_spans(text):
            tokens = tokenize_with_offsets(text, s_start, s_end)
            classes, kinds = self._classify_sentence(tokens, ignore)
            sentence = Sentence(s_start, s_end, tokens, classes, kinds)
            sentences.append(sentence)
            first_word = next((i for i, c in enumerate(classes) if c not in (PUNCT, IGNORED)), 0)
            _count_words(analysis, sentence, first_word, mid_caps)
            self._chunk_sentence(analysis, len(sentences) - 1, sentence, first_word)
        analysis.mid_caps = list(mid_caps)
        self._apply_definitions(analysis)
        return analysis

    def _classify_sentence(self, tokens: list[Token], ignore: bytearray) -> tuple[list[str], list[str]]:
        """(classes, kinds) of the tokens of one sentence, with the context of their neighbours."""
        classes: list[str] = []
        kinds: list[str] = []
        for i, tok in enumerate(tokens):
            cls, kind = self._classify(tok.text)
            if ignore[tok.start] or _is_section_label(tokens, i):
                cls, kind = IGNORED, ""
            elif cls == WORD and _verb_in_context(tokens, classes, i):
                cls = VERB
            classes.append(cls)
            kinds.append(kind)
        return classes, _unshout(tokens, classes, kinds)

    def _chunk_sentence(self, analysis: ChunkAnalysis, s_idx: int, sent: Sentence, first_word: int) -> None:
        tokens, classes, kinds = sent.tokens, sent.classes, sent.kinds
        n = len(tokens)
        i = 0
        while i < n:
            if classes[i] != WORD:
                i += 1
                continue
            j = i + 1
            while j < n:
                if classes[j] == WORD:
                    j += 1
                elif (
                    classes[j] == NUMBER
                    and tokens[j].text.isdigit()
                    and len(tokens[j].text) <= 2
                    and tokens[j - 1].text.isalpha()
                    and tokens[j - 1].text.lower() not in GENERIC_WORDS
                    and (j + 1 == n or classes[j + 1] != NUMBER)
                ):
                    j += 1  # "caspase 3", "type 2 diabetes"
                elif (
                    tokens[j].text == "of"
                    and j + 1 < n
                    and classes[j + 1] == WORD
                    and kinds[j - 1] == "cap"
                    and kinds[j + 1] == "cap"
                    and j - 1 != first_word
                ):
                    j += 2  # "Bag of Words", "Department of Energy"
                else:
                    break
            self._emit_run(analysis, s_idx, sent, i, j, first_word)
            i = j

    def _emit_run(self, analysis: ChunkAnalysis, s_idx: int, sent: Sentence, i: int, j: int, first_word: int) -> None:
        """The mentions of the run of content words ``i:j``: its trimmed phrase, the technical tokens
        nested in it, and the modifier of a measurement-like head."""
        start = _trim_start(sent, i, j, first_word)
        end = _trim_end(sent, start, j)
        main = start < end and end - start <= self.max_words
        if j - i > 1:
            for k in self._nested_tokens(sent, i, j):
                if not (main and start == k and end == k + 1):
                    self._add(analysis, s_idx, sent, k, k + 1, standalone=False, first_word=first_word)
        if not main:
            return
        m_start = _measured_modifier(sent, start, end)
        if m_start is not None:
            self._add(analysis, s_idx, sent, m_start, end - 1, standalone=False, first_word=first_word)
        self._add(analysis, s_idx, sent, start, end, standalone=True, first_word=first_word)

    def _nested_tokens(self, sent: Sentence, i: int, j: int) -> list[int]:
        """Technical tokens nested in a longer phrase ("BERT" in "BERT-based reranker") stand alone too,
        and so do organism words when the type list has organisms ("human" in "human TSH")."""
        tokens, kinds = sent.tokens, sent.kinds
        return [k for k in range(i, j)
                if kinds[k] in _TECH_KINDS or (self._organisms and tokens[k].text.lower() in ORGANISM_WORDS)]

    def _add(
        self,
        analysis: ChunkAnalysis,
        s_idx: int,
        sent: Sentence,
        i: int,
        j: int,
        *,
        standalone: bool,
        first_word: int,
    ) -> None:
        tokens, kinds = sent.tokens, sent.kinds
        surface = clean_ws(analysis.text[tokens[i].start : tokens[j - 1].end])
        key = normalise_name(surface)
        if not key or not HAS_ALPHA_RE.search(key):
            return
        initial_title = i == first_word and kinds[i] == "cap" and tokens[i].text[1:].islower()
        # Capitalised words count as technical except the sentence-initial one.
        technical = any(kinds[k] in _TECH_KINDS or (kinds[k] == "cap" and k != first_word) for k in range(i, j))
        analysis.mentions.append(
            Mention(key, surface, s_idx, i, j, technical, standalone=standalone, initial_title=initial_title)
        )

    def _apply_definitions(self, analysis: ChunkAnalysis) -> None:
        """Turn "long form (ACR)" into one long-form mention; the acronym becomes an alias mention."""
        for d in find_acronym_definition_spans(analysis.text):
            long_key = normalise_name(d.long_form)
            short_key = normalise_name(d.acronym)
            if not long_key or not short_key or long_key == short_key:
                continue
            span = _definition_span(analysis, d.long_start, d.long_end)
            if span is None:
                continue
            s_idx, ti, tj = span
            sent = analysis.sentences[s_idx]
            kept = _mentions_beside_definition(analysis.mentions, s_idx, ti, tj, short_key)
            technical = any(sent.kinds[k] in ("acr", "mixed", "alnum") for k in range(ti, tj)) or any(
                sent.kinds[k] == "cap" for k in range(ti, tj)
            )
            initial_title = ti == 0 and sent.kinds[ti] == "cap"
            kept.append(
                Mention(long_key, clean_ws(d.long_form), s_idx, ti, tj, technical, initial_title=initial_title)
            )
            kept.sort(key=lambda m: (m.sent, m.tok_start, -m.tok_end))
            analysis.mentions = kept
            analysis.definitions.append((long_key, clean_ws(d.long_form), d.acronym))


def _word_class(word: str) -> str:
    """A token's class from the word alone: punctuation, placeholder, number, stopword, verb, adverb or word."""
    lw = word.lower()
    if not HAS_ALPHA_RE.search(word) and not HAS_DIGIT_RE.search(word):
        return PUNCT
    if PLACEHOLDER_RE.fullmatch(word):
        return IGNORED
    if NUMBER_RE.fullmatch(word) or not HAS_ALPHA_RE.search(word):
        return NUMBER
    if lw in STOPWORDS or lw.strip("'\u2019") in STOPWORDS or (len(word) == 1 and word.islower()):
        return STOP
    if lw in VERBS and not (word.isupper() and len(word) > 1):
        return VERB
    if lw.endswith("ly") and len(lw) > 4 and lw not in LY_NOUNS and "-" not in lw and not word.isupper():
        return ADVERB
    return WORD


def _technical_kind(word: str) -> str:
    """How a word looks technical: acr (an acronym), mixed (mixed case), alnum (letters and digits),
    cap (capitalised) or '' (plain, or one letter)."""
    if len(word) == 1:
        return ""
    if is_acronym(word) and not ROMAN_RE.fullmatch(word):
        return "acr"
    if MIXED_RE.search(word):
        return "mixed"
    if HAS_DIGIT_RE.search(word) and not (len(word) <= 2 and word[0].islower()):
        return "alnum"  # "word2vec", "p53", "F1" (not the variable "i1")
    if word[0].isupper():
        return "cap"
    return ""


def _definition_span(analysis: ChunkAnalysis, start: int, end: int) -> tuple[int, int, int] | None:
    """(sentence, first token, end token) of a definition's long form, or None when no token lies in it."""
    s_idx = next((k for k, s in enumerate(analysis.sentences) if s.start <= start < s.end), None)
    if s_idx is None:
        return None
    toks = [k for k, t in enumerate(analysis.sentences[s_idx].tokens) if t.start >= start and t.end <= end]
    return (s_idx, toks[0], toks[-1] + 1) if toks else None


def _mentions_beside_definition(mentions: list[Mention], s_idx: int, ti: int, tj: int, short_key: str) -> list[Mention]:
    """The mentions a long form at tokens ``ti``..``tj`` of sentence ``s_idx`` leaves: phrases inside it
    go ("BRidge" inside "BRidge Language Modeling (BRLM)"; "DNA" in "complementary DNA" stays), and
    standalone ones overlapping it too, except the acronym itself."""
    kept = []
    for m in mentions:
        if m.sent == s_idx and not m.standalone and ti <= m.tok_start and m.tok_end <= tj and not is_acronym(m.surface):
            continue
        if m.sent == s_idx and m.standalone and m.tok_start < tj and ti < m.tok_end and not m.alias:
            if normalise_name(m.surface) == short_key:
                kept.append(m)
            continue
        kept.append(m)
    return kept


def _trim_start(sent: Sentence, i: int, j: int, first_word: int) -> int:
    """Skip leading modifiers and lower-case possessives, then a gerund with an object
    ("computing optical flow" -> "optical flow")."""
    tokens = sent.tokens
    start = i
    while start < j and (
        tokens[start].text.lower() in LEADING_MODIFIERS
        or (is_possessive(tokens[start].text) and tokens[start].text.islower())
    ):
        start += 1
    if (
        j - start > 1
        and is_gerund(tokens[start].text)
        and tokens[start].text.lower() not in NOMINAL_ING_LEADING
        and (start == first_word or sent.classes[start - 1] == ADVERB or tokens[start - 1].text.lower() in GERUND_PREPS)
    ):
        start += 1
    return start


def _trim_end(sent: Sentence, start: int, j: int) -> int:
    """Drop trailing participles, a verb before a determiner and verb-like gerunds; then a generic head
    after technical tokens ("BERT model" -> "BERT")."""
    tokens, kinds = sent.tokens, sent.kinds
    end = j
    while end > start and (
        is_participle(tokens[end - 1].text)
        or (end < len(tokens) and tokens[end].text.lower() in DETERMINERS and is_verb_s(tokens[end - 1].text))
        or (end - start > 1 and is_gerund(tokens[end - 1].text) and verb_like_ing(tokens, end - 1))
    ):
        end -= 1
    if (
        end - start > 1
        and all(kinds[k] in _TECH_KINDS for k in range(start, end - 1))
        and fold_plural(tokens[end - 1].text).lower() in TECH_GENERIC_HEADS
    ):
        end -= 1
    return end


def _measured_modifier(sent: Sentence, start: int, end: int) -> int | None:
    """Start of the modifier of a measurement-like head ("glucose levels" -> "glucose"), participles
    skipped; None when the phrase has no such head, or the modifier is empty, over three words or a lone
    technical token."""
    tokens, kinds = sent.tokens, sent.kinds
    if not (1 < end - start and fold_plural(tokens[end - 1].text).lower() in MODIFIER_HEADS):
        return None
    m_start = start
    while m_start < end - 1 and is_participle(tokens[m_start].text):
        m_start += 1
    if end - 1 - m_start > 3 or (end - 1 - m_start == 1 and kinds[m_start] in _TECH_KINDS):
        return None
    return m_start if m_start < end - 1 else None
