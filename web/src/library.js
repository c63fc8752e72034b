// Library: drag-and-drop upload, live status per paper, scope with "index full text", failures, delete;
// search, sort by column, filter by status and year, pages served by the server.
import { api, events, latestRequest } from "./api.js";
import { authorsText, clear, h, paperLink, throttle } from "./dom.js";

const STATUS_CLASS = { PROCESSED: "ok", FAILED: "bad", PENDING: "wait", PROCESSING: "busy" };

export function libraryView(root, info, where) {
  const admin = info.role === "admin";
  const controller = new AbortController();
  const scope = h("select", { "data-testid": "scope" },
    h("option", { value: "full" }, "full text"), h("option", { value: "intro" }, "intro only (title, abstract, introduction)"));
  const input = h("input", { type: "file", multiple: true, "data-testid": "file-input", hidden: true,
    accept: ".pdf,.nxml,.xml,.json,.jsonl,.csv,.tsv,.txt,.md,.markdown,.html,.htm,.zip" });
  const drop = h("div", { class: "drop", "data-testid": "drop-zone", tabindex: "0" },
    h("strong", {}, "Drop papers here"), " or ",
    h("button", { type: "button", onclick: () => input.click() }, "choose files"),
    h("div", { class: "hint" },
      `PDF, JATS/PubMed XML, CSV, JSON, Markdown, text, HTML or a zip of them · up to ${info.limits.max_files} files, ${info.limits.max_file_mb} MB each`),
    h("label", {}, "Index: ", scope));
  const notice = h("div", { class: "notice", "data-testid": "upload-notice" });
  const jobsBox = h("div", { class: "jobs", "data-testid": "jobs" });
  const tbody = h("tbody");
  const query = { search: "", status: "", year: "", sort: "title", order: "asc", offset: 0,
    limit: Math.min(Math.max(Number(where?.params.get("limit")) || 50, 1), 500) };
  const COLUMNS = [["Title", "title"], ["Authors", "authors"], ["Year", "year"], ["File", null], ["Status", "status"],
    ["Scope", null], ["Chunks", null], ["", null]];
  const headRow = h("tr");
  const table = h("table", { class: "docs", "data-testid": "documents" }, h("thead", {}, headRow), tbody);
  const empty = h("p", { class: "muted", "data-testid": "empty" }, "No papers yet.");
  const searchInput = h("input", { type: "search", placeholder: "Search title, authors, venue, DOI, file…", "data-testid": "library-search", size: "40" });
  const statusSelect = h("select", { "data-testid": "library-status" }, h("option", { value: "" }, "any status"));
  const yearSelect = h("select", { "data-testid": "library-year" }, h("option", { value: "" }, "any year"));
  const sizeSelect = h("select", { "data-testid": "library-page-size" }, [...new Set([25, 50, 100, 200, query.limit])].sort((a, b) => a - b).map((n) => h("option", { value: String(n), selected: n === query.limit }, `${n} per page`)));
  const prev = h("button", { type: "button", "data-testid": "library-prev" }, "‹ Previous");
  const next = h("button", { type: "button", "data-testid": "library-next" }, "Next ›");
  const range = h("span", { class: "muted", "data-testid": "library-range" });
  const controls = h("div", { class: "row" }, searchInput, statusSelect, yearSelect, sizeSelect, prev, range, next);
  root.append(h("section", { class: "library" }, admin ? drop : null, input, notice, jobsBox, controls, table, empty));

  function header() {
    clear(headRow, COLUMNS.map(([label, key]) => {
      if (!key) return h("th", {}, label);
      const active = query.sort === key;
      return h("th", {}, h("button", { type: "button", class: "link sort", "data-sort": key, "aria-sort": active ? (query.order === "asc" ? "ascending" : "descending") : "none",
        onclick: () => { query.order = active && query.order === "asc" ? "desc" : "asc"; query.sort = key; query.offset = 0; header(); refresh(); } },
      label, active ? (query.order === "asc" ? " ▲" : " ▼") : ""));
    }));
  }
  header();
  let typing = null;
  searchInput.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => { query.search = searchInput.value.trim(); query.offset = 0; refresh(); }, 250); });
  statusSelect.addEventListener("change", () => { query.status = statusSelect.value; query.offset = 0; refresh(); });
  yearSelect.addEventListener("change", () => { query.year = yearSelect.value; query.offset = 0; refresh(); });
  sizeSelect.addEventListener("change", () => { query.limit = Number(sizeSelect.value); query.offset = 0; refresh(); });
  prev.addEventListener("click", () => { query.offset = Math.max(0, query.offset - query.limit); refresh(); });
  next.addEventListener("click", () => { query.offset += query.limit; refresh(); });

  function options(select, counts, current, label) {
    clear(select, h("option", { value: "" }, label),
      Object.entries(counts).map(([k, n]) => h("option", { value: k, selected: k === current }, `${k} (${n})`)));
    if (current && !(current in counts)) select.append(h("option", { value: current, selected: true }, current));
  }

  async function upload(files) {
    if (!files.length) return;
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    form.append("scope", scope.value);
    clear(notice, h("span", {}, `Uploading ${files.length} file(s)…`));
    try {
      const res = await api("/api/uploads", { method: "POST", form });
      showUpload(res);
    } catch (err) {
      const rejected = err.data?.rejected || [];
      clear(notice, h("div", { class: "error" }, `Upload refused: ${err.message}`),
        rejected.map((r) => h("div", { class: "error" }, `${r.name}: ${r.error}`)));
    }
    refresh();
  }

  function showUpload(res) {
    clear(notice,
      h("div", {}, `Accepted ${res.files.length} file(s) for indexing.`),
      (res.rejected || []).map((r) => h("div", { class: "error" }, `${r.name}: ${r.error}`)));
  }

  input.addEventListener("change", () => { upload([...input.files]); input.value = ""; });
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    upload([...e.dataTransfer.files]);
  });

  async function act(label, request) {
    try {
      const res = await request();
      clear(notice, h("div", {}, `${label}: job ${res.job.id} ${res.job.status}`));
    } catch (err) {
      clear(notice, h("div", { class: "error" }, `${label} failed: ${err.message}`));
    }
    refresh();
  }

  function row(doc) {
    const actions = h("td", { class: "actions" });
    if (admin && doc.scope === "intro" && doc.status === "PROCESSED") {
      actions.append(h("button", { type: "button", "data-testid": "upgrade",
        onclick: () => act("Index full text", () => api("/api/documents/upgrade", { method: "POST", body: { ids: [doc.id], scope: "full" } })) },
      "Index full text"));
    }
    if (admin) {
      actions.append(h("button", { type: "button", class: "danger", "data-testid": "delete",
        onclick: () => { if (confirm(`Delete "${doc.title}" and everything only it supports?`)) act("Delete", () => api(`/api/documents/${encodeURIComponent(doc.id)}`, { method: "DELETE" })); } },
      "Delete"));
    }
    const authors = doc.authors || [];
    const main = h("tr", { "data-doc-id": doc.id },
      h("td", { class: "title" }, doc.status === "PROCESSED" ? paperLink(doc.id, doc.title || doc.id, { "data-testid": "paper-link" }) : doc.title || doc.id,
        h("div", { class: "muted small" }, doc.id)),
      h("td", { class: "authors", "data-testid": "authors", title: authors.join(", ") }, authorsText(authors, 2)),
      h("td", { "data-testid": "year" }, doc.year ? String(doc.year) : ""),
      h("td", {}, doc.file_name || ""),
      h("td", {}, h("span", { class: `status ${STATUS_CLASS[doc.status] || ""}`, "data-testid": "status" }, doc.status)),
      h("td", {}, doc.scope || ""),
      h("td", {}, String(doc.chunks ?? "")),
      actions);
    const rows = [main];
    if (doc.error) rows.push(h("tr", { class: "error-row" }, h("td", { colspan: "8", class: "error" }, doc.error)));
    return rows;
  }

  const listing = latestRequest(controller.signal);
  async function refresh() {
    try {
      const params = new URLSearchParams({ sort: query.sort, order: query.order, offset: String(query.offset), limit: String(query.limit) });
      for (const key of ["search", "status", "year"]) if (query[key]) params.set(key, query[key]);
      const data = await api(`/api/library?${params}`, { signal: listing.next() });
      if (data.total && query.offset >= data.total) { query.offset = Math.max(0, Math.floor((data.total - 1) / query.limit) * query.limit); return refresh(); }
      clear(tbody, data.documents.map(row));
      options(statusSelect, data.statuses, query.status, "any status");
      options(yearSelect, data.years, query.year, "any year");
      const filtered = query.search || query.status || query.year;
      empty.hidden = data.total > 0;
      empty.textContent = filtered ? "No paper matches." : "No papers yet.";
      range.textContent = data.total ? `${data.offset + 1}–${data.offset + data.documents.length} of ${data.total}` : "0 of 0";
      prev.disabled = data.offset === 0;
      next.disabled = data.offset + data.documents.length >= data.total;
    } catch (err) {
      if (err.name !== "AbortError") clear(notice, h("div", { class: "error" }, err.message));
    }
  }
  const refreshSoon = throttle(refresh, 400);

  const jobs = new Map();
  function outcome(j) {
    if (j.status === "failed") return h("div", { class: "error", "data-testid": "job-outcome" }, `${j.kind} job failed: ${j.error}`);
    const r = j.result || {};
    // a report of many documents lists the first ones of each list and gives the total in `truncated`
    const total = (key) => r.truncated?.[key]?.total ?? (r[key] || []).length;
    if (j.kind === "index" || j.kind === "upgrade" || j.kind === "resume") {
      const text = `${j.kind} job done: ${total("processed")} indexed, ${total("skipped")} already indexed, ${total("failed")} failed`;
      return h("div", { class: total("failed") || r.stopped ? "error" : "muted", "data-testid": "job-outcome" },
        text, r.stopped ? ` — ${r.stopped}` : "");
    }
    return h("div", { class: "muted", "data-testid": "job-outcome" }, `${j.kind} job done`);
  }

  function showJobs() {
    const all = [...jobs.values()];
    const active = all.filter((j) => j.status === "queued" || j.status === "running");
    const finished = all.filter((j) => j.finished_at).sort((a, b) => b.finished_at - a.finished_at)[0];
    clear(jobsBox, finished && !active.length ? outcome(finished) : null, active.map((j) => h("div", { class: "job" },
      h("span", {}, `${j.kind} · ${j.status}`),
      h("progress", { max: String(Math.max(j.total, 1)), value: String(j.done) }),
      h("span", { class: "muted" }, `${j.done}/${j.total} papers ${j.log.length ? "· " + j.log[j.log.length - 1] : ""}`))));
  }

  async function follow() {
    while (!controller.signal.aborted) {
      try {
        for await (const ev of events("/api/events", { signal: controller.signal })) {
          if (ev.event === "snapshot") ev.data.jobs.forEach((j) => jobs.set(j.id, j));
          else jobs.set(ev.data.job.id, ev.data.job);
          showJobs();
          refreshSoon();
        }
      } catch (err) {
        if (controller.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  // while a job runs, papers move PENDING -> PROCESSING -> PROCESSED between its progress events
  const poll = setInterval(() => {
    if ([...jobs.values()].some((j) => j.status === "running")) refreshSoon();
  }, 2000);

  refresh();
  follow();
  return { unmount: () => { clearInterval(poll); controller.abort(); } };
}
