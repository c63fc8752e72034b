// Builds the web app into the Python package (src/scholargraph/server/static), which ships it:
// no Node is needed to install or run scholargraph. `npm run dev` proxies the API to a local
// `scholargraph serve` on port 8765.
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  build: {
    outDir: "../src/scholargraph/server/static",
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 1200,
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:8765", "/v1": "http://127.0.0.1:8765" },
  },
});
