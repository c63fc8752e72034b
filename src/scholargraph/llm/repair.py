"""The JSON in the output of (small, local) models, found and repaired.

:func:`parse_json` finds the JSON in a model answer and repairs what small models get wrong:
prose around the JSON, code fences, ``<think>`` blocks, trailing or missing commas, single or
smart quotes, unquoted keys and values, Python literals, comments, raw newlines in strings,
``NaN``, and output cut off at ``max_tokens`` (open strings/arrays/objects are closed and only
the complete items are kept). Several top-level values (concatenated, or one per line) come
back as a list.

The repair is a small character-level recursive-descent reader (:mod:`.json_reader`), not a set
of regexes, so quotes, apostrophes ("Alzheimer's") and brackets inside strings are always
respected.

Validation against the reply's model is :mod:`.output`'s job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelOutputError
from .json_reader import Reader, SyntaxProblem

__all__ = ["JsonResult", "parse_json", "parse_json_result", "strip_reasoning"]

_MAX_RETRIES = 20
_THINK_BLOCK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE_RE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_THINK_OPEN_RE = re.compile(r"<(?:think|thinking|reasoning)>", re.I)


@dataclass
class JsonResult:
    """What :func:`parse_json_result` found: the value, whether the text was cut off, and notes
    on every repair that dropped something (for logs)."""

    value: Any
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


def strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` blocks; a lone ``</think>`` drops what precedes it (templates
    that open the block in the prompt), a lone ``<think>`` drops what follows (cut-off reasoning)."""
    text = _THINK_BLOCK_RE.sub(" ", text)
    closes = list(_THINK_CLOSE_RE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _THINK_OPEN_RE.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def _is_structured(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


def _read_values(text: str) -> tuple[list[Any], bool, list[str], SyntaxProblem | None]:
    """(values, truncated, repair notes, first syntax problem) of the JSON values found in ``text``."""
    notes: list[str] = []
    found: list[Any] = []
    truncated = False
    last_problem: SyntaxProblem | None = None
    failures = 0
    pos = 0
    while True:
        starts = [p for p in (text.find("{", pos), text.find("[", pos)) if p >= 0]
        if not starts:
            break
        start = min(starts)
        reader = Reader(text, start)
        try:
            value, complete = reader.value()  # containers recover from their own syntax problems
        except SyntaxProblem as problem:  # pragma: no cover - defensive
            value, complete = None, True
            reader.problems.append(problem)
        if reader.problems and not value:
            last_problem = last_problem or reader.problems[0]
            failures += 1
            # Retry from the next bracket (prose "[see below] {...}"), but only a few times
            # from inside a failed region: that would be quadratic on long garbage.
            pos = start + 1 if failures <= _MAX_RETRIES else max(start + 1, reader.i)
            continue
        notes.extend(reader.notes)
        found.append(value)
        if not complete:
            truncated = True
            notes.append("output ended inside JSON: closed it and dropped the incomplete item")
            break
        pos = reader.i
    return found, truncated, notes, last_problem


def parse_json_result(raw: str) -> JsonResult:
    """Like :func:`parse_json`, with the truncation flag and the repair notes."""
    if not isinstance(raw, str) or not raw.strip():
        raise ModelOutputError("empty model output", raw if isinstance(raw, str) else repr(raw))
    text = strip_reasoning(raw)
    stripped = text.strip()
    if not stripped:
        raise ModelOutputError("no JSON found in output (only reasoning)", raw)
    if stripped[0] in "{[\"":
        try:
            return JsonResult(json.loads(stripped, parse_constant=lambda _: None))
        except (ValueError, RecursionError):
            pass

    found, truncated, notes, last_problem = _read_values(text)
    if not found:
        if last_problem is None:
            raise ModelOutputError("no JSON found in output", raw)
        raise ModelOutputError(f"unparseable JSON after repair: {last_problem}", raw)
    if len(found) > 1 and any(_is_structured(v) for v in found):
        # Prose such as "see [1]" around the real output yields stray scalar lists.
        found = [v for v in found if _is_structured(v)]
    return JsonResult(found[0] if len(found) == 1 else found, truncated, notes)


def parse_json(raw: str) -> Any:
    """The JSON value in a model answer, repaired; several top-level values come back as a list.

    Raises :class:`~scholargraph.errors.ModelOutputError` (with ``raw`` kept) when there is no
    JSON at all or nothing survives the repair.
    """
    return parse_json_result(raw).value
