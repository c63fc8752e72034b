"""A self-contained interactive HTML view of the entity graph (seed 001 Fig. 2): one file, the data
and the viewer script (``assets/graph_view.js``, dependency-free) inlined, so it opens offline.

The most connected ``max_nodes`` entities are shown, placed by a seeded Fruchterman-Reingold
layout and coloured by their coarsest community; hover shows a node, a click its description,
papers and neighbours, the legend hides communities and the search box finds names.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path

import igraph as ig
import numpy as np

from ..store.base import BrowseStore

DESCRIPTION_CHARS = 300
HELP = ("Drag to pan, scroll to zoom, click a node for its description, papers and neighbours; click a community "
        "in the legend to hide it; type in the search box to find entities.")


def graph_view_data(store: BrowseStore, max_nodes: int = 1500, seed: int = 42) -> dict:
    edges = store.all_edges()
    degree: dict[str, set[str]] = {}
    for _, s, t, _ in edges:
        if s != t:
            degree.setdefault(s, set()).add(t)
            degree.setdefault(t, set()).add(s)
    chosen = sorted(degree, key=lambda n: (-len(degree[n]), n))[:max_nodes]
    index = {n: i for i, n in enumerate(chosen)}
    pairs = sorted({(min(index[s], index[t]), max(index[s], index[t])) for _, s, t, _ in edges
                    if s in index and t in index and s != t})
    level0 = store.list_communities(0, members=True)
    reports = store.community_reports([c.signature for c in level0])
    member_of = store.communities_of(chosen, 0)
    com_index = {c.id: i for i, c in enumerate(level0)}
    entities = store.get_entities(chosen, sources=True)
    docs = store.documents_by_id({d for e in entities.values() for d in e.document_ids[:5]})
    if chosen:
        g = ig.Graph(n=len(chosen), edges=pairs)
        start = np.random.default_rng(seed).uniform(-1, 1, (len(chosen), 2)).tolist()
        coords = g.layout_fruchterman_reingold(seed=start, niter=300).coords if len(chosen) > 1 else [[0.0, 0.0]]
    else:
        coords = []
    nodes = []
    for i, n in enumerate(chosen):
        e = entities.get(n)
        desc = " ".join((e.description if e else "").split())
        nodes.append({"n": e.name if e else n, "t": e.type if e else "", "d": len(degree[n]),
                      "c": com_index.get(member_of.get(n, ""), -1),
                      "x": round(coords[i][0], 3), "y": round(coords[i][1], 3),
                      "s": desc[:DESCRIPTION_CHARS] + ("…" if len(desc) > DESCRIPTION_CHARS else ""),
                      "p": [d for d in (e.document_ids[:5] if e else []) if d in docs]})
    return {
        "nodes": nodes, "edges": [list(p) for p in pairs],
        "communities": [{"title": reports[c.signature].title if c.signature in reports else c.id,
                         "size": len(c.members)} for c in level0],
        "papers": {d: f"{row.title} ({row.year})" if row.year else row.title for d, row in docs.items()},
        "shown": len(chosen), "total": len(degree), "help": HELP,
    }


def _script_json(data: dict) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ margin: 0; font: 13px sans-serif; display: flex; height: 100vh; }}
#main {{ flex: 1; position: relative; }}
#view {{ width: 100%; height: 100%; display: block; cursor: grab; }}
#side {{ width: 320px; overflow: auto; border-left: 1px solid #ddd; padding: 8px; box-sizing: border-box; }}
#tip {{ position: absolute; display: none; background: #fff; border: 1px solid #aaa; padding: 3px 6px; pointer-events: none; }}
#search {{ width: 100%; box-sizing: border-box; margin-bottom: 6px; }}
.item {{ cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.dot {{ display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 5px; }}
</style></head>
<body><div id="main"><canvas id="view"></canvas><div id="tip"></div></div>
<div id="side"><b>{title}</b><p>{subtitle}</p><input id="search" placeholder="find an entity…">
<div id="panel"></div><h4>Communities (level 0)</h4><div id="legend"></div></div>
<script id="graph-data" type="application/json">{data}</script>
<script>{script}</script>
</body></html>
"""


def write_graph_view(store: BrowseStore, path: Path, max_nodes: int = 1500, seed: int = 42) -> Path:
    data = graph_view_data(store, max_nodes, seed)
    script = resources.files(__package__).joinpath("assets/graph_view.js").read_text(encoding="utf-8")
    subtitle = (f"{data['shown']} most connected of {data['total']} connected entities, "
                f"{len(data['edges'])} links shown")
    page = PAGE.format(title="scholargraph — knowledge graph", subtitle=html.escape(subtitle), data=_script_json(data),
                       script=script.replace("</", "<\\/"))
    path.write_text(page, encoding="utf-8")
    return path
