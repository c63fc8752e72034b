"""The body of an OpenAI-compatible ``/embeddings`` answer -> a float32 matrix.

Vectors are asked for as base64 (``encoding_format: "base64"``, little-endian float32, as the
OpenAI API, vLLM and llama.cpp send them): decoding a JSON list of 1024 floats costs far more
CPU than the request itself. A server that ignores the option and sends float lists is read
just the same; one that rejects it is asked again without it (see ``rejects_base64``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

from ..errors import ConfigError, LLMError


def decode_embeddings(payload: Any, expected: int, dim: int, url: str) -> np.ndarray:
    """``expected`` vectors of ``dim`` floats, in input order, from a parsed response body."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        got = f"{len(data)} vectors" if isinstance(data, list) else "no 'data' list"
        raise LLMError(f"embedding server {url} sent {got} for {expected} inputs")
    try:
        ordered = sorted(data, key=lambda d: d["index"])
        vectors = [_vector(d["embedding"]) for d in ordered]
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise LLMError(f"embedding server {url} sent a malformed vector: {exc}") from exc
    bad = next((v.shape[0] for v in vectors if v.shape[0] != dim), None)
    if bad is not None:
        raise ConfigError(f"embeddings.dimension is {dim} but the server returned {bad}-d vectors")
    return np.stack(vectors) if vectors else np.zeros((0, dim), dtype=np.float32)


def _vector(value: Any) -> np.ndarray:
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").astype(np.float32)
    if isinstance(value, list):
        return np.asarray(value, dtype=np.float32)
    raise TypeError(f"expected a list of floats or a base64 string, got {type(value).__name__}")


def rejects_base64(status: int, text: str) -> bool:
    """A 4xx that names the encoding option: the server does not support base64 vectors."""
    return 400 <= status < 500 and "encoding" in text.lower()
