"""The plug-in contract: what a profile package declares (see ``docs/architecture.md``).

A plug-in module exposes ``PROFILE``, a :class:`Profile`: its extractor factory, the query modes it
adds, its settings model, and optionally CLI additions. The registry (:mod:`.registry`) collects
them; the engine, pipeline and :class:`~scholargraph.kb.KnowledgeBase` only ever look a profile or
mode up by the name a user gave, never test for one.

Settings: a profile or mode with a ``settings`` model reads the section ``[plugins.<its name>]``
(``SCHOLARGRAPH_PLUGINS__<NAME>__<KEY>``); the registry validates it when the plug-in is looked up
(:func:`.registry.check_settings`), and the plug-in's code reads it with :func:`plugin_settings`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..extract.base import Extractor

if TYPE_CHECKING:
    import numpy as np

    from ..config import Settings
    from ..graph.memory import GraphCache
    from ..ingest.tokenizer import TextTokenizer
    from ..llm.client import LLMClient
    from ..llm.embeddings import Embedder
    from ..llm.rerank import Reranker
    from ..models import Answer, Usage
    from ..query.retrieval import Retrieval
    from ..report import IndexReport
    from ..store.base import QueryStore

__all__ = ["ABLATION_FLAGS", "CommandKit", "CommandWorkspace", "Extractor", "ExtractorContext", "Profile", "QueryContext",
           "QueryMode", "QueryRequest", "plugin_settings"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def plugin_settings(settings: Settings, name: str, model: type[M]) -> M:
    """The section ``[plugins.<name>]`` of ``settings`` as ``model`` (defaults where unset); a bad
    value is a ConfigError naming the key."""
    try:
        return model.model_validate(settings.plugins.get(name) or {})
    except ValidationError as exc:
        problems = "; ".join(f"plugins.{name}.{'.'.join(str(p) for p in e['loc'])}: "
                             f"{'unknown setting' if e['type'] == 'extra_forbidden' else e['msg']} "
                             f"(got {e.get('input')!r})" for e in exc.errors())
        raise ConfigError(f"invalid settings: {problems}") from None

# the common switches of `ask`/`retrieve` (thesis ablations); a mode lists those it cannot honour
ABLATION_FLAGS = {"clues": "--no-clues", "subgraph": "--no-subgraph"}


@dataclass(frozen=True)
class ExtractorContext:
    """What a profile's extractor factory gets. ``llm`` is None for profiles that need none."""

    settings: Settings
    llm: LLMClient | None
    embed: Callable[[Sequence[str]], Awaitable[np.ndarray]]  # texts -> unit vectors (the workspace's model)


@dataclass(frozen=True)
class QueryContext:
    """The workspace as a query mode sees it."""

    store: QueryStore
    settings: Settings
    embedder: Embedder
    tokenizer: TextTokenizer
    llm: LLMClient | None = None
    graphs: GraphCache | None = None  # the in-memory graph, shared across queries (graph modes)
    reranker: Reranker | None = None  # optional second stage for text units (settings.rerank)


@dataclass(frozen=True)
class QueryRequest:
    """One question and the common switches. ``top_k`` None = the mode's default
    (``query.top_k`` for the built-in modes); ``history``: earlier (question, answer) turns of the
    session, oldest first; ``on_text``: streaming callback for the answer text."""

    question: str
    top_k: int | None = None
    clues: bool = True
    subgraph: bool = True
    history: Sequence[tuple[str, str]] = ()
    on_text: Callable[[str], None] | None = None

    def k(self, settings: Settings) -> int:
        return self.top_k or settings.query.top_k


@dataclass(frozen=True)
class QueryMode:
    """A query mode. ``retrieve`` returns the numbered sources; ``answer`` (optional) writes the
    answer itself, else the engine answers from the retrieval's context (one LLM call with verified
    citations, or extractively). ``unsupported``: keys of :data:`ABLATION_FLAGS` the mode cannot
    honour -- asking for them is an error, never silently ignored."""

    name: str
    description: str
    retrieve: Callable[[QueryContext, QueryRequest], Awaitable[Retrieval]]
    answer: Callable[[QueryContext, QueryRequest], Awaitable[Answer]] | None = None
    unsupported: frozenset[str] = frozenset()
    settings: type[BaseModel] | None = None  # the mode's section [plugins.<name>]


class CommandWorkspace(Protocol):
    """The open workspace a plug-in's command works on (a :class:`~scholargraph.kb.KnowledgeBase`,
    typed by what a command may use)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> QueryStore: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def llm(self) -> LLMClient | None: ...

    def insert(self, paths: Sequence[str], *, dry_run: bool = False) -> IndexReport: ...
    def cost_by_document(self) -> dict[str, dict[str, Usage]]: ...
    def run(self, coro: Coroutine[Any, Any, T]) -> T: ...
    async def acheck_models(self) -> None: ...
    def close(self) -> None: ...


class CommandKit(Protocol):
    """What the CLI lends the commands a plug-in adds (``add_cli(subparsers, kit)``): a workspace
    opened with the CLI's progress display, and the CLI's output. A plug-in imports neither the
    facade nor the CLI."""

    def open_workspace(self, settings: Settings, *, create: bool = True) -> CommandWorkspace: ...
    def print_json(self, data: Any) -> None: ...
    def print_index_report(self, report: IndexReport) -> None: ...
    def print_text(self, text: str) -> None: ...


@dataclass(frozen=True)
class Profile:
    """An extraction profile and what comes with it.

    ``make_extractor`` builds the extractor for a run; ``needs_llm`` profiles get the LLM client
    (and are refused with a clear message when none is configured); ``modes`` are query modes the
    profile adds; ``add_cli(subparsers, kit)`` adds its commands to ``scholargraph`` (a command sets
    ``handler=fn(args, overrides) -> exit code`` with ``set_defaults``; ``kit``, a :class:`CommandKit`,
    opens workspaces and prints for it)."""

    name: str
    description: str
    make_extractor: Callable[[ExtractorContext], Extractor]
    needs_llm: bool = False
    modes: tuple[QueryMode, ...] = ()
    add_cli: Callable[[Any, CommandKit], object] | None = None  # (argparse subparsers, kit) -> None
    llm_stages: tuple[str, ...] = ()  # what needs the LLM, named in the error when none is configured
    settings: type[BaseModel] | None = None  # the profile's section [plugins.<name>]
