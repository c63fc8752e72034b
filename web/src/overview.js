// Overview: the whole graph at once, each community a cluster in its own colour; filter by entity
// type and by paper; labels only where they do not overlap (most connected first, more as you zoom
// in); beyond the limit only the most connected entities are drawn, and the page says so.
import cytoscape from "cytoscape";
import { api } from "./api.js";
import { clear, entityLink, h } from "./dom.js";

const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
  "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#bcbd22"];
const FONT = "11px Helvetica, Arial, sans-serif";
const LABEL_PX = 11;
const MAX_LABELS = 250;

function colourOf(key) {
  let hash = 0;
  for (const ch of String(key ?? "?")) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

const measure = (() => {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = FONT;
  return (text) => ctx.measureText(text).width;
})();

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

export function overviewView(root, info, where) {
  const typeSelect = h("select", { "data-testid": "overview-type" }, h("option", { value: "" }, "all types"));
  const paperSelect = h("select", { "data-testid": "overview-paper" }, h("option", { value: "" }, "all papers"));
  const limitSelect = h("select", { "data-testid": "overview-limit" },
    [...new Set([500, 1500, 3000, 5000, Number(where?.params.get("limit")) || 1500])].sort((a, b) => a - b)
      .map((n) => h("option", { value: String(n), selected: n === (Number(where?.params.get("limit")) || 1500) }, `at most ${n.toLocaleString("en")} entities`)));
  const colourBy = h("select", { "data-testid": "overview-colour" },
    h("option", { value: "community" }, "colour by community"), h("option", { value: "type" }, "colour by type"));
  const notice = h("div", { class: "muted small", "data-testid": "overview-notice" }, "Loading the graph…");
  const legend = h("div", { class: "legend", "data-testid": "overview-legend" });
  const canvas = h("div", { class: "cy overview-cy", "data-testid": "overview-canvas" });
  const details = h("aside", { class: "details", "data-testid": "overview-details" },
    h("p", { class: "muted" }, "Each colour is a community of closely related entities. Scroll to zoom: more labels appear as there is room. Click a node for its details."));
  root.append(h("section", { class: "overview" },
    h("div", { class: "graph-main" }, h("div", { class: "row" }, typeSelect, paperSelect, limitSelect, colourBy), notice, canvas, legend),
    details));

  const cy = cytoscape({
    container: canvas, wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 8, textureOnViewport: true,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", width: "data(size)", height: "data(size)",
        label: "", "font-size": "data(fs)", "font-family": "Helvetica, Arial, sans-serif", color: "#1d2330",
        "text-valign": "bottom", "text-margin-y": 1, "min-zoomed-font-size": 0, "border-width": 0 } },
      { selector: "node.labelled", style: { label: "data(name)", "text-background-color": "#fff", "text-background-opacity": 0.7 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#000" } },
      { selector: "edge", style: { width: 0.6, "line-color": "#c9d1db", opacity: 0.6, "curve-style": "haystack" } },
    ],
  });
  const state = { cy, labelled: 0, data: null };
  window.__scholargraphOverview = state;
  let communityTitles = new Map();

  function colour(d) {
    return colourBy.value === "type" ? colourOf(d.type) : colourOf(d.community ?? "none");
  }

  function relabel() {
    const zoom = cy.zoom();
    const nodes = cy.nodes().map((n) => {
      const p = n.renderedPosition();
      return { id: n.id(), name: n.data("name"), degree: n.data("degree"), x: p.x, y: p.y, r: (n.data("size") * zoom) / 2 };
    });
    const chosen = placeLabels(nodes, canvas.clientWidth, canvas.clientHeight);
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

  function showLegend() {
    if (!state.data) return;
    const counts = new Map();
    for (const n of state.data.nodes) {
      const key = colourBy.value === "type" ? n.type || "?" : n.community ?? "none";
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    const keys = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 16);
    clear(legend, keys.map(([k, n]) => h("span", { class: "key", "data-testid": "legend-key" }, h("i", { style: `background:${colourOf(k)}` }),
      colourBy.value === "type" ? `${k} (${n})` : `${communityTitles.get(k) || (k === "none" ? "no community" : `community ${k}`)} (${n})`)));
  }

  async function load() {
    const params = new URLSearchParams({ limit: limitSelect.value });
    if (typeSelect.value) params.set("type", typeSelect.value);
    if (paperSelect.value) params.set("document", paperSelect.value);
    clear(notice, "Loading the graph…");
    try {
      const data = await api(`/api/graph/overview?${params}`);
      state.data = data;
      communityTitles = new Map(data.communities.map((c) => [c.id, c.title]));
      const current = typeSelect.value;
      clear(typeSelect, h("option", { value: "" }, "all types"),
        Object.entries(data.types).map(([t, n]) => h("option", { value: t, selected: t === current }, `${t || "?"} (${n})`)));
      const maxDegree = Math.max(1, ...data.nodes.map((n) => n.degree));
      cy.batch(() => {
        cy.elements().remove();
        cy.add(data.nodes.map((n) => ({ group: "nodes", position: { x: n.x, y: n.y },
          data: { ...n, colour: colour(n), size: 6 + 22 * Math.sqrt(n.degree / maxDegree), fs: LABEL_PX } })));
        cy.add(data.edges.map((e) => ({ group: "edges", data: { id: `e:${e.id}`, source: e.source, target: e.target } })));
      });
      cy.layout({ name: "preset", fit: true, padding: 20 }).run();
      const shown = `${data.nodes.length.toLocaleString("en")} entities · ${data.edges.length.toLocaleString("en")} relations · ${data.communities.length} communities`;
      clear(notice, data.sampled
        ? h("span", { class: "warn-text", "data-testid": "overview-sampled" },
          `Showing the ${data.nodes.length.toLocaleString("en")} most connected of ${data.total_nodes.toLocaleString("en")} entities (limit ${data.limit.toLocaleString("en")}); filter by type or paper, or raise the limit, to see others. ${shown}`)
        : data.nodes.length ? shown : "No entity matches these filters.");
      showLegend();
      relabel();
    } catch (err) {
      clear(notice, h("span", { class: "error" }, err.message));
    }
  }

  cy.on("tap", "node", (e) => {
    const d = e.target.data();
    clear(details,
      h("h3", { "data-testid": "overview-node" }, d.name),
      h("div", { class: "meta" }, h("span", { class: "pill" }, d.type || "?"), ` degree ${d.degree}`),
      d.community ? h("div", {}, `Community: ${communityTitles.get(d.community) || d.community}`) : null,
      h("p", {}, entityLink(d.id, "Explore its neighbours in the graph")));
  });

  for (const select of [typeSelect, paperSelect, limitSelect]) select.addEventListener("change", load);
  colourBy.addEventListener("change", () => {
    cy.nodes().forEach((n) => n.data("colour", colour(n.data())));
    showLegend();
  });

  api("/api/documents").then((data) => {
    const papers = data.documents.filter((d) => d.status === "PROCESSED");
    const wanted = where?.params.get("document") || "";
    paperSelect.append(...papers.map((d) => h("option", { value: d.id, selected: d.id === wanted }, (d.title || d.id).slice(0, 80))));
    if (wanted) paperSelect.value = wanted;
    load();
  }).catch(() => load());

  return { unmount: () => { clearTimeout(pending); cy.destroy(); delete window.__scholargraphOverview; } };
}
