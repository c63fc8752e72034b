"""Commands that read the workspace: `status`, `stats`, `communities`, `summarize`, `citations`, `plot`,
`entities` (with merge and split), `export` and `config`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..config import load_settings, settings_origins, settings_summary
from ..errors import ConfigError
from ..models import usage_to_json
from ..plugins.registry import check_settings, settings_of_plugins
from . import analysis as show_analysis
from . import output as show
from .flags import settings_flags
from .workspace import command_workspace


def add_status_and_stats(sub: Any) -> None:
    p = sub.add_parser("status", help="documents and their processing status")
    settings_flags(p)
    p.set_defaults(handler=cmd_status)
    p = sub.add_parser("stats", help="counts and LLM token totals")
    p.add_argument("--cost", action="store_true", help="LLM calls and tokens per paper")
    p.add_argument("--graph", action="store_true", help="graph measures: density, degrees, components, clustering, "
                                                      "communities and modularity per level, type distributions, "
                                                      "papers per year, citations (seed 001 Table I)")
    settings_flags(p)
    p.set_defaults(handler=cmd_stats)


def add_communities_citations_plot(sub: Any) -> None:
    p = sub.add_parser("communities", help="communities of the entity graph per level with their reports "
                                           "(recomputed when the graph changed enough)")
    p.add_argument("--level", type=int, help="only this level (0 = coarsest)")
    p.add_argument("--id", dest="community_id", help="one community, with its members")
    p.add_argument("--force", action="store_true", help="recompute even if the graph hardly changed")
    p.add_argument("--rebuild", action="store_true", help="recompute from scratch (not from the stored communities)")
    p.add_argument("--no-update", action="store_true", help="show what is stored; compute nothing")
    p.add_argument("--members", action="store_true", help="include member entity ids (--json)")
    settings_flags(p)
    p.set_defaults(handler=cmd_communities)
    p = sub.add_parser("summarize", help="one Markdown summary of the graph around its central concept, by "
                                         "subtopics, with citations (KG-RAG §III.D)")
    p.add_argument("--algorithm", choices=["louvain", "leiden"],
                   help="subtopic detection (default: communities.algorithm; the seed used louvain)")
    p.add_argument("--depth", type=int, default=3, help="subgraph depth around the central concept (default 3)")
    p.add_argument("--max-nodes", type=int, default=60, help="concepts summarised, closest first (default 60)")
    p.add_argument("--root", help="summarise around this entity (name or id) instead of the most connected one")
    p.add_argument("--out", "-o", help="write the Markdown here (default: standard output)")
    settings_flags(p)
    p.set_defaults(handler=cmd_summarize)
    p = sub.add_parser("citations", help="the citation network: papers with in/out citations, or one paper's references")
    p.add_argument("doc_id", nargs="?", help="one paper: its resolved references and the papers citing it")
    p.add_argument("--limit", type=int, default=20, help="most cited papers outside the workspace to list")
    settings_flags(p)
    p.set_defaults(handler=cmd_citations)
    p = sub.add_parser("plot", help="figures of the graph (PNG) and an interactive HTML view")
    p.add_argument("--out", default="scholargraph_plots", help="output directory (default ./scholargraph_plots)")
    p.add_argument("--level", type=int, default=0, help="community level of the community map")
    p.add_argument("--max-nodes", type=int, default=1500, help="entities shown in the HTML view (most connected)")
    settings_flags(p)
    p.set_defaults(handler=cmd_plot)


def add_entities(sub: Any) -> None:
    p = sub.add_parser("entities", help="list, search, merge or split entities")
    p.add_argument("--type", dest="entity_type", help="only this entity type")
    p.add_argument("--search", "-s", help="substring of a name or alias")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--merge", nargs="+", metavar="ENTITY", help="merge the 2nd..nth entity into the 1st (names or ids)")
    p.add_argument("--split", metavar="ENTITY", help="split an entity into one per name it was merged from")
    settings_flags(p)
    p.set_defaults(handler=cmd_entities)


def add_export_and_config(sub: Any) -> None:
    p = sub.add_parser("export", help="write the knowledge graph (all papers or some) as RDF, GraphML, Neo4j CSV or JSON")
    p.add_argument("--format", "-f", dest="export_format", required=True,
                   choices=["turtle", "jsonld", "graphml", "neo4j-csv", "json"])
    p.add_argument("--doc", nargs="+", metavar="DOC_ID", help="only these papers (default: every indexed paper)")
    p.add_argument("--out", "-o", help="output file (default: standard output); for neo4j-csv a directory "
                                       "(default ./scholargraph_neo4j)")
    p.add_argument("--base", help="IRI base of exported resources (RDF; default https://w3id.org/scholargraph/kg/)")
    settings_flags(p)
    p.set_defaults(handler=cmd_export)
    p = sub.add_parser("config", help="show the effective settings")
    p.add_argument("--origins", action="store_true",
                   help="also say where each value comes from (default, preset, file, env, flag)")
    settings_flags(p)
    p.set_defaults(handler=cmd_config)


def cmd_status(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        rows = [row.to_json() for row in kb.status()]
    show.print_json({"documents": rows}) if args.json else show.print_status(rows)
    return 0


def cmd_stats(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        stats = kb.stats().to_json()
        if args.cost:
            stats["cost_by_document"] = {doc: usage_to_json(u) for doc, u in kb.cost_by_document().items()}
            stats["cost_outside_documents"] = usage_to_json(kb.browse.cost_outside_documents())
            stats["cost_by_endpoint"] = kb.browse.cost_by_endpoint().to_json()
            stats["embedding_batches_by_endpoint"] = kb.browse.embedding_batches_by_endpoint().to_json()
            stats["community_reports"] = kb.browse.report_cost().to_json()
        if args.graph:
            stats["graph"] = kb.graph_stats().to_json()
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
        if len(endpoints := stats.get("cost_by_endpoint", {})) > 1:
            show.out.print("  per LLM endpoint:")
            for url, used in endpoints.items():
                show.out.print(f"    {url}: {used['llm_calls']} calls, {used['failed_attempts']} failed attempts, "
                               f"{used['total_tokens']:,} tokens")
        if len(embedders := stats.get("embedding_batches_by_endpoint", {})) > 1:
            show.out.print("  per embedding endpoint:")
            for url, used in embedders.items():
                show.out.print(f"    {url}: {used['batches']} batches, {used['failed_attempts']} failed attempts, "
                               f"{used['input_tokens']:,} input tokens")
        if reports := stats.get("community_reports"):
            show.out.print(f"  community reports: {reports['written']} written by the LLM ({reports['calls']} calls, "
                           f"{reports['tokens']:,} tokens), {reports['pending']} pending; written {reports['when']}")
        if args.graph:
            show_analysis.print_graph_stats(stats["graph"])
    return 0


def cmd_communities(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        run = None if args.no_update else kb.update_communities(force=args.force, rebuild=args.rebuild).to_json()
        view = kb.community(args.community_id) if args.community_id else kb.communities(args.level, members=args.members)
    data = view.to_json()
    if args.json:
        show.print_json({**data, "update": run} if not args.community_id else data)
    elif args.community_id:
        show_analysis.print_community(data)
    else:
        show_analysis.print_communities(data, run)
    return 0


def cmd_summarize(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    if args.depth < 1 or args.max_nodes < 2:
        raise ConfigError("summarize: --depth must be at least 1 and --max-nodes at least 2")
    with command_workspace(args, overrides) as kb:
        summary = kb.summarize(algorithm=args.algorithm, depth=args.depth, max_nodes=args.max_nodes, root=args.root)
    text = summary.markdown()
    if args.out and args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        show.print_json({**summary.to_dict(), **({"path": args.out} if args.out else {})})
    elif args.out and args.out != "-":
        show.out.print(f"summary of {summary.root.name!r}: {len(summary.subtopics)} subtopics, "
                       f"{sum(len(t.nodes) for t in summary.subtopics) + 1} concepts, {summary.method} -> {args.out}")
    else:
        print(text)
    for note in summary.notes:
        show.out.print(f"[yellow]note:[/yellow] {note}")
    return 0


def cmd_citations(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        data = kb.citations(args.doc_id, args.limit).to_json()
    if args.json:
        show.print_json(data)
    elif args.doc_id:
        show_analysis.print_paper_citations(data)
    else:
        show_analysis.print_citation_network(data)
    return 0


def cmd_plot(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        result = kb.plot(args.out, level=args.level, max_nodes=args.max_nodes).to_json()
    if args.json:
        show.print_json(result)
    else:
        for name, path in result["files"].items():
            show.out.print(f"{name:<20} {path}")
    return 0


def cmd_entities(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    with command_workspace(args, overrides) as kb:
        if args.merge:
            if len(args.merge) < 2:
                raise ConfigError("--merge needs at least two entities: the one to keep, then the ones to fold into it")
            result = kb.merge_entities(args.merge[0], *args.merge[1:])
            show.print_json(result.to_json()) if args.json else show.out.print(
                f"merged {len(result.merged)} entit(ies) into {result.kept}")
            return 0
        if args.split:
            ids = kb.split_entity(args.split)
            show.print_json({"entities": ids}) if args.json else show.out.print(f"split into {len(ids)}: {', '.join(ids)}")
            return 0
        rows = [e.to_json() for e in kb.entities(args.entity_type, args.search, args.limit)]
    if args.json:
        show.print_json({"entities": rows})
    else:
        show.print_entities(rows)
    return 0


def cmd_export(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    to_stdout = args.export_format != "neo4j-csv" and args.out in (None, "-")
    with command_workspace(args, overrides) as kb:
        report = kb.export(args.export_format, args.out, doc_ids=args.doc, base=args.base).to_json()
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
    settings = load_settings(args.workdir, overrides)
    check_settings(settings)
    data = {**settings_summary(settings), "plugins": settings_of_plugins(settings)}
    if args.origins:
        data = {"settings": data, "origins": settings_origins(args.workdir, overrides)}
    show.print_json(data)
    return 0
