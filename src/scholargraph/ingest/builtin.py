"""Registers the built-in loaders. Each loader module exposes ``SPECS: list[LoaderSpec]``."""

from __future__ import annotations

import importlib

from .registry import register

LOADER_MODULES = ("text", "jsonfile", "csvfile", "pubmed", "pdf", "html")

for _name in LOADER_MODULES:
    _module = importlib.import_module(f"{__package__}.{_name}")
    for _spec in _module.SPECS:
        register(_spec)
