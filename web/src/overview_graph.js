// The whole-graph drawing, one viewer for two pages: the web app's Overview and the offline page
// `scholargraph plot` writes (graph.html, built from offline.js). Positions come from Python
// (analysis/overview.py); cytoscape draws them (preset layout) and labels go only where they do not
// overlap, most connected first, again after every zoom or pan.
import cytoscape from "cytoscape";

const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
  "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#bcbd22"];
const FONT = "11px Helvetica, Arial, sans-serif";
const LABEL_PX = 11;
const MAX_LABELS = 250;

export function colourOf(key) {
  let hash = 0;
  for (const ch of String(key ?? "?")) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

let measureContext = null;
function measure(text) {
  if (!measureContext) {
    measureContext = document.createElement("canvas").getContext("2d");
    measureContext.font = FONT;
  }
  return measureContext.measureText(text).width;
}

// Greedy label placement in screen pixels: the most connected visible node first; a label is drawn
// only when its box meets no box already placed. Returns the ids that get a label.
export function placeLabels(nodes, width, height) {
  const placed = [];
  const chosen = new Set();
  const visible = nodes.filter((n) => n.x >= 0 && n.y >= 0 && n.x <= width && n.y <= height)
    .sort((a, b) => b.degree - a.degree);
  for (const n of visible) {
    if (chosen.size >= MAX_LABELS) break;
    const w = measure(n.name) + 6;
    const box = { x0: n.x - w / 2, x1: n.x + w / 2, y0: n.y + n.r + 1, y1: n.y + n.r + LABEL_PX + 5 };
    if (placed.some((b) => box.x0 < b.x1 && b.x0 < box.x1 && box.y0 < b.y1 && b.y0 < box.y1)) continue;
    placed.push(box);
    chosen.add(n.id);
  }
  return chosen;
}

// Draws overview data ({nodes: [{id, name, type, degree, community, x, y}], edges: [{id, source,
// target}]}) into `container`; `colour(node)` picks a node's colour. `state.labelled` counts the
// labels shown.
export function overviewGraph(container, colour) {
  const cy = cytoscape({
    container, wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 8, textureOnViewport: true,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", width: "data(size)", height: "data(size)",
        label: "", "font-size": "data(fs)", "font-family": "Helvetica, Arial, sans-serif", color: "#1d2330",
        "text-valign": "bottom", "text-margin-y": 1, "min-zoomed-font-size": 0, "border-width": 0 } },
      { selector: "node.labelled", style: { label: "data(name)", "text-background-color": "#fff", "text-background-opacity": 0.7 } },
      { selector: "node.found", style: { label: "data(name)", "border-width": 2, "border-color": "#000" } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#000" } },
      { selector: "node.faded, edge.faded", style: { opacity: 0.12 } },
      { selector: ".hidden", style: { display: "none" } },
      { selector: "edge", style: { width: 0.6, "line-color": "#c9d1db", opacity: 0.6, "curve-style": "haystack" } },
      { selector: "edge.near", style: { "line-color": "#333", opacity: 0.9 } },
    ],
  });
  const state = { cy, labelled: 0, data: null };

  function relabel() {
    const zoom = cy.zoom();
    const nodes = cy.nodes(":visible").map((n) => {
      const p = n.renderedPosition();
      return { id: n.id(), name: n.data("name"), degree: n.data("degree"), x: p.x, y: p.y, r: (n.data("size") * zoom) / 2 };
    });
    const chosen = placeLabels(nodes, container.clientWidth, container.clientHeight);
    cy.batch(() => {
      cy.nodes().forEach((n) => {
        n.data("fs", LABEL_PX / zoom);
        n.toggleClass("labelled", chosen.has(n.id()));
      });
    });
    state.labelled = chosen.size;
  }
  let pending = null;
  const relabelSoon = () => { clearTimeout(pending); pending = setTimeout(relabel, 120); };
  cy.on("viewport", relabelSoon);

  function show(data) {
    state.data = data;
    const maxDegree = Math.max(1, ...data.nodes.map((n) => n.degree));
    cy.batch(() => {
      cy.elements().remove();
      cy.add(data.nodes.map((n) => ({ group: "nodes", position: { x: n.x, y: n.y },
        data: { ...n, colour: colour(n), size: 6 + 22 * Math.sqrt(n.degree / maxDegree), fs: LABEL_PX } })));
      cy.add(data.edges.map((e) => ({ group: "edges", data: { id: `e:${e.id}`, source: e.source, target: e.target } })));
    });
    cy.layout({ name: "preset", fit: true, padding: 20 }).run();
    relabel();
  }

  function recolour() {
    cy.nodes().forEach((n) => n.data("colour", colour(n.data())));
  }

  // the node and its neighbours stand out, the rest fades (none: every node as before)
  function highlight(node) {
    cy.batch(() => {
      cy.elements().removeClass("faded near");
      if (!node) return;
      const near = node.closedNeighborhood();
      cy.elements().not(near).addClass("faded");
      near.edges().addClass("near");
    });
  }

  function destroy() {
    clearTimeout(pending);
    cy.destroy();
  }

  return { cy, state, show, recolour, relabel, highlight, destroy };
}
