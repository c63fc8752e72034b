"""A sentence-transformers BERT model (MiniLM and its kin) run with numpy alone.

The default embedding model is a six-layer BERT with mean pooling. Loading it through
sentence-transformers imports torch and transformers first: about 8 s of CPU before the first
vector, for a question that then takes milliseconds to embed. This module runs the same
``model.safetensors`` weights with numpy (already loaded) and the ``tokenizers`` package (the
model's own ``tokenizer.json``): the same forward pass in float32, so the vectors equal the torch
ones to rounding (cosine > 0.99999), and a workspace built with either runtime reads the same.

Only what that needs is supported: ``model_type = "bert"`` with absolute positions and exact GELU,
a Transformer + mean Pooling (+ Normalize) module list, weights in safetensors. :func:`unsupported`
says why another model is not, and :mod:`.embeddings` then uses sentence-transformers.
"""

from __future__ import annotations

import json
import math
import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

__all__ = ["NumpyBert", "unsupported"]

_DTYPES = {"F32": np.float32, "I64": np.int64}
_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"


def _read_json(path: Path) -> dict | list:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def unsupported(path: Path) -> str | None:
    """Why the model directory cannot run here (None when it can)."""
    for name in ("config.json", "modules.json", "model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            return f"no {name}"
    config = _read_json(path / "config.json")
    if not isinstance(config, dict) or config.get("model_type") != "bert":
        return "not a BERT model"
    if config.get("position_embedding_type", "absolute") != "absolute" or config.get("hidden_act") != "gelu":
        return "BERT variant (positions or activation) not supported"
    modules = _read_json(path / "modules.json")
    kinds = [m.get("type") for m in modules] if isinstance(modules, list) else []
    if kinds not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]):
        return f"modules {kinds} (only Transformer + Pooling [+ Normalize])"
    pooling_dir = next(m.get("path", "") for m in modules if m.get("type") == _POOLING)
    pooling = _read_json(path / pooling_dir / "config.json") if (path / pooling_dir / "config.json").is_file() else {}
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v) if isinstance(pooling, dict) else []
    if modes != ["pooling_mode_mean_tokens"]:
        return f"pooling {modes or 'unknown'} (only mean pooling)"
    return None


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only array over one memory map (nothing copied)."""
    with path.open("rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(mapped[:8], "little")
    header = json.loads(mapped[8:8 + size].decode("utf-8"))
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise ValueError(f"{path.name}: tensor {name} is {spec['dtype']} (float32 only)")
        start, end = spec["data_offsets"]
        count = (end - start) // np.dtype(dtype).itemsize
        tensors[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=base + start).reshape(spec["shape"])
    return tensors


@dataclass(frozen=True)
class _Shape:
    layers: int
    heads: int
    eps: float
    max_positions: int


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.square(centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU; erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7: float32 rounding)."""
    z = np.abs(x) * np.float32(1 / math.sqrt(2))
    t = 1 / (1 + np.float32(_ERF_P) * z)
    a1, a2, a3, a4, a5 = (np.float32(a) for a in _ERF_A)
    erf = 1 - ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t * np.exp(-z * z)
    return np.float32(0.5) * x * (1 + np.copysign(erf, x))


class NumpyBert:
    """``encode(texts)`` -> L2-normalised mean-pooled vectors, as sentence-transformers computes them
    (texts truncated to ``max_seq_length`` word pieces including [CLS] and [SEP])."""

    def __init__(self, path: Path):
        reason = unsupported(path)
        if reason:
            raise ValueError(f"{path}: {reason}")
        config = _read_json(path / "config.json")
        assert isinstance(config, dict)
        self._shape = _Shape(int(config["num_hidden_layers"]), int(config["num_attention_heads"]),
                             float(config.get("layer_norm_eps", 1e-12)), int(config["max_position_embeddings"]))
        self._w = load_safetensors(path / "model.safetensors")
        self._prefix = "bert." if "bert.embeddings.word_embeddings.weight" in self._w else ""
        self.dim = int(self._weight("embeddings.word_embeddings.weight").shape[1])
        st_config = path / "sentence_bert_config.json"
        declared = _read_json(st_config).get("max_seq_length") if st_config.is_file() else None  # type: ignore[union-attr]
        self.max_seq_length = min(int(declared or self._shape.max_positions), self._shape.max_positions)
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self._cls = self._special("[CLS]")
        self._sep = self._special("[SEP]")

    def _special(self, token: str) -> int:
        found = self.tokenizer.token_to_id(token)
        if found is None:
            raise ValueError(f"tokenizer has no {token} token")
        return found

    def _weight(self, name: str) -> np.ndarray:
        return self._w[self._prefix + name]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each word piece of ``text`` (no special tokens, no truncation)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False).offsets)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        body = self.max_seq_length - 2
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        return [[self._cls, *e.ids[:body], self._sep] for e in encoded]

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors of ``texts``, shape (len(texts), dim). Batches hold texts of similar length
        (little padding); one text is one forward pass of its own length."""
        ids = self.token_ids(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for first in range(0, len(order), batch_size):
            chosen = order[first:first + batch_size]
            out[chosen] = self._forward([ids[i] for i in chosen])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(row) for row in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
        x = self._embed(ids).reshape(len(batch) * length, self.dim)  # one row per token: 2-d products (BLAS)
        bias = ((1 - mask) * np.finfo(np.float32).min)[:, None, :]  # padding gets no attention
        for layer in range(self._shape.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        hidden = x.reshape(len(batch), length, self.dim)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _embed(self, ids: np.ndarray) -> np.ndarray:
        x = (self._weight("embeddings.word_embeddings.weight")[ids]
             + self._weight("embeddings.position_embeddings.weight")[: ids.shape[1]]
             + self._weight("embeddings.token_type_embeddings.weight")[0])
        return _layer_norm(x, self._weight("embeddings.LayerNorm.weight"), self._weight("embeddings.LayerNorm.bias"),
                           self._shape.eps)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._weight(name + ".weight").T + self._weight(name + ".bias")

    def _attention(self, x: np.ndarray, bias: np.ndarray, at: str) -> np.ndarray:
        """Multi-head self-attention of the (batch * length, hidden) token rows."""
        batch, length = bias.shape[0], bias.shape[-1]
        heads = self._shape.heads
        size = self.dim // heads

        def split(t: np.ndarray) -> np.ndarray:  # -> (batch, heads, length, size), contiguous for BLAS
            return np.ascontiguousarray(t.reshape(batch, length, heads, size).transpose(0, 2, 1, 3))

        q = split(self._dense(x, at + "attention.self.query") * np.float32(1 / math.sqrt(size)))
        k = split(self._dense(x, at + "attention.self.key"))
        v = split(self._dense(x, at + "attention.self.value"))
        context = np.empty_like(q)
        for b in range(batch):  # 2-d products, one (batch, head) at a time: numpy's stacked matmul skips BLAS
            for h in range(heads):
                scores = q[b, h] @ k[b, h].T + bias[b]
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                np.dot(scores, v[b, h], out=context[b, h])
        return context.transpose(0, 2, 1, 3).reshape(batch * length, self.dim)

    def _layer(self, x: np.ndarray, bias: np.ndarray, at: str) -> np.ndarray:
        eps = self._shape.eps
        attended = _layer_norm(self._dense(self._attention(x, bias, at), at + "attention.output.dense") + x,
                               self._weight(at + "attention.output.LayerNorm.weight"),
                               self._weight(at + "attention.output.LayerNorm.bias"), eps)
        inner = _gelu(self._dense(attended, at + "intermediate.dense"))
        return _layer_norm(self._dense(inner, at + "output.dense") + attended,
                           self._weight(at + "output.LayerNorm.weight"), self._weight(at + "output.LayerNorm.bias"), eps)
