"""Turning files into Documents (ingest) and Documents into Chunks (chunking)."""

from .registry import LoaderSpec, LoadOptions, iter_files, load_file, loaders, register

__all__ = ["LoaderSpec", "LoadOptions", "iter_files", "load_file", "loaders", "register"]
