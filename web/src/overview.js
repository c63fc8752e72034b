// Overview: the whole graph at once, each community a cluster in its own colour; filter by entity
// type and by paper; labels only where they do not overlap (most connected first, more as you zoom
// in); beyond the limit only the most connected entities are drawn, and the page says so.
import { api, latestRequest } from "./api.js";
import { clear, entityLink, h } from "./dom.js";
import { colourOf, overviewGraph } from "./overview_graph.js";

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

  let communityTitles = new Map();
  const loading = latestRequest();

  function colour(d) {
    return colourBy.value === "type" ? colourOf(d.type) : colourOf(d.community ?? "none");
  }

  const graph = overviewGraph(canvas, colour);
  const { cy, state } = graph;
  window.__scholargraphOverview = state;

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
      const data = await api(`/api/graph/overview?${params}`, { signal: loading.next() });
      communityTitles = new Map(data.communities.map((c) => [c.id, c.title]));
      const current = typeSelect.value;
      clear(typeSelect, h("option", { value: "" }, "all types"),
        Object.entries(data.types).map(([t, n]) => h("option", { value: t, selected: t === current }, `${t || "?"} (${n})`)));
      graph.show(data);
      const shown = `${data.nodes.length.toLocaleString("en")} entities · ${data.edges.length.toLocaleString("en")} relations · ${data.communities.length} communities`;
      clear(notice, data.sampled
        ? h("span", { class: "warn-text", "data-testid": "overview-sampled" },
          `Showing the ${data.nodes.length.toLocaleString("en")} most connected of ${data.total_nodes.toLocaleString("en")} entities (limit ${data.limit.toLocaleString("en")}); filter by type or paper, or raise the limit, to see others. ${shown}`)
        : data.nodes.length ? shown : "No entity matches these filters.");
      showLegend();
    } catch (err) {
      if (err.name !== "AbortError") clear(notice, h("span", { class: "error" }, err.message));
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
    graph.recolour();
    showLegend();
  });

  api("/api/documents").then((data) => {
    const papers = data.documents.filter((d) => d.status === "PROCESSED");
    const wanted = where?.params.get("document") || "";
    paperSelect.append(...papers.map((d) => h("option", { value: d.id, selected: d.id === wanted }, (d.title || d.id).slice(0, 80))));
    if (wanted) paperSelect.value = wanted;
    load();
  }).catch(() => load());

  return { unmount: () => { loading.abort(); graph.destroy(); delete window.__scholargraphOverview; } };
}
