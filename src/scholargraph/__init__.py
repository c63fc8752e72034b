"""scholargraph: a graph-RAG engine for scientific literature."""

__version__ = "0.1.0"

__all__ = ["KnowledgeBase", "Settings", "load_settings", "__version__"]


def __getattr__(name: str):  # lazy: importing the package must not load torch
    if name == "KnowledgeBase":
        from .kb import KnowledgeBase

        return KnowledgeBase
    if name in {"Settings", "load_settings"}:
        from . import config

        return getattr(config, name)
    raise AttributeError(name)
