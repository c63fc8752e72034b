"""Two ways a real model's answer misuses the numbered sources, and their repair.

Both were seen with Qwen2.5-Coder 0.5B through llama.cpp (tests/fixtures/real_model/):
* it answered with the context's header lines ("[1] P84-1047", "[2] ICCV_2003_158_abs", or all on
  one line: "[1] PMID 10808977 [2] PMID 23831910"): source labels, not statements. They are dropped (the references list names the sources anyway); an
  answer made only of them is no answer.
* it copied a passage of source [2] word for word under the label of [1]. A sentence that one
  source holds verbatim, cited to sources that do not hold it (or to none), is cited to the source
  it came from.

And two ways Qwen2.5-Coder 1.5B answered:
* right, in its own words, citing nothing (all three ASKG answers over full papers).
  :func:`attribute_uncited` cites each sentence of such an answer whose own words one source holds,
  or two together (a HotpotQA sentence joining two passages); words about the sources ("According
  to the sources, ...") are not the sentence's own (the engine says so in the answer's notes:
  matched, not the model's). A sentence that restates the question and adds a single word ("... can
  only be processed on Windows operating systems.", ASKG) is matched on all its words instead.
* in a loop: "The study by [5] found that X. The study by [6] found that X. ..." through 43 sources,
  until its completion budget (PubMedQA, hybrid, 344 s). A sentence the answer already said (the
  same words, whatever it cites) is said once (:func:`drop_repeats`); a streamed answer is stopped
  when it starts looping (``engine``).
* with its citation in a sentence of its own after the claim: "Jack Owens wrote a song after
  attending a luau ... in Honolulu County. This is stated in the first source [1]." (HotpotQA,
  naive): the claim cited nothing, and since the answer did cite, nothing matched it to a source
  either. A sentence of citations and words about the sources only ("This can be seen in the source
  [1].", or markers alone after the full stop: "... among unvaccinated seniors. [1] [2] [3] [4]",
  PubMedQA) gives its citations to the sentence before it and goes (:func:`fold_pointers`).
* with a blanket citation: "The study by [1] [2] ... [29] demonstrates that ..." (PubMedQA, ppr): every
  source at once, which the support judge found unsupported for 28 of the 29. A sentence citing
  :data:`BLANKET_CITES` or more sources is cited to the one of them that holds its own words, or to
  none (:func:`narrow_blankets`).
* with a stray source beside the right one: "Yes, follow-up recommendations for abnormal Papanicolaou
  (Pap) smears influence patient adherence. [1] [2]" (PubMedQA, naive), where [2] is a study of an IT
  system in general practice; or inside a sentence: "The study [3] found that the Hawkins sign ..., and
  the study [4] found that structural improvements were only noticed in the genuine acupuncture
  group." (hybrid), where [4] is the surgical clerkship study and [1] the acupuncture trial. A source
  cited beside another that holds several times more of the sentence's words, holding next to none
  the other lacks, is cited in its place to the source that holds the words the sentence's other
  sources lack, or not at all (:func:`recite_strays`).

Pure functions over the answer text and its numbered sources (``query.sources.source_location``
gives the header a source had in the context)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..models import Source
from ..text.sentences import sentence_spans
from .citations import verify_citations
from .extractive import content_stems
from .sources import source_location

_MARKERS = re.compile(r"\[(\d+)\]")
_NOT_WORD = re.compile(r"[^0-9a-z]+")
MIN_COPIED_WORDS = 8  # shorter sentences are too common to tell where they were copied from
# an uncited sentence is matched to a source holding this share of its own words (those not in the question)
MATCH_SHARE = 0.8
MIN_MATCHED_WORDS = 2
# a sentence restating the question with fewer own words than that is matched on all its words instead
RESTATED_SHARE = 0.9
MIN_RESTATED_WORDS = 6
# words about the sources, not their content ("According to the sources, ..."): no source holds them
ABOUT_SOURCES = frozenset(content_stems("according source sources passage passages context provided mentioned described stated"))
# words a sentence that only points at its sources uses besides those ("This is stated in the first source [1].")
POINTING = frozenset(content_stems("first second third fourth fifth last above earlier following see seen shown show "
                                   "found find information given indicated indicate supported support confirmed "
                                   "confirm reference references text document documents cited cite says states "
                                   "noted explained"))
_NEGATION = re.compile(r"\b(?:no|not|never|none|neither|nor|nothing|cannot)\b|n't\b", re.I)
LOOP_REPEATS = 3  # a streamed answer that has repeated this many sentences is looping: it is stopped
BLANKET_CITES = 6  # a sentence citing this many sources or more cites them all, not what supports it
# a source cited beside one holding this many times more of the sentence's words (and next to none of the
# words that one lacks) is a stray
STRAY_RATIO = 3
STRAY_BESIDE_WORDS = 4  # ... when that one holds this many at least (fewer say too little to tell a stray by)


@dataclass(frozen=True)
class Stray:
    """A source a sentence cited beside the one holding its words (:func:`recite_strays`)."""

    stray: int
    holds: int  # of the sentence's words
    words: int
    beside: int  # the cited source holding the most of them
    beside_holds: int
    instead: int | None  # the source cited in its place, if one holds what the cited ones lack


@dataclass
class Regrounded:
    text: str
    labels_dropped: int = 0
    repeats_dropped: int = 0
    recited: list[tuple[list[int], int]] = field(default_factory=list)  # (numbers it cited, the source it copies)
    narrowed: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)  # (sources a sentence cited, those kept)
    pointers_folded: int = 0
    strays: list[Stray] = field(default_factory=list)


def _words(text: str) -> str:
    return f" {_NOT_WORD.sub(' ', text.casefold()).strip()} "


def _is_label(line: str, labels: set[str]) -> bool:
    """``line`` is only "[n] <a source's header>" (as the context showed it), maybe with a bullet, or
    several of them in a row ("[1] PMID 10808977 [2] PMID 23831910", seen with the 0.5B)."""
    bare = line.strip().lstrip("-*• ").strip()
    parts = re.split(r"(?=\[\d+\])", bare)
    if parts[0].strip():  # words before the first marker: a statement
        return False
    for part in parts[1:]:
        match = re.fullmatch(r"\[(\d+)\]\s*(.*?)[\s.:,;]*", part)
        if match is None or (match.group(2) and _words(match.group(2)) not in labels):
            return False
    return True


def drop_source_labels(text: str, sources: Sequence[Source]) -> tuple[str, int]:
    """``text`` without the lines that only repeat a source's header, and how many there were."""
    labels = {_words(source_location(s)) for s in sources} | {_words(s.title or "") for s in sources if s.title}
    kept, dropped = [], 0
    for line in text.splitlines():
        if line.strip() and _is_label(line, labels):
            dropped += 1
            continue
        kept.append(line)
    return "\n".join(kept).strip(), dropped


def _holder(sentence: str, passages: dict[int, str]) -> int | None:
    """The one source whose text holds ``sentence`` word for word (None: none, or several)."""
    words = _words(_MARKERS.sub(" ", sentence))
    if len(words.split()) < MIN_COPIED_WORDS:
        return None
    holders = [n for n, text in passages.items() if words in text]
    return holders[0] if len(holders) == 1 else None


def markers(numbers: Sequence[int]) -> str:
    """``[1][4]``: the citation markers of ``numbers``."""
    return "".join(f"[{n}]" for n in numbers)


def _uncited(sentence: str) -> str:
    """``sentence`` without its citation markers (and the spaces they leave)."""
    return verify_citations(sentence, set()).text.rstrip()


def _split_ending(sentence: str) -> tuple[str, str, str]:
    """(body, closing punctuation or "", trailing whitespace) of ``sentence``: markers go between the first two."""
    body = sentence.rstrip()
    trailing = sentence[len(body):]
    if body and body[-1] in ".!?":
        return body[:-1], body[-1], trailing
    return body, "", trailing


def _cited_to(sentence: str, *numbers: int) -> str:
    """``sentence`` with its markers replaced by ``[n]`` of each of ``numbers``, before its closing punctuation."""
    body, ending, _ = _split_ending(_uncited(sentence))
    return f"{body} {markers(numbers)}{ending}"


def _rewrite_sentences(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with each sentence replaced by ``rewrite(sentence)`` (what lies between them kept)."""
    out, last = [], 0
    for start, end in sentence_spans(text):
        out.append(text[last:start] + rewrite(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def _also_cited(sentence: str, numbers: Sequence[int]) -> str:
    """``sentence`` with ``[n]`` of each of ``numbers`` it does not cite yet added before its closing punctuation."""
    new = [n for n in numbers if f"[{n}]" not in sentence]
    if not new:
        return sentence
    body, ending, trailing = _split_ending(sentence)
    return f"{body}{'' if body.endswith(']') else ' '}{markers(new)}{ending}{trailing}"


def _points_only(sentence: str) -> bool:
    """``sentence`` cites and says nothing but where its words are: markers alone ("… seniors. [1] [2]")
    or with words about sources and no others ("This is stated in the first source [1]."), and no
    negation ("No [2].", "It is not stated in [1]." say something)."""
    if not _MARKERS.search(sentence) or _NEGATION.search(sentence):
        return False
    rest = _MARKERS.sub(" ", sentence)
    if not re.search(r"\w", rest):
        return True
    words = content_stems(rest)
    return bool(words) and not (words - ABOUT_SOURCES - POINTING)


def fold_pointers(text: str) -> tuple[str, int]:
    """Each sentence that only points at sources gives its citations to the sentence before it and
    is dropped (the first sentence of an answer has none before it: it stays). Returns the text and
    how many were folded."""
    out: list[str] = []
    last, previous, folded, dropped_gap = 0, None, 0, ""
    for start, end in sentence_spans(text):
        sentence, gap = text[start:end], text[last:start]
        if previous is not None and _points_only(sentence):
            out[previous] = _also_cited(out[previous], [int(n) for n in _MARKERS.findall(sentence)])
            folded += 1
            dropped_gap = max(dropped_gap, gap, key=lambda g: g.count("\n"))
        else:  # the wider of the gaps around a dropped sentence stays (a paragraph break is kept)
            out += [max(gap, dropped_gap, key=lambda g: g.count("\n")), sentence]
            previous, dropped_gap = len(out) - 1, ""
        last = end
    out.append(text[last:])
    return "".join(out), folded


def recite_copies(text: str, sources: Sequence[Source]) -> tuple[str, list[tuple[list[int], int]]]:
    """Sentences copied from one source but cited to others (or to none) get that source's number instead."""
    passages = {s.number: _words(s.text) for s in sources}
    moved: list[tuple[list[int], int]] = []

    def recite(sentence: str) -> str:
        cited = [int(n) for n in _MARKERS.findall(sentence)]
        holder = _holder(sentence, passages)
        if holder is None or holder in cited:
            return sentence
        moved.append((cited, holder))
        return _cited_to(sentence, holder)

    return _rewrite_sentences(text, recite), moved


def _best_holders(own: set[str], held: Sequence[tuple[int, set[str]]]) -> tuple[tuple[int, ...], int] | None:
    """(sources, words matched) of the source holding the most of ``own`` (the first on a tie), when
    it holds at least :data:`MATCH_SHARE` of them and :data:`MIN_MATCHED_WORDS`; else of the two
    sources that hold that share together, each at least :data:`MIN_MATCHED_WORDS` the other lacks
    (a sentence joining two passages, as a multi-hop answer does; the most words, the first pair
    on a tie); else None."""
    enough = MATCH_SHARE * len(own)
    matched, number = max(((len(own & words), -n) for n, words in held), default=(0, 0))
    if own and matched >= MIN_MATCHED_WORDS and matched >= enough:
        return (-number,), matched
    parts = [(n, own & words) for n, words in held if len(own & words) >= MIN_MATCHED_WORDS]
    best: tuple[tuple[int, ...], int] | None = None
    for (a, in_a), (b, in_b) in itertools.combinations(parts, 2):
        both = len(in_a | in_b)
        if (both >= enough and len(in_a - in_b) >= MIN_MATCHED_WORDS and len(in_b - in_a) >= MIN_MATCHED_WORDS
                and (best is None or both > best[1])):
            best = (a, b), both
    return best


def _held_words(sources: Sequence[Source]) -> list[tuple[int, set[str]]]:
    return [(s.number, content_stems(f"{s.title or ''} {s.text}")) for s in sources]


def _sentence_words(sentence: str) -> set[str]:
    """The content words of ``sentence``, its markers and :data:`ABOUT_SOURCES` aside."""
    return content_stems(_MARKERS.sub(" ", sentence)) - ABOUT_SOURCES


def _own_words(sentence: str, asked: set[str]) -> set[str]:
    """The content words of ``sentence`` (its markers aside) that the question does not hold, nor
    :data:`ABOUT_SOURCES`."""
    return _sentence_words(sentence) - asked


def _restating_holder(sentence: str, own: set[str], held: Sequence[tuple[int, set[str]]]
                      ) -> tuple[tuple[int, ...], int, int] | None:
    """For a sentence that restates the question and adds one word of its own ("OLE 2 file types and
    .docm files can only be processed on Windows operating systems."): the source holding that word
    and at least :data:`RESTATED_SHARE` of all the sentence's content words, at least
    :data:`MIN_RESTATED_WORDS` of them (the most, the first on a tie): (sources, matched, words)."""
    words = _sentence_words(sentence)
    scored = [(len(words & held_words), -n) for n, held_words in held if own <= held_words]
    if not own or len(words) < MIN_RESTATED_WORDS or not scored:
        return None
    matched, number = max(scored)
    return ((-number,), matched, len(words)) if matched >= RESTATED_SHARE * len(words) else None


def attribute_uncited(text: str, sources: Sequence[Source], question: str
                      ) -> tuple[str, list[tuple[tuple[int, ...], int, int]]]:
    """For an answer that cites nothing: each sentence whose own content words (those the question
    does not hold) are at least :data:`MATCH_SHARE` in one source's title and text, and at least
    :data:`MIN_MATCHED_WORDS` of them, is cited to the source holding the most (the first in the
    context on a tie), or else to two sources that hold that share together (:func:`_best_holders`);
    a sentence with fewer own words than that, to the source holding them and nearly all its words
    (:func:`_restating_holder`). Returns the text and (sources, words matched, words counted) per
    sentence cited."""
    asked = content_stems(question)
    held = _held_words(sources)
    found: list[tuple[tuple[int, ...], int, int]] = []

    def attribute(sentence: str) -> str:
        own = _own_words(sentence, asked)
        best = _best_holders(own, held)
        match = (best[0], best[1], len(own)) if best else (
            _restating_holder(sentence, own, held) if len(own) < MIN_MATCHED_WORDS else None)
        if match is None:
            return sentence
        found.append(match)
        return _cited_to(sentence, *match[0])

    return _rewrite_sentences(text, attribute), found


def narrow_blankets(text: str, sources: Sequence[Source], question: str
                    ) -> tuple[str, list[tuple[int, tuple[int, ...]]]]:
    """Each sentence citing :data:`BLANKET_CITES` or more sources is cited to the one (or two) of
    them holding its own words (as :func:`attribute_uncited` matches them), or to none when none
    does. Returns the text and (how many sources the sentence cited, those kept) per sentence."""
    asked = content_stems(question)
    narrowed: list[tuple[int, tuple[int, ...]]] = []

    def narrow(sentence: str) -> str:
        cited = {int(n) for n in _MARKERS.findall(sentence)}
        if len(cited) < BLANKET_CITES:
            return sentence
        best = _best_holders(_own_words(sentence, asked), _held_words([s for s in sources if s.number in cited]))
        kept = best[0] if best else ()
        narrowed.append((len(cited), kept))
        return _cited_to(sentence, *kept) if kept else _uncited(sentence)

    return _rewrite_sentences(text, narrow), narrowed


def recite_strays(text: str, sources: Sequence[Source]) -> tuple[str, list[Stray]]:
    """In each sentence citing two to :data:`BLANKET_CITES` - 1 sources: a cited source holding under
    1 / :data:`STRAY_RATIO` of the sentence's content words that the cited source holding the most
    holds (at least :data:`STRAY_BESIDE_WORDS`), and fewer than :data:`MIN_MATCHED_WORDS` words that
    one lacks, is a stray. Its marker is replaced, where it stands, by the uncited source holding the
    most of the words no cited source but the strays holds (at least :data:`MIN_MATCHED_WORDS` of
    them, and more than the stray holds), or removed. Returns the text and the strays found."""
    held = dict(_held_words(sources))
    found: list[Stray] = []

    def recite(sentence: str) -> str:
        cited = sorted({int(n) for n in _MARKERS.findall(sentence)} & held.keys())
        if not 2 <= len(cited) < BLANKET_CITES:
            return sentence
        words = _sentence_words(sentence)
        holds = {n: words & held[n] for n in cited}
        beside = max(cited, key=lambda n: (len(holds[n]), -n))
        if len(holds[beside]) < STRAY_BESIDE_WORDS:
            return sentence
        strays = [n for n in cited if n != beside and len(holds[n] - holds[beside]) < MIN_MATCHED_WORDS
                  and STRAY_RATIO * len(holds[n]) < len(holds[beside])]
        if not strays:
            return sentence
        lacking = words - set().union(*(held[n] for n in cited if n not in strays))
        instead = _best_instead(lacking, [(n, w) for n, w in held.items() if n not in cited],
                                max(len(holds[n]) for n in strays))
        swap = {stray: instead if stray == strays[0] else None for stray in strays}  # one stray takes its place
        found.extend(Stray(n, len(holds[n]), len(words), beside, len(holds[beside]), swap[n]) for n in strays)
        return _swap_markers(sentence, swap)

    return _rewrite_sentences(text, recite), found


def _best_instead(lacking: set[str], uncited: Sequence[tuple[int, set[str]]], stray_holds: int) -> int | None:
    """The uncited source holding the most of ``lacking`` (the first on a tie), if it holds at least
    :data:`MIN_MATCHED_WORDS` of them and more than the stray held."""
    matched, number = max(((len(lacking & words), -n) for n, words in uncited), default=(0, 0))
    return -number if matched >= max(MIN_MATCHED_WORDS, stray_holds + 1) else None


def _swap_markers(sentence: str, swap: dict[int, int | None]) -> str:
    """``sentence`` with each ``[n]`` of a number in ``swap`` replaced by its new number's, or removed
    (None; the space it leaves closed). Other markers, numbers of no source included, stay."""
    replaced = _MARKERS.sub(lambda m: f"[{swap.get(int(m.group(1))) or m.group(1)}]", sentence)
    present = set(verify_citations(replaced, set()).removed)  # every number its markers hold
    return verify_citations(replaced, present - {n for n, new in swap.items() if new is None}).text


def repeated_sentences(text: str) -> list[tuple[int, int]]:
    """The spans of the sentences of ``text`` whose words (citation markers aside) an earlier one has."""
    seen: set[str] = set()
    repeats = []
    for start, end in sentence_spans(text):
        words = _words(_MARKERS.sub(" ", text[start:end])).strip()
        if words in seen:
            repeats.append((start, end))
        elif words:
            seen.add(words)
    return repeats


def drop_repeats(text: str) -> tuple[str, int]:
    """``text`` with each sentence said once (the first time), and how many repeats were dropped."""
    repeats = repeated_sentences(text)
    out, last = [], 0
    for start, end in repeats:
        out.append(text[last:start].rstrip(" "))
        last = end
    out.append(text[last:])
    return re.sub(r"[ \t]+\n", "\n", "".join(out)).strip(), len(repeats)


def reground(text: str, sources: Sequence[Source], question: str = "") -> Regrounded:
    """The repairs, labels first (a label line is not a sentence to re-cite), repeats last."""
    text, dropped = drop_source_labels(text, sources)
    text, folded = fold_pointers(text)
    text, moved = recite_copies(text, sources)
    text, narrowed = narrow_blankets(text, sources, question)
    text, strays = recite_strays(text, sources)
    text, repeats = drop_repeats(text)
    return Regrounded(text, dropped, repeats, moved, narrowed, folded, strays)


def notes_for(fixed: Regrounded) -> list[str]:
    notes = []
    if fixed.repeats_dropped:
        notes.append(f"the model repeated {fixed.repeats_dropped} sentence(s) of its answer: each is kept once")
    if fixed.labels_dropped:
        notes.append(f"dropped {fixed.labels_dropped} line(s) of the model's answer that only repeated a source's "
                     "label (the references list names the sources)")
    if fixed.pointers_folded:
        one = fixed.pointers_folded == 1
        notes.append(f"{'a sentence' if one else f'{fixed.pointers_folded} sentences'} of the model's answer only "
                     f"pointed at {'its' if one else 'their'} source(s) (\"[1] [2]\", \"This is stated in source "
                     f"[1].\"): {'its' if one else 'their'} citations now follow the sentence before")
    # one note per (numbers cited, source copied): the 1.5B copied eight sentences of one passage
    for (cited, holder), count in Counter((tuple(c), h) for c, h in fixed.recited).items():
        was = f"cited {markers(cited)}" if cited else "citing nothing"
        which = "a sentence" if count == 1 else f"{count} sentences"
        verb = "is" if count == 1 else "are"
        notes.append(f"{which} {was} {verb} copied word for word from source [{holder}]: cited as [{holder}]")
    for count, kept in fixed.narrowed:
        notes.append(f"a sentence cited {count} sources at once: " + (
            f"cited to {markers(kept)}, which hold its words" if kept else "none of them holds its words, so it cites none"))
    for stray in fixed.strays:
        notes.append(f"a sentence cited [{stray.stray}], which holds {stray.holds} of its {stray.words} words, beside "
                     f"[{stray.beside}], which holds {stray.beside_holds}: " + (
                         f"cited as [{stray.instead}], which holds the words its other sources lack" if stray.instead
                         else f"it no longer cites [{stray.stray}]"))
    return notes


__all__ = ["ABOUT_SOURCES", "BLANKET_CITES", "LOOP_REPEATS", "POINTING", "Regrounded", "Stray", "attribute_uncited", "drop_repeats", "drop_source_labels", "fold_pointers", "markers", "narrow_blankets", "notes_for", "recite_copies", "recite_strays", "reground", "repeated_sentences"]
