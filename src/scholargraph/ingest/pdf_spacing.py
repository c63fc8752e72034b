"""Word spacing (``Tw``) made visible to pypdf's text extraction.

Justified text from word processors sets ``Tw``: every space glyph of a simple font moves the pen
that much further. pypdf measures a text run without it, so when the next run of the same line is
placed by ``Td``/``TD`` it sees a gap wider than a space and inserts one, often mid-word ("ur ban",
"c itizens", "behavi or"). Here the page's operations are rewritten before extraction: each space
shown under a non-zero ``Tw`` is followed by the equivalent ``TJ`` adjustment (``-1000 Tw / Tfs``),
which pypdf does count, and ``Tw`` is set to 0. Where the glyphs land is unchanged; only pypdf's
idea of where a run ends becomes right. Composite (``Type0``) fonts ignore ``Tw`` and are left alone.
"""

from __future__ import annotations

from typing import Any

from pypdf.generic import ArrayObject, ContentStream, FloatObject, NameObject, NumberObject, create_string_object

SHOW = {b"Tj", b"TJ", b"'", b'"'}


class _TextState:
    """``Tw``, the font size and whether the current font is a simple one, saved and restored by q/Q."""

    def __init__(self, fonts: Any) -> None:
        self.fonts = fonts
        self.word_spacing = 0.0
        self.size = 1.0
        self.simple = True
        self._saved: list[tuple[float, float, bool]] = []

    def push(self) -> None:
        self._saved.append((self.word_spacing, self.size, self.simple))

    def pop(self) -> None:
        if self._saved:
            self.word_spacing, self.size, self.simple = self._saved.pop()

    def set_font(self, operands: list[Any]) -> None:
        if len(operands) < 2:
            return
        self.size = _number(operands[1], self.size) or 1.0
        try:
            font = self.fonts[operands[0]].get_object() if self.fonts is not None else None
            self.simple = font is None or font.get("/Subtype") != "/Type0"
        except Exception:  # an unknown font name: pypdf copes; treat it as simple
            self.simple = True

    @property
    def active(self) -> bool:
        return self.simple and abs(self.word_spacing) > 1e-9


def _number(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _spaced(item: Any, adjust: float) -> list[Any]:
    """A string of a TJ array as pieces, each space followed by the ``adjust`` that ``Tw`` stood for."""
    raw = item.get_original_bytes() if hasattr(item, "get_original_bytes") else bytes(item)
    if b" " not in raw:
        return [item]
    out: list[Any] = []
    pieces = raw.split(b" ")
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        chunk = piece if last else piece + b" "
        if chunk:
            out.append(create_string_object(chunk))
        if not last:
            out.append(FloatObject(adjust))
    return out


def _show(operands: list[Any], state: _TextState) -> ArrayObject:
    items = operands[0] if operands and isinstance(operands[0], list) else operands[:1]
    adjust = -1000.0 * state.word_spacing / state.size
    out = ArrayObject()
    for item in items:
        if isinstance(item, (bytes, str)) and not isinstance(item, NameObject):
            out.extend(_spaced(item, adjust))
        else:
            out.append(item)
    return out


def fold_word_spacing(operations: list[tuple[list[Any], bytes]], fonts: Any) -> list[tuple[list[Any], bytes]] | None:
    """The operations with ``Tw`` folded into ``TJ`` adjustments; None when no text uses ``Tw``."""
    if not any(op in (b"Tw", b'"') for _, op in operations):
        return None
    state = _TextState(fonts)
    out: list[tuple[list[Any], bytes]] = []
    changed = False
    for operands, op in operations:
        if op == b"q":
            state.push()
        elif op == b"Q":
            state.pop()
        elif op == b"Tf":
            state.set_font(operands)
        elif op == b"Tw" and operands:
            state.word_spacing = _number(operands[0], 0.0)
            out.append(([NumberObject(0)], op))
            continue
        elif op == b'"' and len(operands) >= 3:
            state.word_spacing = _number(operands[0], 0.0)
            out += [([NumberObject(0)], b"Tw"), ([operands[1]], b"Tc"), ([], b"T*")]
            operands, op = operands[2:], b"Tj"
        if op in SHOW and state.active:
            if op == b"'":
                out.append(([], b"T*"))
            out.append(([_show(operands, state)], b"TJ"))
            changed = True
            continue
        out.append((operands, op))
    return out if changed else None


def prepare_page(page: Any, reader: Any) -> None:
    """Give ``page`` (a pypdf page of ``reader``, in memory only) contents with ``Tw`` folded in."""
    contents = page.get_contents()
    if contents is None:
        return
    stream = contents if isinstance(contents, ContentStream) else ContentStream(contents, reader)
    resources = page.get("/Resources")
    fonts = resources.get_object().get("/Font") if resources is not None else None
    folded = fold_word_spacing(stream.operations, fonts.get_object() if fonts is not None else None)
    if folded is not None:
        stream.operations = folded
        page[NameObject("/Contents")] = stream
