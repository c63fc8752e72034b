"""Text every export format can carry: without the characters XML 1.0 forbids (control characters
other than tab and line breaks, surrogates, U+FFFE and U+FFFF), which PDF text brings along and
which GraphML readers, rdflib and neo4j-admin refuse or mangle."""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace
from typing import Any, TypeVar

_NOT_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
T = TypeVar("T")


def clean_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids."""
    return _NOT_TEXT.sub("", text)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def clean(record: T) -> T:
    """A copy of a dataclass record whose text fields (and lists of text) are :func:`clean_text`."""
    if not is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"not a dataclass record: {record!r}")
    changes = {f.name: _clean(getattr(record, f.name)) for f in fields(record)
               if isinstance(getattr(record, f.name), (str, list))}
    return replace(record, **changes)
