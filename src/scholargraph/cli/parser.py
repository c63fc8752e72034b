"""The `scholargraph` argument parser: the commands in the order `--help` lists them, each group's
parsers and handlers in its own module, then the commands plug-ins add."""

from __future__ import annotations

import argparse

from .. import __version__
from ..plugins.registry import plugins
from .ask import add_ask_and_retrieve
from .browse import add_communities_citations_plot, add_entities, add_export_and_config, add_status_and_stats
from .evaluate import add_eval
from .index import add_delete, add_index, add_migrate, add_parse, add_reembed
from .serve import add_demo, add_llm, add_serve_and_keygen
from .workspace import PluginKit


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scholargraph", description="Graph-RAG over scientific papers, with citations.")
    parser.add_argument("--version", action="version", version=f"scholargraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_index(sub)
    add_ask_and_retrieve(sub)
    add_status_and_stats(sub)
    add_communities_citations_plot(sub)
    add_delete(sub)
    add_entities(sub)
    add_parse(sub)
    add_reembed(sub)
    add_migrate(sub)
    add_export_and_config(sub)
    add_eval(sub)
    kit = PluginKit()
    for profile in plugins():  # commands that profiles add (fastbio: `fastbm`)
        if profile.add_cli is not None:
            profile.add_cli(sub, kit)
    add_serve_and_keygen(sub)
    add_llm(sub)
    add_demo(sub)
    return parser
