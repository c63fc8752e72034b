// Ask: streamed answer; each [n] opens the cited passage (paper, section, page, PDF page); modes; sessions.
import { api, events } from "./api.js";
import { clear, h, pages, reference } from "./dom.js";

const CITATION = /\[(\d+(?:\s*[,–-]\s*\d+)*)\]/g;

function newSession() {
  return "web-" + new Date().toISOString().slice(0, 19).replace(/[T:]/g, "-");
}

export function askView(root, info) {
  const controller = new AbortController();
  let session = localStorage.getItem("sg-session") || newSession();
  const question = h("textarea", { rows: "3", placeholder: "Ask a question about your papers…", "data-testid": "question",
    maxlength: String(info.limits.max_question_chars) });
  const mode = h("select", { "data-testid": "mode" }, info.modes.map((m) => h("option", { value: m, selected: m === info.default_mode }, m)));
  const sessionInput = h("input", { value: session, "data-testid": "session", size: "24" });
  const button = h("button", { type: "submit", class: "primary", "data-testid": "ask" }, "Ask");
  const answerBox = h("div", { class: "answer", "data-testid": "answer" });
  const sourcesBox = h("ol", { class: "sources", "data-testid": "sources" });
  const notes = h("div", { class: "muted small" });
  const history = h("ol", { class: "history", "data-testid": "history" });
  const passage = h("aside", { class: "passage", "data-testid": "passage" }, h("p", { class: "muted" }, "Click a citation [n] to see the passage it comes from."));
  let sources = new Map();
  let running = null;

  const form = h("form", { class: "ask-form" }, question,
    h("div", { class: "row" }, h("label", {}, "Mode ", mode), h("label", {}, "Session ", sessionInput),
      h("button", { type: "button", onclick: () => { sessionInput.value = newSession(); saveSession(); } }, "New session"), button));
  form.addEventListener("submit", (e) => { e.preventDefault(); ask(); });
  question.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); ask(); } });
  sessionInput.addEventListener("change", saveSession);

  root.append(h("section", { class: "ask" },
    h("div", { class: "ask-main" }, form, answerBox, notes, h("h3", {}, "Sources"), sourcesBox,
      h("h3", {}, "This session"), history),
    passage));

  function saveSession() {
    session = sessionInput.value.trim() || newSession();
    sessionInput.value = session;
    localStorage.setItem("sg-session", session);
    loadHistory();
  }

  function renderAnswer(text, known) {
    const out = [];
    let last = 0;
    for (const match of text.matchAll(CITATION)) {
      out.push(text.slice(last, match.index));
      const numbers = match[1].split(/\s*[,–-]\s*/).map(Number);
      out.push(h("span", { class: "cites" }, numbers.map((n) => known.has(n)
        ? h("button", { type: "button", class: "cite", "data-n": String(n), onclick: () => openSource(n) }, `[${n}]`)
        : `[${n}]`)));
      last = match.index + match[0].length;
    }
    out.push(text.slice(last));
    clear(answerBox, out);
  }

  function renderSources(list) {
    sources = new Map(list.map((s) => [s.rank, s]));
    clear(sourcesBox, list.map((s) => h("li", { value: String(s.rank) },
      h("button", { type: "button", class: "link", onclick: () => openSource(s.rank) }, `[${s.rank}] ${reference(s)}`))));
  }

  async function openSource(n) {
    const s = sources.get(n);
    if (!s) return;
    for (const b of answerBox.querySelectorAll("button.cite")) b.classList.toggle("active", Number(b.dataset.n) === n);
    const text = h("blockquote", { "data-testid": "passage-text" }, s.text);
    const actions = h("div", { class: "row" });
    clear(passage,
      h("h3", { "data-testid": "passage-title" }, `[${n}] ${s.title || s.document_id || s.kind}`),
      h("div", { class: "meta" },
        s.authors?.length ? h("div", {}, s.authors.slice(0, 3).join(", ") + (s.authors.length > 3 ? " et al." : "") + (s.year ? ` (${s.year})` : "")) : null,
        s.section ? h("div", { "data-testid": "passage-section" }, `Section: ${s.section}`) : null,
        s.page_start ? h("div", { "data-testid": "passage-page" }, pages(s.page_start, s.page_end)) : null,
        h("div", { class: "muted small" }, `${s.kind}${s.chunk_id ? " · " + s.chunk_id : ""}`)),
      text, actions);
    if (!s.chunk_id) return;
    try {
      const p = await api(`/api/passages/${encodeURIComponent(s.chunk_id)}`);
      text.textContent = p.text;
      if (p.pdf_url) {
        actions.append(h("button", { type: "button", "data-testid": "open-pdf", onclick: () => openPdf(p) },
          p.page_start ? `Open PDF page ${p.page_start}` : "Open PDF"));
      }
    } catch (err) {
      actions.append(h("span", { class: "error" }, err.message));
    }
  }

  async function openPdf(p) {
    const res = await api(`/api/documents/${encodeURIComponent(p.document_id)}/pdf`, { raw: true });
    const url = URL.createObjectURL(await res.blob());
    window.open(url + (p.page_start ? `#page=${p.page_start}` : ""), "_blank", "noopener");
  }

  async function ask() {
    const q = question.value.trim();
    if (!q || running) return;
    saveSession();
    running = new AbortController();
    button.disabled = true;
    clear(sourcesBox);
    clear(notes);
    clear(answerBox, h("span", { class: "muted" }, "Thinking…"));
    let text = "";
    try {
      for await (const ev of events("/api/ask", { method: "POST", signal: running.signal,
        body: { question: q, mode: mode.value, session, stream: true } })) {
        if (ev.event === "token") {
          text += ev.data.text;
          clear(answerBox, text);
        } else if (ev.event === "answer") {
          renderSources(ev.data.sources);
          renderAnswer(ev.data.answer, sources);
          answerBox.dataset.done = "true";
          const extra = [...ev.data.notes];
          if (ev.data.removed_citations?.length) extra.push(`removed unknown citations: ${ev.data.removed_citations.join(", ")}`);
          clear(notes, extra.map((n) => h("div", {}, n)));
        } else if (ev.event === "error") {
          clear(answerBox, h("span", { class: "error" }, ev.data.error));
        }
      }
    } catch (err) {
      if (err.name !== "AbortError") clear(answerBox, h("span", { class: "error" }, err.message));
    } finally {
      running = null;
      button.disabled = false;
      loadHistory();
    }
  }

  async function loadHistory() {
    try {
      const data = await api(`/api/sessions/${encodeURIComponent(session)}`, { signal: controller.signal });
      clear(history, data.turns.map((t) => h("li", {},
        h("button", { type: "button", class: "link", onclick: () => { question.value = t.question; clear(answerBox, t.answer); clear(sourcesBox); } }, t.question))));
    } catch { /* no history yet */ }
  }

  loadHistory();
  return { unmount: () => { controller.abort(); if (running) running.abort(); } };
}
