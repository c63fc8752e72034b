"""Human-readable output of the analysis commands (communities, citations, stats --graph); the
--json forms print the same objects."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .output import out


def print_communities(data: dict, run: dict | None) -> None:
    if run is not None:
        out.print(f"[dim]{escape(run['reason'] or 'up to date')}; {run['reports_written']} report(s) written, "
                  f"{run['reports_kept']} kept[/dim]")
    if not data["levels"]:
        out.print("no communities: the graph has no relations yet (index papers first)")
        return
    for lv in data["levels"]:
        out.print(f"level {lv['level']}: {lv['communities']} communities, modularity {lv['modularity']:.3f}")
    table = Table()
    for col in ("id", "level", "size", "rating", "title", "papers"):
        table.add_column(col, overflow="fold")
    for c in data["communities"][:200]:
        table.add_row(c["id"], str(c["level"]), str(c["size"]), "" if c["rating"] is None else f"{c['rating']:g}",
                      escape(c["title"] or ""), str(len(c["papers"])))
    out.print(table)
    if len(data["communities"]) > 200:
        out.print(f"… {len(data['communities']) - 200} more (use --level or --json)")


def print_community(c: dict) -> None:
    out.print(f"[bold]{escape(c['title'] or c['id'])}[/bold]  ({c['id']}, level {c['level']}, {c['size']} entities, "
              + (f"rating {c['rating']:g}, " if c["rating"] is not None else "") + f"{c['method']})")
    if c["summary"]:
        out.print(escape(c["summary"]))
    if c["key_entities"]:
        out.print("key entities: " + escape(", ".join(f"{e['name']} ({e['type']})" for e in c["key_entities"])))
    for p in c["papers"]:
        out.print(escape(f"  paper: {p['title']}" + (f" ({p['year']})" if p["year"] else "")))
    for e in c["evidence"]:
        out.print(escape(f"  “{e['text']}” — {e.get('title') or e['document_id']}"))
    if c["children"]:
        out.print("sub-communities: " + ", ".join(c["children"]))


def print_citation_network(data: dict) -> None:
    out.print(f"{data['papers']} papers, {data['references']} references ({data['references_matched']} to papers in the "
              f"workspace), {len(data['edges'])} citation edges between papers, {data['stub_papers']} cited papers "
              "not in the workspace")
    table = Table(title="papers in the workspace")
    for col in ("id", "cited by", "cites", "title"):
        table.add_column(col, overflow="fold")
    for p in data["workspace_papers"]:
        table.add_row(escape(p["id"]), str(p["cited_by"]), str(p["cites"]), escape((p["title"] or "")[:100]))
    out.print(table)
    if data["most_cited_stubs"]:
        out.print("[bold]most cited papers not in the workspace[/bold]")
        for s in data["most_cited_stubs"]:
            out.print(escape(f"  {s['cited_by']}×  {s['title'] or s['doi'] or s['pmid'] or s['id']}"
                             + (f" ({s['year']})" if s["year"] else "")))


def print_paper_citations(data: dict) -> None:
    out.print(f"[bold]{escape(data['title'])}[/bold] ({escape(data['id'])})")
    out.print(f"cited by {len(data['cited_by'])} paper(s) in the workspace:")
    for p in data["cited_by"]:
        out.print(escape(f"  {p['title']} ({p['id']})"))
    out.print(f"{len(data['references'])} reference(s):")
    for r in data["references"]:
        mark = "stub" if r["cites"]["stub"] else "[green]in workspace[/green]"
        out.print(f"  {r['ordinal'] + 1}. {mark} " + escape(r["text"][:160]))


def print_graph_stats(g: dict) -> None:
    out.print("[bold]graph[/bold]")
    for key in ("nodes", "edges", "relations", "density", "average_degree", "max_degree", "isolated_nodes",
                "connected_components", "largest_component", "clustering_coefficient", "transitivity"):
        out.print(f"  {key:<24} {g[key]}")
    for lv in g["communities"]["levels"]:
        out.print(f"  communities level {lv['level']}: {lv['communities']} (avg {lv['average_size']}, max "
                  f"{lv['max_size']}, min {lv['min_size']} entities), modularity {lv['modularity']}")
    out.print("  entity types: " + escape(", ".join(f"{k} {v}" for k, v in list(g["entity_types"].items())[:12])))
    out.print("  relation types: " + escape(", ".join(f"{k} {v}" for k, v in list(g["relation_types"].items())[:12])))
    out.print("  papers per year: " + ", ".join(f"{k}: {v}" for k, v in g["papers_per_year"].items()))
    out.print("  top entities: " + escape(", ".join(f"{n['name']} ({n['degree']})" for n in g["top_nodes_by_degree"])))
    c = g["citations"]
    out.print(f"  citations: {c['references']} references, {c['references_matched']} to workspace papers, "
              f"{c['edges_between_papers']} edges, {c['stub_papers']} stub papers")
