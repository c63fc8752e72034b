// Tiny DOM helpers. Text from the server is only ever set as textContent (never parsed as HTML).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export function pages(start, end) {
  if (!start) return "";
  return end && end !== start ? `pp. ${start}–${end}` : `p. ${start}`;
}

export function reference(s) {
  const parts = [s.title || s.document_id || "?"];
  if (s.authors && s.authors.length) parts.push(s.authors[0] + (s.authors.length > 1 ? " et al." : "") + (s.year ? ` (${s.year})` : ""));
  else if (s.year) parts.push(String(s.year));
  if (s.section) parts.push(`§ ${s.section}`);
  if (s.page_start) parts.push(pages(s.page_start, s.page_end));
  return parts.join(" · ");
}

export function throttle(fn, ms) {
  let timer = null;
  let again = false;
  return () => {
    if (timer) { again = true; return; }
    fn();
    timer = setTimeout(function tick() {
      timer = null;
      if (again) { again = false; fn(); timer = setTimeout(tick, ms); }
    }, ms);
  };
}

// #/view/rest?a=1&b=2 -> { view, rest, params }
export function hashRoute() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const [view, ...rest] = (path || "").split("/");
  return { view: view || "library", rest: rest.map(decodeURIComponent).join("/"), params: new URLSearchParams(query || "") };
}

export function paperLink(id, label, attrs = {}) {
  return h("a", { href: `#/paper/${encodeURIComponent(id)}`, ...attrs }, label || id);
}

export function entityLink(id, label, attrs = {}) {
  return h("a", { href: `#/graph?entity=${encodeURIComponent(id)}`, ...attrs }, label || id);
}

export function authorsText(authors, max = 3) {
  if (!authors || !authors.length) return "";
  return authors.slice(0, max).join(", ") + (authors.length > max ? " et al." : "");
}
