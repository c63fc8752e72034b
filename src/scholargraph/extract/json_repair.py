"""Lenient JSON reading and light schema coercion for the output of (small, local) models.

:func:`parse_json` finds the JSON in a model answer and repairs what small models get wrong:
prose around the JSON, code fences, ``<think>`` blocks, trailing or missing commas, single or
smart quotes, unquoted keys and values, Python literals, comments, raw newlines in strings,
``NaN``, and output cut off at ``max_tokens`` (open strings/arrays/objects are closed and only
the complete items are kept). Several top-level values (concatenated, or one per line) come
back as a list.

The repair is a small character-level recursive-descent reader, not a set of regexes, so
quotes, apostrophes ("Alzheimer's") and brackets inside strings are always respected.

:func:`coerce` checks a parsed value against the small subset of JSON schema the extraction
schemas use, repairing instead of rejecting wherever the intent is clear.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelOutputError

__all__ = ["Invalid", "JsonResult", "coerce", "coerce_value", "parse_json", "parse_json_result", "strip_reasoning"]

_MAX_DEPTH = 200
_MAX_RETRIES = 20
_WS = " \t\r\n\f\v\u00a0\ufeff"
# Opening quote -> characters that may close it. ASCII quotes close only themselves, so smart
# quotes inside an ASCII-quoted string stay text; smart opening quotes accept any close.
_QUOTES = {
    '"': '"',
    "'": "'",
    "\u201c": "\u201d\u201c\"",
    "\u201d": "\u201d\u201c\"",
    "\u201e": "\u201d\u201c\"",
    "\u2018": "\u2019\u2018'",
    "\u2019": "\u2019\u2018'",
}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_LITERALS = {
    "true": True, "false": False, "null": None, "none": None, "nil": None, "undefined": None,
    # NaN/Infinity are not data anyone wants downstream (a NaN strength poisons weights).
    "nan": None, "infinity": None, "-infinity": None, "+infinity": None, "inf": None, "-inf": None,
}
_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_THINK_BLOCK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE_RE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_THINK_OPEN_RE = re.compile(r"<(?:think|thinking|reasoning)>", re.I)


class _SyntaxProblem(Exception):
    def __init__(self, message: str, pos: int):
        self.message = message
        self.pos = pos
        super().__init__(f"{message} at char {pos}")


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


class _Reader:
    """Reads one JSON value starting at ``pos``; ``complete`` is False when the text ended inside."""

    def __init__(self, text: str, pos: int):
        self.s = text
        self.i = pos
        self.n = len(text)
        self.notes: list[str] = []
        self.problems: list[_SyntaxProblem] = []
        self.stack: list[str] = []

    # -- low level -------------------------------------------------------------------------
    def eof(self) -> bool:
        return self.i >= self.n

    def skip_ws(self) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in _WS:
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                self.i = n if end < 0 else end + 2
            else:
                return

    def _closes_here(self, j: int, closers: str) -> bool:
        """Is a quote at ``j`` the end of the string? Only if what follows is structural."""
        k = j + 1
        s = self.s
        while k < self.n and s[k] in _WS:
            k += 1
        if k >= self.n:
            return True
        c = s[k]
        if c in ",:}]":
            return True
        if s.startswith("//", k) or s.startswith("/*", k):
            return True
        # `"a" "b"` (a missing comma: space, then the same kind of quote) or a closing fence.
        return (k > j + 1 and c in closers) or s.startswith("```", k)

    def read_string(self) -> tuple[str, bool]:
        s = self.s
        closers = _QUOTES[s[self.i]]
        self.i += 1
        out: list[str] = []
        while self.i < self.n:
            c = s[self.i]
            if c == "\\":
                if self.i + 1 >= self.n:
                    self.i = self.n
                    break
                e = s[self.i + 1]
                if e == "u":
                    hex4 = s[self.i + 2 : self.i + 6]
                    if len(hex4) < 4 and self.i + 6 > self.n:  # cut inside the escape
                        self.i = self.n
                        break
                    if re.fullmatch(r"[0-9a-fA-F]{4}", hex4):
                        out.append(chr(int(hex4, 16)))
                        self.i += 6
                        continue
                    out.append("\\u")
                elif e in "bf" and s[self.i + 2 : self.i + 3].isalpha():
                    out.append("\\" + e)  # LaTeX (\beta, \frac), not backspace/form feed
                elif e in _ESCAPES:
                    out.append(_ESCAPES[e])
                else:
                    out.append("\\" + e)  # invalid escape (\alpha, \s): keep the text
                self.i += 2
                continue
            if c in closers and self._closes_here(self.i, closers):
                self.i += 1
                return _fix_surrogates("".join(out)), True
            out.append(c)
            self.i += 1
        return _fix_surrogates("".join(out)), False

    def read_bare(self, stop: str) -> tuple[str, bool]:
        """An unquoted token up to a stop character, newline or comment; False if the text ended."""
        s = self.s
        start = self.i
        while self.i < self.n:
            c = s[self.i]
            if c in stop or c == "\n" or s.startswith("//", self.i) or s.startswith("/*", self.i):
                return s[start : self.i].strip(), True
            self.i += 1
        return s[start:].strip(), False

    def fail(self, message: str) -> _SyntaxProblem:
        return _SyntaxProblem(message, self.i)

    def recover(self, problem: _SyntaxProblem) -> None:
        """Skip to the next ``,`` or closer of the current container (strings respected)."""
        self.problems.append(problem)
        self.notes.append(f"skipped malformed text: {problem}")
        depth = 0
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                while self.i < self.n and s[self.i] != '"':
                    self.i += 2 if s[self.i] == "\\" else 1
            elif c in "{[":
                depth += 1
            elif c in "}]":
                if depth == 0:
                    return
                depth -= 1
            elif c == "," and depth == 0:
                return
            self.i += 1

    # -- values ----------------------------------------------------------------------------
    def value(self, in_object: bool = False) -> tuple[Any, bool]:
        self.skip_ws()
        if self.eof():
            return None, False
        c = self.s[self.i]
        if c == "{" or c == "[":
            if len(self.stack) >= _MAX_DEPTH:
                raise self.fail("nesting too deep")
            return self.obj() if c == "{" else self.arr()
        if c in _QUOTES:
            return self.read_string()
        if c in ",:}]":
            raise self.fail(f"expected a value, found {c!r}")
        start = self.i
        token, complete = self.read_bare(",}]" if in_object else ",}]:{[\"'")
        low = token.lower()
        if low in _LITERALS:
            return _LITERALS[low], complete
        if _NUMBER_RE.fullmatch(token):
            num = float(token)
            if not math.isfinite(num):
                return None, complete
            if re.fullmatch(r"[-+]?\d+", token):
                return int(token), complete
            return num, complete
        if token and (in_object or len(self.stack) >= 2):
            # Unquoted string value: {"type": Method}, {"keywords": [NLP, QA]}. Not in a top-level
            # array, where "[see below]" is more likely prose than JSON.
            return token, complete
        self.i = start
        raise self.fail(f"unexpected text {token[:20]!r}")

    def obj(self) -> tuple[dict[str, Any], bool]:
        self.i += 1
        self.stack.append("{")
        out: dict[str, Any] = {}
        try:
            while True:
                self.skip_ws()
                if self.eof():
                    return out, False
                c = self.s[self.i]
                if c == "}":
                    self.i += 1
                    return out, True
                if c == "]":
                    if "[" in self.stack[:-1]:  # `{"a": 1]` -- the model forgot the `}`
                        self.notes.append(f"closed an object at a ']' at char {self.i}")
                        return out, True
                    self.i += 1
                    continue
                if c == ",":
                    self.i += 1
                    continue
                try:
                    if not self.member(out):
                        return out, False
                except _SyntaxProblem as problem:
                    self.recover(problem)
        finally:
            self.stack.pop()

    def member(self, out: dict[str, Any]) -> bool:
        """One ``key: value`` into ``out``; False when the text ended inside it."""
        if self.s[self.i] in _QUOTES:
            key, complete = self.read_string()
        else:
            key, complete = self.read_bare(":,}]")
            if complete and not key:
                raise self.fail("empty key")
        if not complete:
            return False
        self.skip_ws()
        if self.eof():
            return False
        if self.s[self.i] not in ":=":
            raise self.fail(f"expected ':' after key {key[:30]!r}")
        self.i += 1
        self.skip_ws()
        if self.eof():
            return False
        value, complete = self.value(in_object=True)
        if complete or isinstance(value, (dict, list)):
            # A cut-off container keeps its complete items; a cut-off scalar is garbage.
            out[key] = value
        if not complete:
            return False
        self.skip_ws()
        if not self.eof() and self.s[self.i] not in ",}]" and self.s[self.i] not in _QUOTES:
            if not (self.s[self.i].isalpha() or self.s[self.i] == "_"):
                raise self.fail(f"expected ',' or '}}', found {self.s[self.i]!r}")
        return True

    def arr(self) -> tuple[list[Any], bool]:
        self.i += 1
        self.stack.append("[")
        out: list[Any] = []
        try:
            while True:
                self.skip_ws()
                if self.eof():
                    return out, False
                c = self.s[self.i]
                if c == "]":
                    self.i += 1
                    return out, True
                if c == "}":
                    if "{" in self.stack[:-1]:  # `{"a": [1, 2}` -- the model forgot the `]`
                        self.notes.append(f"closed an array at a '}}' at char {self.i}")
                        return out, True
                    self.i += 1
                    continue
                if c == ",":
                    self.i += 1
                    continue
                item_start = self.i
                try:
                    item, complete = self.value()
                except _SyntaxProblem as problem:
                    self.recover(problem)
                    continue
                if not complete:
                    return out, False  # the partial last item is dropped
                if isinstance(item, str) and "{" in self.stack[:-1]:
                    self.skip_ws()
                    if not self.eof() and self.s[self.i] == ":":
                        # `{"entities": [...], "relations": [...]}` without the first `]`:
                        # that "item" is the next key of the enclosing object.
                        self.i = item_start
                        self.notes.append(f"closed an array before key {item[:30]!r} at char {item_start}")
                        return out, True
                out.append(item)
        finally:
            self.stack.pop()


def _fix_surrogates(text: str) -> str:
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _is_structured(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


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

    notes: list[str] = []
    found: list[Any] = []
    truncated = False
    last_problem: _SyntaxProblem | None = None
    failures = 0
    pos = 0
    while True:
        starts = [p for p in (text.find("{", pos), text.find("[", pos)) if p >= 0]
        if not starts:
            break
        start = min(starts)
        reader = _Reader(text, start)
        try:
            value, complete = reader.value()  # containers recover from their own syntax problems
        except _SyntaxProblem as problem:  # pragma: no cover - defensive
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


# --------------------------------------------------------------------------------------------
# Schema coercion (the subset of JSON schema the extraction schemas use)
# --------------------------------------------------------------------------------------------


class Invalid(Exception):
    """A value that cannot be made to fit its schema (message: why)."""


_LEADING_NUMBER_RE = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
SPLIT_RE = re.compile(r"\s*[,;]\s*")
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


def _as_type(data: Any, kind: str, schema: dict, path: str, problems: list[str]) -> Any:
    if kind == "object":
        if not isinstance(data, dict):
            raise Invalid
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if data.get(k) is None]
        if missing:
            raise Invalid(f"missing required {', '.join(map(repr, missing))}")
        out = {}
        for key, value in data.items():
            if key not in props:
                if schema.get("additionalProperties", True) is not False:
                    out[key] = value
                continue
            try:
                out[key] = coerce_value(value, props[key], f"{path}.{key}", problems)
            except Invalid as err:
                if key in schema.get("required", []):
                    raise Invalid(f"required {key!r}: {err}") from None
                problems.append(f"{path}.{key}: dropped: {err}")
        return out
    if kind == "array":
        items = schema.get("items", {})
        if isinstance(data, str):
            text = data.strip()
            if text[:1] == "[" and text[-1:] == "]":
                text = text[1:-1]
            data = [p.strip().strip("\"'") for p in SPLIT_RE.split(text) if p.strip().strip("\"'")]
        elif not isinstance(data, list):
            data = [data]  # a single object (or scalar) where a list belongs
        out_list = []
        for n, item in enumerate(data):
            try:
                out_list.append(coerce_value(item, items, f"{path}[{n}]", problems))
            except Invalid as err:
                problems.append(f"{path}[{n}]: dropped: {err}")
        return out_list
    if kind == "string":
        if isinstance(data, str):
            return data
        if isinstance(data, bool) or data is None:
            raise Invalid
        if isinstance(data, (int, float)):
            return str(data)
        if isinstance(data, list) and all(isinstance(x, (str, int, float)) for x in data):
            return ", ".join(str(x) for x in data)
        raise Invalid
    if kind in ("number", "integer"):
        if isinstance(data, bool):
            raise Invalid
        if isinstance(data, str):
            match = _LEADING_NUMBER_RE.match(data)
            if not match:
                raise Invalid
            data = float(match.group(1))
        if not isinstance(data, (int, float)) or not math.isfinite(data):
            raise Invalid
        low, high = schema.get("minimum"), schema.get("maximum")
        if kind == "integer" and isinstance(data, int) and (low is None or data >= low) and (
                high is None or data <= high):
            return data  # exact, however large
        num: float = float(data)
        if low is not None and num < low:
            problems.append(f"{path}: {num:g} clamped to minimum {low}")
            num = float(low)
        if high is not None and num > high:
            problems.append(f"{path}: {num:g} clamped to maximum {high}")
            num = float(high)
        return int(round(num)) if kind == "integer" else num
    if kind == "boolean":
        if isinstance(data, bool):
            return data
        if isinstance(data, (int, float, str)):
            text = str(data).strip().lower()
            if text in _TRUE or text in _FALSE:
                return text in _TRUE
        raise Invalid
    if kind == "null":
        if data is None:
            return None
        raise Invalid
    return data  # unknown type name: accept


def coerce_value(data: Any, schema: dict, path: str, problems: list[str]) -> Any:
    """:func:`coerce` for one value at ``path``; raises :class:`Invalid` instead of returning."""
    if "enum" in schema:
        allowed = schema["enum"]
        for option in allowed:
            if data == option or (isinstance(data, str) and isinstance(option, str)
                                  and data.strip().casefold() == option.casefold()):
                return option
        raise Invalid(f"{data!r} is not one of {allowed!r}")
    types = schema.get("type")
    if types is None:
        return data
    types = [types] if isinstance(types, str) else list(types)
    if data is None:
        if "null" in types:
            return None
        raise Invalid(f"expected {'/'.join(types)}, got null")
    errors = []
    for kind in types:
        try:
            return _as_type(data, kind, schema, path, problems)
        except Invalid as err:
            if str(err):
                errors.append(str(err))
    raise Invalid(errors[0] if errors else f"expected {'/'.join(types)}, got {_kind(data)}")


def coerce(data: Any, schema: dict) -> tuple[Any, list[str]]:
    """``(value, problems)``: ``data`` checked against (the used subset of) JSON schema.

    Supported: ``type`` (object, array, string, number, integer, boolean, null, or a list of
    them -- ``["string", "null"]`` is nullable), ``properties``, ``required``,
    ``additionalProperties: false``, ``items``, ``enum`` (case-insensitive for strings),
    ``minimum``/``maximum`` (clamped). Repairs: numeric strings ("8", "0.9") become numbers, a
    string where an array belongs is split on commas/semicolons, a single value where an array
    belongs is wrapped, invalid array items and invalid optional fields are dropped. Each repair
    that loses or changes data is described in ``problems``. Raises
    :class:`ModelOutputError` only when the top-level value itself cannot be made to fit.
    """
    problems: list[str] = []
    try:
        return coerce_value(data, schema, "$", problems), problems
    except Invalid as err:
        raw = json.dumps(data, default=str, ensure_ascii=False)[:4000]
        raise ModelOutputError(f"output does not match the schema: {err}", raw) from None
