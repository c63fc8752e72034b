// A paper's page: metadata, sections with pages, the entities drawn from it, its references
// (linked to the paper's page when it is in the workspace) and the workspace papers citing it.
import { api } from "./api.js";
import { authorsText, clear, entityLink, h, pages, paperLink } from "./dom.js";

function field(label, value, testid) {
  if (value === null || value === undefined || value === "") return null;
  return [h("dt", {}, label), h("dd", { "data-testid": testid }, value)];
}

export function paperView(root, info, where) {
  const id = where?.rest || "";
  const box = h("section", { class: "paper", "data-testid": "paper" }, h("p", { class: "muted" }, "Loading…"));
  root.append(box);
  if (!id) {
    clear(box, h("p", { class: "error" }, "No paper given: open one from the Library."));
    return {};
  }
  api(`/api/documents/${encodeURIComponent(id)}/page`).then((p) => {
    const d = p.document;
    const doi = d.doi ? h("a", { href: `https://doi.org/${d.doi}`, rel: "noopener noreferrer", target: "_blank" }, d.doi) : null;
    clear(box,
      h("p", {}, h("a", { href: "#/library" }, "← Library")),
      h("h2", { "data-testid": "paper-title" }, d.title || d.id),
      h("dl", { class: "meta-grid" },
        field("Authors", authorsText(d.authors, 12), "paper-authors"),
        field("Year", d.year ? String(d.year) : null, "paper-year"),
        field("Venue", d.venue, "paper-venue"),
        field("DOI", doi, "paper-doi"),
        field("PMID", d.pmid, "paper-pmid"),
        field("Source file", d.source_file || d.file_name, "paper-file"),
        field("Status", `${d.status} · ${d.scope || ""} · ${d.chunks ?? 0} passages`, "paper-status")),
      h("div", { class: "row" }, h("a", { href: `#/overview?document=${encodeURIComponent(d.id)}` }, "See its entities in the overview")),
      h("div", { class: "paper-grid" },
        h("div", {},
          h("h3", {}, `Sections (${p.sections.length})`),
          p.sections.length
            ? h("ol", { class: "sections", "data-testid": "paper-sections" }, p.sections.map((s) => h("li", {},
              s.title || h("span", { class: "muted" }, "(untitled)"),
              h("span", { class: "muted small" }, ` ${[pages(s.page_start, s.page_end), `${s.passages} passage(s)`].filter(Boolean).join(" · ")}`))))
            : h("p", { class: "muted" }, "No sections stored."),
          h("h3", {}, `Entities (${p.entities_total})`),
          p.entities.length
            ? h("div", { class: "chips", "data-testid": "paper-entities" }, p.entities.map((e) => entityLink(e.id, e.name,
              { class: "chip", title: `${e.type} · in ${e.passages} passage(s) · degree ${e.degree}`, "data-entity-id": e.id })))
            : h("p", { class: "muted" }, "No entities were drawn from this paper."),
          p.entities_total > p.entities.length ? h("p", { class: "muted small" }, `the ${p.entities.length} most mentioned are shown`) : null),
        h("div", {},
          h("h3", {}, `Cited by (${p.cited_by.length})`),
          p.cited_by.length
            ? h("ul", { "data-testid": "paper-cited-by" }, p.cited_by.map((c) => h("li", {}, paperLink(c.id, c.title || c.id), c.year ? ` (${c.year})` : "")))
            : h("p", { class: "muted", "data-testid": "paper-cited-by-none" }, "No paper of this workspace cites it."),
          h("h3", {}, `References (${p.references.length})`),
          p.references.length
            ? h("ol", { class: "references", "data-testid": "paper-references" }, p.references.map((r) => h("li", {},
              !r.cites?.stub && r.cites?.id
                ? [paperLink(r.cites.id, r.cites.title || r.cites.id, { "data-testid": "reference-in-workspace" }), h("span", { class: "pill" }, "in workspace"),
                  h("div", { class: "muted small" }, r.text)]
                : r.text)))
            : h("p", { class: "muted" }, "No references were parsed from this paper."))));
  }).catch((err) => clear(box, h("p", { class: "error", "data-testid": "paper-error" }, err.message)));
  return {};
}
