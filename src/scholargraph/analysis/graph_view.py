"""A self-contained interactive HTML view of the entity graph (seed 001 Fig. 2): one file, the data
and the viewer inlined, so it opens offline. The viewer is the web app's Overview (``web/src/
overview_graph.js`` with ``web/src/offline.js``), built by ``make web`` into ``assets/graph_view.js``.

The data is the Overview's (:func:`.overview.overview`: the most connected ``max_nodes`` entities,
placed by a seeded layout that keeps each level-0 community together, coloured by community) with
each entity's description and papers: hover shows a node, a click its description, papers and
neighbours, the legend hides communities and the search box finds names.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path

from ..store.base import BrowseStore
from .overview import overview

DESCRIPTION_CHARS = 300
PAPERS_PER_ENTITY = 5
HELP = ("Drag to pan, scroll to zoom, click a node for its description, papers and neighbours; click a community "
        "in the legend to hide it; type in the search box to find entities.")


def graph_view_data(store: BrowseStore, max_nodes: int = 1500, seed: int = 42) -> dict:
    """The Overview's record (nodes, edges, communities, totals) with each node's ``description``
    (cut to a few sentences) and ``papers`` (ids; ``papers`` maps them to "title (year)")."""
    data = overview(store, max_nodes, seed=seed)
    entities = store.get_entities([n["id"] for n in data["nodes"]], sources=True)
    docs = store.documents_by_id({d for e in entities.values() for d in e.document_ids[:PAPERS_PER_ENTITY]})
    for node in data["nodes"]:
        e = entities.get(node["id"])
        desc = " ".join((e.description if e else "").split())
        node["description"] = desc[:DESCRIPTION_CHARS] + ("…" if len(desc) > DESCRIPTION_CHARS else "")
        node["papers"] = [d for d in (e.document_ids[:PAPERS_PER_ENTITY] if e else []) if d in docs]
    data["papers"] = {d: f"{row.title} ({row.year})" if row.year else row.title for d, row in docs.items()}
    data["help"] = HELP
    return data


def _script_json(data: dict) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ margin: 0; font: 13px sans-serif; display: flex; height: 100vh; }}
#main {{ flex: 1; position: relative; }}
#view {{ position: absolute; inset: 0; }}
#side {{ width: 320px; overflow: auto; border-left: 1px solid #ddd; padding: 8px; box-sizing: border-box; }}
#tip {{ position: absolute; z-index: 10; display: none; background: #fff; border: 1px solid #aaa; padding: 3px 6px; pointer-events: none; }}
#search {{ width: 100%; box-sizing: border-box; margin-bottom: 6px; }}
.item {{ cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.dot {{ display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 5px; }}
</style></head>
<body><div id="main"><div id="view"></div><div id="tip"></div></div>
<div id="side"><b>{title}</b><p>{subtitle}</p><input id="search" placeholder="find an entity…">
<div id="panel"></div><h4>Communities (level 0)</h4><div id="legend"></div></div>
<script id="graph-data" type="application/json">{data}</script>
<script>{script}</script>
</body></html>
"""


def write_graph_view(store: BrowseStore, path: Path, max_nodes: int = 1500, seed: int = 42) -> Path:
    data = graph_view_data(store, max_nodes, seed)
    script = resources.files(__package__).joinpath("assets/graph_view.js").read_text(encoding="utf-8")
    subtitle = (f"{len(data['nodes'])} most connected of {data['total_nodes']} entities, "
                f"{len(data['edges'])} links shown")
    page = PAGE.format(title="scholargraph — knowledge graph", subtitle=html.escape(subtitle), data=_script_json(data),
                       script=script.replace("</", "<\\/"))
    path.write_text(page, encoding="utf-8")
    return path
