"""Items a model copied from the prompt instead of reading them in the passage.

Small local models echo the instructions back as data: Qwen2.5-Coder 0.5B answered the keyword
list with "3-8 phrases naming the main topics of the whole passage" (the instruction line), and a
first run with the record format gave an entity named "name" (the format line). Such an item says
something the passage does not: its words are in the instructions and not in the passage. It is
dropped, with the relations that hang on it, and a note says what was dropped.

Pure functions over an :class:`~scholargraph.models.Extraction`; the extractor passes the
instructions it sent and the text the model read (header and passage)."""

from __future__ import annotations

import re

from ..models import Extraction

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def _words(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space, padded so that ``in`` matches whole words."""
    return f" {_NOT_WORD.sub(' ', text.casefold()).strip()} "


def is_echo(item: str, instructions: str, passage: str) -> bool:
    """``item`` (a name or a keyword, as the model wrote it) appears word for word in the prompt's
    ``instructions`` and not in the ``passage`` the model read (both already passed through
    :func:`_words`)."""
    words = _words(item)
    return words.strip() != "" and words in instructions and words not in passage


def drop_echoes(found: Extraction, instructions: str, passage: str, chunk_id: str) -> Extraction:
    """``found`` without the entities, relations and keywords copied from ``instructions``."""
    said, read = _words(instructions), _words(passage)
    echoed = {e.name for e in found.entities if is_echo(e.name, said, read)}
    echoed |= {n for r in found.relations for n in (r.source, r.target) if is_echo(n, said, read)}
    keywords = [k for k in found.keywords if is_echo(k.text, said, read)]
    if not echoed and not keywords:
        return found
    found.entities = [e for e in found.entities if e.name not in echoed]
    found.relations = [r for r in found.relations if r.source not in echoed and r.target not in echoed]
    found.keywords = [k for k in found.keywords if k not in keywords]
    copied = sorted(echoed | {k.text for k in keywords})
    found.notes.append(f"chunk {chunk_id}: dropped what the model copied from the instructions, not the passage: "
                       + "; ".join(f'"{c}"' for c in copied[:5]) + (" ..." if len(copied) > 5 else ""))
    return found


__all__ = ["drop_echoes", "is_echo"]
