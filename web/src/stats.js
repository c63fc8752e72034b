// Stats: graph counts, LLM usage by purpose, entity types, cost per paper, export.
import { api, download } from "./api.js";
import { clear, h } from "./dom.js";

const fmt = (n) => (n ?? 0).toLocaleString("en");

function table(headers, rows, testid) {
  return h("table", { class: "grid", "data-testid": testid },
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
}

export function statsView(root) {
  const box = h("section", { class: "stats", "data-testid": "stats" }, h("p", { class: "muted" }, "Loading…"));
  root.append(box);
  api("/api/stats").then((s) => {
    const cards = [["papers", s.papers ?? s.documents], ["chunks", s.chunks], ["entities", s.entities], ["relations", s.relations], ["keywords", s.keywords]];
    const maxType = Math.max(1, ...Object.values(s.entity_types));
    const u = s.usage;
    clear(box,
      h("div", { class: "cards" }, cards.map(([k, v]) => h("div", { class: "card", "data-testid": `stat-${k}` }, h("b", {}, fmt(v)), h("span", {}, k)))),
      h("p", { class: "muted" }, `Papers by status: ${Object.entries(s.documents_by_status).map(([k, v]) => `${k} ${v}`).join(" · ") || "none"}`,
        ` · embeddings: ${s.embedding_model || "–"} (${s.embedding_dim || "–"}-d)`),
      h("div", { class: "row" },
        h("button", { type: "button", onclick: () => download("/api/export?format=json", "scholargraph-graph.json") }, "Export graph (JSON)"),
        h("button", { type: "button", onclick: () => download("/api/export?format=graphml", "scholargraph-graph.graphml") }, "Export graph (GraphML)")),
      h("h3", {}, "LLM usage"),
      table(["purpose", "calls", "cached", "prompt tokens", "completion tokens", "total"],
        [...Object.entries(u.by_purpose).map(([p, x]) => [p, fmt(x.calls), fmt(x.cached_calls), fmt(x.prompt_tokens), fmt(x.completion_tokens), fmt(x.total_tokens)]),
          ["all", fmt(u.llm_calls), fmt(u.cached_calls), fmt(u.prompt_tokens), fmt(u.completion_tokens), fmt(u.total_tokens)]], "usage"),
      h("h3", {}, "Entity types"),
      h("div", { class: "bars" }, Object.entries(s.entity_types).slice(0, 25).map(([t, n]) => h("div", { class: "bar" },
        h("span", { class: "label" }, t), h("span", { class: "fill", style: `width:${(100 * n) / maxType}%` }), h("span", { class: "n" }, fmt(n))))),
      h("h3", {}, "Cost per paper"),
      s.cost_by_document.length
        ? table(["paper", "calls", "cached", "prompt tokens", "completion tokens", "total"],
          s.cost_by_document.map((d) => [d.title || d.id, fmt(d.llm_calls), fmt(d.cached_calls), fmt(d.prompt_tokens), fmt(d.completion_tokens), fmt(d.total_tokens)]), "cost")
        : h("p", { class: "muted" }, "No LLM calls recorded (offline extraction costs nothing)."));
  }).catch((err) => clear(box, h("p", { class: "error" }, err.message)));
  return {};
}
