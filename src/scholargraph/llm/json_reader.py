"""The character-level reader behind :func:`.repair.parse_json`.

A small recursive-descent reader, not a set of regexes, so quotes, apostrophes ("Alzheimer's")
and brackets inside strings are always respected. It repairs what small models get wrong:
trailing or missing commas, single or smart quotes, unquoted keys and values, Python literals,
comments, raw newlines in strings, ``NaN``, and output cut off inside a value (``complete`` is
False; a cut-off container keeps its complete items). A syntax problem inside a container is
noted and skipped up to the next ``,`` or closer.
"""

from __future__ import annotations

import math
import re
from typing import Any

_MAX_DEPTH = 200
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
NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class SyntaxProblem(Exception):
    def __init__(self, message: str, pos: int):
        self.message = message
        self.pos = pos
        super().__init__(f"{message} at char {pos}")


class Reader:
    """Reads one JSON value starting at ``pos``; ``complete`` is False when the text ended inside."""

    def __init__(self, text: str, pos: int):
        self.s = text
        self.i = pos
        self.n = len(text)
        self.notes: list[str] = []
        self.problems: list[SyntaxProblem] = []
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

    def fail(self, message: str) -> SyntaxProblem:
        return SyntaxProblem(message, self.i)

    def recover(self, problem: SyntaxProblem) -> None:
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
        if NUMBER_RE.fullmatch(token):
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
                ended = self.next_item("}", "]", "an object")  # `{"a": 1]`: the model forgot the `}`
                if ended is not None:
                    return out, ended
                try:
                    if not self.member(out):
                        return out, False
                except SyntaxProblem as problem:
                    self.recover(problem)
        finally:
            self.stack.pop()

    def next_item(self, close: str, other_close: str, what: str) -> bool | None:
        """Inside a container, skip commas and stray closers up to the next item (None). True when
        the container ends here: at its closer, or at the enclosing container's closer written in
        its place; False when the text ends."""
        other_open = "[" if other_close == "]" else "{"
        while True:
            self.skip_ws()
            if self.eof():
                return False
            c = self.s[self.i]
            if c == close:
                self.i += 1
                return True
            if c == other_close and other_open in self.stack[:-1]:
                self.notes.append(f"closed {what} at a '{other_close}' at char {self.i}")
                return True
            if c not in (",", other_close):
                return None
            self.i += 1

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
                ended = self.next_item("]", "}", "an array")  # `{"a": [1, 2}`: the model forgot the `]`
                if ended is not None:
                    return out, ended
                item_start = self.i
                try:
                    item, complete = self.value()
                except SyntaxProblem as problem:
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
