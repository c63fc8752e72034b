"""Lone surrogate code points (``"\\ud800"`` from a JSON escape, a file name in a foreign encoding)
are valid in a Python string but cannot be encoded as UTF-8: anything that stores, hashes or prints
them fails. Parsed documents and questions are scrubbed once, at the boundary."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ..models import Document

_LONE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
SCRUBBED_WARNING = "invalid Unicode (lone surrogate code points) replaced by U+FFFD"


def has_surrogates(text: str) -> bool:
    return _LONE.search(text) is not None


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (valid pairs never reach a str apart)."""
    return _LONE.sub(REPLACEMENT, text) if has_surrogates(text) else text


def _scrub_value(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        clean = scrub(value)
        return clean, clean is not value
    if isinstance(value, list | tuple):
        items = [_scrub_value(v) for v in value]
        return type(value)(v for v, _ in items), any(c for _, c in items)
    if isinstance(value, dict):
        pairs = [(_scrub_value(k), _scrub_value(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in pairs}, any(ck or cv for (_, ck), (_, cv) in pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value, _scrub_fields(value)
    return value, False


def _scrub_fields(obj: Any) -> bool:
    changed = False
    for f in dataclasses.fields(obj):
        value, did = _scrub_value(getattr(obj, f.name))
        if did:
            setattr(obj, f.name, value)
            changed = True
    return changed


def scrub_document(doc: Document) -> bool:
    """Scrub every text field of ``doc`` in place (sections, metadata, authors...); True if any
    had a lone surrogate (a warning is added to the document then)."""
    changed = _scrub_fields(doc)
    if changed:
        doc.warnings.append(SCRUBBED_WARNING)
    return changed
