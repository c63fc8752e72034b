import "./style.css";
import { api } from "./api.js";
import { clear, h } from "./dom.js";
import { libraryView } from "./library.js";
import { askView } from "./ask.js";
import { graphView } from "./graph.js";
import { statsView } from "./stats.js";

const views = { library: libraryView, ask: askView, graph: graphView, stats: statsView };
const root = document.getElementById("view");
let current = null;
let info = null;

function route() {
  const name = (location.hash.replace(/^#\/?/, "").split("?")[0] || "library").split("/")[0];
  const view = views[name] ? name : "library";
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === view);
  if (current && current.unmount) current.unmount();
  clear(root);
  current = views[view](root, info);
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
