"""The `scholargraph` command line (the console script ``scholargraph.cli:main``; also
``python -m scholargraph``): :mod:`.parser` assembles the commands, one module per group holds a
group's parsers and handlers (:mod:`.index`, :mod:`.ask`, :mod:`.browse`, :mod:`.evaluate`,
:mod:`.serve`), :mod:`.flags` the settings flags every command takes, :mod:`.workspace` what the
handlers share, :mod:`.output` and :mod:`.analysis` the text and ``--json`` output. Nothing below
the interfaces imports this package."""

from .flags import settings_overrides
from .main import main
from .parser import build_parser

__all__ = ["build_parser", "main", "settings_overrides"]
