import "./style.css";
import { api } from "./api.js";
import { clear, h, hashRoute } from "./dom.js";
import { libraryView } from "./library.js";
import { askView } from "./ask.js";
import { graphView } from "./graph.js";
import { overviewView } from "./overview.js";
import { communitiesView } from "./communities.js";
import { paperView } from "./paper.js";
import { statsView } from "./stats.js";

const views = { library: libraryView, ask: askView, overview: overviewView, graph: graphView,
  communities: communitiesView, paper: paperView, stats: statsView };
const NAV = { paper: "library" };  // the tab a page belongs to
const root = document.getElementById("view");
let current = null;
let info = null;

function route() {
  const where = hashRoute();
  const view = views[where.view] ? where.view : "library";
  const tab = NAV[view] || view;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === tab);
  if (current && current.unmount) current.unmount();
  clear(root);
  current = views[view](root, info, where);
}

async function start() {
  try {
    info = await api("/api/info");
  } catch (err) {
    clear(root, h("p", { class: "error" }, `Cannot reach the scholargraph server: ${err.message}`));
    return;
  }
  const who = document.getElementById("whoami");
  clear(who,
    h("span", { class: "pill" }, info.workspace),
    h("span", { class: "pill" }, info.llm ? `LLM: ${info.model}` : "no LLM: extractive answers"),
    h("span", { class: `pill ${info.role === "admin" ? "" : "warn"}`, "data-testid": "role" },
      info.role === "admin" ? "admin" : "read-only"));
  document.body.classList.toggle("read-only", info.role !== "admin");
  window.addEventListener("hashchange", route);
  route();
}

start();
