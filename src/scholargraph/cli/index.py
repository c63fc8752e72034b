"""Commands that change what the workspace holds: `index`, `delete`, `parse` (a dry look at one
file), `reembed` and `migrate`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..config import load_settings
from ..errors import ConfigError
from ..ingest.registry import missing_paths
from ..plugins.registry import AUTO, profile_names
from . import output as show
from .flags import settings_flags
from .workspace import command_workspace


def add_index(sub: Any) -> None:
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
    p.add_argument("--worker", action="store_true",
                   help="PostgreSQL: after PATHS (if any), keep running as a worker that indexes whatever becomes "
                        "pending, until SIGINT/SIGTERM (its documents are then given back to the other workers)")
    settings_flags(p)
    p.set_defaults(handler=cmd_index)


def add_delete(sub: Any) -> None:
    p = sub.add_parser("delete", help="remove a document and everything derived only from it")
    p.add_argument("doc_ids", nargs="*", metavar="PAPER", help="document id, file name or title of the paper")
    p.add_argument("--source", action="append", default=[], metavar="FILE",
                   help="delete every paper read from FILE (e.g. all records of a JSON file; repeatable)")
    settings_flags(p)
    p.set_defaults(handler=cmd_delete)


def add_parse(sub: Any) -> None:
    p = sub.add_parser("parse", help="show how a file is parsed: title, authors, sections with pages, chunks")
    p.add_argument("file")
    p.add_argument("--chunks", action="store_true", help="include the chunks")
    p.add_argument("--scope", choices=["intro", "full"], default="full")
    settings_flags(p)
    p.set_defaults(handler=cmd_parse)


def add_reembed(sub: Any) -> None:
    p = sub.add_parser("reembed", help="recompute every vector with the configured embedding model")
    settings_flags(p)
    p.set_defaults(handler=cmd_reembed)


def add_migrate(sub: Any) -> None:
    p = sub.add_parser("migrate", help="copy this SQLite workspace into a PostgreSQL database (checked)")
    p.add_argument("--to", required=True, metavar="DSN", help="empty PostgreSQL database, e.g. postgresql://user@host/db")
    p.add_argument("--sample", type=int, default=200, help="vectors per namespace compared after the copy")
    settings_flags(p)
    p.set_defaults(handler=cmd_migrate)


def cmd_index(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    if args.worker:
        return _index_worker(args, overrides)
    if not args.paths and not args.only:
        raise ConfigError("give files or directories to index (or --only DOC_ID to re-index stored documents)")
    manifest = None
    if args.manifest:
        from ..ingest.manifest import read_manifest

        manifest = read_manifest(Path(args.manifest))
    missing_paths(args.paths)  # before the workspace is created
    with command_workspace(args, overrides, create=True) as kb:
        options = kb.indexing.load_options(manifest, args.exclude) if manifest or args.exclude else None
        report = kb.insert(args.paths, scope=args.scope, only=args.only, force=args.force, dry_run=args.dry_run,
                           options=options, wait=not args.no_wait)
    show.print_json(report.to_json()) if args.json else show.print_index_report(report)
    return 0 if report.ok else 1


def _index_worker(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``index --worker``: index PATHS (if any), then whatever becomes pending, until SIGINT/SIGTERM."""
    missing_paths(args.paths)
    with command_workspace(args, overrides, create=True) as kb:
        if kb.settings.store.backend != "postgres":
            raise ConfigError("index --worker needs a PostgreSQL knowledge base (--db postgresql://...)")
        first = kb.insert(args.paths, scope=args.scope, force=args.force, wait=False) if args.paths else None
        report = kb.run(_work_until_stopped(kb))
    if first is not None:
        report.files = first.files
        report.merge("added", first, first=True)
        report.merge("failed", first, first=True)
    show.print_json(report.to_json()) if args.json else show.print_index_report(report)
    return 0 if not report.failed else 1


async def _work_until_stopped(kb: Any) -> Any:
    """The long-lived worker's loop, stopped by SIGINT or SIGTERM."""
    import asyncio
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    kb.progress.log("worker: waiting for documents (SIGINT/SIGTERM stops it)")

    def batch_done(batch: Any) -> None:
        kb.progress.log(f"worker: {batch.total('added')} document(s) indexed, {batch.total('failed')} failed")

    try:
        return await kb.indexing.awork(stop, on_batch=batch_done)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def cmd_delete(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    if not args.doc_ids and not args.source:
        raise ConfigError("name the papers to delete (id, file name or title), or --source FILE")
    results = []
    with command_workspace(args, overrides) as kb:
        for doc_id in args.doc_ids:
            results.append(kb.delete(doc_id).to_json())
        for source in args.source:
            results.extend(d.to_json() for d in kb.delete_source(source))
    if args.json:
        show.print_json({"deleted": results})
    else:
        for r in results:
            show.out.print(f"deleted {r['deleted']}: {r['chunks']} chunks, {r['entities_removed']} entities and "
                           f"{r['relations_removed']} relations no longer supported by any document")
    return 0


def cmd_parse(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..app.pipeline import select_scope
    from ..ingest.chunking import chunk_document
    from ..ingest.registry import LoadOptions, load_file
    from ..ingest.tokenizer import load_tokenizer

    settings = load_settings(args.workdir, overrides)
    docs = load_file(Path(args.file), LoadOptions(include_references=True))
    out = []
    for doc in docs:
        data = doc.to_dict()
        for section in data["sections"]:
            section.pop("page_marks", None)
            section["chars"] = len(section.pop("text"))
        if args.chunks:
            tok = load_tokenizer(settings.chunking.tokenizer, settings.embeddings.local_model)
            chunks = chunk_document(select_scope(doc, args.scope), tok, settings.chunking.size, settings.chunking.overlap,
                                    "tokens" if settings.chunking.strategy == "tokens" else "structure",
                                    settings.extraction.include_references, settings.chunking.parts)
            data["chunks"] = [c.__dict__ for c in chunks]
        data["references"] = len(data.get("references", []))
        out.append(data)
    if args.json:
        show.print_json(out[0] if len(out) == 1 else {"documents": out})
    else:
        show.print_parsed(out)
    return 0


def cmd_reembed(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        counts = kb.run(kb.indexing.reembed())
    show.print_json(counts) if args.json else show.out.print(f"re-embedded: {counts}")
    return 0


def cmd_migrate(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..store import copy_to_postgres

    settings = load_settings(args.workdir, overrides)
    if settings.store.backend != "sqlite":
        raise ConfigError("migrate copies a SQLite workspace: run it without --db / store.backend = 'postgres'")
    quiet = args.json or args.quiet
    report = copy_to_postgres(settings.workdir, args.to, args.sample, None if quiet else show.out.print)
    if args.json:
        show.print_json(report.to_json())
    else:
        show.print_migration(report)
    return 0 if report.ok else 1
