"""Stable document ids: the given paper id when there is one, else the MD5 of the content."""

from __future__ import annotations

import hashlib
import re

_WS = re.compile(r"\s+")


def normalise_for_hash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def content_md5(text: str) -> str:
    # surrogatepass: a lone surrogate (scrubbed later, see ingest.surrogates) must not crash the hash
    return hashlib.md5(normalise_for_hash(text).encode("utf-8", "surrogatepass")).hexdigest()


_ID_SAFE = re.compile(r"[^A-Za-z0-9._:/-]+")


def paper_id(value: object) -> str | None:
    """Normalise a user-supplied id (PMID, DOI, paper_id column); None when empty."""
    if value is None:
        return None
    text = str(value).strip()
    if text.endswith(".0") and text[:-2].isdigit():  # pandas-style float PMIDs: 12345.0
        text = text[:-2]
    if not text or text.lower() in {"nan", "none", "null"}:
        return None
    return _ID_SAFE.sub("_", text)


def doc_id(given: object, text: str) -> tuple[str, str]:
    """Return (document id, content md5)."""
    md5 = content_md5(text)
    return (paper_id(given) or f"md5:{md5}", md5)
