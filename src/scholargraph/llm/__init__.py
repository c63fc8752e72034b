"""LLM and embedding clients."""
