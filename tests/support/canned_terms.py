"""The capitalised terms of a text, as the canned test answers see them (test double only)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["terms", "user_text"]

_TERM = re.compile(r"\b(?:[A-Z][a-zA-Z0-9-]+(?:[ \t]+[A-Z][a-zA-Z0-9-]+){0,3}|[A-Z]{2,}[a-z]?s?\d*)\b")  # a term stays on one line
_STOP = {"The", "This", "These", "In", "We", "Our", "It", "A", "An", "For", "To", "Of", "On", "And", "As", "By", "With",
         "Paper", "Section", "Passage", "Figure", "Table", "However", "Here", "If", "When", "While", "Already"}


def terms(text: str, limit: int = 12) -> list[str]:
    found = []
    for match in _TERM.finditer(text):
        term = match.group(0).strip()
        first = term.split()[0]
        if first in _STOP or len(term) < 3:
            continue
        if term not in found:
            found.append(term)
        if len(found) >= limit:
            break
    return found


def user_text(request: dict[str, Any]) -> str:
    """The user messages of a chat request, joined."""
    return "\n".join(m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user")
