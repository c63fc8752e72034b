// Builds the web app into the Python package (src/scholargraph/server/static), which ships it:
// no Node is needed to install or run scholargraph. `npm run dev` proxies the API to a local
// `scholargraph serve` on port 8765.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const WEB = dirname(fileURLToPath(import.meta.url));
// What the bundle is built from; tests/server/test_static_bundle.py hashes the same files.
const INPUTS = ["index.html", "package.json", "package-lock.json", "vite.config.js", "src"];
const RECORD = "build.json";

// a file's bytes with CRLF read as LF (a checkout may convert line ends)
const text = (path) => Buffer.from(readFileSync(path).toString("latin1").replaceAll("\r\n", "\n"), "latin1");

function files(root, names) {
  const walk = (path) => (statSync(path).isDirectory() ? readdirSync(path).flatMap((n) => walk(join(path, n))) : [path]);
  const found = names.flatMap((name) => walk(join(root, name))).map((p) => relative(root, p).split(sep).join("/"));
  // sorted by code point, as Python sorts strings
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function sourceDigest(paths) {
  const digest = createHash("sha256");
  for (const rel of paths) digest.update(Buffer.concat([Buffer.from(rel + "\0"), text(join(WEB, rel)), Buffer.from("\0")]));
  return digest.digest("hex");
}

// Records in the bundle a digest of its inputs and of each file written, so that a stale bundle
// (web/ changed, no rebuild) or one edited by hand fails the tests.
function recordBuild() {
  return {
    name: "scholargraph-record-build",
    apply: "build",
    writeBundle(options) {
      const out = options.dir;
      const inputs = files(WEB, INPUTS);
      const bundle = Object.fromEntries(files(out, ["."]).filter((rel) => rel !== RECORD)
        .map((rel) => [rel, createHash("sha256").update(text(join(out, rel))).digest("hex")]));
      const record = { sources: { inputs: INPUTS, files: inputs, sha256: sourceDigest(inputs) }, bundle };
      writeFileSync(join(out, RECORD), JSON.stringify(record, null, 2) + "\n");
    },
  };
}

// The offline graph page's viewer (`vite build --mode offline`, after the app): the Overview's
// drawing as one classic script that analysis/graph_view.py inlines into graph.html. Its digest
// joins the app's record, so the same check covers both.
const VIEWER_DIR = join(WEB, "..", "src", "scholargraph", "analysis", "assets");
const VIEWER = "graph_view.js";

function recordViewer() {
  return {
    name: "scholargraph-record-viewer",
    apply: "build",
    writeBundle() {
      const path = join(WEB, "..", "src", "scholargraph", "server", "static", RECORD);
      const record = JSON.parse(readFileSync(path, "utf8"));
      record.viewer = { [`analysis/assets/${VIEWER}`]: createHash("sha256").update(text(join(VIEWER_DIR, VIEWER))).digest("hex") };
      writeFileSync(path, JSON.stringify(record, null, 2) + "\n");
    },
  };
}

const offline = {
  plugins: [recordViewer()],
  build: {
    outDir: VIEWER_DIR,
    emptyOutDir: false,
    chunkSizeWarningLimit: 1200,
    lib: { entry: join(WEB, "src", "offline.js"), formats: ["iife"], name: "scholargraphGraphView", fileName: () => VIEWER },
  },
};

const app = {
  base: "./",
  plugins: [recordBuild()],
  build: {
    outDir: "../src/scholargraph/server/static",
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 1200,
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:8765", "/v1": "http://127.0.0.1:8765" },
  },
};

export default defineConfig(({ mode }) => (mode === "offline" ? offline : app));
