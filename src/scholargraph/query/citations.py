"""Citation markers: find ``[n]`` / ``[n, m]`` / ``[n-m]`` in model output, keep only numbers
that exist in the context, and report the ones that were removed (never shown as real)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..models import Answer

_MARKER = re.compile(r"\[(\s*\d+\s*(?:[-–,;]\s*\d+\s*)*)\]")


@dataclass
class CitationCheck:
    text: str
    cited: list[int]
    removed: list[int]


def neutralise_source_citations(text: str) -> str:
    """A paper's own reference markers ("... as shown in [42]") become "(ref. 42)", so they can never
    be mistaken for — or copied as — the numbered sources of our context."""
    return _MARKER.sub(lambda m: f"(ref. {m.group(1).strip()})", text)


def _numbers(inner: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[,;]", inner):
        bounds = [int(x) for x in re.split(r"[-–]", part) if x.strip()]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 50:
            out.extend(range(bounds[0], bounds[1] + 1))
        else:
            out.extend(bounds)
    return out


_BRACKET_RANGE = re.compile(r"\[(\d+)\]\s*[-–]\s*\[(\d+)\]")


def verify_citations(text: str, valid: set[int]) -> CitationCheck:
    """``text`` with only the citation numbers in ``valid`` (a range written "[1]–[4]" is [1-4])."""
    text = _BRACKET_RANGE.sub(r"[\1-\2]", text)
    cited: list[int] = []
    removed: list[int] = []

    def fix(match: re.Match) -> str:
        nums = _numbers(match.group(1))
        good = [n for n in nums if n in valid]
        removed.extend(n for n in nums if n not in valid)
        cited.extend(n for n in good if n not in cited)
        return "".join(f"[{n}]" for n in dict.fromkeys(good)) or _DROPPED

    return CitationCheck(_close_gaps(_MARKER.sub(fix, text)), cited, sorted(set(removed)))


_DROPPED = "\ue000"  # where a marker citing no valid source was (a private-use character)
_GAP = f"(?:[ \\t]*{_DROPPED})+[ \\t]*"  # dropped markers in a row and the spaces around them


def _close_gaps(text: str) -> str:
    """``text`` without the spaces a dropped marker leaves ("a claim [9]." → "a claim.", "a [9] claim" →
    "a claim"), and a marker's own space before punctuation ("[1] ." → "[1]."); the text's other spaces
    stay ("and .docm files", "p < .05")."""
    text = re.sub(f"^{_GAP}", "", text, flags=re.M)
    text = re.sub(f"{_GAP}(?=[.,;:!?]|$)", "", text, flags=re.M)
    text = re.sub(_GAP, " ", text)
    return re.sub(r"\][ \t]+(?=[.,;:])", "]", text)


class StreamingCitationFilter:
    """Streams model output while holding back ``[...]`` until it can be checked, so an invented
    citation never reaches the screen even for a moment."""

    def __init__(self, valid: set[int]):
        self.valid = valid
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        self._held = ""
        cut = text.rfind("[")
        if cut != -1 and "]" not in text[cut:] and len(text) - cut < 40:
            text, self._held = text[:cut], text[cut:]
        return verify_citations(text, self.valid).text if "[" in text else text

    def flush(self) -> str:
        text, self._held = self._held, ""
        return verify_citations(text, self.valid).text


_VERIFIED = re.compile(r"\[(\d+)\]")


class CitationNumbers:
    """Numbers the sources an answer cites 1, 2, 3... in the order they are first cited (the context
    numbers them by rank: an answer citing [24], [25], [27] shows [1], [2], [3]). Applied to
    verified text (``[n]`` markers only), piece by piece while streaming and to the final text: the
    same mapping both times."""

    def __init__(self) -> None:
        self.order: dict[int, int] = {}  # context number -> number shown

    def apply(self, text: str) -> str:
        def number(match: re.Match) -> str:
            n = int(match.group(1))
            return f"[{self.order.setdefault(n, len(self.order) + 1)}]"

        return _VERIFIED.sub(number, text)


def number_cited_sources(answer: Answer, numbers: CitationNumbers | None = None) -> Answer:
    """Renumber ``answer`` by citation order: ``sources`` become the cited sources (numbered from 1,
    each keeping its ``context_number``), ``context_sources`` all the sources of the context
    (numbered as in ``context``); ``cited`` lists the new numbers."""
    context = list(answer.sources)
    by_number = {s.number: s for s in context}
    numbers = numbers or CitationNumbers()
    check = verify_citations(answer.text, set(by_number))  # every [n] shown resolves to a listed source
    if check.removed:
        answer.text = check.text
        answer.removed_citations = sorted(set(answer.removed_citations) | set(check.removed))
        answer.notes.append(f"removed citation(s) {', '.join(f'[{n}]' for n in check.removed)}: "
                            "no such source in the answer's context")
    answer.cited = [n for n in answer.cited if n in by_number]
    answer.text = numbers.apply(answer.text)
    for n in answer.cited:  # cited but absent from the text (defensive): numbered after the others
        numbers.order.setdefault(n, len(numbers.order) + 1)
    shown = sorted(numbers.order.items(), key=lambda item: item[1])
    # the notes name sources by the numbers the text shows (a note that names a source the answer
    # does not cite keeps its context number)
    answer.notes = [_VERIFIED.sub(lambda m: f"[{numbers.order.get(int(m.group(1)), m.group(1))}]", note)
                    for note in answer.notes]
    answer.context_sources = context
    answer.sources = [replace(by_number[old], number=new, context_number=old) for old, new in shown if old in by_number]
    answer.cited = [s.number for s in answer.sources]
    return answer
