"""The CLI commands: parse arguments elsewhere (cli.py), do the work through KnowledgeBase here."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import cli_analysis as show_analysis
from . import cli_output as show
from .config import demo_corpus_override, load_settings, program_name, settings_origins, settings_summary
from .errors import ConfigError, ScholarGraphError, WorkspaceError
from .ingest.registry import missing_paths
from .kb import KnowledgeBase
from .models import DocStatus
from .progress import RichProgress


def read_queries(path: str) -> list[str]:
    """One question per line, or JSON lines with a 'question' field; blank lines ignored."""
    questions = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"questions file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the questions file {path}: {exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
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


def _kb(args: argparse.Namespace, overrides: dict[str, Any], workdir: str | None = None, *,
        create: bool = False) -> KnowledgeBase:
    """The workspace of a command; only commands that add papers (``create``) may create one: the
    others fail with a WorkspaceError when there is none."""
    settings = load_settings(workdir or args.workdir, overrides)
    kb = KnowledgeBase(settings=settings, create=create)
    kb.progress = RichProgress(usage=lambda: kb.llm.usage if kb.llm else {}, enabled=settings.progress)
    return kb


def cmd_index(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    if not args.paths and not args.only:
        raise ConfigError("give files or directories to index (or --only DOC_ID to re-index stored documents)")
    manifest = None
    if args.manifest:
        from .ingest.manifest import read_manifest

        manifest = read_manifest(Path(args.manifest))
    missing_paths(args.paths)  # before the workspace is created
    with _kb(args, overrides, create=True) as kb:
        options = kb.load_options(manifest, args.exclude) if manifest or args.exclude else None
        report = kb.insert(args.paths, scope=args.scope, only=args.only, force=args.force, dry_run=args.dry_run,
                           options=options, wait=not args.no_wait)
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


def _require_indexed(kb: KnowledgeBase) -> None:
    """Questions need indexed papers: an empty workspace is an error, not an empty answer."""
    if not kb.store.status_counts().get(DocStatus.PROCESSED.value):
        raise WorkspaceError(f"nothing is indexed in the workspace {kb.workdir} "
                             f"(see `scholargraph status`; add papers with `scholargraph index PATH --workdir {kb.workdir}`)")


def cmd_ask(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    questions = _questions(args)
    with _kb(args, overrides) as kb:
        _require_indexed(kb)
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
        _require_indexed(kb)
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
            show.print_retrieval(retrieval, args.top_k or kb.settings.query.top_k)
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
            stats["cost_outside_documents"] = kb.cost_outside_documents()
            stats["community_reports"] = kb.report_cost()
        if args.graph:
            stats["graph"] = kb.graph_stats()
    if args.json:
        show.print_json(stats)
    else:
        show.print_stats(stats)
        for doc, usage in stats.get("cost_by_document", {}).items():
            show.out.print(f"  {doc}: {show.calls_line(usage)}, {usage['total_tokens']:,} tokens")
            for purpose, p in usage["by_purpose"].items():  # per stage (localkg: lkg_mentions ... lkg_taxonomy)
                show.out.print(f"      {purpose:<14} {p['calls']} calls, {p['prompt_tokens']:,} + "
                               f"{p['completion_tokens']:,} tokens")
        if (rest := stats.get("cost_outside_documents")) and rest["by_purpose"]:
            show.out.print(f"  not tied to a paper ({', '.join(rest['by_purpose'])}): {show.calls_line(rest)}, "
                           f"{rest['total_tokens']:,} tokens")
        if reports := stats.get("community_reports"):
            show.out.print(f"  community reports: {reports['written']} written by the LLM ({reports['calls']} calls, "
                           f"{reports['tokens']:,} tokens), {reports['pending']} pending; written {reports['when']}")
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
    if not args.doc_ids and not args.source:
        raise ConfigError("name the papers to delete (id, file name or title), or --source FILE")
    results = []
    with _kb(args, overrides) as kb:
        for doc_id in args.doc_ids:
            results.append(kb.delete(doc_id))
        for source in args.source:
            results.extend(kb.delete_source(source))
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


def cmd_export(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    to_stdout = args.export_format != "neo4j-csv" and args.out in (None, "-")
    with _kb(args, overrides) as kb:
        report = kb.export(args.export_format, args.out, doc_ids=args.doc, base=args.base)
    if args.json and not to_stdout:
        show.print_json(report)
    elif not to_stdout:
        what = (f"{report['triples']:,} triples" if "triples" in report else
                f"{report['nodes']:,} nodes, {report['edges']:,} edges ({report['relations']:,} relations as `stats` "
                f"counts them; {'an edge per paper that states one' if args.export_format == 'graphml' else 'edges: one per paper that states a relation, plus entity-paper links'})"
                if "nodes" in report else
                ", ".join(f"{n:,} {name}" for name, n in report.get("rows", {}).items()))
        show.out.print(f"exported {len(report['documents'])} paper(s) as {report['format']}: {what} -> "
                       f"{report.get('path') or args.out or 'scholargraph_neo4j'}")
        if "command" in report:
            show.out.print(f"load into Neo4j (database stopped): {report['command']}")
    return 0


def cmd_config(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    data = settings_summary(load_settings(args.workdir, overrides))
    if args.origins:
        data = {"settings": data, "origins": settings_origins(args.workdir, overrides)}
    show.print_json(data)
    return 0


def cmd_demo(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .demo import demo_corpus, next_steps, questions_for

    corpus = demo_corpus(args.corpus, demo_corpus_override())
    workdir = args.workdir or "demo_workspace"
    show.out.print(f"[bold]scholargraph demo[/bold]: indexing {show.escape(corpus.describe())} into {workdir}/")
    with _kb(args, overrides, workdir, create=True) as kb:
        report = kb.insert(corpus.paths)
        show.print_index_report(report)
        if not report.ok and not kb.status():
            return 1
        top = [e["name"] for e in kb.entities(limit=3)] if not corpus.bundled else []
        for question in questions_for(corpus, top):
            show.out.print(f"\n[bold cyan]Q: {show.escape(question)}[/bold cyan]")
            show.print_answer(kb.query(question), streamed=False)
        llm = kb.settings.llm.configured
    if not llm:
        show.out.print("\n(no LLM configured: the answers above are the best-matching sentences, each cited)")
    program = program_name(sys.argv[0])
    activate = (f" (or first `. {Path(program).parent}/activate`, then plain `scholargraph`)"
                if program != "scholargraph" else "")
    show.out.print(f"\n[bold]workspace:[/bold] {Path(workdir).resolve()}\n[bold]next, try{activate}:[/bold]")
    for command, what in next_steps(workdir, corpus, llm, program):
        show.out.print(f"  {show.escape(command)}\n      [dim]{show.escape(what)}[/dim]")
    return 0 if report.ok else 1


def cmd_eval(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .evaluation.questions import generate_questions

    if args.task == "winrate":
        return _winrate(args, overrides)
    with _kb(args, overrides) as kb:
        if kb.llm is None:
            raise ConfigError("evaluation needs an LLM: set llm.base_url and llm.model")
        if args.task in ("kg2text", "kgqa"):
            result = kb.run(_local_kg_eval(kb, args))
            if args.out:
                Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
            show.print_json(result) if args.json else show.print_local_kg_eval(args.task, result)
            return 0
        rows = kb.run(generate_questions(kb, args.users, args.tasks, args.per_task))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    Path(args.out).write_text(text) if args.out else sys.stdout.write(text)
    return 0


def _winrate(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .config import judge_settings
    from .evaluation.answers import parse_side
    from .evaluation.winrate import winrate
    from .llm.client import LLMClient

    side_a, side_b = parse_side(args.a), parse_side(args.b)
    if side_a.name == side_b.name and (side_a.imported or side_b.imported):
        raise ConfigError(f"both sides are called {side_a.name!r}: name them, e.g. --b Other={args.b}")
    if args.questions:
        questions = read_queries(args.questions)
    else:
        imported = side_a.answers or side_b.answers
        if imported is None:
            raise ConfigError("eval winrate needs --questions FILE (make one with `scholargraph eval questions --out FILE`)")
        questions = list(imported)
    with _kb(args, overrides) as kb:
        judge_cfg = judge_settings(kb.settings)
        if not judge_cfg.configured:
            raise ConfigError("eval winrate needs a judge model: --judge-url/--judge-model (or judge.base_url/"
                              "judge.model), else the answering LLM's --llm-url/--llm-model")
        judge = LLMClient(judge_cfg, cache=None, count_tokens=kb.tokenizer.count)  # every trial is a new judgement

        async def run_all():
            try:
                if judge_cfg.health_check:
                    await judge.health_check()
                return await winrate(kb, judge, questions, side_a, side_b, trials=args.trials)
            finally:
                await judge.aclose()

        verdicts = kb.run(run_all())
    result = verdicts.to_json(side_a, side_b, {"base_url": judge_cfg.base_url, "model": judge_cfg.model})
    if args.out:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    show.print_json(result) if args.json else show.print_winrate(result)
    return 0


async def _local_kg_eval(kb: KnowledgeBase, args: argparse.Namespace) -> dict[str, Any]:
    """`eval kg2text` / `eval kgqa` (seed 004 §5.2-5.3)."""
    if args.task == "kg2text":
        from .evaluation.kg2text import kg_to_text

        return await kg_to_text(kb, args.doc, order=getattr(args, "order", "section"))
    from .evaluation.kgqa import kg_qa, read_qa_pairs

    docs = args.doc or [r["id"] for r in kb.status() if r["status"] == "PROCESSED"]
    if args.questions and len(docs) != 1:
        raise ConfigError("eval kgqa --questions FILE is about one paper: give it with --doc DOC_ID")
    pairs = read_qa_pairs(args.questions) if args.questions else None
    papers = [await kg_qa(kb, d, pairs, args.count) for d in docs]
    return {"papers": papers}


def cmd_serve(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from .server import run_server
    from .server.security import check_bind, load_keys

    settings = load_settings(args.workdir, overrides)
    check_bind(settings.server.host, load_keys(settings.server))  # a refused address first, as before
    if not args.create:  # like every command but index: no workspace is made by mistake
        try:
            KnowledgeBase(settings=settings, create=False).close()
        except WorkspaceError as exc:
            raise WorkspaceError(f"{exc}, or `scholargraph serve --create` to serve an empty library to upload "
                                 "papers into") from None
    run_server(settings, args.log_level)
    return 0


def cmd_llm(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``llm serve FILE.gguf``: llama.cpp's OpenAI-compatible server on loopback until Ctrl-C."""
    from .llm.local_server import plan_server, serve

    plan = plan_server(Path(args.model_file).expanduser(), port=args.port, threads=args.threads, slots=args.slots,
                       context_per_slot=args.context, alias=args.alias)
    show.err.print(f"serving {plan.model_path.name} as '{plan.alias}' at {plan.base_url} ({plan.threads} threads, "
                   f"{plan.slots} slot(s) of {plan.context_per_slot} tokens); Ctrl-C stops it.\n"
                   f"Use it: --llm-url {plan.base_url} --llm-model {plan.alias}")
    serve(plan)
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
