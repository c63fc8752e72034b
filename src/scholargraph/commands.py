"""The CLI commands: parse arguments elsewhere (cli.py), do the work through KnowledgeBase here."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import cli_analysis as show_analysis
from . import cli_output as show
from .config import demo_corpus_candidates, load_settings, settings_origins, settings_summary
from .errors import ConfigError, ScholarGraphError
from .kb import KnowledgeBase
from .progress import RichProgress


def read_queries(path: str) -> list[str]:
    """One question per line, or JSON lines with a 'question' field; blank lines ignored."""
    questions = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                questions.append(str(json.loads(line)["question"]))
            except (json.JSONDecodeError, KeyError) as exc:
                raise ScholarGraphError(f"{path}:{n}: expected a JSON object with a 'question' field ({exc})") from None
        else:
            questions.append(line)
    return questions


def _kb(args: argparse.Namespace, overrides: dict[str, Any], workdir: str | None = None) -> KnowledgeBase:
    settings = load_settings(workdir or args.workdir, overrides)
    kb = KnowledgeBase(settings=settings)
    kb.progress = RichProgress(usage=lambda: kb.llm.usage if kb.llm else {}, enabled=settings.progress)
    return kb


def cmd_index(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    if not args.paths and not args.only:
        raise ConfigError("give files or directories to index (or --only DOC_ID to re-index stored documents)")
    manifest = None
    if args.manifest:
        from .ingest.manifest import read_manifest

        manifest = read_manifest(Path(args.manifest))
    with _kb(args, overrides) as kb:
        report = kb.insert(args.paths, scope=args.scope, only=args.only, force=args.force, dry_run=args.dry_run,
                           options=kb.load_options(manifest) if manifest else None, wait=not args.no_wait)
    show.print_json(report.to_json()) if args.json else show.print_index_report(report)
    return 0 if report.ok else 1


def _questions(args: argparse.Namespace) -> list[str]:
    if args.queries:
        return read_queries(args.queries)
    if args.question is None:
        raise ConfigError("give a question, or --queries FILE")
    if not args.question.strip():
        raise ConfigError("the question is empty")
    return [args.question]


def cmd_ask(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    questions = _questions(args)
    with _kb(args, overrides) as kb:
        return kb.run(_ask_all(kb, args, questions))


def _print_piece(piece: str) -> None:
    sys.stdout.write(piece)
    sys.stdout.flush()


async def _ask_all(kb: KnowledgeBase, args: argparse.Namespace, questions: list[str]) -> int:
    failures = 0
    batch = bool(args.queries)
    for question in questions:
        if args.only_context:
            retrieval = await kb.aretrieve(question, args.mode, args.top_k, clues=not args.no_clues,
                                           subgraph=not args.no_subgraph)
            data = {**show.retrieval_json(retrieval), "context": retrieval.context}
            show.print_json(data) if (args.json or batch) else show.out.print(show.escape(retrieval.context))
            continue
        stream = not (args.json or args.no_stream or batch)
        on_text = _print_piece if stream else None
        try:
            answer = await kb.aquery(question, args.mode, args.top_k, session=args.session, on_text=on_text,
                                     clues=not args.no_clues, subgraph=not args.no_subgraph)
        except ScholarGraphError as exc:
            if not batch:
                raise
            failures += 1
            show.print_json({"question": question, "error": str(exc)})
            continue
        if args.json or batch:
            show.print_json(answer.to_json())
        else:
            show.print_answer(answer, streamed=stream)
    return 1 if failures else 0


def cmd_retrieve(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    questions = _questions(args)
    with _kb(args, overrides) as kb:
        return kb.run(_retrieve_all(kb, args, questions))


async def _retrieve_all(kb: KnowledgeBase, args: argparse.Namespace, questions: list[str]) -> int:
    failures = 0
    for question in questions:
        try:
            retrieval = await kb.aretrieve(question, args.mode, args.top_k, clues=not args.no_clues,
                                           subgraph=not args.no_subgraph)
        except ScholarGraphError as exc:
            if not args.queries:
                raise
            failures += 1
            show.print_json({"query": question, "error": str(exc)})
            continue
        if args.json or args.queries:
            show.print_json(show.retrieval_json(retrieval))
        else:
            show.print_retrieval(retrieval)
    return 1 if failures else 0


def cmd_status(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        rows = kb.status()
    show.print_json({"documents": rows}) if args.json else show.print_status(rows)
    return 0


def cmd_stats(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        stats = kb.stats()
        if args.cost:
            stats["cost_by_document"] = kb.cost_by_document()
        if args.graph:
            stats["graph"] = kb.graph_stats()
    if args.json:
        show.print_json(stats)
    else:
        show.print_stats(stats)
        for doc, usage in stats.get("cost_by_document", {}).items():
            show.out.print(f"  {doc}: {usage['llm_calls']} calls, {usage['total_tokens']:,} tokens")
        if args.graph:
            show_analysis.print_graph_stats(stats["graph"])
    return 0


def cmd_communities(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        run = None if args.no_update else kb.update_communities(force=args.force, rebuild=args.rebuild)
        data = kb.community(args.community_id) if args.community_id else kb.communities(args.level, members=args.members)
    if args.json:
        show.print_json({**data, "update": run} if not args.community_id else data)
    elif args.community_id:
        show_analysis.print_community(data)
    else:
        show_analysis.print_communities(data, run)
    return 0


def cmd_citations(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        data = kb.citations(args.doc_id, args.limit)
    if args.json:
        show.print_json(data)
    elif args.doc_id:
        show_analysis.print_paper_citations(data)
    else:
        show_analysis.print_citation_network(data)
    return 0


def cmd_plot(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        result = kb.plot(args.out, level=args.level, max_nodes=args.max_nodes)
    if args.json:
        show.print_json(result)
    else:
        for name, path in result["files"].items():
            show.out.print(f"{name:<20} {path}")
    return 0


def cmd_delete(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    results = []
    with _kb(args, overrides) as kb:
        for doc_id in args.doc_ids:
            results.append(kb.delete(doc_id))
    if args.json:
        show.print_json({"deleted": results})
    else:
        for r in results:
            show.out.print(f"deleted {r['deleted']}: {r['chunks']} chunks, {r['entities_removed']} entities and "
                           f"{r['relations_removed']} relations no longer supported by any document")
    return 0


def cmd_entities(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with _kb(args, overrides) as kb:
        if args.merge:
            if len(args.merge) < 2:
                raise ConfigError("--merge needs at least two entities: the one to keep, then the ones to fold into it")
            result = kb.merge_entities(args.merge[0], *args.merge[1:])
            show.print_json(result) if args.json else show.out.print(
                f"merged {len(result['merged'])} entit(ies) into {result['kept']}")
            return 0
        if args.split:
            ids = kb.split_entity(args.split)
            show.print_json({"entities": ids}) if args.json else show.out.print(f"split into {len(ids)}: {', '.join(ids)}")
            return 0
        rows = kb.entities(args.entity_type, args.search, args.limit)
    if args.json:
        show.print_json({"entities": rows})
    else:
        show.print_entities(rows)
    return 0


def cmd_parse(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .ingest.chunking import chunk_document
    from .ingest.registry import LoadOptions, load_file
    from .ingest.tokenizer import load_tokenizer
    from .pipeline import select_scope

    settings = load_settings(args.workdir, overrides)
    docs = load_file(Path(args.file), LoadOptions(include_references=True))
    out = []
    for doc in docs:
        data = doc.to_dict()
        for section in data["sections"]:
            section.pop("page_marks", None)
            section["chars"] = len(section.pop("text"))
        if args.chunks:
            tok = load_tokenizer(settings.chunking.tokenizer)
            chunks = chunk_document(select_scope(doc, args.scope), tok, settings.chunking.size, settings.chunking.overlap,
                                    "tokens" if settings.chunking.strategy == "tokens" else "structure",
                                    settings.extraction.include_references)
            data["chunks"] = [c.__dict__ for c in chunks]
        data["references"] = len(data.get("references", []))
        out.append(data)
    if args.json:
        show.print_json(out[0] if len(out) == 1 else {"documents": out})
    else:
        show.print_parsed(out)
    return 0


def cmd_reembed(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .reembed import reembed

    with _kb(args, overrides) as kb:
        counts = kb.run(reembed(kb))
    show.print_json(counts) if args.json else show.out.print(f"re-embedded: {counts}")
    return 0


def cmd_migrate(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .store import copy_to_postgres

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


def cmd_config(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    data = settings_summary(load_settings(args.workdir, overrides))
    if args.origins:
        data = {"settings": data, "origins": settings_origins(args.workdir, overrides)}
    show.print_json(data)
    return 0


DEMO_QUESTIONS = [
    "What does the curcuminoid submicron particle do in Alzheimer's disease mouse models?",
    "How does J2RM map JSON data to RDF?",
    "How are graphene nanofibers used in sensors?",
]


def _demo_corpus(args: argparse.Namespace) -> list[Path]:
    if args.corpus:
        return [Path(args.corpus)]
    for base in demo_corpus_candidates():
        if (base / "pdfs" / "jats").is_dir():
            return [base / "pdfs" / "jats", base / "askg" / "papers"]  # 3 PMC full texts + 6 ASKG papers
        if base.is_dir() and not (base / "pdfs").exists():
            return [base]
    raise ConfigError("no demo corpus found (looked for $SCHOLARGRAPH_DEMO_CORPUS and ../shared/data/dev); "
                      "run `scholargraph demo --corpus DIR` with a directory of papers")


def cmd_demo(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    corpus = _demo_corpus(args)
    workdir = args.workdir or "demo_workspace"
    show.out.print(f"[bold]scholargraph demo[/bold]: indexing {', '.join(str(p) for p in corpus)} into {workdir}/")
    with _kb(args, overrides, workdir) as kb:
        report = kb.insert(corpus)
        show.print_index_report(report)
        for question in DEMO_QUESTIONS:
            show.out.print(f"\n[bold cyan]Q: {question}[/bold cyan]")
            answer = kb.query(question, mode=args.mode if hasattr(args, "mode") else None)
            show.print_answer(answer, streamed=False)
        llm = kb.settings.llm.configured
    show.out.print(f"\nworkspace: {Path(workdir).resolve()}")
    show.out.print(f"continue with:  scholargraph ask \"your question\" --workdir {workdir}")
    if not llm:
        show.out.print("answers above are extractive (no LLM configured). For written answers with citations, point it "
                       "at a local model, e.g. Ollama:\n  ollama serve & ollama pull qwen2.5:7b\n"
                       f"  scholargraph ask \"...\" --workdir {workdir} --llm-url http://localhost:11434/v1 --llm-model qwen2.5:7b")
    return 0 if report.ok else 1


def parse_configuration(spec: str) -> tuple[str, dict]:
    """'hybrid:no-clues,no-subgraph' -> ('hybrid', {'clues': False, 'subgraph': False})."""
    mode, _, flags = spec.partition(":")
    options = {}
    for flag in filter(None, (f.strip() for f in flags.split(","))):
        if flag not in {"no-clues", "no-subgraph"}:
            raise ConfigError(f"unknown configuration flag {flag!r} in {spec!r} (use no-clues, no-subgraph)")
        options[flag[3:]] = False
    return mode, options


def cmd_eval(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .evaluation.questions import generate_questions
    from .evaluation.winrate import winrate

    with _kb(args, overrides) as kb:
        if kb.llm is None:
            raise ConfigError("evaluation needs an LLM: set llm.base_url and llm.model")
        if args.task == "questions":
            rows = kb.run(generate_questions(kb, args.users, args.tasks, args.per_task))
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            Path(args.out).write_text(text) if args.out else sys.stdout.write(text)
            return 0
        if not args.questions:
            raise ConfigError("eval winrate needs --questions FILE (make one with `scholargraph eval questions --out FILE`)")
        mode_a, opt_a = parse_configuration(args.a)
        mode_b, opt_b = parse_configuration(args.b)
        verdicts = kb.run(winrate(kb, read_queries(args.questions), mode_a, mode_b, opt_a, opt_b))
    result = verdicts.to_json(args.a, args.b)
    if args.json:
        show.print_json(result)
    else:
        show.print_winrate(result)
    return 0


def cmd_serve(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .server import run_server

    settings = load_settings(args.workdir, overrides)
    run_server(settings, args.log_level)
    return 0


def cmd_keygen(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .server.security import ADMIN, READ, generate_key, key_file_line

    role = READ if args.read_only else ADMIN
    key = generate_key()
    path = Path(args.key_file)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(key_file_line(key, role) + "\n")
        path.chmod(0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write the key file {path}: {exc.strerror}") from None
    if args.json:
        show.print_json({"key": key, "role": role, "key_file": str(path)})
    else:
        show.out.print(f"{role} key (shown once; only its hash is stored in {path}):\n{key}")
    return 0
