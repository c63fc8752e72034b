"""Workspace storage: protocols (base) and the embedded SQLite implementation."""
