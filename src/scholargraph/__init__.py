"""scholargraph: a graph-RAG engine for scientific literature."""

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # the real imports are lazy (see __getattr__)
    from .config import Settings, load_settings
    from .kb import KnowledgeBase

__all__ = ["KnowledgeBase", "Settings", "load_settings", "__version__"]


def __getattr__(name: str):  # lazy: importing the package must not load torch
    if name == "KnowledgeBase":
        from .kb import KnowledgeBase

        return KnowledgeBase
    if name in {"Settings", "load_settings"}:
        from . import config

        return getattr(config, name)
    raise AttributeError(name)
