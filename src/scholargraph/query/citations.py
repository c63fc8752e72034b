"""Citation markers: find ``[n]`` / ``[n, m]`` / ``[n-m]`` in model output, keep only numbers
that exist in the context, and report the ones that were removed (never shown as real)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = re.compile(r"\[(\s*\d+\s*(?:[-–,;]\s*\d+\s*)*)\]")


@dataclass
class CitationCheck:
    text: str
    cited: list[int]
    removed: list[int]


_SOURCE_MARKER = re.compile(r"\[(\s*\d+\s*(?:[-–,;]\s*\d+\s*)*)\]")


def neutralise_source_citations(text: str) -> str:
    """A paper's own reference markers ("... as shown in [42]") become "(ref. 42)", so they can never
    be mistaken for — or copied as — the numbered sources of our context."""
    return _SOURCE_MARKER.sub(lambda m: f"(ref. {m.group(1).strip()})", text)


def _numbers(inner: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[,;]", inner):
        bounds = [int(x) for x in re.split(r"[-–]", part) if x.strip()]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 50:
            out.extend(range(bounds[0], bounds[1] + 1))
        else:
            out.extend(bounds)
    return out


def verify_citations(text: str, valid: set[int]) -> CitationCheck:
    cited: list[int] = []
    removed: list[int] = []

    def fix(match: re.Match) -> str:
        nums = _numbers(match.group(1))
        good = [n for n in nums if n in valid]
        removed.extend(n for n in nums if n not in valid)
        cited.extend(n for n in good if n not in cited)
        return "".join(f"[{n}]" for n in dict.fromkeys(good))

    cleaned = _MARKER.sub(fix, text)
    cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", cleaned)
    return CitationCheck(cleaned, cited, sorted(set(removed)))


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
