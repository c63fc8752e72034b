// The HTTP API: JSON calls and server-sent events read from fetch (so POST bodies and the
// browser's credentials work for streams too).

export class ApiError extends Error {
  constructor(status, message, data) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

async function failure(res) {
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  const message = (data && (data.error?.message || data.error)) || res.statusText || `HTTP ${res.status}`;
  return new ApiError(res.status, typeof message === "string" ? message : JSON.stringify(message), data);
}

export async function api(path, { method = "GET", body, form, signal, raw = false } = {}) {
  const options = { method, headers: {}, signal, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  if (form) options.body = form;
  const res = await fetch(path, options);
  if (!res.ok && !(res.status === 202)) throw await failure(res);
  if (raw) return res;
  const type = res.headers.get("content-type") || "";
  return type.includes("json") ? res.json() : res.text();
}

function parseFrame(frame) {
  let event = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return null;
  const text = data.join("\n");
  try { return { event, data: JSON.parse(text) }; } catch { return { event, data: text }; }
}

// One request at a time for a control of a view (a filter, a search box): each `next()` aborts the
// request the call before started, so an older answer that arrives late never replaces the one the
// user asked for last. `parent`: the view's own signal, aborted when the view goes away.
export function latestRequest(parent) {
  let current = null;
  return {
    next() {
      current?.abort();
      current = new AbortController();
      return parent ? AbortSignal.any([parent, current.signal]) : current.signal;
    },
    abort() { current?.abort(); },
  };
}

export async function* events(path, { method = "GET", body, signal } = {}) {
  const options = { method, signal, credentials: "same-origin", headers: { Accept: "text/event-stream" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const res = await fetch(path, options);
  if (!res.ok) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = parseFrame(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (frame) yield frame;
    }
  }
}

export async function download(path, filename) {
  const res = await api(path, { raw: true });
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
