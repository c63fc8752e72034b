"""`scholargraph` command line. Every command accepts --workdir and the settings flags; --json
prints one stable JSON object (or one per line for batches). Exit codes: 0 ok, 1 some documents
or queries failed, 2 bad settings, 3 LLM unreachable, 4 workspace problem, 5 not found."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import ScholarGraphError
from .flags import settings_overrides
from .parser import build_parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args, settings_overrides(args))
    except ScholarGraphError as exc:
        _report_error(args, exc)
        return exc.exit_code
    except BrokenPipeError:  # output piped into a reader that stopped early (`export ... | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except KeyboardInterrupt:
        print("interrupted: finished documents are kept; rerun the same command to continue", file=sys.stderr)
        return 130


def _report_error(args: argparse.Namespace, exc: ScholarGraphError) -> None:
    if getattr(args, "json", False):
        print(json.dumps({"error": str(exc), "type": type(exc).__name__}))
    print(f"error: {exc}", file=sys.stderr)
