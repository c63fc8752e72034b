// Graph explorer: search an entity, expand neighbours, colour by type or community, edge evidence,
// merge and split entities.
import cytoscape from "cytoscape";
import { api, latestRequest } from "./api.js";
import { clear, h, pages } from "./dom.js";

const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
  "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf"];

function colourOf(key) {
  let hash = 0;
  for (const ch of String(key || "?")) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export function graphView(root, info, where) {
  const admin = info.role === "admin";
  const search = h("input", { type: "search", placeholder: "Search an entity…", "data-testid": "entity-search" });
  const results = h("ul", { class: "results", "data-testid": "entity-results" });
  const colourBy = h("select", { "data-testid": "colour-by" },
    h("option", { value: "type" }, "colour by type"),
    h("option", { value: "community", disabled: !info.communities }, info.communities ? "colour by community" : "colour by community (n/a)"));
  const counter = h("span", { class: "muted", "data-testid": "graph-count" }, "0 nodes · 0 edges");
  const legend = h("div", { class: "legend" });
  const canvas = h("div", { class: "cy", "data-testid": "graph-canvas" });
  const details = h("aside", { class: "details", "data-testid": "graph-details" }, h("p", { class: "muted" }, "Search an entity and click it to start; click a node to expand it, an edge for its evidence."));
  const clearButton = h("button", { type: "button", onclick: () => { cy.elements().remove(); update(); } }, "Clear");
  root.append(h("section", { class: "graph" },
    h("div", { class: "graph-side" }, search, results),
    h("div", { class: "graph-main" }, h("div", { class: "row" }, colourBy, clearButton, counter), canvas, legend),
    details));

  const cy = cytoscape({
    container: canvas,
    wheelSensitivity: 0.3,
    style: [
      { selector: "node", style: { label: "data(name)", "background-color": "data(colour)", "font-size": 10, color: "#222",
        width: "mapData(degree, 1, 40, 14, 44)", height: "mapData(degree, 1, 40, 14, 44)", "text-valign": "bottom", "text-margin-y": 3 } },
      { selector: "node.expanded", style: { "border-width": 2, "border-color": "#333" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#000" } },
      { selector: "edge", style: { width: "mapData(weight, 0, 20, 1, 6)", "line-color": "#b8c2cc", "curve-style": "bezier", opacity: 0.9 } },
      { selector: "edge[?directed]", style: { "target-arrow-shape": "triangle", "target-arrow-color": "#b8c2cc" } },
      { selector: "edge:selected", style: { "line-color": "#e15759", "target-arrow-color": "#e15759" } },
    ],
  });
  window.__scholargraph = { cy };
  let communities = null;

  function colour(node) {
    if (colourBy.value === "community" && communities) return colourOf(communities.get(node.id) ?? "none");
    return colourOf(node.type);
  }

  function update() {
    cy.nodes().forEach((n) => n.data("colour", colour(n.data())));
    counter.textContent = `${cy.nodes().length} nodes · ${cy.edges().length} edges`;
    const keys = new Map();
    cy.nodes().forEach((n) => {
      const key = colourBy.value === "community" && communities ? `community ${communities.get(n.id()) ?? "–"}` : (n.data("type") || "?");
      keys.set(key, n.data("colour"));
    });
    clear(legend, [...keys].slice(0, 20).map(([k, c]) => h("span", { class: "key" }, h("i", { style: `background:${c}` }), k)));
  }

  function add(view, center) {
    const fresh = [];
    const anchor = center && !cy.getElementById(center).empty() ? cy.getElementById(center).position() : { x: 0, y: 0 };
    view.nodes.forEach((n, i) => {
      if (!cy.getElementById(n.id).empty()) { cy.getElementById(n.id).data({ ...n, colour: colour(n) }); return; }
      const angle = (2 * Math.PI * i) / Math.max(view.nodes.length, 1);
      const position = { x: anchor.x + 120 * Math.cos(angle), y: anchor.y + 120 * Math.sin(angle) };
      fresh.push(cy.add({ group: "nodes", data: { ...n, colour: colour(n) }, position }));
    });
    for (const e of view.edges) {
      if (cy.getElementById(e.id).empty() && !cy.getElementById(e.source).empty() && !cy.getElementById(e.target).empty()) {
        cy.add({ group: "edges", data: { ...e, id: e.id } });
      }
    }
    if (center) cy.getElementById(center).addClass("expanded");
    const layout = cy.layout({ name: "cose", animate: false, randomize: false, nodeRepulsion: 12000, idealEdgeLength: 110,
      nodeOverlap: 20, fit: true, padding: 30 });
    layout.run();
    update();
    return fresh.length;
  }

  async function expand(id) {
    try {
      const view = await api(`/api/graph/neighbourhood?entity=${encodeURIComponent(id)}&limit=40`);
      add(view, view.center);
      select(view.center);
    } catch (err) {
      clear(details, h("p", { class: "error" }, err.message));
    }
  }

  function select(id) {
    const node = cy.getElementById(id);
    if (node.empty()) return;
    cy.elements().unselect();
    node.select();
    const d = node.data();
    const mergeInput = h("input", { placeholder: "names or ids, comma-separated", "data-testid": "merge-input" });
    const status = h("div", { class: "small" });
    clear(details,
      h("h3", { "data-testid": "node-name" }, d.name),
      h("div", { class: "meta" }, h("span", { class: "pill" }, d.type || "?"), ` degree ${d.degree} · ${d.documents} paper(s)`),
      d.aliases?.length ? h("div", { class: "small" }, "Also: " + d.aliases.join(", ")) : null,
      h("p", {}, d.description),
      h("div", { class: "row" }, h("button", { type: "button", "data-testid": "expand", onclick: () => expand(d.id) }, "Expand neighbours")),
      admin ? h("details", {}, h("summary", {}, "Correct the graph"),
        h("div", { class: "row" }, mergeInput, h("button", { type: "button", onclick: () => merge(d.id, mergeInput.value, status) }, "Merge into this")),
        h("div", { class: "row" }, h("button", { type: "button", class: "danger", onclick: () => split(d.id, status) }, "Split into its names")),
        status) : null);
  }

  async function merge(keep, text, status) {
    const others = text.split(",").map((s) => s.trim()).filter(Boolean);
    if (!others.length) return;
    try {
      const res = await api("/api/entities/merge", { method: "POST", body: { keep, others } });
      if (res.job.status === "failed") throw new Error(res.job.error);
      status.textContent = `merged ${res.job.result?.merged?.length ?? 0} entit(ies)`;
      cy.elements().remove();
      await expand(res.job.result?.kept || keep);
    } catch (err) { status.textContent = err.message; }
  }

  async function split(id, status) {
    try {
      const res = await api("/api/entities/split", { method: "POST", body: { entity: id } });
      if (res.job.status === "failed") throw new Error(res.job.error);
      status.textContent = `split into ${res.job.result.entities.length}`;
      cy.elements().remove();
      for (const e of res.job.result.entities) await expand(e);
    } catch (err) { status.textContent = err.message; }
  }

  async function showEdge(edge) {
    clear(details, h("p", { class: "muted" }, "Loading evidence…"));
    try {
      const r = await api(`/api/graph/relations/${encodeURIComponent(edge.id())}`);
      clear(details,
        h("h3", { "data-testid": "edge-title" }, `${r.source.name} — ${r.target.name}`),
        h("p", {}, r.description),
        r.keywords?.length ? h("div", { class: "small" }, "Keywords: " + r.keywords.join(", ")) : null,
        h("h4", {}, "Evidence"),
        h("ul", { class: "evidence", "data-testid": "evidence" }, r.evidence.map((e) => h("li", {},
          h("div", { class: "small" }, [e.title, e.section ? `§ ${e.section}` : null, pages(e.page_start, e.page_end)].filter(Boolean).join(" · ")),
          e.sentences.length ? e.sentences.map((s) => h("blockquote", {}, s)) : h("span", { class: "muted" }, "(no sentence names both)")))));
    } catch (err) {
      clear(details, h("p", { class: "error" }, err.message));
    }
  }

  cy.on("tap", "node", (e) => {
    const id = e.target.id();
    if (e.target.hasClass("expanded")) select(id);
    else expand(id);
  });
  cy.on("tap", "edge", (e) => showEdge(e.target));

  const searching = latestRequest();
  async function find() {
    const q = search.value.trim();
    try {
      const data = await api(`/api/entities?limit=30${q ? "&search=" + encodeURIComponent(q) : ""}`, { signal: searching.next() });
      clear(results, data.entities.map((e) => h("li", {},
        h("button", { type: "button", class: "link", "data-entity-id": e.id, onclick: () => expand(e.id) },
          h("span", { class: "dot", style: `background:${colourOf(e.type)}` }), `${e.name}`, h("span", { class: "muted small" }, ` ${e.type} · ${e.degree}`)))));
      if (!data.entities.length) clear(results, h("li", { class: "muted" }, q ? "No entity matches." : "The graph is empty."));
    } catch (err) {
      if (err.name !== "AbortError") clear(results, h("li", { class: "error" }, err.message));
    }
  }
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(find, 250); });

  colourBy.addEventListener("change", async () => {
    if (colourBy.value === "community" && !communities) {
      try {
        const data = await api("/api/graph/communities?reports=false");
        communities = new Map();
        for (const c of data.communities || []) for (const m of c.members || []) if (!communities.has(m)) communities.set(m, c.id);
      } catch (err) {
        colourBy.value = "type";
        clear(legend, h("span", { class: "error" }, err.message));
        return;
      }
    }
    update();
  });

  find();
  const start = where?.params.get("entity");
  if (start) expand(start);
  return { unmount: () => { searching.abort(); cy.destroy(); delete window.__scholargraph; } };
}
