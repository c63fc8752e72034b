// The offline graph page `scholargraph plot` writes (graph.html): the Overview's viewer over the data
// inlined in <script id="graph-data"> (analysis/graph_view.py), with no server and no network. A
// click shows a node's description, papers and neighbours; the legend hides a community; the search
// box marks the entities whose name holds the text. Built as one classic script into
// src/scholargraph/analysis/assets/graph_view.js (`make web`).
import { colourOf, overviewGraph } from "./overview_graph.js";

function text(tag, value, className) {
  const el = document.createElement(tag);
  el.textContent = value;
  if (className) el.className = className;
  return el;
}

function describe(panel, node, data, neighbours) {
  const titles = new Map(data.communities.map((c) => [c.id, c.title]));
  const head = document.createElement("p");
  head.append(text("b", node.name), " ", text("i", node.type || ""), document.createElement("br"), `degree ${node.degree}`);
  if (node.community) head.append(document.createElement("br"), `community: ${titles.get(node.community) || node.community}`);
  panel.replaceChildren(head);
  if (node.description) panel.append(text("p", node.description));
  if (node.papers.length) panel.append(text("p", `papers: ${node.papers.map((p) => data.papers[p] || p).join("; ")}`));
  if (neighbours.length) {
    panel.append(text("p", `neighbours: ${neighbours.slice(0, 30).join(", ")}${neighbours.length > 30 ? " …" : ""}`));
  }
}

function start() {
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const panel = document.getElementById("panel");
  const tip = document.getElementById("tip");
  const container = document.getElementById("view");
  const graph = overviewGraph(container, (n) => colourOf(n.community ?? "none"));
  const { cy } = graph;
  window.__scholargraphGraphView = graph.state;
  graph.show(data);
  const byId = new Map(data.nodes.map((n) => [n.id, n]));

  panel.textContent = data.help;
  cy.on("tap", (e) => {
    if (e.target === cy) {
      graph.highlight(null);
      panel.textContent = data.help;
    }
  });
  cy.on("tap", "node", (e) => {
    graph.highlight(e.target);
    describe(panel, byId.get(e.target.id()), data, e.target.neighborhood("node").map((n) => n.data("name")));
  });
  cy.on("mouseover", "node", (e) => {
    const d = e.target.data();
    const p = e.renderedPosition || e.target.renderedPosition();
    tip.replaceChildren(text("b", d.name), ` (${d.type || "?"}, degree ${d.degree})`);
    tip.style.left = `${p.x + 14}px`;
    tip.style.top = `${p.y + 14}px`;
    tip.style.display = "block";
  });
  cy.on("mouseout", "node", () => { tip.style.display = "none"; });

  const legend = document.getElementById("legend");
  for (const c of data.communities) {
    const item = text("div", "", "item");
    const dot = text("span", "", "dot");
    dot.style.background = colourOf(c.id);
    item.append(dot, `${c.title || c.id} (${c.shown})`);
    item.title = "click to hide or show";
    item.addEventListener("click", () => {
      const hide = item.style.opacity !== "0.35";
      item.style.opacity = hide ? "0.35" : "1";
      cy.nodes().filter((n) => n.data("community") === c.id).toggleClass("hidden", hide);
      graph.relabel();
    });
    legend.append(item);
  }

  document.getElementById("search").addEventListener("input", (ev) => {
    const q = ev.target.value.trim().toLowerCase();
    cy.batch(() => {
      cy.nodes().removeClass("found");
      if (q.length >= 2) cy.nodes().filter((n) => n.data("name").toLowerCase().includes(q)).addClass("found");
    });
  });
}

start();
