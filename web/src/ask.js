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
  const saved = JSON.parse(localStorage.getItem("sg-query-settings") || "{}");
  const mode = h("select", { "data-testid": "mode" }, info.modes.map((m) => h("option", { value: m, selected: m === (saved.mode || info.default_mode) }, m)));
  const topK = h("input", { type: "number", min: "1", max: "200", placeholder: "default", "data-testid": "top-k", size: "6", value: saved.top_k || "" });
  const contextOnly = h("input", { type: "checkbox", "data-testid": "context-only", checked: !!saved.context_only });
  const stream = h("input", { type: "checkbox", "data-testid": "stream", checked: saved.stream !== false });
  const sessionInput = h("input", { value: session, "data-testid": "session", size: "24" });
  const button = h("button", { type: "submit", class: "primary", "data-testid": "ask" }, "Ask");
  const answerBox = h("div", { class: "answer", "data-testid": "answer" });
  const sourcesBox = h("ul", { class: "sources", "data-testid": "sources" });
  const sourcesTitle = h("h3", {}, "Sources");
  const notes = h("div", { class: "muted small" });
  const history = h("ol", { class: "history", "data-testid": "history" });
  const passage = h("aside", { class: "passage", "data-testid": "passage" }, h("p", { class: "muted" }, "Click a citation [n] to see the passage it comes from."));
  let sources = new Map();
  let answerText = "";
  let running = null;

  const form = h("form", { class: "ask-form" }, question,
    h("div", { class: "row settings", "data-testid": "query-settings" }, h("label", {}, "Mode ", mode), h("label", { title: "how many passages, entities or relations to retrieve" }, "Top-k ", topK),
      h("label", { title: "show the retrieved evidence without writing an answer" }, contextOnly, " Context only"),
      h("label", { title: "show the answer as it is written" }, stream, " Stream")),
    h("div", { class: "row" }, h("label", {}, "Session ", sessionInput),
      h("button", { type: "button", onclick: () => { sessionInput.value = newSession(); saveSession(); } }, "New session"), button));
  for (const control of [mode, topK, contextOnly, stream]) control.addEventListener("change", saveSettings);
  contextOnly.addEventListener("change", () => { button.textContent = contextOnly.checked ? "Retrieve" : "Ask"; });
  button.textContent = contextOnly.checked ? "Retrieve" : "Ask";
  form.addEventListener("submit", (e) => { e.preventDefault(); ask(); });
  question.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); ask(); } });
  sessionInput.addEventListener("change", saveSession);

  root.append(h("section", { class: "ask" },
    h("div", { class: "ask-main" }, form, answerBox, notes, sourcesTitle, sourcesBox,
      h("h3", {}, "This session"), history),
    passage));

  function saveSettings() {
    localStorage.setItem("sg-query-settings", JSON.stringify({ mode: mode.value, top_k: topK.value, context_only: contextOnly.checked, stream: stream.checked }));
  }

  function settings() {
    const k = parseInt(topK.value, 10);
    return { mode: mode.value, ...(k > 0 ? { top_k: Math.min(k, 200) } : {}) };
  }

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

  // one number per source, in its own column: the list itself draws no "1." beside the "[1]"
  function renderSources(list, title = "Sources") {
    sources = new Map(list.map((s) => [s.rank, s]));
    sourcesTitle.textContent = title;
    clear(sourcesBox, list.map((s) => h("li", { "data-rank": String(s.rank) },
      h("span", { class: "n" }, `[${s.rank}]`),
      h("button", { type: "button", class: "link", onclick: () => openSource(s.rank) }, reference(s)))));
  }

  // The answer's sentences that cite [n], without their citation marks.
  function citingSentences(n) {
    const out = [];
    for (const sentence of answerText.split(/(?<=[.!?])\s+(?=[A-Z0-9(\[])/)) {
      for (const match of sentence.matchAll(CITATION)) {
        if (match[1].split(/\s*[,–-]\s*/).map(Number).includes(n)) { out.push(sentence.replace(CITATION, "").trim()); break; }
      }
    }
    return out;
  }

  // The passage's sentence closest to what the answer says with [n] (most shared words; a quoted
  // sentence matches whole), marked in the passage panel.
  function highlight(block, text, n) {
    const claims = citingSentences(n);
    const words = (t) => new Set(t.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || []);
    const wanted = claims.map(words);
    const parts = text.split(/(?<=[.!?])(\s+)/);
    let best = -1;
    let bestScore = 0;
    parts.forEach((part, i) => {
      if (!part.trim()) return;
      const have = words(part);
      if (!have.size) return;
      for (const claim of wanted) {
        let shared = 0;
        for (const w of have) if (claim.has(w)) shared += 1;
        const score = shared / Math.max(Math.min(have.size, claim.size), 1);
        if (score > bestScore) { bestScore = score; best = i; }
      }
    });
    if (best < 0 || bestScore < 0.3) { clear(block, text); return null; }
    const mark = h("mark", { "data-testid": "cited-sentence" }, parts[best]);
    clear(block, parts.slice(0, best).join(""), mark, parts.slice(best + 1).join(""));
    return mark;
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
      const mark = highlight(text, p.text, n);
      if (mark) mark.scrollIntoView({ block: "nearest" });
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
    delete answerBox.dataset.done;
    answerText = "";
    let text = "";
    try {
      if (contextOnly.checked) {
        const r = await api("/api/retrieve", { method: "POST", signal: running.signal, body: { question: q, ...settings() } });
        renderSources(r.sources, `Retrieved context (${r.sources.length}, mode ${r.mode})`);
        clear(answerBox, h("span", { class: "muted", "data-testid": "context-only-note" },
          `Context only: the ${r.sources.length} item(s) retrieved for this question, best first; no answer was written.`));
        answerBox.dataset.done = "true";
        clear(notes, (r.notes || []).map((n) => h("div", {}, n)));
        return;
      }
      if (!stream.checked) {
        const r = await api("/api/ask", { method: "POST", signal: running.signal, body: { question: q, ...settings(), session, stream: false } });
        showAnswer(r);
        return;
      }
      for await (const ev of events("/api/ask", { method: "POST", signal: running.signal,
        body: { question: q, ...settings(), session, stream: true } })) {
        if (ev.event === "token") {
          text += ev.data.text;
          clear(answerBox, text);
        } else if (ev.event === "answer") {
          showAnswer(ev.data);
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

  function showAnswer(data) {
    renderSources(data.sources);
    answerText = data.answer;
    renderAnswer(data.answer, sources);
    answerBox.dataset.done = "true";
    answerBox.dataset.streamed = String(stream.checked);
    const extra = [...(data.notes || [])];
    if (data.removed_citations?.length) extra.push(`removed unknown citations: ${data.removed_citations.join(", ")}`);
    clear(notes, extra.map((n) => h("div", {}, n)));
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
