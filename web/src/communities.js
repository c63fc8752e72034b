// Communities: each level's groups of closely related entities with their reports. Reports are
// written when first needed: those missing can be written here (LLM calls when one is configured,
// else extractive reports), and the page says which.
import { api, latestRequest } from "./api.js";
import { clear, entityLink, h, paperLink } from "./dom.js";

export function communitiesView(root, info) {
  const admin = info.role === "admin";
  const level = h("select", { "data-testid": "community-level" });
  const message = h("div", { class: "notice", "data-testid": "reports-message" });
  const write = h("button", { type: "button", class: "primary", "data-testid": "write-reports", hidden: true }, "Write the missing reports");
  const list = h("div", { class: "communities", "data-testid": "communities" }, h("p", { class: "muted" }, "Loading…"));
  root.append(h("section", {}, h("div", { class: "row" }, h("label", {}, "Level ", level), write), message, list));

  function card(c) {
    const title = c.title || `Community ${c.id}`;
    return h("article", { class: "community", "data-testid": "community", "data-community-id": c.id },
      h("h3", {}, title, h("span", { class: "muted small" }, ` · ${c.size ?? "?"} entities · ${c.relations ?? 0} relations`)),
      c.method ? h("div", { class: "small muted" }, c.method === "llm" ? `report written by the LLM${c.rating != null ? ` · rating ${c.rating}` : ""}` : "extractive report") : null,
      c.summary ? h("p", { "data-testid": "community-summary" }, c.summary)
        : h("p", { class: "muted", "data-testid": "community-no-report" }, c.method ? "" : "No report yet."),
      c.key_entities?.length ? h("div", { class: "chips" }, c.key_entities.map((e) => entityLink(e.id, e.name, { class: "chip", title: e.type }))) : null,
      c.papers?.length ? h("div", { class: "small" }, "Papers: ", c.papers.map((p, i) => [i ? "; " : "", paperLink(p.id, p.title || p.id)])) : null);
  }

  const loading = latestRequest();
  async function load() {
    try {
      const signal = loading.next();
      const [data, reports] = await Promise.all([
        api(`/api/graph/communities?reports=false${level.value ? `&level=${level.value}` : ""}`, { signal }),
        api("/api/graph/communities/reports", { signal })]);
      if (!level.options.length && data.levels.length) {
        clear(level, data.levels.map((l) => h("option", { value: String(l.level) }, `${l.level} (${l.communities} communities, modularity ${l.modularity})`)));
        level.value = String(data.levels[0].level);
        return load();
      }
      clear(message, reports.message);
      write.hidden = !admin || !reports.pending;
      write.textContent = reports.llm ? `Write the ${reports.pending} missing report(s) with the LLM` : `Write the ${reports.pending} missing report(s) (extractive)`;
      const rows = data.communities.filter((c) => !level.value || String(c.level) === level.value);
      clear(list, rows.length ? rows.map(card) : h("p", { class: "muted" }, "No communities yet."));
    } catch (err) {
      if (err.name !== "AbortError") clear(list, h("p", { class: "error" }, err.message));
    }
  }

  write.addEventListener("click", async () => {
    write.disabled = true;
    clear(message, "Writing reports…");
    try {
      let res = await api("/api/graph/communities/reports?wait=30", { method: "POST" });
      while (res.job.status === "queued" || res.job.status === "running") res = await api(`/api/jobs/${res.job.id}?wait=30`);
      if (res.job.status === "failed") throw new Error(res.job.error);
      await load();
      message.prepend(h("div", { "data-testid": "reports-written" }, `${res.job.result?.reports_written ?? 0} report(s) written. `));
    } catch (err) {
      clear(message, h("span", { class: "error" }, `Writing reports failed: ${err.message}`));
    } finally {
      write.disabled = false;
    }
  });
  level.addEventListener("change", load);
  load();
  return { unmount: () => loading.abort() };
}
