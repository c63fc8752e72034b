"""Optional rerankers: score (question, passage) pairs in a second stage (off by default).

* :class:`EndpointReranker` — an OpenAI-compatible ``POST {url}/rerank`` as served by vLLM,
  Hugging Face TEI, Jina and Cohere-style APIs: request ``{"model", "query", "documents", "top_n"}``,
  reply ``{"results": [{"index", "relevance_score"}]}`` (``score`` is accepted too, and TEI's bare
  list of ``{"index", "score"}``).
* :class:`CrossEncoderReranker` — a sentence-transformers ``CrossEncoder`` loaded from a local folder
  the user names; nothing is downloaded (a path that is not a model folder is a configuration error).

:func:`make_reranker` builds the configured one, or returns None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx

from ..config import RerankSettings
from ..errors import ConfigError, LLMError

__all__ = ["CrossEncoderReranker", "EndpointReranker", "Reranker", "make_reranker"]


class Reranker(Protocol):
    name: str

    async def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage (higher = more relevant), in the order given."""

    async def aclose(self) -> None: ...


class EndpointReranker:
    def __init__(self, settings: RerankSettings):
        if not settings.url:
            raise ConfigError("rerank.url is not set")
        self.url = f"{settings.url}/rerank"
        self.model = settings.model
        self.name = f"endpoint:{settings.model or settings.url}"
        headers = {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else {}
        self._http = httpx.AsyncClient(timeout=settings.timeout, headers=headers)

    async def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        body: dict[str, Any] = {"query": query, "documents": list(passages), "top_n": len(passages)}
        if self.model:
            body["model"] = self.model
        try:
            response = await self._http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise LLMError(f"rerank endpoint {self.url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            raise LLMError(f"rerank endpoint {self.url} answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            return _parse_scores(response.json(), len(passages))
        except (ValueError, KeyError, TypeError) as exc:
            raise LLMError(f"rerank endpoint {self.url} sent an unusable reply ({exc}): {response.text[:300]}") from exc

    async def aclose(self) -> None:
        await self._http.aclose()


def _parse_scores(data: Any, n: int) -> list[float]:
    results = data.get("results", data.get("data")) if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise ValueError("no 'results' list")
    out: list[float | None] = [None] * n
    for item in results:
        index = int(item["index"])
        score = item.get("relevance_score", item.get("score"))
        if not 0 <= index < n or score is None:
            raise ValueError(f"bad result {item!r}")
        out[index] = float(score)
    if any(s is None for s in out):
        # top_n smaller than asked: passages left out rank after every scored one
        low = min((s for s in out if s is not None), default=0.0) - 1.0
        out = [low if s is None else s for s in out]
    return [float(s) for s in out]  # type: ignore[arg-type]


class CrossEncoderReranker:
    def __init__(self, settings: RerankSettings):
        path = Path(settings.path) if settings.path else None
        if path is None or not path.is_dir() or not (path / "config.json").exists():
            raise ConfigError(f"rerank.path {settings.path} is not a local cross-encoder folder (config.json and "
                              "weights); scholargraph never downloads models")
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(str(path), local_files_only=True)
        except Exception as exc:  # a broken folder: say which
            raise ConfigError(f"cannot load the cross-encoder at {path}: {exc}") from exc
        self.name = f"cross-encoder:{path.name}"

    async def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        pairs = [(query, p) for p in passages]
        values = await asyncio.to_thread(self._model.predict, pairs, show_progress_bar=False)
        return [float(v) for v in values]

    async def aclose(self) -> None:
        return None


def make_reranker(settings: RerankSettings) -> Reranker | None:
    if settings.backend == "endpoint":
        return EndpointReranker(settings)
    if settings.backend == "cross-encoder":
        return CrossEncoderReranker(settings)
    return None
