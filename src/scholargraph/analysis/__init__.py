"""Cross-document analysis over a workspace: community listings, the citation network, graph
statistics (seed 001 Table I) and plots. Read-only views built from the store."""
